//! AI usage preferences (spec section 10): what a site says crawled content may be used for.
//!
//! Two vocabularies are read. Neither ever changes an allow/disallow verdict (Google's library
//! reads both as unknown keys):
//!
//! - **`Content-Usage`** (IETF AIPREF): a rule inside a group, `Content-Usage: [path] dictionary`,
//!   where the dictionary is an RFC 9651 Structured Fields Dictionary read as bytes with the keys
//!   `train-ai` and `search` and the values `y` / `n` ([`AiPreferences`]). The same dictionary
//!   comes as the `Content-Usage` HTTP response header.
//! - **`Content-Signal`** (Cloudflare's Content Signals Policy): `search=yes, ai-train=no,
//!   ai-input=yes`, read leniently ([`ContentSignal`]), inside a group or before any group (then
//!   it applies to every crawler).
//!
//! A [`crate::Matcher`] answers, for a URL, the preferences that apply to its crawler
//! ([`crate::Matcher::usage`]): the same groups as allow/disallow, the longest matching path
//! wins, rules of equal length combine per key (any `n` gives `n`, else any `y` gives `y`), and
//! nothing applies to a URL the crawler may not fetch.
//!
//! ```
//! use robots_core::{Preference, RobotsTxt};
//!
//! let robots = RobotsTxt::parse(b"User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n");
//! let bot = robots.matcher("ExampleBot");
//! assert_eq!(bot.usage("https://example.com/test").preferences.may_train_ai(), Preference::No);
//! assert_eq!(bot.usage("https://example.com/ai-ok/test").preferences.may_train_ai(), Preference::Yes);
//! let never = bot.usage("https://example.com/never/test");
//! assert!(!never.verdict.allowed); // disallowed: no preference applies
//! assert_eq!(never.preferences.may_train_ai(), Preference::Unknown);
//! ```

use std::convert::Infallible;
use std::fmt;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, Ignored, InnerListVisitor, ItemVisitor, ParameterVisitor,
};
use sfv::{BareItemFromInput, KeyRef};

use crate::directive::escape_pattern;
use crate::pattern::{Pattern, Subject};
use crate::verdict::Verdict;

/// One usage preference: yes, no, or not stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Preference {
    /// The use is allowed (`y`, `yes`).
    Yes,
    /// The use is not allowed (`n`, `no`).
    No,
    /// Nothing was said, or what was said is not understood.
    #[default]
    Unknown,
}

impl Preference {
    /// Combines two statements about one use, as the AIPREF vocabulary says: any no gives no,
    /// else any yes gives yes, else unknown.
    ///
    /// ```
    /// use robots_core::Preference::{No, Unknown, Yes};
    /// assert_eq!(Yes.combine(No), No);
    /// assert_eq!(Unknown.combine(Yes), Yes);
    /// assert_eq!(Unknown.combine(Unknown), Unknown);
    /// ```
    pub fn combine(self, other: Preference) -> Preference {
        match (self, other) {
            (Preference::No, _) | (_, Preference::No) => Preference::No,
            (Preference::Yes, _) | (_, Preference::Yes) => Preference::Yes,
            _ => Preference::Unknown,
        }
    }

    /// `"y"`, `"n"`, or `None` for unknown: the `Content-Usage` spelling.
    pub fn as_aipref(self) -> Option<&'static str> {
        match self {
            Preference::Yes => Some("y"),
            Preference::No => Some("n"),
            Preference::Unknown => None,
        }
    }

    /// `"yes"`, `"no"`, or `None` for unknown: the `Content-Signal` spelling.
    pub fn as_signal(self) -> Option<&'static str> {
        match self {
            Preference::Yes => Some("yes"),
            Preference::No => Some("no"),
            Preference::Unknown => None,
        }
    }
}

/// A preference with the robots.txt line that stated it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stated {
    /// The preference.
    pub preference: Preference,
    /// The deciding line: the first line of the winning rules that said this preference, or for
    /// an unknown preference the first winning rule (which said nothing usable about this key).
    /// `None` when no rule applied.
    pub line: Option<u32>,
}

/// A `Content-Usage` dictionary (IETF AIPREF vocabulary): the preferences it states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct AiPreferences {
    /// `train-ai`: training of AI models.
    pub train_ai: Preference,
    /// `search`: use in search applications.
    pub search: Preference,
}

/// A `Content-Usage` value that is not a Structured Fields Dictionary: every preference it
/// holds is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a Structured Fields dictionary: {reason}")]
pub struct InvalidPreferences {
    /// The value as given (invalid UTF-8 replaced).
    pub value: String,
    /// What the Structured Fields parser found wrong, and where.
    pub reason: String,
}

/// How a known key of a dictionary was given, for lint: a token, or something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Given<'a> {
    #[default]
    Absent,
    Token(&'a str),
    /// A value that is not a token (a string, a number, a boolean, an inner list).
    Other,
}

impl Given<'_> {
    pub(crate) fn preference(self) -> Preference {
        match self {
            Given::Token("y") => Preference::Yes,
            Given::Token("n") => Preference::No,
            _ => Preference::Unknown,
        }
    }
}

/// A dictionary as the vocabulary reads it: the known keys' values (last one wins) and, for
/// lint, the unknown keys.
#[derive(Debug, Default)]
pub(crate) struct Dictionary<'a> {
    pub(crate) train_ai: Given<'a>,
    pub(crate) search: Given<'a>,
    pub(crate) unknown_keys: Vec<&'a str>,
    collect_unknown: bool,
}

impl<'a> Dictionary<'a> {
    /// Parses `bytes` with `sfv`'s visitor: no map is built, and nothing is allocated unless
    /// the value holds a byte sequence or an escaped string (or unknown keys are collected).
    pub(crate) fn parse(bytes: &'a [u8], collect_unknown: bool) -> Result<Dictionary<'a>, String> {
        let visitor = Dictionary {
            collect_unknown,
            ..Dictionary::default()
        };
        sfv::Parser::new(bytes)
            .parse_dictionary_with_visitor(visitor)
            .map_err(|e| e.to_string())
    }
}

impl<'de> DictionaryVisitor<'de> for Dictionary<'de> {
    type Out = Dictionary<'de>;
    type Error = Infallible;

    fn entry(&mut self, key: &'de KeyRef) -> Result<impl EntryVisitor<'de>, Self::Error> {
        let slot = match key.as_str() {
            "train-ai" => Some(&mut self.train_ai),
            "search" => Some(&mut self.search),
            other => {
                if self.collect_unknown && !self.unknown_keys.contains(&other) {
                    self.unknown_keys.push(other);
                }
                None
            }
        };
        // A repeated key: the last one wins, whatever it is.
        Ok(slot.map(|slot| {
            *slot = Given::Other;
            Slot(slot)
        }))
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(self)
    }
}

/// Where one known key's value goes.
struct Slot<'s, 'de>(&'s mut Given<'de>);

impl<'de> EntryVisitor<'de> for Slot<'_, 'de> {
    type Error = Infallible;

    fn item(self) -> Result<impl ItemVisitor<'de>, Self::Error> {
        Ok(self)
    }

    fn inner_list(self) -> Result<impl InnerListVisitor<'de>, Self::Error> {
        // An inner list is not a token: the slot stays `Other`.
        Ok(Ignored)
    }
}

impl<'de> ItemVisitor<'de> for Slot<'_, 'de> {
    type Out = ();
    type Error = Infallible;

    fn bare_item(
        self,
        bare_item: BareItemFromInput<'de>,
    ) -> Result<impl ParameterVisitor<'de, Out = Self::Out>, Self::Error> {
        if let sfv::GenericBareItem::Token(token) = bare_item {
            *self.0 = Given::Token(token.as_str());
        }
        // Parameters carry no meaning in the vocabulary.
        Ok(Ignored)
    }
}

impl AiPreferences {
    /// Every preference unknown.
    pub const UNKNOWN: AiPreferences = AiPreferences {
        train_ai: Preference::Unknown,
        search: Preference::Unknown,
    };

    /// Parses a `Content-Usage` dictionary, as bytes: `train-ai` and `search` with the tokens
    /// `y` or `n`; any other value (`no`, `"n"`, a bare key) is unknown, unknown keys and
    /// parameters are ignored, and a repeated key takes its last value. A value that is not a
    /// dictionary (an uppercase key, bytes outside ASCII…) is an error, which the vocabulary
    /// reads as every preference unknown ([`AiPreferences::parse_lenient`]).
    ///
    /// ```
    /// use robots_core::{AiPreferences, Preference};
    /// let prefs = AiPreferences::parse(b"train-ai=n, search=y;note=\"ok\", future-use=y")?;
    /// assert_eq!((prefs.train_ai, prefs.search), (Preference::No, Preference::Yes));
    /// assert!(AiPreferences::parse(b"Train-AI=n").is_err());
    /// # Ok::<(), robots_core::InvalidPreferences>(())
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<AiPreferences, InvalidPreferences> {
        match Dictionary::parse(bytes, false) {
            Ok(d) => Ok(AiPreferences {
                train_ai: d.train_ai.preference(),
                search: d.search.preference(),
            }),
            Err(reason) => Err(InvalidPreferences {
                value: String::from_utf8_lossy(bytes).into_owned(),
                reason,
            }),
        }
    }

    /// [`AiPreferences::parse`], with a value that is not a dictionary read as every preference
    /// unknown, as the vocabulary says.
    pub fn parse_lenient(bytes: &[u8]) -> AiPreferences {
        AiPreferences::parse(bytes).unwrap_or(AiPreferences::UNKNOWN)
    }

    /// Parses the `Content-Usage` HTTP header from all its field lines, in order: they form one
    /// dictionary (joined with `", "`, as HTTP combines them). `None` without any line; every
    /// preference unknown when the combined value is not a dictionary.
    ///
    /// ```
    /// use robots_core::{AiPreferences, Preference};
    /// let prefs = AiPreferences::from_header_lines([&b"train-ai=y"[..], b"train-ai=n"]).unwrap();
    /// assert_eq!(prefs.train_ai, Preference::No); // the last one wins
    /// assert_eq!(AiPreferences::from_header_lines(std::iter::empty::<&[u8]>()), None);
    /// ```
    pub fn from_header_lines<'a, I>(lines: I) -> Option<AiPreferences>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut lines = lines.into_iter();
        let first = lines.next()?;
        let Some(second) = lines.next() else {
            return Some(AiPreferences::parse_lenient(first));
        };
        let mut joined = first.to_vec();
        for line in std::iter::once(second).chain(lines) {
            joined.extend_from_slice(b", ");
            joined.extend_from_slice(line);
        }
        Some(AiPreferences::parse_lenient(&joined))
    }
}

/// A `Content-Signal` value (Cloudflare's Content Signals Policy): `search`, `ai-input` and
/// `ai-train`, each `yes` or `no`. There is no formal grammar, so it is read leniently:
/// comma-separated `key=value` pairs, spaces ignored, keys and values ASCII case-insensitive,
/// anything else unknown, the last of a repeated key wins. Unknown keys are kept in the value
/// ([`ContentSignal::entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct ContentSignal {
    /// `search`: building a search index and showing links and excerpts.
    pub search: Preference,
    /// `ai-input`: input to AI models answering a query (retrieval, grounding).
    pub ai_input: Preference,
    /// `ai-train`: training or fine-tuning AI models.
    pub ai_train: Preference,
}

impl ContentSignal {
    /// Parses a `Content-Signal` value (without a path).
    ///
    /// ```
    /// use robots_core::{ContentSignal, Preference};
    /// let signal = ContentSignal::parse(b"search=yes, ai-train=no, ai-input=maybe");
    /// assert_eq!(signal.search, Preference::Yes);
    /// assert_eq!(signal.ai_train, Preference::No);
    /// assert_eq!(signal.ai_input, Preference::Unknown);
    /// ```
    pub fn parse(bytes: &[u8]) -> ContentSignal {
        let mut signal = ContentSignal::default();
        for (key, value) in ContentSignal::entries(bytes) {
            let slot = if key.eq_ignore_ascii_case(b"search") {
                &mut signal.search
            } else if key.eq_ignore_ascii_case(b"ai-input") {
                &mut signal.ai_input
            } else if key.eq_ignore_ascii_case(b"ai-train") {
                &mut signal.ai_train
            } else {
                continue;
            };
            *slot = signal_value(value);
        }
        signal
    }

    /// The `key=value` pairs of a value, as written (trimmed), known or not; a pair without
    /// `=` has an empty value.
    ///
    /// ```
    /// use robots_core::ContentSignal;
    /// let pairs: Vec<_> = ContentSignal::entries(b"search=yes, ai-agent=no").collect();
    /// assert_eq!(pairs, [(&b"search"[..], &b"yes"[..]), (b"ai-agent", b"no")]);
    /// ```
    pub fn entries(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        bytes.split(|&b| b == b',').filter_map(|pair| {
            let (key, value) = match pair.iter().position(|&b| b == b'=') {
                Some(eq) => (&pair[..eq], &pair[eq + 1..]),
                None => (pair, &b""[..]),
            };
            let key = trim_ws(key);
            (!key.is_empty()).then(|| (key, trim_ws(value)))
        })
    }
}

/// `yes` / `no` in any case; anything else unknown.
pub(crate) fn signal_value(value: &[u8]) -> Preference {
    if value.eq_ignore_ascii_case(b"yes") {
        Preference::Yes
    } else if value.eq_ignore_ascii_case(b"no") {
        Preference::No
    } else {
        Preference::Unknown
    }
}

fn trim_ws(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Splits a `Content-Usage` or `Content-Signal` value into its optional path and its
/// preference: a value starting with `/` or `*` has a path up to the first space or tab, and
/// the preference is what follows the whitespace; any other value is all preference.
///
/// ```
/// use robots_core::usage::split_path;
/// assert_eq!(split_path(b"/ai-ok/ train-ai=y"), (Some(&b"/ai-ok/"[..]), &b"train-ai=y"[..]));
/// assert_eq!(split_path(b"train-ai=n"), (None, &b"train-ai=n"[..]));
/// ```
pub fn split_path(value: &[u8]) -> (Option<&[u8]>, &[u8]) {
    if !matches!(value.first(), Some(b'/' | b'*')) {
        return (None, value);
    }
    let end = value
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(value.len());
    (Some(&value[..end]), trim_ws(&value[end..]))
}

/// Whether a record key is `Content-Usage` / `Content-Signal` (ASCII case-insensitive).
pub(crate) fn usage_kind(key: &[u8]) -> Option<UsageKind> {
    if key.eq_ignore_ascii_case(b"content-usage") {
        Some(UsageKind::ContentUsage)
    } else if key.eq_ignore_ascii_case(b"content-signal") {
        Some(UsageKind::ContentSignal)
    } else {
        None
    }
}

/// Which vocabulary a line uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UsageKind {
    ContentUsage,
    ContentSignal,
}

/// The preferences robots.txt states for one URL, for the crawler a view was compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct UsagePreferences {
    /// `Content-Usage`'s `train-ai`.
    pub train_ai: Stated,
    /// `Content-Usage`'s `search`.
    pub search: Stated,
    /// `Content-Signal`, when a `Content-Signal` line applies to the URL.
    pub content_signal: Option<SignalPreferences>,
}

/// The `Content-Signal` preferences for one URL, each with its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct SignalPreferences {
    /// `search`.
    pub search: Stated,
    /// `ai-input`.
    pub ai_input: Stated,
    /// `ai-train`.
    pub ai_train: Stated,
}

impl UsagePreferences {
    /// Whether robots.txt says anything about the URL's use (some rule applied).
    pub fn is_stated(&self) -> bool {
        self.train_ai.line.is_some() || self.search.line.is_some() || self.content_signal.is_some()
    }

    /// May the content be used to train AI models? `Content-Usage`'s `train-ai` and
    /// `Content-Signal`'s `ai-train` combined (any no gives no, else any yes gives yes).
    pub fn may_train_ai(&self) -> Preference {
        let signal = self.content_signal.map(|s| s.ai_train.preference);
        self.train_ai.preference.combine(signal.unwrap_or_default())
    }

    /// May the content be used for search? `Content-Usage`'s and `Content-Signal`'s `search`
    /// combined.
    pub fn may_search(&self) -> Preference {
        let signal = self.content_signal.map(|s| s.search.preference);
        self.search.preference.combine(signal.unwrap_or_default())
    }

    /// May the content be given to AI models as input (`Content-Signal`'s `ai-input`)?
    pub fn may_use_as_ai_input(&self) -> Preference {
        self.content_signal
            .map(|s| s.ai_input.preference)
            .unwrap_or_default()
    }
}

/// The answer to "what may I do with this URL": the crawl verdict and, when the URL may be
/// fetched, the usage preferences robots.txt states for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage<'a> {
    /// Whether the crawler may fetch the URL, and the rule that decided.
    pub verdict: Verdict<'a>,
    /// The preferences; all unknown when the URL may not be fetched (no preference applies to
    /// what cannot be crawled).
    pub preferences: UsagePreferences,
}

/// One compiled rule: its path pattern (none: every path, priority 0) and what it states.
#[derive(Debug)]
struct Compiled<P> {
    line: u32,
    priority: u32,
    pattern: Option<Pattern>,
    stated: P,
}

impl<P> Compiled<P> {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.pattern.as_ref().map_or(0, |p| p.heap_bytes())
    }
}

/// The usage rules of one view, by priority (descending), then line.
#[derive(Debug, Default)]
pub(crate) struct UsageTable {
    content_usage: Box<[Compiled<AiPreferences>]>,
    content_signal: Box<[Compiled<ContentSignal>]>,
}

impl UsageTable {
    /// Compiles the lines `(line, kind, value as written)` that apply to a view; `None` when
    /// there are none, so that a view without usage rules pays nothing.
    pub(crate) fn build<'a>(
        lines: impl IntoIterator<Item = (u32, UsageKind, &'a [u8])>,
    ) -> Option<UsageTable> {
        let mut usage = Vec::new();
        let mut signal = Vec::new();
        for (line, kind, value) in lines {
            let (path, preference) = split_path(value);
            let pattern = path.map(|p| escape_pattern(p));
            let priority = pattern
                .as_ref()
                .map_or(0, |p| u32::try_from(p.len()).unwrap_or(u32::MAX));
            let pattern = pattern.map(|p| Pattern::new(&p));
            match kind {
                UsageKind::ContentUsage => usage.push(Compiled {
                    line,
                    priority,
                    pattern,
                    stated: AiPreferences::parse_lenient(preference),
                }),
                UsageKind::ContentSignal => signal.push(Compiled {
                    line,
                    priority,
                    pattern,
                    stated: ContentSignal::parse(preference),
                }),
            }
        }
        if usage.is_empty() && signal.is_empty() {
            return None;
        }
        // Stable: file order is kept among equal priorities.
        usage.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.line));
        signal.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.line));
        Some(UsageTable {
            content_usage: usage.into(),
            content_signal: signal.into(),
        })
    }

    /// The preferences for a path (starting with `/`). Allocates nothing.
    pub(crate) fn preferences(&self, path: &[u8]) -> UsagePreferences {
        let mut subject = Subject::new(path);
        let usage = resolve(&self.content_usage, &mut subject, |p| {
            [p.train_ai, p.search]
        });
        let signal = resolve(&self.content_signal, &mut subject, |s| {
            [s.search, s.ai_input, s.ai_train]
        });
        let [train_ai, search] = usage.unwrap_or_default();
        UsagePreferences {
            train_ai,
            search,
            content_signal: signal.map(|[search, ai_input, ai_train]| SignalPreferences {
                search,
                ai_input,
                ai_train,
            }),
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.content_usage
            .iter()
            .map(Compiled::heap_bytes)
            .sum::<usize>()
            + self
                .content_signal
                .iter()
                .map(Compiled::heap_bytes)
                .sum::<usize>()
    }
}

/// The longest matching rules decide; rules of that length combine per key (any no gives no,
/// else any yes gives yes). `None` when no rule matches.
fn resolve<P, const N: usize>(
    rules: &[Compiled<P>],
    subject: &mut Subject<'_>,
    keys: impl Fn(&P) -> [Preference; N],
) -> Option<[Stated; N]> {
    let mut top: Option<u32> = None;
    let mut out = [Stated::default(); N];
    for rule in rules {
        if top.is_some_and(|p| rule.priority < p) {
            break;
        }
        if !rule
            .pattern
            .as_ref()
            .is_none_or(|p| p.matches_subject(subject))
        {
            continue;
        }
        if top.is_none() {
            top = Some(rule.priority);
            out = [Stated {
                preference: Preference::Unknown,
                line: Some(rule.line),
            }; N];
        }
        for (slot, said) in out.iter_mut().zip(keys(&rule.stated)) {
            let combined = slot.preference.combine(said);
            if combined != slot.preference {
                // Rules come in line order: this is the first line that said it.
                *slot = Stated {
                    preference: combined,
                    line: Some(rule.line),
                };
            }
        }
    }
    top.map(|_| out)
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preference::Yes => "yes",
            Preference::No => "no",
            Preference::Unknown => "unknown",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(lines: &[(UsageKind, &str)]) -> UsageTable {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(i, (kind, value))| (i as u32 + 1, *kind, value.as_bytes()));
        UsageTable::build(lines).unwrap_or_default()
    }

    #[test]
    fn dictionaries_are_read_as_the_vocabulary_says() {
        let p = |s: &str| AiPreferences::parse(s.as_bytes());
        let ok = |s: &str| {
            p(s).unwrap_or(AiPreferences {
                train_ai: Preference::Yes,
                search: Preference::Yes,
            })
        };
        use Preference::*;
        assert_eq!(
            ok("train-ai=y, search=n"),
            AiPreferences {
                train_ai: Yes,
                search: No
            }
        );
        // The vocabulary's own examples: duplicates, the last one wins, and only tokens count.
        assert_eq!(
            ok("train-ai=y, train-ai, search=n, search=\"n\""),
            AiPreferences::UNKNOWN
        );
        assert_eq!(ok("train-ai;allow=n, train-ai=y").train_ai, Yes);
        // The draft's "parameters but unknown" example ends in `;`, which RFC 9651 rejects:
        // unknown either way.
        assert_eq!(ok("train-ai;has;parameters=\"?\"").train_ai, Unknown);
        let trailing = AiPreferences::parse_lenient(b"train-ai;has;parameters=\"?\";");
        assert_eq!(trailing.train_ai, Unknown);
        for unknown in [
            "train-ai=yes",
            "train-ai=1",
            "train-ai=(y)",
            "train-ai=:eQ==:",
            "train-ai=Y",
        ] {
            assert_eq!(ok(unknown).train_ai, Unknown, "{unknown}");
        }
        assert_eq!(ok("").train_ai, Unknown);
        assert_eq!(ok("  train-ai=n  ").train_ai, No);
        assert_eq!(ok("bulk=n, train-ai=n;x=1, foo=(a b)").train_ai, No);
        for broken in [
            "Train-AI=n",
            "train-ai=n,",
            "train-ai=n search=y",
            "train-ai=n\u{e9}",
            "train-ai=n;",
            "=n",
        ] {
            assert!(p(broken).is_err(), "{broken}");
        }
        let error = p("TRAIN-AI=n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("TRAIN-AI=n"), "{error}");
        assert_eq!(
            AiPreferences::parse_lenient(b"Train-AI=n"),
            AiPreferences::UNKNOWN
        );
        // Bytes, not text: a non-UTF-8 byte fails the dictionary, it does not panic.
        assert!(AiPreferences::parse(b"train-ai=n, x=\xFF").is_err());
    }

    #[test]
    fn header_lines_form_one_dictionary() {
        use Preference::*;
        let lines = |l: &[&str]| AiPreferences::from_header_lines(l.iter().map(|s| s.as_bytes()));
        assert_eq!(
            lines(&["train-ai=n", "search=y"]),
            Some(AiPreferences {
                train_ai: No,
                search: Yes
            })
        );
        assert_eq!(
            lines(&["train-ai=n", "Search=y"]),
            Some(AiPreferences::UNKNOWN)
        );
        assert_eq!(lines(&[]), None);
    }

    #[test]
    fn signals_are_read_leniently() {
        use Preference::*;
        let s = ContentSignal::parse(b" Search = YES ,ai-train=no,ai-input, ai-train=No ");
        assert_eq!((s.search, s.ai_input, s.ai_train), (Yes, Unknown, No));
        assert_eq!(
            ContentSignal::parse(b"ai-train=yes, ai-train=no").ai_train,
            No
        );
        assert_eq!(ContentSignal::parse(b"garbage \xFF,,=").search, Unknown);
        let pairs: Vec<_> = ContentSignal::entries(b"a=1,,b, =x").collect();
        assert_eq!(pairs, [(&b"a"[..], &b"1"[..]), (b"b", b"")]);
    }

    #[test]
    fn values_split_into_path_and_preference() {
        assert_eq!(
            split_path(b"/ train-ai=n"),
            (Some(&b"/"[..]), &b"train-ai=n"[..])
        );
        assert_eq!(
            split_path(b"/a\t \ttrain-ai=n"),
            (Some(&b"/a"[..]), &b"train-ai=n"[..])
        );
        assert_eq!(
            split_path(b"*.pdf train-ai=n"),
            (Some(&b"*.pdf"[..]), &b"train-ai=n"[..])
        );
        assert_eq!(
            split_path(b"/only-a-path"),
            (Some(&b"/only-a-path"[..]), &b""[..])
        );
        assert_eq!(split_path(b""), (None, &b""[..]));
        assert_eq!(
            split_path(b"ai/ train-ai=n"),
            (None, &b"ai/ train-ai=n"[..])
        );
    }

    #[test]
    fn the_longest_path_wins_and_equal_paths_combine() {
        use Preference::*;
        use UsageKind::ContentUsage as U;
        let t = table(&[
            (U, "train-ai=y, search=y"),
            (U, "/a/ train-ai=n"),
            (U, "/a/ search=y"),
            (U, "/a/b/ search=n"),
            (U, "/a/b/ search=y"),
        ]);
        let at = |p: &str| t.preferences(p.as_bytes());
        let root = at("/x");
        assert_eq!(
            (root.train_ai.preference, root.train_ai.line),
            (Yes, Some(1))
        );
        let a = at("/a/x");
        assert_eq!((a.train_ai.preference, a.train_ai.line), (No, Some(2)));
        assert_eq!((a.search.preference, a.search.line), (Yes, Some(3)));
        let b = at("/a/b/x");
        // The longest rules win whole: train-ai is unknown there, decided by line 4.
        assert_eq!((b.train_ai.preference, b.train_ai.line), (Unknown, Some(4)));
        assert_eq!((b.search.preference, b.search.line), (No, Some(4)));
        assert!(b.content_signal.is_none());
    }

    #[test]
    fn patterns_match_as_allow_and_disallow_do() {
        use Preference::*;
        use UsageKind::{ContentSignal as S, ContentUsage as U};
        let t = table(&[
            (U, "/*.pdf$ train-ai=n"),
            (U, "/caf\u{e9}/ train-ai=y"),
            (S, "ai-train=yes"),
            (S, "/private ai-train=no, search=no"),
        ]);
        let at = |p: &str| t.preferences(p.as_bytes());
        assert_eq!(at("/doc/x.pdf").train_ai.preference, No);
        assert_eq!(at("/doc/x.pdf?x").train_ai.preference, Unknown);
        assert_eq!(at("/caf%C3%A9/x").train_ai.preference, Yes);
        let private = at("/private/x");
        let signal = private.content_signal.unwrap_or_default();
        assert_eq!(
            (signal.ai_train.preference, signal.ai_train.line),
            (No, Some(4))
        );
        assert_eq!(private.may_train_ai(), No);
        assert_eq!(private.may_search(), No);
        assert_eq!(at("/public").may_train_ai(), Yes);
        assert_eq!(at("/public").may_use_as_ai_input(), Unknown);
    }

    #[test]
    fn no_usage_lines_no_table() {
        assert!(UsageTable::build(std::iter::empty()).is_none());
        let t = UsageTable::default();
        assert!(!t.preferences(b"/").is_stated());
    }
}
