//! Lint diagnostics (spec section 6): what a robots.txt says that Google reads differently from
//! what its author probably meant, each with its line and a stable kind.

use std::collections::HashMap;

use crate::MAX_BODY_BYTES;
use crate::agent::{is_global_agent, product_token_bytes};
pub use crate::diagnostic::{Diagnostic, DiagnosticKind};

// The usage preferences' findings (`Content-Usage`, `Content-Signal`).
mod usage;
use crate::directive::{KeyKind, LineContent, parse_line};
use crate::lines::{MAX_LINE_BYTES, lines};
use crate::records::{RequestRate, parse_crawl_delay};
use crate::robots::{RobotsTxt, Rule, RuleKind};

/// Keys that Google ignores but other crawlers or conventions use.
/// The keys a misspelling is checked against, as written in robots.txt files.
const RULE_KEYS: [&str; 7] = [
    "Allow",
    "Disallow",
    "User-agent",
    "Sitemap",
    "Crawl-delay",
    "Content-Usage",
    "Content-Signal",
];

/// The key an unknown (lowercase) key is a letter or two from: one edit for keys of up to
/// seven letters, two for longer ones (insertions, deletions, substitutions and swaps of
/// neighbours). `None` when none is that close.
fn misspelt(key: &str) -> Option<&'static str> {
    let key: Vec<u8> = key
        .bytes()
        .map(|b| if b == b'_' || b == b' ' { b'-' } else { b })
        .collect();
    RULE_KEYS.into_iter().find(|known| {
        let known = known.to_ascii_lowercase();
        let limit = if known.len() <= 7 { 1 } else { 2 };
        key.len().abs_diff(known.len()) <= limit && edit_distance(&key, known.as_bytes()) <= limit
    })
}

/// Optimal string alignment distance (Levenshtein with swaps of neighbours), for short keys.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let width = b.len() + 1;
    let mut d: Vec<usize> = (0..(a.len() + 1) * width).collect();
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

const KNOWN_ELSEWHERE: &[&str] = &[
    "crawl-delay",
    "host",
    "noindex",
    "nofollow",
    "noarchive",
    "request-rate",
    "clean-param",
    "content-signal",
    "content-usage",
    "visit-time",
    "robot-version",
];

/// Lints a robots.txt body. Only the first [`MAX_BODY_BYTES`] are read, as a crawler would; a
/// longer body is reported. Diagnostics come sorted by line.
///
/// ```
/// use robots_core::{lint, DiagnosticKind};
/// let found = lint(b"Disallow: /early\nUser-agent: *\nDissallow: /x\nCrawl-delay: soon\n");
/// let kinds: Vec<_> = found.iter().map(|d| (d.line, d.kind)).collect();
/// assert_eq!(kinds, [
///     (1, DiagnosticKind::RuleBeforeUserAgent),
///     (3, DiagnosticKind::TypoKey),
///     (4, DiagnosticKind::NonGoogleKey),
///     (4, DiagnosticKind::InvalidCrawlDelay),
/// ]);
/// ```
pub fn lint(body: &[u8]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let body = if body.len() > MAX_BODY_BYTES {
        let kept = &body[..MAX_BODY_BYTES];
        out.push(Diagnostic {
            line: lines(kept).count() as u32,
            kind: DiagnosticKind::BodyTooLarge,
            message: format!(
                "the body is over {MAX_BODY_BYTES} bytes; crawlers ignore the rest from here"
            ),
        });
        kept
    } else {
        body
    };
    // A body that is not a robots.txt at all gets one finding, not one per line.
    if let Some(not_robots) = not_a_robots_txt(body) {
        out.push(not_robots);
        return out;
    }
    lint_lines(body, &mut out);
    let robots = RobotsTxt::parse(body);
    for rule in robots.rules_outside_groups() {
        out.push(Diagnostic {
            line: rule.line,
            kind: DiagnosticKind::RuleBeforeUserAgent,
            message: "this rule comes before any User-agent line and applies to no crawler".into(),
        });
    }
    for group in robots.groups() {
        shadowed_rules(&group.rules().collect::<Vec<_>>(), &mut out);
        usage::lint_group(&group, &mut out);
    }
    usage::lint_outside_groups(&robots, &mut out);
    out.sort_by_key(|d| (d.line, d.kind));
    out
}

fn lint_lines(body: &[u8], out: &mut Vec<Diagnostic>) {
    let mut push = |line: u32, kind: DiagnosticKind, message: String| {
        out.push(Diagnostic {
            line,
            kind,
            message,
        })
    };
    let mut html_reported = false;
    for line in lines(body) {
        let n = line.number;
        if line.truncated {
            push(
                n,
                DiagnosticKind::LineTooLong,
                format!(
                    "the line is {} bytes; only the first {MAX_LINE_BYTES} are read",
                    line.raw.len()
                ),
            );
        }
        if line.has_nul {
            push(
                n,
                DiagnosticKind::NulByte,
                "a NUL byte ends the line; the rest is ignored".into(),
            );
        }
        if std::str::from_utf8(line.raw).is_err() {
            push(
                n,
                DiagnosticKind::NotUtf8,
                "the line holds bytes that are not UTF-8".into(),
            );
        }
        if !html_reported && looks_like_html(line.content) {
            html_reported = true;
            push(
                n,
                DiagnosticKind::HtmlBody,
                "the body looks like an HTML page, not a robots.txt".into(),
            );
        }
        let d = match parse_line(line.content) {
            LineContent::Directive(d) => d,
            LineContent::Invalid => {
                push(
                    n,
                    DiagnosticKind::InvalidLine,
                    "not a `key: value` line; ignored".into(),
                );
                continue;
            }
            LineContent::Empty | LineContent::Comment => continue,
        };
        let key = String::from_utf8_lossy(d.key);
        if d.missing_colon {
            push(
                n,
                DiagnosticKind::MissingColon,
                format!("no colon after `{key}`; whitespace accepted in its place"),
            );
        }
        if d.typo {
            push(
                n,
                DiagnosticKind::TypoKey,
                format!("`{key}` is a misspelling, read as {}", kind_name(d.kind)),
            );
        }
        match d.kind {
            KeyKind::UserAgent => {
                if let Some((kind, message)) = user_agent_finding(d.value) {
                    push(n, kind, message);
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                if !d.value.is_empty() && !matches!(d.value[0], b'/' | b'*') {
                    push(
                        n,
                        DiagnosticKind::PatternNeverMatches,
                        format!(
                            "pattern `{}` starts with neither `/` nor `*` and never matches",
                            String::from_utf8_lossy(d.value)
                        ),
                    );
                }
            }
            KeyKind::Sitemap => {
                if !crate::robots::is_absolute_sitemap(d.value) {
                    push(
                        n,
                        DiagnosticKind::RelativeSitemap,
                        format!(
                            "sitemap `{}` is not an absolute http(s) URL; crawlers ignore it",
                            String::from_utf8_lossy(d.value)
                        ),
                    );
                }
            }
            KeyKind::Other => {
                let lower = key.to_ascii_lowercase();
                if KNOWN_ELSEWHERE.contains(&lower.as_str()) {
                    push(
                        n,
                        DiagnosticKind::NonGoogleKey,
                        format!("`{key}` is ignored by Google (other crawlers read it)"),
                    );
                } else if let Some(meant) = misspelt(&lower) {
                    let (kind, lost) = if matches!(meant, "Allow" | "Disallow") {
                        (
                            DiagnosticKind::MisspeltRule,
                            "the rule is lost for every crawler",
                        )
                    } else {
                        (
                            DiagnosticKind::MisspeltKey,
                            "every crawler ignores the line",
                        )
                    };
                    push(
                        n,
                        kind,
                        format!(
                            "`{key}` is not a key crawlers read: did you mean `{meant}`? As written, {lost}"
                        ),
                    );
                } else {
                    push(
                        n,
                        DiagnosticKind::UnknownKey,
                        format!("`{key}` is not a key any crawler is known to read"),
                    );
                }
                let value = String::from_utf8_lossy(d.value);
                if lower == "crawl-delay" && parse_crawl_delay(d.value).is_none() {
                    push(
                        n,
                        DiagnosticKind::InvalidCrawlDelay,
                        format!("crawl-delay `{value}` is not a number of seconds; ignored"),
                    );
                }
                if lower == "request-rate" && RequestRate::parse(d.value).is_none() {
                    push(
                        n,
                        DiagnosticKind::InvalidRequestRate,
                        format!("request-rate `{value}` is not `n/t[s|m|h]`; ignored"),
                    );
                }
            }
        }
    }
}

/// What a user-agent value is worth saying: a wildcard attempt (`*bot`), or a name Google's
/// parser compares by a shorter one, and how each kind of crawler reads it.
fn user_agent_finding(value: &[u8]) -> Option<(DiagnosticKind, String)> {
    let token = product_token_bytes(value);
    if is_global_agent(value) || token.len() == value.len() {
        return None;
    }
    let written = String::from_utf8_lossy(value);
    if token.is_empty() && value.first() == Some(&b'*') {
        return Some((
            DiagnosticKind::UserAgentWildcard,
            format!(
                "user-agent `{written}` is not a pattern: names are compared whole, and Google's parser reads no name in it, so this group applies to no crawler that follows Google"
            ),
        ));
    }
    let cut = String::from_utf8_lossy(token);
    let next = value[token.len()];
    let message = if next == b'/' || next.is_ascii_whitespace() {
        format!(
            "user-agent `{written}` is compared as `{cut}` by Google's parser (the name ends before `{}`); the crawler it names matches it either way",
            if next == b'/' { "/" } else { " " }
        )
    } else {
        let shown = String::from_utf8_lossy(&value[token.len()..]);
        let first = shown.chars().next().unwrap_or('?');
        let google = if token.is_empty() {
            "reads no name in it, so no crawler that follows Google's parser obeys this group"
                .to_string()
        } else {
            format!("compares it as `{cut}`")
        };
        format!(
            "user-agent `{written}` is read as written by crawlers that compare whole names (most, and likely the one it names), while Google's parser, whose names are letters, `-` and `_` only, stops at `{first}` and {google}"
        )
    };
    Some((DiagnosticKind::UserAgentCutShort, message))
}

fn kind_name(kind: KeyKind) -> &'static str {
    match kind {
        KeyKind::UserAgent => "User-agent",
        KeyKind::Allow => "Allow",
        KeyKind::Disallow => "Disallow",
        KeyKind::Sitemap => "Sitemap",
        KeyKind::Other => "an unknown key",
    }
}

/// An HTML page (a tag among the first non-empty lines) or UTF-16 text (a UTF-16 BOM, or NUL
/// in many of the first bytes).
fn not_a_robots_txt(body: &[u8]) -> Option<Diagnostic> {
    let head = &body[..body.len().min(512)];
    let nuls = head.iter().filter(|&&b| b == 0).count();
    if head.starts_with(b"\xFF\xFE")
        || head.starts_with(b"\xFE\xFF")
        || (head.len() >= 8 && nuls * 4 >= head.len())
    {
        return Some(Diagnostic {
            line: 1,
            kind: DiagnosticKind::Utf16Body,
            message: "the body is UTF-16 text; crawlers read bytes and find no rules in it".into(),
        });
    }
    lines(body)
        .filter(|l| !crate::directive::trim(l.content).is_empty())
        .take(5)
        .find(|l| looks_like_html(l.content))
        .map(|l| Diagnostic {
            line: l.number,
            kind: DiagnosticKind::HtmlBody,
            message: "the body is an HTML page, not a robots.txt; crawlers find no rules in it"
                .into(),
        })
}

fn looks_like_html(content: &[u8]) -> bool {
    let text = crate::directive::trim(content);
    const TAGS: [&[u8]; 4] = [b"<!doctype html", b"<html", b"<head", b"<body"];
    TAGS.iter()
        .any(|tag| text.len() >= tag.len() && text[..tag.len()].eq_ignore_ascii_case(tag))
}

/// The set of paths a pattern matches, reduced to a canonical form where that is cheap and
/// certain: a trailing `*` (or `*$`) adds nothing to a prefix match.
fn canonical(pattern: &[u8]) -> &[u8] {
    let mut p = pattern.strip_suffix(b"*$").unwrap_or(pattern);
    while let Some(rest) = p.strip_suffix(b"*") {
        p = rest;
    }
    p
}

/// Rules of one group that match exactly the same paths: all but the winner can never decide.
fn shadowed_rules(rules: &[Rule<'_>], out: &mut Vec<Diagnostic>) {
    let mut by_paths: HashMap<&[u8], Vec<&Rule<'_>>> = HashMap::new();
    for rule in rules.iter().filter(|r| !r.pattern.is_empty()) {
        by_paths
            .entry(canonical(rule.pattern))
            .or_default()
            .push(rule);
    }
    for same in by_paths.values().filter(|v| v.len() > 1) {
        // The winner: longest pattern, allow on ties, earliest line.
        let Some(winner) = same.iter().min_by_key(|r| {
            (
                std::cmp::Reverse(r.pattern.len()),
                r.kind == RuleKind::Disallow,
                r.line,
            )
        }) else {
            continue;
        };
        for rule in same.iter().filter(|r| r.line != winner.line) {
            // The same kind: nothing is lost, the file only says it twice.
            let (kind, verb) = if rule.kind == winner.kind {
                (DiagnosticKind::RedundantRule, "says the same")
            } else {
                (DiagnosticKind::ShadowedRule, "always wins")
            };
            out.push(Diagnostic {
                line: rule.line,
                kind,
                message: format!(
                    "{} `{}` never decides: {} `{}` on line {} matches the same paths and {verb}",
                    rule.kind.as_str(),
                    String::from_utf8_lossy(rule.written),
                    winner.kind.as_str(),
                    String::from_utf8_lossy(winner.written),
                    winner.line
                ),
            });
        }
    }
}

#[cfg(test)]
mod not_robots_tests {
    use super::*;

    #[test]
    fn html_and_utf16_bodies_are_reported_once() {
        let mut html = b"\n<!DOCTYPE html>\n<html><head><title>x</title></head>\n".to_vec();
        for i in 0..2000 {
            html.extend_from_slice(format!("<p>line {i}: not a directive</p>\n").as_bytes());
        }
        let found = lint(&html);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].line, found[0].kind),
            (2, DiagnosticKind::HtmlBody)
        );

        let utf16: Vec<u8> = "\u{feff}User-agent: *\nDisallow: /x\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        let found = lint(&utf16);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, DiagnosticKind::Utf16Body);
        // Without a BOM too.
        let found = lint(&utf16[2..]);
        assert_eq!(
            found.iter().map(|d| d.kind).collect::<Vec<_>>(),
            [DiagnosticKind::Utf16Body]
        );
        // A robots.txt that merely mentions HTML later is linted as usual.
        let ok = b"User-agent: *\nDisallow: /x\n# <html> pages below\n";
        assert!(lint(ok).iter().all(|d| d.kind != DiagnosticKind::HtmlBody));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(body: &[u8]) -> Vec<(u32, &'static str)> {
        lint(body)
            .iter()
            .map(|d| (d.line, d.kind.as_str()))
            .collect()
    }

    #[test]
    fn a_sitemap_must_be_an_absolute_url() {
        let body = b"Sitemap: /sitemap.xml\nSitemap: https://e.com/s.xml\nSitemap: HTTP://E.COM/s.xml\nSitemap: e.com/s.xml\nSitemap: ftp://e.com/s.xml\n";
        assert_eq!(
            kinds(body),
            [
                (1, "relative_sitemap"),
                (4, "relative_sitemap"),
                (5, "relative_sitemap")
            ]
        );
    }

    #[test]
    fn every_kind_has_a_name_and_a_severity() {
        use crate::Severity;
        for kind in DiagnosticKind::ALL {
            assert_eq!(DiagnosticKind::from_name(kind.as_str()), Some(kind));
            let _ = kind.severity();
        }
        // What a crawler does with the file decides: read otherwise than meant is an error,
        // read by some crawlers only a warning, harmless an info.
        assert_eq!(DiagnosticKind::RelativeSitemap.severity(), Severity::Error);
        assert_eq!(
            DiagnosticKind::MalformedPreference.severity(),
            Severity::Error
        );
        assert_eq!(DiagnosticKind::NonGoogleKey.severity(), Severity::Warning);
        assert_eq!(DiagnosticKind::UnknownKey.severity(), Severity::Info);
        let found = lint(b"User-agent: *\nCrawl-delay: 2\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity(), Severity::Warning);
    }

    #[test]
    fn line_level_findings() {
        let mut body = b"User-agent: Googlebot/2.1\nUser-agent: MJ12bot\nDisallow /x\nHost: e.com\nFoo: bar\nallow: nope\n".to_vec();
        body.extend_from_slice(
            b"Disallow: /\xFF\nDisallow: /a\0b\njunk here now\nRequest-rate: fast\n",
        );
        assert_eq!(
            kinds(&body),
            [
                (1, "user_agent_cut_short"),
                (2, "user_agent_cut_short"),
                (3, "missing_colon"),
                (4, "non_google_key"),
                (5, "unknown_key"),
                (6, "pattern_never_matches"),
                (7, "not_utf8"),
                (8, "nul_byte"),
                (9, "invalid_line"),
                (10, "non_google_key"),
                (10, "invalid_request_rate"),
            ]
        );
    }

    #[test]
    fn misspelt_keys_no_crawler_reads_are_said_with_what_was_meant() {
        let body = b"User-agent: *\nAlow: /private/ok\nDisallw: /x\nSitmap: https://e.com/s.xml\nUser-agnet: b\nCrawl-dealy: 2\nContent-Usge: train-ai=n\nAlowed: /y\nFoo: bar\nDisalow: /z\n";
        assert_eq!(
            kinds(body),
            [
                (2, "misspelt_rule"),
                (3, "misspelt_rule"),
                (4, "misspelt_key"),
                (5, "misspelt_key"),
                (6, "misspelt_key"),
                (7, "misspelt_key"),
                (8, "unknown_key"),
                (9, "unknown_key"),
                // Google reads this one as Disallow: a typo it accepts, said as such.
                (10, "typo_key"),
            ]
        );
        let found = lint(b"User-agent: *\nAlow: /private/ok\n");
        assert_eq!(found[0].severity(), crate::Severity::Error);
        assert!(
            found[0].message.contains("did you mean `Allow`"),
            "{}",
            found[0].message
        );
        assert_eq!(edit_distance(b"alow", b"allow"), 1);
        assert_eq!(edit_distance(b"user-agnet", b"user-agent"), 1);
        assert_eq!(edit_distance(b"", b"abc"), 3);
    }

    #[test]
    fn long_lines_and_large_bodies() {
        let mut body = b"User-agent: *\nDisallow: /".to_vec();
        body.extend(std::iter::repeat_n(b'a', MAX_LINE_BYTES));
        assert_eq!(kinds(&body), [(2, "line_too_long")]);
        let mut big = b"User-agent: *\n".to_vec();
        while big.len() <= MAX_BODY_BYTES {
            big.extend_from_slice(b"Disallow: /abcdefgh\n");
        }
        let found = lint(&big);
        let too_large = found
            .iter()
            .find(|d| d.kind == DiagnosticKind::BodyTooLarge);
        assert_eq!(
            too_large.map(|d| d.line),
            Some(lines(&big[..MAX_BODY_BYTES]).count() as u32)
        );
    }

    #[test]
    fn html_bodies() {
        let found = kinds(b"\n<!DOCTYPE html>\n<html><body>x</body></html>");
        assert!(found.contains(&(2, "html_body")));
        assert_eq!(found.iter().filter(|(_, k)| *k == "html_body").count(), 1);
    }

    #[test]
    fn user_agent_findings_say_how_each_crawler_reads_the_name() {
        let body = b"User-agent: Googlebot/2.1\nUser-agent: MJ12bot\nUser-agent: 360Spider\nUser-agent: *bot\nUser-agent: *\nUser-agent: Seekport Crawler\nDisallow: /x\n";
        assert_eq!(
            kinds(body),
            [
                (1, "user_agent_cut_short"),
                (2, "user_agent_cut_short"),
                (3, "user_agent_cut_short"),
                (4, "user_agent_wildcard"),
                (6, "user_agent_cut_short"),
            ]
        );
        let found = lint(body);
        let message = |line: u32| {
            let d = found.iter().find(|d| d.line == line).unwrap();
            (d.severity(), d.message.clone())
        };
        let (severity, mj) = message(2);
        assert_eq!(severity, crate::Severity::Info);
        assert!(
            mj.contains("stops at `1`") && mj.contains("as `MJ`"),
            "{mj}"
        );
        let (_, spider) = message(3);
        assert!(
            spider.contains("reads no name") && !spider.contains("``"),
            "{spider}"
        );
        let (severity, wildcard) = message(4);
        assert_eq!(severity, crate::Severity::Error);
        assert!(
            wildcard.contains("not a pattern") && !wildcard.contains("``"),
            "{wildcard}"
        );
        assert_eq!(
            DiagnosticKind::UserAgentWildcard.fix(),
            "write `User-agent: *` for every crawler, or the crawler's name alone"
        );
        assert!(message(1).1.contains("compared as `Googlebot`"));
    }

    #[test]
    fn shadowed_rules_are_found() {
        let body = b"User-agent: *\nDisallow: /a\nAllow: /a*\nDisallow: /b\nAllow: /b\nDisallow: /c\nDisallow: /c\nDisallow: /d$\nAllow: /d\n";
        assert_eq!(
            kinds(body),
            [
                (2, "shadowed_rule"),
                (4, "shadowed_rule"),
                (7, "redundant_rule")
            ]
        );
    }
}
