//! Property tests: the compiled matcher against the direct port of Google's algorithm on
//! generated files, and parser invariants and robustness on arbitrary bytes.

use crate::pattern::{Pattern, reference_matches};
use crate::reference::{google_path_params_query, google_verdict};
use crate::{Matcher, RobotsTxt, lint, path_of};
use proptest::prelude::*;

/// Lines a robots.txt is made of, weighted towards what matters for matching.
fn line() -> impl Strategy<Value = String> {
    let agent = prop_oneof![
        Just("*"),
        Just("FooBot"),
        Just("foobot/1.0"),
        Just("BarBot"),
        Just("* x"),
        Just("*x")
    ];
    let key = prop_oneof![
        Just("Allow"),
        Just("Disallow"),
        Just("disallow"),
        Just("Dissallow"),
        Just("allow")
    ];
    prop_oneof![
        3 => agent.prop_map(|a| format!("User-agent: {a}")),
        // Mostly short patterns over a tiny alphabet, so matches and priority ties are common.
        6 => (key, prop_oneof![4 => "/[ab*$]{0,3}", 1 => "[/ab*$%é2F]{0,6}"]).prop_map(|(k, p)| format!("{k}: {p}")),
        1 => "/[ab*]{0,2}/index\\.html?[5]?".prop_map(|p| format!("Allow: {p}")),
        1 => Just("Sitemap: https://e.com/s.xml".to_string()),
        1 => prop_oneof![Just("Crawl-delay: 2"), Just("Crawl-delay: x"), Just("crawl-delay: 0.5"), Just("Request-rate: 1/5"), Just("Request-rate: 0/0")].prop_map(str::to_string),
        1 => Just(String::new()),
        1 => Just("# comment".to_string()),
        1 => "[/ab*]{1,4}".prop_map(|p| format!("Disallow {p}")),
    ]
}

/// A file of one `*` group with these (kind, pattern) rules.
fn star_group(rules: &[(String, String)]) -> String {
    let mut body = String::from("User-agent: *\n");
    for (kind, pattern) in rules {
        body.push_str(&format!("{kind}: {pattern}\n"));
    }
    body
}

fn body() -> impl Strategy<Value = String> {
    let eol = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
    prop::collection::vec((line(), eol), 0..14)
        .prop_map(|lines| lines.into_iter().map(|(l, e)| l + e).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn matcher_agrees_with_google_on_generated_files(
        body in body(),
        path in prop_oneof![4 => "/[ab]{0,4}", 1 => "/[ab]{0,2}/(index\\.html)?", 1 => "/[/ab*$%2Fé]{0,10}"],
        agent in prop_oneof![Just("FooBot"), Just("BarBot"), Just("BazBot")],
    ) {
        let robots = RobotsTxt::parse(body.as_bytes());
        let matcher = robots.matcher(agent);
        let url = format!("http://example.com{path}");
        let ours = matcher.check_url(&url);
        let google = google_verdict(body.as_bytes(), &[agent], &url);
        prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
    }

    #[test]
    fn one_pass_parse_agrees_with_the_full_parse(
        body in body(),
        path in prop_oneof![4 => "/[ab]{0,4}", 1 => "/[ab]{0,2}/(index\\.html)?", 1 => "/[/ab*$%2Fé]{0,10}"],
        agents in prop::collection::vec(prop_oneof![Just("FooBot"), Just("BarBot/2"), Just("BazBot")], 0..4),
    ) {
        let full = RobotsTxt::parse(body.as_bytes()).matcher_for(&agents);
        let fused = Matcher::from_body(body.as_bytes(), &agents);
        prop_assert_eq!(full.check_path(path.as_bytes()), fused.check_path(path.as_bytes()));
        prop_assert_eq!(full.selection(), fused.selection());
        prop_assert_eq!(full.crawl_delay(), fused.crawl_delay());
        prop_assert_eq!(full.rule_count(), fused.rule_count());
    }

    /// The one-pass parse passes over the rest of a group that cannot apply from its first
    /// rule, and over every line whose key it does not read: lines that might be taken for
    /// user-agent lines there (other spellings, leading whitespace, other keys in `u`, NULs,
    /// comments), and lines of other keys, indented or not, in any case, or of HTML, leave the
    /// view, its lines, its records and its usage preferences as the full parse makes them.
    #[test]
    fn one_pass_parse_agrees_across_groups_it_passes_over(
        lines in prop::collection::vec(
            (
                prop_oneof![
                    3 => (
                        prop_oneof![
                            Just("User-agent:"), Just("  user-agent :"), Just("\tUSER-AGENT:"),
                            Just("useragent:"), Just("User agent:"), Just("User-agent"),
                            Just("\x0bUser-agents:"),
                        ],
                        prop_oneof![Just("FooBot"), Just("BarBot"), Just("*"), Just("foobot/2")],
                    ).prop_map(|(k, a)| format!("{k} {a}")),
                    4 => (prop_oneof![Just("Allow"), Just("Disallow"), Just(" disallow")], "/[ab*]{0,3}")
                        .prop_map(|(k, p)| format!("{k}: {p}")),
                    1 => prop_oneof![
                        Just("url: /a"), Just("U"), Just("u:"), Just("Unknown: x"),
                        Just("Crawl-delay: 3"), Just("Request-rate: 1/5"), Just("# User-agent: FooBot"),
                        Just("\0User-agent: FooBot"), Just("Disallow: /a\0User-agent: FooBot"),
                        Just(""), Just("   "), Just("Sitemap: https://e.com/s.xml"),
                    ].prop_map(str::to_string),
                    1 => (
                        prop_oneof![Just(""), Just("  "), Just("\t"), Just("                 ")],
                        prop_oneof![
                            Just("<a href=\"https://e.com/#x\">caf\u{e9} %e2*</a>"), Just("<html>"),
                            Just("Host: h"), Just("CRAWL-DELAY: 4"), Just("content-usage: train-ai=n"),
                            Just("Content-Signal: search=yes"), Just("Clean-param: a /b"),
                            Just("DISALLOW: /b"), Just("aLLow: /a"), Just("dIsallow /ab"),
                            Just("class=x"), Just("data: y"), Just("# Disallow: /a"), Just("<User-agent: *"),
                        ],
                    ).prop_map(|(indent, line)| format!("{indent}{line}")),
                ],
                prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
            ),
            0..24,
        ),
        agents in prop::collection::vec(prop_oneof![Just("FooBot"), Just("BarBot"), Just("BazBot")], 1..3),
    ) {
        let body: String = lines.into_iter().map(|(l, e)| l + e).collect();
        let full = RobotsTxt::parse(body.as_bytes()).matcher_for(&agents);
        let fused = Matcher::from_body(body.as_bytes(), &agents);
        prop_assert_eq!(full.selection(), fused.selection());
        prop_assert_eq!(full.rule_count(), fused.rule_count());
        prop_assert_eq!(full.crawl_delay(), fused.crawl_delay());
        prop_assert_eq!(full.request_rate(), fused.request_rate());
        for path in ["/", "/a", "/b", "/ab", "/ba", "/aab", "/bbb", "/a*"] {
            // The verdict with its rule's line and pattern, and the preferences.
            prop_assert_eq!(full.usage_path(path.as_bytes()), fused.usage_path(path.as_bytes()));
        }
    }

    /// A check by scan gives the compiled view's whole verdict (the rule reported too) and
    /// selects the same groups, for one token or several.
    #[test]
    fn a_scan_agrees_with_the_compiled_view(
        body in body(),
        path in prop_oneof![4 => "/[ab]{0,4}", 1 => "/[ab]{0,2}/(index\\.html)?", 1 => "[/ab*$%2Fé]{0,10}"],
        agents in prop::collection::vec(prop_oneof![Just("FooBot"), Just("BarBot/2"), Just("BazBot"), Just("foobot")], 1..3),
    ) {
        let robots = RobotsTxt::parse(body.as_bytes());
        let view = robots.matcher_for(&agents);
        let scan = robots.rule_scan_for(&agents);
        prop_assert_eq!(scan.check_path(&robots, path.as_bytes()), view.check_path(path.as_bytes()));
        prop_assert_eq!(scan.selection(), view.selection());
        // The view compiled from the scan is the view compiled for the tokens.
        let of_scan = scan.matcher(&robots);
        prop_assert_eq!(of_scan.check_path(path.as_bytes()), view.check_path(path.as_bytes()));
        prop_assert_eq!(of_scan.selection(), view.selection());
        prop_assert_eq!(of_scan.rule_count(), view.rule_count());
        prop_assert_eq!(of_scan.crawl_delay(), view.crawl_delay());
        let url = format!("http://example.com{path}");
        prop_assert_eq!(scan.check_url(&robots, &url), view.check_url(&url));
        prop_assert_eq!(scan.crawl_delay(&robots), view.crawl_delay());
        prop_assert_eq!(scan.request_rate(&robots), view.request_rate());
        // The cost the parse tallied per group is the count over the chosen groups' rules.
        let chosen = |group: &crate::robots::Group<'_>| match scan.selection() {
            crate::Selection::Agent(token) => group
                .agents()
                .any(|a| !a.is_global && crate::agent::names_token(a.value, token.as_bytes())),
            crate::Selection::Global => group.agents().any(|a| a.is_global),
            crate::Selection::None => false,
        };
        let mut counted = crate::ScanCost::default();
        for rule in robots.groups().filter(chosen).flat_map(|g| g.rules().collect::<Vec<_>>()) {
            let stars = rule.pattern.iter().filter(|&&b| b == b'*').count();
            counted.rules += 1;
            counted.pattern_bytes += rule.pattern.len();
            counted.wildcard_rules += usize::from(stars > 0);
            counted.stars += stars;
        }
        prop_assert_eq!(scan.cost(&robots), counted);
        // The bounded decision is the count's.
        prop_assert_eq!(scan.scan_is_cheaper(&robots), counted.scan_is_cheaper());
    }

    #[test]
    fn compiled_patterns_agree_with_the_candidate_set_algorithm(
        pattern in "[/ab*$]{0,12}",
        path in "/[/ab$]{0,20}",
    ) {
        prop_assert_eq!(
            Pattern::new(pattern.as_bytes()).matches(path.as_bytes()),
            reference_matches(pattern.as_bytes(), path.as_bytes())
        );
    }

    /// Enough wildcard rules that a check builds its last-position table.
    #[test]
    fn many_wildcard_rules_agree_with_google(
        rules in prop::collection::vec(("(Allow|Disallow)", "/(\\*[abc]){1,4}\\$?"), 20..60),
        path in "/[abc]{0,24}",
    ) {
        let body = star_group(&rules);
        let matcher = RobotsTxt::parse(body.as_bytes()).matcher("FooBot");
        let ours = matcher.check_path(path.as_bytes());
        let google = google_verdict(body.as_bytes(), &["FooBot"], &path);
        prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
    }

    /// Views of 32+ `*` rules drop twins (same body and anchoring, other kind or line): the
    /// verdict and the reported line stay Google's. Segments of one and more bytes, so the
    /// matcher's one-byte fast path and its searches both run.
    #[test]
    fn twin_wildcard_rules_agree_with_google(
        rules in prop::collection::vec(("(Allow|Disallow)", "/(\\*[ab]{1,2}){1,3}\\$?"), 32..90),
        path in "/[ab]{0,20}",
    ) {
        let body = star_group(&rules);
        let matcher = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        let ours = matcher.check_path(path.as_bytes());
        let google = google_verdict(body.as_bytes(), &["FooBot"], &path);
        prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
        let full = RobotsTxt::parse(body.as_bytes()).matcher("FooBot");
        prop_assert_eq!(full.check_path(path.as_bytes()), ours);
    }

    /// Views of 32+ rules check through an index on the byte position that best separates
    /// their rules (literal prefixes of varied lengths, some with `*` and `$`; over 128 rules
    /// the position is chosen on a sample): same verdicts and lines as Google's.
    #[test]
    fn indexed_views_agree_with_google(
        rules in prop::collection::vec(("(Allow|Disallow)", "/[ab]{0,3}[abc/]{0,6}(\\*[ab])?\\$?"), 32..260),
        path in "/[abc/]{0,12}",
    ) {
        let body = star_group(&rules);
        let matcher = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        // A full URL: Google would read a path starting with `//` as a scheme-relative URL.
        let url = format!("https://example.com{path}");
        let ours = matcher.check_url(&url);
        let google = google_verdict(body.as_bytes(), &["FooBot"], &url);
        prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
    }

    /// A URL's fragment never changes its verdict: the verdict is its path's (as `path_of`
    /// cuts it), and Google's, for views of every size (scanned in full, keyed, indexed).
    #[test]
    fn a_urls_fragment_never_changes_its_verdict(
        rules in prop::collection::vec(("(Allow|Disallow)", "/[ab]{0,2}[ab/*]{0,4}\\$?"), 0..60),
        path in "/[ab/]{0,5}",
        fragment in "#[ab/#*$?]{0,6}",
    ) {
        let body = star_group(&rules);
        let matcher = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        let url = format!("https://example.com{path}{fragment}");
        let ours = matcher.check_url(&url);
        prop_assert_eq!(&ours, &matcher.check_path(path_of(&url).as_bytes()));
        let google = google_verdict(body.as_bytes(), &["FooBot"], &url);
        prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
    }

    /// The hints from the line scan never hide work: a value they say needs no escaping is
    /// unchanged by escaping, and one they say has no `*` has none.
    #[test]
    fn line_hints_are_safe(line in prop::collection::vec(prop_oneof![Just(b'%'), Just(b'*'), Just(b':'), Just(b'#'), Just(b' '), Just(0xC3u8), Just(b'a'), Just(b'f'), Just(b'F'), Just(b'2')], 0..24)) {
        if let crate::directive::LineContent::Directive(d) = crate::directive::parse_line(&line) {
            if !d.hints.may_need_escaping() {
                prop_assert_eq!(&*crate::directive::escape_pattern(d.value), d.value);
            }
            if !d.hints.may_have_star() {
                prop_assert!(!d.value.contains(&b'*'));
            }
        }
    }

    #[test]
    fn url_paths_agree_with_googles_extraction(url in "[a-z:/?;#.@]{0,16}", any_url in any::<String>()) {
        prop_assert_eq!(path_of(&url), google_path_params_query(&url));
        prop_assert_eq!(path_of(&any_url), google_path_params_query(&any_url));
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..2000), url in any::<String>()) {
        let robots = RobotsTxt::parse(&body);
        let _ = lint(&body);
        for agent in ["FooBot", "*", ""] {
            let _ = robots.matcher(agent).check_url(&url);
        }
        prop_assert!(path_of(&url).starts_with('/'));
    }

    #[test]
    fn parsed_rules_are_escaped_and_numbered_within_the_file(body in prop::collection::vec(any::<u8>(), 0..1500)) {
        let robots = RobotsTxt::parse(&body);
        for group in robots.groups() {
            for rule in group.rules() {
                prop_assert!(rule.line >= 1 && rule.line <= robots.line_count());
                prop_assert!(rule.pattern.iter().all(|&b| b < 0x80));
                // Every escape has uppercase hex digits.
                for w in rule.pattern.windows(3) {
                    if w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit() {
                        prop_assert!(!w[1].is_ascii_lowercase() && !w[2].is_ascii_lowercase());
                    }
                }
            }
        }
    }
}

/// A usage line (section 10): `Content-Usage` / `Content-Signal` with or without a path, valid
/// or not, in any case, with or without a colon.
fn usage_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("Content-Usage"),
        Just("content-usage"),
        Just("Content-Signal"),
        Just("CONTENT-SIGNAL"),
    ];
    let path = prop_oneof![
        Just(""),
        Just("/ "),
        Just("/a "),
        Just("/a*b$ "),
        Just("* "),
        Just("a/ ")
    ];
    let pref = prop_oneof![
        Just("train-ai=n".to_string()),
        Just("train-ai=y, search=n".to_string()),
        Just("search=yes, ai-train=no, ai-input=yes".to_string()),
        Just("Train-AI=n".to_string()),
        "[a-z=,;\" ()*:/yn-]{0,16}",
    ];
    let sep = prop_oneof![Just(": "), Just(":"), Just(" ")];
    (key, sep, path, pref).prop_map(|(k, sep, p, v)| format!("{k}{sep}{p}{v}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Usage lines never change a verdict (Google reads them as unknown keys, which never end a
    /// group): the same file with them blanked out gives the same verdict and line, which is
    /// Google's; both parses agree on the preferences, and none apply to a disallowed URL.
    #[test]
    fn usage_lines_never_change_verdicts(
        lines in prop::collection::vec(prop_oneof![3 => line(), 2 => usage_line()], 0..14),
        path in prop_oneof![4 => "/[ab]{0,4}", 1 => "/[/ab*$]{0,6}"],
        agent in prop_oneof![Just("FooBot"), Just("BarBot")],
    ) {
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let blanked: String = lines
            .iter()
            .map(|l| if l.to_ascii_lowercase().starts_with("content-") { "\n".to_string() } else { format!("{l}\n") })
            .collect();
        let url = format!("http://example.com{path}");
        let with = RobotsTxt::parse(body.as_bytes()).matcher(agent);
        let without = RobotsTxt::parse(blanked.as_bytes()).matcher(agent);
        let usage = with.usage(&url);
        let plain = without.check_url(&url);
        prop_assert_eq!(usage.verdict.allowed, plain.allowed);
        prop_assert_eq!(usage.verdict.rule.map(|r| r.line), plain.rule.map(|r| r.line));
        prop_assert_eq!(with.check_url(&url), usage.verdict);
        let google = google_verdict(body.as_bytes(), &[agent], &url);
        prop_assert_eq!((usage.verdict.allowed, usage.verdict.rule.map_or(0, |r| r.line)), google);
        let direct = Matcher::from_body(body.as_bytes(), [agent]);
        prop_assert_eq!(direct.usage(&url), usage);
        if !usage.verdict.allowed {
            prop_assert!(!usage.preferences.is_stated());
        }
    }

    /// Any bytes as a usage value: no panic, and the answer is one of the three.
    #[test]
    fn arbitrary_usage_values_never_panic(value in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut body = b"User-agent: *\nContent-Usage: ".to_vec();
        body.extend_from_slice(&value);
        body.extend_from_slice(b"\nContent-Signal: ");
        body.extend_from_slice(&value);
        let view = Matcher::from_body(&body, ["X"]);
        let usage = view.usage("https://e.com/a");
        prop_assert!(usage.verdict.allowed);
        let _ = (usage.preferences.may_train_ai(), usage.preferences.may_search());
        prop_assert_eq!(crate::AiPreferences::parse_lenient(&value), crate::AiPreferences::parse(&value).unwrap_or_default());
    }
}

/// Hostile input runs to completion: many wildcard rules against a long path. (Speed is measured
/// in the benchmarks, not asserted here.)
#[test]
fn hostile_wildcards_complete() {
    let mut body = String::from("User-agent: *\n");
    for i in 0..2000 {
        body.push_str("Disallow: /");
        for j in 0..12 {
            body.push('*');
            body.push((b'a' + ((i * 7 + j * 3) % 26) as u8) as char);
        }
        body.push_str("$\n");
    }
    let robots = RobotsTxt::parse(body.as_bytes());
    let matcher = robots.matcher("FooBot");
    let path: String = std::iter::once('/')
        .chain((0..4000).map(|i| (b'a' + (i % 25) as u8) as char))
        .collect();
    let verdict = matcher.check_path(path.as_bytes());
    let google = google_verdict(body.as_bytes(), &["FooBot"], &path);
    assert_eq!(
        (verdict.allowed, verdict.rule.map_or(0, |r| r.line)),
        google
    );
}
