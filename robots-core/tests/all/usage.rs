//! One test per rule of `REP.md` section 10 (AI usage preferences), with the drafts' own
//! examples. Every answer is asked of both ways to a view (the full parse and the one-crawler
//! parse), which must agree, and every crawl verdict is checked against the Google port.

use robots_core::reference::google_verdict;
use robots_core::{Matcher, Preference, RobotsTxt, UsagePreferences};

use Preference::{No, Unknown, Yes};

/// The usage for a URL, through both views; they must agree, and the verdict must be Google's.
fn usage(body: &str, agents: &[&str], url: &str) -> (bool, UsagePreferences) {
    let full = RobotsTxt::parse(body.as_bytes()).matcher_for(agents);
    let direct = Matcher::from_body(body.as_bytes(), agents);
    let (a, b) = (full.usage(url), direct.usage(url));
    assert_eq!(
        a, b,
        "full parse and one-crawler parse disagree on {url}:\n{body}"
    );
    let google = google_verdict(body.as_bytes(), agents, url);
    assert_eq!(
        (a.verdict.allowed, a.verdict.rule.map_or(0, |r| r.line)),
        google,
        "{url}:\n{body}"
    );
    (a.verdict.allowed, a.preferences)
}

fn train_ai(body: &str, agent: &str, path: &str) -> (Preference, Option<u32>) {
    let (_, p) = usage(body, &[agent], &format!("https://example.com{path}"));
    (p.train_ai.preference, p.train_ai.line)
}

/// draft-ietf-aipref-attach, "Example": the table of paths, crawl and preference.
#[test]
fn the_attach_drafts_example() {
    let body = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n";
    let at = |agent: &str, path: &str| usage(body, &[agent], &format!("https://e.com{path}"));
    let (crawl, prefs) = at("OtherBot", "/test");
    assert!(crawl);
    assert_eq!(
        (prefs.train_ai.preference, prefs.train_ai.line),
        (No, Some(4))
    );
    let (crawl, prefs) = at("OtherBot", "/never/test");
    assert!(!crawl);
    assert_eq!(prefs, UsagePreferences::default(), "N/A: not crawlable");
    let (crawl, prefs) = at("OtherBot", "/ai-ok/test");
    assert!(crawl);
    assert_eq!(
        (prefs.train_ai.preference, prefs.train_ai.line),
        (Yes, Some(5))
    );
    // ExampleBot uses its own group only.
    for path in ["/test", "/never/test", "/ai-ok/test"] {
        let (crawl, prefs) = at("ExampleBot", path);
        assert!(crawl, "{path}");
        assert_eq!(
            (prefs.train_ai.preference, prefs.train_ai.line),
            (Yes, Some(9))
        );
        assert_eq!(prefs.search.preference, Unknown);
    }
}

/// draft-ietf-aipref-attach, introduction: the header's dictionary in robots.txt.
#[test]
fn the_attach_drafts_introduction() {
    let body = "User-Agent: *\nAllow: /\nContent-Usage: / train-ai=n\n";
    assert_eq!(train_ai(body, "AnyBot", "/"), (No, Some(3)));
    assert_eq!(train_ai(body, "AnyBot", "/deep/page?x=1"), (No, Some(3)));
}

#[test]
fn the_value_ends_at_a_comment_and_the_path_at_whitespace() {
    let body = "User-agent: *\nContent-Usage: /a/\ttrain-ai=n # not for training\nContent-Usage: train-ai=y#trailing\n";
    assert_eq!(train_ai(body, "X", "/a/b"), (No, Some(2)));
    assert_eq!(train_ai(body, "X", "/b"), (Yes, Some(3)));
}

#[test]
fn without_a_path_a_preference_applies_to_every_path_at_priority_zero() {
    let body = "User-agent: *\nContent-Usage: search=n\nContent-Usage: /* search=y\n";
    // `/*` (priority 2) beats no path (priority 0) everywhere.
    let (_, p) = usage(body, &["X"], "https://e.com/x");
    assert_eq!((p.search.preference, p.search.line), (Yes, Some(3)));
    let body = "User-agent: *\nContent-Usage: search=n\n";
    let (_, p) = usage(body, &["X"], "https://e.com/");
    assert_eq!((p.search.preference, p.search.line), (No, Some(2)));
}

#[test]
fn selection_is_the_same_as_allow_and_disallow() {
    let body = "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n\nUser-agent: FooBot\nDisallow: /private\n\nUser-agent: BarBot\nContent-Usage: train-ai=y\nUser-agent: Bar\n";
    // FooBot has a group (without Content-Usage): the `*` group's preference does not apply.
    assert_eq!(train_ai(body, "FooBot", "/x"), (Unknown, None));
    assert_eq!(train_ai(body, "BarBot", "/x"), (Yes, Some(9)));
    assert_eq!(train_ai(body, "OtherBot", "/x"), (No, Some(3)));
    // Tokens compared as given; the first token with a group wins.
    assert_eq!(train_ai(body, "barbot", "/x"), (Yes, Some(9)));
    let (_, p) = usage(body, &["BarBot-Image", "BarBot"], "https://e.com/x");
    assert_eq!(p.train_ai.preference, Yes);
    // Google's grouping: a group with no allow/disallow yet takes the next user-agent in, so
    // FooBot here shares the `*` group and its preference.
    let body =
        "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: FooBot\nDisallow: /private\n";
    assert_eq!(train_ai(body, "FooBot", "/x"), (No, Some(2)));
}

#[test]
fn usage_lines_never_end_a_group_and_never_change_a_verdict() {
    // One group for a and b: Content-Usage and Content-Signal between user-agent lines are
    // unknown keys to Google.
    let body = "User-agent: a\nContent-Usage: train-ai=n\nContent-Signal: ai-train=no\nUser-agent: b\nDisallow: /x\n";
    for agent in ["a", "b"] {
        let (crawl, p) = usage(body, &[agent], "https://e.com/x");
        assert!(!crawl, "{agent}");
        assert!(!p.is_stated());
        let (crawl, p) = usage(body, &[agent], "https://e.com/y");
        assert!(crawl);
        assert_eq!(p.may_train_ai(), No);
    }
    // With every usage line removed, every verdict is the same.
    let stripped = "User-agent: a\n\n\nUser-agent: b\nDisallow: /x\n";
    for path in ["/x", "/y", "/"] {
        let url = format!("https://e.com{path}");
        assert_eq!(
            google_verdict(body.as_bytes(), &["a"], &url),
            google_verdict(stripped.as_bytes(), &["a"], &url)
        );
    }
}

#[test]
fn content_usage_before_any_group_applies_to_nobody() {
    let body = "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n";
    assert_eq!(train_ai(body, "X", "/"), (Unknown, None));
}

#[test]
fn the_longest_path_wins_and_equal_paths_combine_per_key() {
    let body = "User-agent: *\nContent-Usage: /a/ train-ai=y, search=y\nContent-Usage: /a/ train-ai=n\nContent-Usage: /a/b train-ai=y\nContent-Usage: / search=n\n";
    let (_, p) = usage(body, &["X"], "https://e.com/a/x");
    // Same path: any n gives n (line 3); search is y from line 2, the n on `/` is shorter.
    assert_eq!((p.train_ai.preference, p.train_ai.line), (No, Some(3)));
    assert_eq!((p.search.preference, p.search.line), (Yes, Some(2)));
    let (_, p) = usage(body, &["X"], "https://e.com/a/b");
    // The longest rule wins whole: it says nothing of search, so search is unknown.
    assert_eq!((p.train_ai.preference, p.train_ai.line), (Yes, Some(4)));
    assert_eq!((p.search.preference, p.search.line), (Unknown, Some(4)));
    let (_, p) = usage(body, &["X"], "https://e.com/z");
    assert_eq!((p.search.preference, p.search.line), (No, Some(5)));
}

#[test]
fn paths_match_like_rules_wildcards_end_anchors_and_escapes_included() {
    let body = "User-agent: *\nContent-Usage: /*.pdf$ train-ai=n\nContent-Usage: /caf\u{e9}/ train-ai=y\nContent-Usage: /%7euser/ train-ai=y\n";
    assert_eq!(train_ai(body, "X", "/docs/a.pdf"), (No, Some(2)));
    assert_eq!(
        train_ai(body, "X", "/docs/a.pdf?download=1"),
        (Unknown, None)
    );
    assert_eq!(train_ai(body, "X", "/caf%C3%A9/menu"), (Yes, Some(3)));
    assert_eq!(train_ai(body, "X", "/%7Euser/x"), (Yes, Some(4)));
}

#[test]
fn preferences_apply_only_to_urls_the_crawler_may_fetch() {
    let body = "User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=y\nContent-Signal: ai-train=yes\n";
    let (crawl, p) = usage(body, &["X"], "https://e.com/private/x");
    assert!(!crawl);
    assert_eq!(p, UsagePreferences::default());
    let (crawl, p) = usage(body, &["X"], "https://e.com/public");
    assert!(crawl);
    assert_eq!(p.may_train_ai(), Yes);
}

#[test]
fn malformed_dictionaries_make_every_preference_unknown() {
    for value in [
        "Train-AI=n",
        "train-ai=n search=y",
        "train-ai=n,",
        "train-ai=\u{e9}",
    ] {
        let body = format!("User-agent: *\nContent-Usage: {value}\n");
        let (_, p) = usage(&body, &["X"], "https://e.com/");
        assert_eq!(
            (p.train_ai.preference, p.search.preference),
            (Unknown, Unknown),
            "{value}"
        );
        // The rule still applied (its line decided that nothing is known).
        assert_eq!(p.train_ai.line, Some(2), "{value}");
    }
}

#[test]
fn unknown_values_keys_and_parameters() {
    let body = "User-agent: *\nContent-Usage: train-ai=no, search=y;reason=\"index\", ai-use=n\n";
    let (_, p) = usage(body, &["X"], "https://e.com/");
    assert_eq!(p.train_ai.preference, Unknown);
    assert_eq!(p.search.preference, Yes);
}

#[test]
fn content_signal_in_a_group_and_outside_any_group() {
    // Cloudflare's managed robots.txt puts it in the `*` group.
    let managed = "User-Agent: *\nContent-Signal: search=yes,ai-train=no\nAllow: /\n\nUser-agent: Amazonbot\nDisallow: /\n";
    let (_, p) = usage(managed, &["FooBot"], "https://e.com/article");
    let signal = p.content_signal.unwrap_or_default();
    assert_eq!(
        (signal.search.preference, signal.search.line),
        (Yes, Some(2))
    );
    assert_eq!(signal.ai_train.preference, No);
    assert_eq!(signal.ai_input.preference, Unknown);
    assert_eq!((p.may_search(), p.may_train_ai()), (Yes, No));
    // Before any group: every crawler, even one with its own group, even with no group at all.
    let global = "Content-Signal: ai-train=no\nUser-agent: FooBot\nAllow: /\n";
    for agent in ["FooBot", "Other"] {
        let (_, p) = usage(global, &[agent], "https://e.com/x");
        assert_eq!(p.may_train_ai(), No, "{agent}");
    }
    let (_, p) = usage("Content-Signal: ai-input=yes\n", &["Any"], "https://e.com/");
    assert_eq!(p.may_use_as_ai_input(), Yes);
    // An optional path scopes it.
    let scoped =
        "User-agent: *\nContent-Signal: ai-train=yes\nContent-Signal: /news/ ai-train=no\n";
    let (_, p) = usage(scoped, &["X"], "https://e.com/news/today");
    assert_eq!(p.may_train_ai(), No);
    let (_, p) = usage(scoped, &["X"], "https://e.com/blog");
    assert_eq!(p.may_train_ai(), Yes);
}

#[test]
fn the_two_vocabularies_combine_restrictively() {
    let body = "User-agent: *\nContent-Usage: train-ai=y, search=n\nContent-Signal: ai-train=no, search=yes\n";
    let (_, p) = usage(body, &["X"], "https://e.com/");
    assert_eq!((p.train_ai.preference, p.search.preference), (Yes, No));
    assert_eq!((p.may_train_ai(), p.may_search()), (No, No));
}

#[test]
fn a_missing_colon_is_accepted_as_for_every_key() {
    let body = "User-agent: *\nContent-Usage train-ai=n\n";
    assert_eq!(train_ai(body, "X", "/"), (No, Some(2)));
}

#[test]
fn policy_tokens_are_checked_from_the_same_parse() {
    let body = "User-agent: *\nAllow: /\n\nUser-agent: Google-Extended\nDisallow: /\nContent-Usage: train-ai=n\n";
    let robots = RobotsTxt::parse(body.as_bytes());
    let googlebot = robots.matcher("Googlebot");
    let extended = robots.matcher("Google-Extended");
    assert!(googlebot.is_allowed("https://e.com/a"));
    assert!(!extended.is_allowed("https://e.com/a"));
    assert!(!extended.usage("https://e.com/a").preferences.is_stated());
    assert!(extended.has_usage_rules() && !googlebot.has_usage_rules());
}

#[test]
fn a_path_without_its_slash_is_checked_as_if_it_had_one() {
    let m = RobotsTxt::parse(b"User-agent: *\nDisallow: /x\nContent-Usage: /open/ train-ai=y\n")
        .matcher("X");
    assert_eq!(m.usage_path(b"open/a"), m.usage_path(b"/open/a"));
    assert_eq!(m.usage_path(b"open/a").preferences.may_train_ai(), Yes);
    assert!(!m.usage_path(b"x").verdict.allowed);
}

#[test]
fn views_without_usage_lines_carry_nothing() {
    let m = RobotsTxt::parse(b"User-agent: *\nDisallow: /x\nCrawl-delay: 3\n").matcher("X");
    assert!(!m.has_usage_rules());
    assert!(!m.usage("https://e.com/").preferences.is_stated());
}
