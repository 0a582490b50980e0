//! Lint for usage preferences (spec section 10): what a `Content-Usage` or `Content-Signal`
//! line says that a crawler reads differently from what its author probably meant.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::matcher::Matcher;
use crate::robots::{Group, Record, RobotsTxt};

use crate::usage::{
    ContentSignal, Dictionary, Given, Preference, Stated, UsageKind, UsageTable, split_path,
    usage_kind,
};

/// One usage line as lint reads it.
struct Line<'a> {
    line: u32,
    kind: UsageKind,
    path: Option<&'a [u8]>,
    /// What it says of (train-ai, search); Content-Signal's `ai-train` counts as `train-ai`.
    says: (Preference, Preference),
}

/// Diagnostics for the usage lines of one group.
pub(crate) fn lint_group(group: &Group<'_>, out: &mut Vec<Diagnostic>) {
    let lines: Vec<Line<'_>> = group.records().filter_map(|r| read(&r, out)).collect();
    if lines.is_empty() {
        return;
    }
    disallowed_paths(group, &lines, out);
    contradictions(&lines, group.records(), out);
}

/// Diagnostics for usage lines before any group: a `Content-Usage` there applies to nobody.
pub(crate) fn lint_outside_groups(robots: &RobotsTxt, out: &mut Vec<Diagnostic>) {
    let lines: Vec<Line<'_>> = robots
        .records_before_groups()
        .filter_map(|r| read(&r, out))
        .collect();
    for line in lines.iter().filter(|l| l.kind == UsageKind::ContentUsage) {
        out.push(Diagnostic {
            line: line.line,
            kind: DiagnosticKind::RuleBeforeUserAgent,
            message: "this Content-Usage comes before any User-agent line and applies to no crawler (Content-Signal there applies to all)".into(),
        });
    }
    contradictions(&lines, robots.records_before_groups(), out);
}

fn push(out: &mut Vec<Diagnostic>, line: u32, kind: DiagnosticKind, message: String) {
    out.push(Diagnostic {
        line,
        kind,
        message,
    });
}

/// Reads a usage record, reporting what is malformed about it.
fn read<'a>(record: &Record<'a>, out: &mut Vec<Diagnostic>) -> Option<Line<'a>> {
    let kind = usage_kind(record.key)?;
    let n = record.line;
    let key = String::from_utf8_lossy(record.key);
    let (path, preference) = split_path(record.written);
    match path {
        Some(path) if path.first() != Some(&b'/') => push(
            out,
            n,
            DiagnosticKind::MalformedPreference,
            format!(
                "the path `{}` does not start with `/`: this parser reads it as a pattern, but the draft requires `/`",
                String::from_utf8_lossy(path)
            ),
        ),
        None => {
            // `ai/ train-ai=n`: a path without its `/`, read as part of the preference.
            let first = preference
                .split(|&b| b == b' ' || b == b'\t')
                .next()
                .unwrap_or_default();
            if first.len() < preference.len() && first.contains(&b'/') {
                push(
                    out,
                    n,
                    DiagnosticKind::MalformedPreference,
                    format!(
                        "`{}` looks like a path but does not start with `/`, so the whole value is read as the preference",
                        String::from_utf8_lossy(first)
                    ),
                );
            }
        }
        Some(_) => {}
    }
    let says = match kind {
        UsageKind::ContentUsage => content_usage(n, &key, preference, out),
        UsageKind::ContentSignal => content_signal(n, &key, preference, out),
    };
    Some(Line {
        line: n,
        kind,
        path,
        says,
    })
}

fn content_usage(
    n: u32,
    key: &str,
    preference: &[u8],
    out: &mut Vec<Diagnostic>,
) -> (Preference, Preference) {
    let text = String::from_utf8_lossy(preference);
    let dictionary = match Dictionary::parse(preference, true) {
        Ok(d) => d,
        Err(reason) => {
            let lower = preference.to_ascii_lowercase();
            let lowered = Dictionary::parse(&lower, false);
            let message = if lowered.is_ok() {
                format!(
                    "`{text}` has uppercase in a key; keys are lowercase, so the whole {key} is ignored (every preference unknown)"
                )
            } else {
                format!(
                    "`{text}` is not a Structured Fields dictionary ({reason}); every preference is unknown"
                )
            };
            push(out, n, DiagnosticKind::MalformedPreference, message);
            // A value that would be wrong with the key fixed is said too: fixing the case alone
            // would not make it count.
            if let Ok(dictionary) = lowered {
                for (name, given) in [
                    ("train-ai", dictionary.train_ai),
                    ("search", dictionary.search),
                ] {
                    if let Given::Token(other) = given
                        && !matches!(other, "y" | "n")
                    {
                        push(
                            out,
                            n,
                            DiagnosticKind::MalformedPreference,
                            format!(
                                "{name} has `{other}`; only `y` or `n` count, so it would be unknown with a lowercase key too"
                            ),
                        );
                    }
                }
            }
            return (Preference::Unknown, Preference::Unknown);
        }
    };
    for (name, given) in [
        ("train-ai", dictionary.train_ai),
        ("search", dictionary.search),
    ] {
        let shown = match given {
            Given::Token("y" | "n") | Given::Absent => continue,
            Given::Token(other) => format!("`{other}`"),
            Given::Other => "a value that is not a token".to_string(),
        };
        push(
            out,
            n,
            DiagnosticKind::MalformedPreference,
            format!("{name} has {shown}; only `y` or `n` count, so it is unknown"),
        );
    }
    for unknown in &dictionary.unknown_keys {
        let hint = match *unknown {
            "ai-train" | "ai-input" => {
                " (that is Content-Signal's vocabulary; Content-Usage says `train-ai`)"
            }
            _ => "",
        };
        push(
            out,
            n,
            DiagnosticKind::UnknownPreferenceKey,
            format!("`{unknown}` is not in the vocabulary (train-ai, search) and is ignored{hint}"),
        );
    }
    (
        dictionary.train_ai.preference(),
        dictionary.search.preference(),
    )
}

fn content_signal(
    n: u32,
    key: &str,
    preference: &[u8],
    out: &mut Vec<Diagnostic>,
) -> (Preference, Preference) {
    for (name, value) in ContentSignal::entries(preference) {
        let known = [&b"search"[..], b"ai-input", b"ai-train"]
            .iter()
            .any(|k| name.eq_ignore_ascii_case(k));
        if known && crate::usage::signal_value(value) == Preference::Unknown {
            push(
                out,
                n,
                DiagnosticKind::MalformedPreference,
                format!(
                    "{key} `{}` has `{}`; only `yes` or `no` count, so it is unknown",
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(value)
                ),
            );
        }
    }
    let signal = ContentSignal::parse(preference);
    (signal.ai_train, signal.search)
}

/// A preference for a path whose literal start the group disallows never applies there.
fn disallowed_paths(group: &Group<'_>, lines: &[Line<'_>], out: &mut Vec<Diagnostic>) {
    if group.rules().len() == 0 {
        return;
    }
    let view = Matcher::of_group(group);
    for line in lines {
        let path = line.path.unwrap_or(b"/");
        let literal = literal_start(path);
        if !literal.starts_with(b"/") {
            continue;
        }
        let escaped = crate::directive::escape_pattern(literal);
        let verdict = view.check_path(&escaped);
        if let (false, Some(rule)) = (verdict.allowed, verdict.rule) {
            push(
                out,
                line.line,
                DiagnosticKind::PreferenceForDisallowedPath,
                format!(
                    "line {} disallows `{}` for this group, so this preference never applies there (preferences only apply to what may be crawled)",
                    rule.line,
                    String::from_utf8_lossy(literal)
                ),
            );
        }
    }
}

/// A line of one vocabulary saying the opposite of what the other vocabulary states where the
/// line applies (at its path's literal start; no path counts as `/`): a crawler reading both
/// takes the more restrictive answer, so one of the two lines does not do what it says.
fn contradictions<'a>(
    lines: &[Line<'a>],
    records: impl Iterator<Item = Record<'a>>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(table) = UsageTable::build(
        records.filter_map(|r| usage_kind(r.key).map(|kind| (r.line, kind, r.written))),
    ) else {
        return;
    };
    let opposite = |a: Preference, b: Preference| {
        matches!(
            (a, b),
            (Preference::Yes, Preference::No) | (Preference::No, Preference::Yes)
        )
    };
    // Linear in the lines: each line asks only the other vocabulary, once per literal path
    // (a file of 20,000 identical lines asks once), and pairs said are looked up by hash.
    let mut reported: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
    type Answer = Option<(Stated, Stated)>;
    let mut asked: std::collections::HashMap<(bool, &[u8]), Answer> =
        std::collections::HashMap::new();
    for line in lines {
        let path = line.path.unwrap_or(b"/");
        let literal = literal_start(path);
        if !literal.starts_with(b"/") {
            continue;
        }
        // What the other vocabulary states there, as (training, search).
        let other_kind = match line.kind {
            UsageKind::ContentUsage => UsageKind::ContentSignal,
            UsageKind::ContentSignal => UsageKind::ContentUsage,
        };
        let key = (other_kind == UsageKind::ContentUsage, literal);
        let other = *asked.entry(key).or_insert_with(|| {
            table.stated_by(other_kind, &crate::directive::escape_pattern(literal))
        });
        let Some((train, search)) = other else {
            continue;
        };
        for (what, own, theirs) in [
            ("training (train-ai / ai-train)", line.says.0, train),
            ("search", line.says.1, search),
        ] {
            let Some(other_line) = theirs.line.filter(|_| opposite(own, theirs.preference)) else {
                continue;
            };
            let pair = (line.line.min(other_line), line.line.max(other_line));
            if !reported.insert(pair) {
                continue;
            }
            let (this, that) = match line.kind {
                UsageKind::ContentUsage => ("Content-Usage", "Content-Signal"),
                UsageKind::ContentSignal => ("Content-Signal", "Content-Usage"),
            };
            push(
                out,
                line.line,
                DiagnosticKind::ContradictingPreferences,
                format!(
                    "this {this} says {own} to {what} under `{}`, but the {that} on line {other_line} says {}; crawlers that read both take the more restrictive answer",
                    String::from_utf8_lossy(literal),
                    theirs.preference
                ),
            );
        }
    }
}

/// The literal part every URL under a path pattern starts with (before any `*`, without `$`).
fn literal_start(path: &[u8]) -> &[u8] {
    let before_star = path.split(|&b| b == b'*').next().unwrap_or_default();
    before_star.strip_suffix(b"$").unwrap_or(before_star)
}

#[cfg(test)]
mod tests {
    use crate::lint::{DiagnosticKind, lint};

    fn kinds(body: &str) -> Vec<(u32, DiagnosticKind)> {
        lint(body.as_bytes())
            .into_iter()
            .map(|d| (d.line, d.kind))
            .filter(|(_, k)| *k != DiagnosticKind::NonGoogleKey)
            .collect()
    }

    #[test]
    fn an_uppercase_key_and_a_bad_value_are_both_said() {
        let found = lint(b"User-agent: *\nContent-Usage: / Train-AI=maybe\n");
        let messages: Vec<&str> = found
            .iter()
            .filter(|d| d.kind == DiagnosticKind::MalformedPreference)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("uppercase in a key"), "{messages:?}");
        assert!(
            messages[1].contains("train-ai has `maybe`; only `y` or `n` count"),
            "{messages:?}"
        );
    }

    #[test]
    fn malformed_preferences() {
        use DiagnosticKind::*;
        let body = "User-agent: *\nContent-Usage: Train-AI=n\nContent-Usage: train-ai=no, search=\"y\"\nContent-Usage: ai/ train-ai=n\nContent-Usage: *.pdf train-ai=n\nContent-Usage: train-ai=n search=y\nContent-Signal: ai-train=nope\nContent-Usage: ai-train=n\n";
        assert_eq!(
            kinds(body),
            [
                (2, MalformedPreference),
                (3, MalformedPreference),
                (3, MalformedPreference),
                (4, MalformedPreference),
                (4, MalformedPreference),
                (5, MalformedPreference),
                (6, MalformedPreference),
                (7, MalformedPreference),
                (8, UnknownPreferenceKey),
            ]
        );
        let messages: Vec<String> = crate::lint::lint(body.as_bytes())
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert!(
            messages.iter().any(|m| m.contains("uppercase")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("Content-Signal's vocabulary"))
        );
    }

    #[test]
    fn well_formed_preferences_are_quiet() {
        let body = "User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y, search=y;x=1\nContent-Signal: search=yes, ai-input=yes\n";
        assert_eq!(kinds(body), []);
    }

    #[test]
    fn preferences_for_disallowed_paths() {
        use DiagnosticKind::*;
        let body = "User-agent: *\nDisallow: /private/\nContent-Usage: /private/data train-ai=y\nContent-Usage: /public train-ai=y\nContent-Signal: /private/*.pdf$ ai-train=yes\n\nUser-agent: Closed\nDisallow: /\nContent-Usage: train-ai=n\n";
        assert_eq!(
            kinds(body),
            [
                (3, PreferenceForDisallowedPath),
                (5, PreferenceForDisallowedPath),
                (9, PreferenceForDisallowedPath),
            ]
        );
    }

    #[test]
    fn the_two_vocabularies_contradicting() {
        use DiagnosticKind::*;
        let body = "User-agent: *\nContent-Usage: train-ai=y, search=y\nContent-Signal: ai-train=no, search=yes\nContent-Usage: /a train-ai=n\nContent-Signal: /a/b ai-train=no\n";
        // Line 2 against line 3 (same scope), once; /a agrees with /a/b.
        assert_eq!(kinds(body), [(2, ContradictingPreferences)]);
        // A narrower yes under a broader no of the other vocabulary does not do what it says.
        let body =
            "User-agent: *\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: ai-train=no\n";
        let found = crate::lint::lint(body.as_bytes());
        let contradiction = found
            .iter()
            .find(|d| d.kind == ContradictingPreferences)
            .map(|d| (d.line, d.message.clone()));
        assert!(
            contradiction.as_ref().is_some_and(|(line, m)| *line == 2
                && m.contains("line 3")
                && m.contains("/ai-ok/")),
            "{found:?}"
        );
        let body = "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n";
        assert_eq!(kinds(body), [(1, RuleBeforeUserAgent)]);
    }
}
