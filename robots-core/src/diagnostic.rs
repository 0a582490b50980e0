//! A lint finding: what it is about and where. A leaf, so that the file's lint and the usage
//! preferences' lint (which the file's lint calls) both report without naming each other.

use std::fmt;

/// What a diagnostic is about. The names (see [`DiagnosticKind::as_str`]) are stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// The body is over [`crate::MAX_BODY_BYTES`]; crawlers ignore the rest.
    BodyTooLarge,
    /// The body looks like an HTML page, not a robots.txt (reported alone: nothing else in it
    /// is worth a line).
    HtmlBody,
    /// The body is UTF-16 text: crawlers read bytes and find no rules in it (reported alone).
    Utf16Body,
    /// A line is over the line limit of Google's parser (16,663 bytes) and was cut.
    LineTooLong,
    /// A NUL byte ends the line early.
    NulByte,
    /// The line holds bytes that are not UTF-8.
    NotUtf8,
    /// Text that is not a `key: value` directive; ignored.
    InvalidLine,
    /// Key and value separated by whitespace; accepted, but not standard.
    MissingColon,
    /// A misspelt key that Google accepts (`Dissallow`, `User agent`…).
    TypoKey,
    /// A key no crawler is known to use.
    UnknownKey,
    /// An unknown key a letter or two from `Allow` or `Disallow` that no crawler reads as
    /// that key (`Alow`): the rule the owner meant is lost for every crawler.
    MisspeltRule,
    /// An unknown key a letter or two from `User-agent`, `Sitemap`, `Crawl-delay`,
    /// `Content-Usage` or `Content-Signal` that no crawler reads as that key (`Sitmap`).
    MisspeltKey,
    /// A key Google ignores but other crawlers read (Crawl-delay, Host, Noindex…).
    NonGoogleKey,
    /// An allow/disallow before any user-agent line; it applies to nobody.
    RuleBeforeUserAgent,
    /// A pattern starting with neither `/` nor `*`; it never matches.
    PatternNeverMatches,
    /// A user-agent value that Google's parser compares by a shorter name: a version
    /// (`Googlebot/2.1` as `Googlebot`), or a crawler's real name with a digit or another
    /// character Google's names do not have (`MJ12bot` as `MJ`). The crawler it names reads it
    /// as written.
    UserAgentCutShort,
    /// A user-agent value that tries a wildcard (`*bot`): names are not patterns, and Google's
    /// parser reads no name in it, so the group applies to no crawler that follows it.
    UserAgentWildcard,
    /// A rule that can never decide, because a rule of the other kind matching the same paths
    /// always wins (an `Allow` that never wins, a `Disallow` that never applies).
    ShadowedRule,
    /// A rule that says again what a rule of the same kind matching the same paths says (a
    /// duplicate `Disallow`, `/a/` beside `/a/*`, a path written raw and percent-encoded).
    RedundantRule,
    /// A Crawl-delay value that is not a non-negative number of seconds.
    InvalidCrawlDelay,
    /// A Request-rate value that is not `n/t[s|m|h]`.
    InvalidRequestRate,
    /// A `Content-Usage` or `Content-Signal` value that is read differently from what it
    /// seems to say: not a Structured Fields dictionary (an uppercase key…), a value other than
    /// `y`/`n` (`yes`/`no` for Content-Signal), a path that does not start with `/`.
    MalformedPreference,
    /// A `Content-Usage` key outside the vocabulary (`train-ai`, `search`): ignored.
    UnknownPreferenceKey,
    /// A usage preference for a path its group disallows: preferences never apply there.
    PreferenceForDisallowedPath,
    /// `Content-Usage` and `Content-Signal` of one group say opposite things for one path.
    ContradictingPreferences,
    /// A `Sitemap:` value that is not an absolute `http(s)` URL (`/sitemap.xml`): crawlers
    /// ignore it.
    RelativeSitemap,
}

/// How much a finding matters: whether the file will be read otherwise than meant, or only by
/// some crawlers, or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Severity {
    /// The file will be read otherwise than meant: a rule that never applies or never
    /// matches, a value read as unknown, a body crawlers cannot read.
    Error,
    /// Read by some crawlers and ignored by others (`Crawl-delay` for Google), or accepted
    /// although not standard (a misspelt key, a missing colon).
    Warning,
    /// Worth knowing, changes nothing (a key no crawler uses).
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DiagnosticKind {
    /// How to fix a finding of this kind, in a few words (`lint` prints it after the message,
    /// and in JSON as `fix`).
    ///
    /// ```
    /// use robots_core::lint::lint;
    /// let found = lint(b"Disallow: /x\n");
    /// assert_eq!(found[0].kind.fix(), "put a User-agent line before it");
    /// ```
    pub fn fix(self) -> &'static str {
        match self {
            DiagnosticKind::BodyTooLarge => "keep the file under 500 KiB, what matters first",
            DiagnosticKind::HtmlBody => "serve the plain-text robots.txt at /robots.txt",
            DiagnosticKind::Utf16Body | DiagnosticKind::NotUtf8 => "save the file as UTF-8",
            DiagnosticKind::LineTooLong => "shorten the line",
            DiagnosticKind::NulByte => "remove the NUL byte",
            DiagnosticKind::InvalidLine => "write it as `key: value`, or start it with `#`",
            DiagnosticKind::MissingColon => "put a colon after the key",
            DiagnosticKind::TypoKey
            | DiagnosticKind::MisspeltRule
            | DiagnosticKind::MisspeltKey => "correct the key's spelling",
            DiagnosticKind::UnknownKey => "remove the line, or start it with `#`",
            DiagnosticKind::NonGoogleKey => {
                "nothing, for the crawlers that read it; Google needs another way"
            }
            DiagnosticKind::RuleBeforeUserAgent => "put a User-agent line before it",
            DiagnosticKind::PatternNeverMatches => "start the pattern with `/` or `*`",
            DiagnosticKind::UserAgentCutShort => {
                "nothing: the crawler it names reads it as written"
            }
            DiagnosticKind::UserAgentWildcard => {
                "write `User-agent: *` for every crawler, or the crawler's name alone"
            }
            DiagnosticKind::ShadowedRule => {
                "remove it, or make it more specific than the rule that wins"
            }
            DiagnosticKind::RedundantRule => "nothing; remove it to keep the file short",
            DiagnosticKind::InvalidCrawlDelay => "give a number of seconds (`Crawl-delay: 5`)",
            DiagnosticKind::InvalidRequestRate => "write it as n/t (`Request-rate: 1/10s`)",
            DiagnosticKind::MalformedPreference => {
                "write lowercase `key=y` or `key=n` pairs, and paths starting with `/`"
            }
            DiagnosticKind::UnknownPreferenceKey => "use a key of the vocabulary, or remove it",
            DiagnosticKind::PreferenceForDisallowedPath => "remove it, or allow the path",
            DiagnosticKind::ContradictingPreferences => {
                "make Content-Usage and Content-Signal agree"
            }
            DiagnosticKind::RelativeSitemap => {
                "give the sitemap's absolute URL (`https://…/sitemap.xml`)"
            }
        }
    }

    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::BodyTooLarge => "body_too_large",
            DiagnosticKind::HtmlBody => "html_body",
            DiagnosticKind::Utf16Body => "utf16_body",
            DiagnosticKind::LineTooLong => "line_too_long",
            DiagnosticKind::NulByte => "nul_byte",
            DiagnosticKind::NotUtf8 => "not_utf8",
            DiagnosticKind::InvalidLine => "invalid_line",
            DiagnosticKind::MissingColon => "missing_colon",
            DiagnosticKind::TypoKey => "typo_key",
            DiagnosticKind::UnknownKey => "unknown_key",
            DiagnosticKind::MisspeltRule => "misspelt_rule",
            DiagnosticKind::MisspeltKey => "misspelt_key",
            DiagnosticKind::NonGoogleKey => "non_google_key",
            DiagnosticKind::RuleBeforeUserAgent => "rule_before_user_agent",
            DiagnosticKind::PatternNeverMatches => "pattern_never_matches",
            DiagnosticKind::UserAgentCutShort => "user_agent_cut_short",
            DiagnosticKind::UserAgentWildcard => "user_agent_wildcard",
            DiagnosticKind::ShadowedRule => "shadowed_rule",
            DiagnosticKind::RedundantRule => "redundant_rule",
            DiagnosticKind::InvalidCrawlDelay => "invalid_crawl_delay",
            DiagnosticKind::InvalidRequestRate => "invalid_request_rate",
            DiagnosticKind::MalformedPreference => "malformed_preference",
            DiagnosticKind::UnknownPreferenceKey => "unknown_preference_key",
            DiagnosticKind::PreferenceForDisallowedPath => "preference_for_disallowed_path",
            DiagnosticKind::ContradictingPreferences => "contradicting_preferences",
            DiagnosticKind::RelativeSitemap => "relative_sitemap",
        }
    }
}

impl DiagnosticKind {
    /// Every kind, in declaration order.
    pub const ALL: [DiagnosticKind; 26] = [
        DiagnosticKind::BodyTooLarge,
        DiagnosticKind::HtmlBody,
        DiagnosticKind::Utf16Body,
        DiagnosticKind::LineTooLong,
        DiagnosticKind::NulByte,
        DiagnosticKind::NotUtf8,
        DiagnosticKind::InvalidLine,
        DiagnosticKind::MissingColon,
        DiagnosticKind::TypoKey,
        DiagnosticKind::UnknownKey,
        DiagnosticKind::MisspeltRule,
        DiagnosticKind::MisspeltKey,
        DiagnosticKind::NonGoogleKey,
        DiagnosticKind::RuleBeforeUserAgent,
        DiagnosticKind::PatternNeverMatches,
        DiagnosticKind::UserAgentCutShort,
        DiagnosticKind::UserAgentWildcard,
        DiagnosticKind::ShadowedRule,
        DiagnosticKind::RedundantRule,
        DiagnosticKind::InvalidCrawlDelay,
        DiagnosticKind::InvalidRequestRate,
        DiagnosticKind::MalformedPreference,
        DiagnosticKind::UnknownPreferenceKey,
        DiagnosticKind::PreferenceForDisallowedPath,
        DiagnosticKind::ContradictingPreferences,
        DiagnosticKind::RelativeSitemap,
    ];

    /// The kind of a stable name ([`DiagnosticKind::as_str`]).
    ///
    /// ```
    /// use robots_core::DiagnosticKind;
    /// assert_eq!(DiagnosticKind::from_name("non_google_key"), Some(DiagnosticKind::NonGoogleKey));
    /// assert_eq!(DiagnosticKind::from_name("nonsense"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<DiagnosticKind> {
        DiagnosticKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// How much a finding of this kind matters.
    ///
    /// ```
    /// use robots_core::{DiagnosticKind, Severity};
    /// assert_eq!(DiagnosticKind::PatternNeverMatches.severity(), Severity::Error);
    /// assert_eq!(DiagnosticKind::NonGoogleKey.severity(), Severity::Warning);
    /// ```
    pub fn severity(self) -> Severity {
        match self {
            DiagnosticKind::BodyTooLarge
            | DiagnosticKind::HtmlBody
            | DiagnosticKind::Utf16Body
            | DiagnosticKind::LineTooLong
            | DiagnosticKind::NulByte
            | DiagnosticKind::RuleBeforeUserAgent
            | DiagnosticKind::PatternNeverMatches
            | DiagnosticKind::UserAgentWildcard
            | DiagnosticKind::ShadowedRule
            | DiagnosticKind::InvalidCrawlDelay
            | DiagnosticKind::InvalidRequestRate
            | DiagnosticKind::MalformedPreference
            | DiagnosticKind::PreferenceForDisallowedPath
            | DiagnosticKind::ContradictingPreferences
            | DiagnosticKind::RelativeSitemap
            | DiagnosticKind::MisspeltRule => Severity::Error,
            DiagnosticKind::NotUtf8
            | DiagnosticKind::InvalidLine
            | DiagnosticKind::MissingColon
            | DiagnosticKind::TypoKey
            | DiagnosticKind::MisspeltKey
            | DiagnosticKind::NonGoogleKey
            | DiagnosticKind::UnknownPreferenceKey => Severity::Warning,
            DiagnosticKind::UnknownKey
            | DiagnosticKind::UserAgentCutShort
            | DiagnosticKind::RedundantRule => Severity::Info,
        }
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Diagnostic {
    /// Line number (1-based), as everywhere in this crate.
    pub line: u32,
    /// What it is about.
    pub kind: DiagnosticKind,
    /// A sentence for people.
    pub message: String,
}

impl Diagnostic {
    /// How much it matters (its kind's [`DiagnosticKind::severity`]).
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.message)
    }
}
