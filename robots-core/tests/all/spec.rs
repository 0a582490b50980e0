//! One test per rule of `REP.md` sections 1–5, with the spec's examples and the cases from
//! Google's own test suite. Every check runs through the compiled [`Matcher`] and through the
//! direct port of Google's algorithm, and both must give the expected answer.

use robots_core::reference::google_verdict;
use robots_core::{
    RobotsTxt, RuleKind, Selection, is_valid_token, product_token, user_agent_token,
};

/// Allowed? Checked by the matcher and by the Google port, which must agree (line included).
fn allowed(body: &str, agent: &str, url: &str) -> bool {
    allowed_bytes(body.as_bytes(), agent, url)
}

fn allowed_bytes(body: &[u8], agent: &str, url: &str) -> bool {
    let matcher = RobotsTxt::parse(body).matcher(agent);
    let ours = matcher.check_url(url);
    // The crawler's token is handed to both as given (spec section 3).
    let google = google_verdict(body, &[agent], url);
    assert_eq!(
        (ours.allowed, ours.rule.map_or(0, |r| r.line)),
        google,
        "matcher and Google port disagree on {url} for {agent}:\n{}",
        String::from_utf8_lossy(body)
    );
    ours.allowed
}

/// The deciding line, or 0 for none.
fn line(body: &str, agent: &str, url: &str) -> u32 {
    let matcher = RobotsTxt::parse(body.as_bytes()).matcher(agent);
    let verdict = matcher.check_url(url);
    verdict.rule.map_or(0, |r| r.line)
}

const U: &str = "http://foo.bar";

fn url(path: &str) -> String {
    format!("{U}{path}")
}

// ---------------------------------------------------------------- 1. Bytes to lines

#[test]
fn bom_prefix_is_skipped() {
    for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
        let mut body = bom.to_vec();
        body.extend_from_slice(b"User-Agent: foo\nDisallow: /AnyValue\n");
        assert!(!allowed_bytes(&body, "foo", &url("/AnyValue")), "{bom:?}");
    }
    // A broken BOM: only EF is skipped, the 0x11 0xBF stay and spoil the key.
    let broken = b"\xEF\x11\xBFUser-Agent: foo\nDisallow: /AnyValue\n";
    assert!(allowed_bytes(broken, "foo", &url("/AnyValue")));
    // A BOM elsewhere is data: it spoils the second line's key.
    let later = b"User-Agent: foo\n\xEF\xBB\xBFDisallow: /AnyValue\n";
    assert!(allowed_bytes(later, "foo", &url("/AnyValue")));
}

#[test]
fn line_ends_and_numbering() {
    let body = "User-agent: foo\r\nAllow: /a\rDisallow: /\nAllow: /b\n\rAllow: /c\r\r\nAllow: /d";
    assert_eq!(line(body, "foo", &url("/x")), 3);
    assert_eq!(line(body, "foo", &url("/b")), 4);
    // \n\r is two breaks, so /c is on line 6; \r\r\n two, so /d is on line 8.
    assert_eq!(line(body, "foo", &url("/c")), 6);
    assert_eq!(line(body, "foo", &url("/d")), 8);
    assert!(allowed(body, "foo", &url("/d")));
    assert_eq!(RobotsTxt::parse(body.as_bytes()).line_count(), 8);
    assert_eq!(RobotsTxt::parse(b"a\n").line_count(), 2);
}

#[test]
fn long_lines_are_cut_and_still_used() {
    // From Google's tests: a disallow whose end is cut off still disallows by its prefix.
    let max_line = 2083 * 8;
    let mut long = String::from("/x/");
    while long.len() < max_line - 3 - "disallow: ".len() + 1 {
        long.push('a');
    }
    let body = format!("user-agent: FooBot\ndisallow: {long}/qux\n");
    assert!(allowed(&body, "FooBot", &url("/fux")));
    assert!(!allowed(&body, "FooBot", &url(&format!("{long}/fux"))));

    let (mut a, mut b) = (String::from("/x/"), String::from("/x/"));
    while a.len() < max_line - "allow: ".len() + 1 {
        a.push('a');
        b.push('b');
    }
    let body = format!("user-agent: FooBot\ndisallow: /\nallow: {a}/qux\nallow: {b}/qux\n");
    assert!(!allowed(&body, "FooBot", &url("/")));
    assert!(allowed(&body, "FooBot", &url(&format!("{a}/qux"))));
    assert!(allowed(&body, "FooBot", &url(&format!("{b}/fux"))));
}

#[test]
fn nul_ends_a_line() {
    let body = b"User-agent: *\nDisallow: /a\0/b\nDisallow: \0/c\n";
    assert!(!allowed_bytes(body, "x", &url("/a/z")));
    assert!(allowed_bytes(body, "x", &url("/c")));
}

// ---------------------------------------------------------------- 2. A line to key and value

#[test]
fn comments_are_cut_at_the_first_hash() {
    let body = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n";
    assert!(allowed(body, "FooBot", &url("/foo/bar")));
    assert!(!allowed(body, "FooBot", &url("/foo/quz")));
}

#[test]
fn keys_are_case_insensitive_values_are_not() {
    for body in [
        "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n",
        "user-agent: FooBot\nallow: /x/\ndisallow: /\n",
        "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n",
    ] {
        assert!(allowed(body, "FooBot", &url("/x/y")));
        assert!(!allowed(body, "FooBot", &url("/a/b")));
    }
    assert!(!allowed(
        "user-agent: FooBot\ndisallow: /x/\n",
        "FooBot",
        &url("/x/y")
    ));
    assert!(allowed(
        "user-agent: FooBot\ndisallow: /X/\n",
        "FooBot",
        &url("/x/y")
    ));
}

#[test]
fn whitespace_is_trimmed_around_key_and_value() {
    let body = "\t User-agent \x0B:\x0C FooBot \t\n  Disallow\t:   /a b  \n";
    assert!(!allowed(body, "FooBot", &url("/a b")));
    assert!(allowed(body, "FooBot", &url("/a")));
}

#[test]
fn first_colon_is_the_separator() {
    // Key "Disallow /foo", value "bar": a disallow whose pattern never matches.
    let body = "User-agent: *\nDisallow /foo:bar\n";
    assert!(allowed(body, "x", &url("/foo:bar")));
    assert!(allowed(body, "x", &url("/foo")));
    let body = "User-agent: *\nDisallow: /foo:bar\n";
    assert!(!allowed(body, "x", &url("/foo:bar")));
}

#[test]
fn missing_colon_between_two_words_is_accepted() {
    assert!(!allowed(
        "user-agent FooBot\ndisallow /\n",
        "FooBot",
        &url("/x")
    ));
    assert!(!allowed(
        "user-agent \t FooBot\ndisallow\t/x\n",
        "FooBot",
        &url("/x")
    ));
    // Three tokens: no directive.
    assert!(allowed(
        "user-agent FooBot\ndisallow /x /y\n",
        "FooBot",
        &url("/x")
    ));
    assert!(allowed(
        "user-agent Foo Bot\ndisallow: /\n",
        "Foo",
        &url("/x")
    ));
    // One token: no directive.
    assert!(allowed(
        "user-agent: FooBot\ndisallow\n",
        "FooBot",
        &url("/x")
    ));
    assert!(allowed("foo: FooBot\nbar: /\n", "FooBot", &url("/")));
}

#[test]
fn keys_match_by_prefix_with_accepted_typos() {
    for key in [
        "Disallow",
        "Disallowed",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
        "DISALLOWING",
    ] {
        let body = format!("User-agent: *\n{key}: /x\n");
        assert!(!allowed(&body, "FooBot", &url("/x")), "{key}");
    }
    for key in ["User-agent", "user-agents", "useragent", "User agent"] {
        let body = format!("{key}: FooBot\nDisallow: /x\n");
        assert!(!allowed(&body, "FooBot", &url("/x")), "{key}");
    }
    for key in ["dis-allow", "disalllow", "user_agent", "d1sallow"] {
        let body = format!("User-agent: *\n{key}: /x\n");
        assert!(allowed(&body, "FooBot", &url("/x")), "{key}");
    }
    let robots =
        RobotsTxt::parse(b"Sitemaps: https://a/1\nSite-map: https://a/2\nsitemap:https://a/3");
    assert_eq!(robots.sitemaps().count(), 3);
}

#[test]
fn patterns_are_escaped_before_matching() {
    let base = "User-agent: FooBot\nDisallow: /\n";
    // Non-ASCII bytes are percent-encoded: the rule matches the encoded URL, not the raw one.
    let body = format!("{base}Allow: /foo/bar/\u{30c4}\n");
    assert!(allowed(&body, "FooBot", &url("/foo/bar/%E3%83%84")));
    assert!(!allowed(&body, "FooBot", &url("/foo/bar/\u{30c4}")));
    let body = format!("{base}Allow: /foo/bar/%E3%83%84\n");
    assert!(allowed(&body, "FooBot", &url("/foo/bar/%E3%83%84")));
    assert!(!allowed(&body, "FooBot", &url("/foo/bar/\u{30c4}")));
    // Escapes are not decoded: %62%61%7A is not "baz".
    let body = format!("{base}Allow: /foo/bar/%62%61%7A\n");
    assert!(!allowed(&body, "FooBot", &url("/foo/bar/baz")));
    assert!(allowed(&body, "FooBot", &url("/foo/bar/%62%61%7A")));
    // Hex digits are uppercased in the pattern, never in the URL.
    let body = format!("{base}Allow: /a%2fb\n");
    assert!(allowed(&body, "FooBot", &url("/a%2Fb")));
    assert!(!allowed(&body, "FooBot", &url("/a%2fb")));
    let body = format!("{base}Allow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n");
    assert!(allowed(
        &body,
        "FooBot",
        &url("/foo/bar?qux=taz&baz=http://foo.bar?tar&par")
    ));
}

// ---------------------------------------------------------------- 3. Groups

#[test]
fn groups_as_in_googles_tests() {
    let body = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n";
    assert!(allowed(body, "FooBot", &url("/x/b")));
    assert!(allowed(body, "FooBot", &url("/z/d")));
    assert!(!allowed(body, "FooBot", &url("/y/c")));
    assert!(allowed(body, "BarBot", &url("/y/c")));
    assert!(allowed(body, "BarBot", &url("/w/a")));
    assert!(!allowed(body, "BarBot", &url("/z/d")));
    assert!(allowed(body, "BazBot", &url("/z/d")));
    // The rule before any user-agent line applies to nobody.
    for bot in ["FooBot", "BarBot", "BazBot"] {
        assert!(!allowed(body, bot, &url("/foo/bar/")), "{bot}");
    }
}

#[test]
fn other_records_never_end_a_group() {
    // Google's 2021 change: sitemap and unknown lines inside a group do not close it.
    for middle in [
        "Sitemap: https://foo.bar/sitemap",
        "Invalid-Unknown-Line: unknown",
        "Crawl-delay: 5",
        "",
        "# c",
    ] {
        let body = format!("User-agent: FooBot\n{middle}\nUser-agent: *\nDisallow: /\n");
        assert!(!allowed(&body, "FooBot", &url("/")), "{middle:?}");
        assert!(!allowed(&body, "BarBot", &url("/")), "{middle:?}");
    }
    // The spec's example: one group for a and *.
    let body = "User-agent: a\nCrawl-delay: 5\nUser-agent: *\nDisallow: /x\n";
    assert!(!allowed(body, "a", &url("/x")));
    assert_eq!(RobotsTxt::parse(body.as_bytes()).groups().count(), 1);
}

#[test]
fn a_user_agent_after_a_rule_starts_a_new_group() {
    let body = "User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\n";
    assert!(allowed(body, "FooBot", &url("/b")));
    assert!(!allowed(body, "FooBot", &url("/a")));
    assert!(allowed(body, "BarBot", &url("/a")));
    // Consecutive user-agent lines pile into one group.
    let body = "User-agent: FooBot\nUser-agent: BarBot\nDisallow: /ab\n";
    assert!(!allowed(body, "FooBot", &url("/ab")));
    assert!(!allowed(body, "BarBot", &url("/ab")));
}

#[test]
fn global_agent_detection() {
    for value in ["*", "* foo", "*\tfoo"] {
        let body = format!("User-agent: {value}\nDisallow: /\n");
        assert!(!allowed(&body, "FooBot", &url("/")), "{value:?} is global");
    }
    for value in ["*foo", "**", "foo*", "foo *"] {
        let body = format!("User-agent: {value}\nDisallow: /\n");
        assert!(
            allowed(&body, "FooBot", &url("/")),
            "{value:?} is not global"
        );
    }
}

#[test]
fn product_tokens_of_user_agent_lines() {
    for value in [
        "Googlebot/2.1",
        "Googlebot2",
        "Googlebot*",
        "Googlebot Images",
        "googlebot",
        "GOOGLEBOT/3",
    ] {
        let body = format!("User-agent: {value}\nDisallow: /\n");
        assert!(
            !allowed(&body, "Googlebot", &url("/")),
            "{value:?} names Googlebot"
        );
    }
    // `Googlebot-Image` is its own token, and `Foo Bar` is `Foo`.
    assert!(allowed(
        "User-agent: Googlebot-Image\nDisallow: /\n",
        "Googlebot",
        &url("/")
    ));
    let body = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    assert!(allowed(body, "Foo", &url("/x/y")));
    assert!(!allowed(body, "Bar", &url("/x/y")));
}

#[test]
fn crawler_tokens_are_compared_as_given() {
    let body = "User-agent: FooBot\nDisallow: /\n";
    let robots = RobotsTxt::parse(body.as_bytes());
    for name in ["FooBot", "foobot", "FOOBOT"] {
        assert!(!allowed(body, name, &url("/")), "{name}");
        assert_eq!(
            robots.matcher(name).selection(),
            &Selection::Agent(name.into())
        );
    }
    // Names that are not a bare token never match a specific group (Google compares them as
    // given), and with no `*` group everything is allowed.
    for name in [
        "FooBot/2.1 (+https://foo.example/bot)",
        "FooBot2",
        "FooBot ssh",
        "FooBotX",
    ] {
        assert!(allowed(body, name, &url("/")), "{name}");
        assert_eq!(robots.matcher(name).selection(), &Selection::None, "{name}");
    }
    // APIs that take a User-Agent reduce it first.
    let ua = "FooBot/2.1 (+https://foo.example/bot)";
    assert!(!robots.matcher_for_user_agent(ua).is_allowed(&url("/")));
    assert_eq!(user_agent_token(ua).token, product_token(ua));
}

#[test]
fn google_user_agent_cases() {
    // ID_UserAgentValueCaseInsensitive, as Google wrote it (user-agent values with a space).
    for value in ["FOO BAR", "foo bar", "FoO bAr"] {
        let body = format!("User-Agent: {value}\nAllow: /x/\nDisallow: /\n");
        for agent in ["Foo", "foo"] {
            assert!(allowed(&body, agent, &url("/x/y")), "{value} {agent}");
            assert!(!allowed(&body, agent, &url("/a/b")), "{value} {agent}");
        }
    }
    // GoogleOnly_AcceptUserAgentUpToFirstSpace.
    assert!(!is_valid_token("Foobot Bar"));
    let body = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    assert!(allowed(body, "Foo", &url("/x/y")));
    assert!(!allowed(body, "Foo Bar", &url("/x/y")));
    // ID_VerifyValidUserAgentsToObey.
    for valid in ["Foobot", "Foobot-Bar", "Foo_Bar"] {
        assert!(is_valid_token(valid), "{valid}");
    }
    for invalid in ["", "ツ", "Foobot*", " Foobot ", "Foobot/2.1", "Foobot Bar"] {
        assert!(!is_valid_token(invalid), "{invalid}");
    }
    // A token with digits is compared as given: `AB42bot` is not `AB`, and falls back to `*`.
    let body = "User-agent: AB\nAllow: /\nUser-agent: *\nDisallow: /\n";
    assert!(!allowed(body, "AB42bot", &url("/page")));
    assert!(allowed(body, "AB", &url("/page")));
    let reduced = user_agent_token("AB42bot/1.0");
    assert_eq!((reduced.token, reduced.lost), ("AB", Some("AB42bot")));
    // GoogleOnly_SystemTest: an empty agent matches no group here.
    assert!(allowed("User-agent: FooBot\nDisallow: /\n", "", &url("/")));
}

#[test]
fn ordered_token_lists_use_the_first_token_that_has_a_group() {
    let body = b"User-agent: Googlebot\nDisallow: /a\nUser-agent: Googlebot-Image\nDisallow: /b\nUser-agent: *\nDisallow: /c\n";
    let robots = RobotsTxt::parse(body);
    let image = robots.matcher_for(["Googlebot-Image", "Googlebot"]);
    assert!(!image.is_allowed(&url("/b")) && image.is_allowed(&url("/a")));
    let robots =
        RobotsTxt::parse(b"User-agent: Googlebot\nDisallow: /a\nUser-agent: *\nDisallow: /c\n");
    let image = robots.matcher_for(["Googlebot-Image", "Googlebot"]);
    assert_eq!(image.selection(), &Selection::Agent("Googlebot".into()));
    assert!(!image.is_allowed(&url("/a")) && image.is_allowed(&url("/c")));
    let other = robots.matcher_for(["Other", "Another"]);
    assert_eq!(other.selection(), &Selection::Global);
    assert!(!other.is_allowed(&url("/c")));
}

#[test]
fn groups_are_merged_but_never_with_the_global_one() {
    let body = "User-agent: FooBot\nDisallow: /a\nUser-agent: *\nDisallow: /g\nUser-agent: FooBot\nDisallow: /b\nUser-agent: *\nDisallow: /h\n";
    assert!(!allowed(body, "FooBot", &url("/a")));
    assert!(!allowed(body, "FooBot", &url("/b")));
    assert!(allowed(body, "FooBot", &url("/g")));
    assert!(!allowed(body, "BarBot", &url("/g")));
    assert!(!allowed(body, "BarBot", &url("/h")));
    assert!(allowed(body, "BarBot", &url("/a")));
}

#[test]
fn any_own_group_hides_the_global_one() {
    // Even an empty group, or one whose rules do not match.
    let empty = "User-agent: *\nDisallow: /\nUser-agent: FooBot\n";
    assert!(allowed(empty, "FooBot", &url("/x")));
    assert!(!allowed(empty, "BarBot", &url("/x")));
    let unrelated = "User-agent: FooBot\nAllow: /nothing\nUser-agent: *\nDisallow: /\n";
    assert!(allowed(unrelated, "FooBot", &url("/x")));
    let only_empty_rule = "User-agent: FooBot\nDisallow:\nUser-agent: *\nDisallow: /\n";
    assert!(allowed(only_empty_rule, "FooBot", &url("/x")));
    // Google's secondary global tests.
    assert!(allowed("", "FooBot", &url("/")));
    let global = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
    assert!(!allowed(global, "FooBot", &url("/")));
    assert!(allowed(global, "BarBot", &url("/")));
    let only_specific = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n";
    assert!(allowed(only_specific, "QuxBot", &url("/")));
}

// ---------------------------------------------------------------- 4. Matching a path

#[test]
fn wildcards_and_end_anchor() {
    let body = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n";
    assert!(!allowed(body, "FooBot", &url("/foo/bar/quz")));
    assert!(allowed(body, "FooBot", &url("/foo/quz")));
    assert!(allowed(body, "FooBot", &url("/foo//quz")));
    assert!(allowed(body, "FooBot", &url("/foo/bax/quz")));
    let body = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n";
    assert!(!allowed(body, "FooBot", &url("/foo/bar")));
    assert!(allowed(body, "FooBot", &url("/foo/bar/qux")));
    assert!(allowed(body, "FooBot", &url("/foo/bar/")));
    assert!(allowed(body, "FooBot", &url("/foo/bar/baz")));
    // `$` is special only as the last byte.
    let body = "User-agent: *\nDisallow: /a$b\n";
    assert!(!allowed(body, "x", &url("/a$b/c")));
    assert!(allowed(body, "x", &url("/ab")));
}

#[test]
fn google_documentation_examples() {
    let with = |rule: &str| format!("user-agent: FooBot\ndisallow: /\nallow: {rule}\n");
    for rule in ["/fish", "/fish*"] {
        let body = with(rule);
        assert!(!allowed(&body, "FooBot", &url("/bar")));
        for ok in [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.html?id=anything",
        ] {
            assert!(allowed(&body, "FooBot", &url(ok)), "{rule} {ok}");
        }
        for no in ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"] {
            assert!(!allowed(&body, "FooBot", &url(no)), "{rule} {no}");
        }
    }
    let body = with("/fish/");
    for ok in ["/fish/", "/fish/?id=anything", "/fish/salmon.htm"] {
        assert!(allowed(&body, "FooBot", &url(ok)), "{ok}");
    }
    for no in ["/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"] {
        assert!(!allowed(&body, "FooBot", &url(no)), "{no}");
    }
    let body = with("/*.php");
    for ok in [
        "/index.php",
        "/filename.php",
        "/folder/filename.php",
        "/folder/filename.php?parameters",
        "/folder/any.php.file.html",
        "/filename.php/",
    ] {
        assert!(allowed(&body, "FooBot", &url(ok)), "{ok}");
    }
    for no in ["/", "/windows.PHP"] {
        assert!(!allowed(&body, "FooBot", &url(no)), "{no}");
    }
    let body = with("/*.php$");
    for ok in ["/filename.php", "/folder/filename.php"] {
        assert!(allowed(&body, "FooBot", &url(ok)), "{ok}");
    }
    for no in [
        "/filename.php?parameters",
        "/filename.php/",
        "/filename.php5",
        "/windows.PHP",
    ] {
        assert!(!allowed(&body, "FooBot", &url(no)), "{no}");
    }
    let body = with("/fish*.php");
    assert!(!allowed(&body, "FooBot", &url("/bar")));
    assert!(allowed(&body, "FooBot", &url("/fish.php")));
    assert!(allowed(
        &body,
        "FooBot",
        &url("/fishheads/catfish.php?parameters")
    ));
    assert!(!allowed(&body, "FooBot", &url("/Fish.PHP")));
}

#[test]
fn patterns_without_a_leading_slash_never_match() {
    let body = "User-agent: *\nDisallow: foo\nDisallow: foo/*\nDisallow: $\n";
    assert!(allowed(body, "x", &url("/foo")));
    assert!(allowed(body, "x", &url("foo")));
    assert!(allowed(body, "x", &url("/")));
    // A leading `*` does match.
    assert!(!allowed(
        "User-agent: *\nDisallow: *foo\n",
        "x",
        &url("/a/foo")
    ));
}

#[test]
fn priority_is_the_escaped_length() {
    // /fish* (6) beats /fish (5).
    let body = "User-agent: *\nAllow: /fish\nDisallow: /fish*\n";
    assert!(!allowed(body, "x", &url("/fish")));
    // "/aé" is 8 bytes once escaped (/a%C3%A9), longer than "/a%C3%" (6): the disallow wins.
    // By raw length (4) it would lose.
    let body = "User-agent: *\nAllow: /a%C3%\nDisallow: /a\u{e9}\n";
    assert!(!allowed(body, "x", &url("/a%C3%A9")));
    // `*` and `$` count.
    let body = "User-agent: *\nDisallow: /ab\nAllow: /*b$\n";
    assert!(allowed(body, "x", &url("/ab")));
}

#[test]
fn longest_match_and_ties_to_allow() {
    let page = url("/x/page.html");
    let foo = |rules: &str| format!("user-agent: FooBot\n{rules}");
    assert!(allowed(
        &foo("disallow: /x/page.html\nallow: /x/page.html\n"),
        "FooBot",
        &page
    ));
    assert!(allowed(
        &foo("allow: /x/page.html\ndisallow: /x/page.html\n"),
        "FooBot",
        &page
    ));
    let body = foo("allow: /x/page.html\ndisallow: /x/\n");
    assert!(allowed(&body, "FooBot", &page));
    assert!(!allowed(&body, "FooBot", &url("/x/")));
    assert!(allowed(&foo("disallow: \nallow: \n"), "FooBot", &page));
    assert!(allowed(&foo("disallow: /\nallow: /\n"), "FooBot", &page));
    let body = foo("disallow: /x\nallow: /x/\n");
    assert!(!allowed(&body, "FooBot", &url("/x")));
    assert!(allowed(&body, "FooBot", &url("/x/")));
    let body = foo("allow: /page\ndisallow: /*.html\n");
    assert!(!allowed(&body, "FooBot", &url("/page.html")));
    assert!(allowed(&body, "FooBot", &url("/page")));
    let body = foo("allow: /x/page.\ndisallow: /*.html\n");
    assert!(allowed(&body, "FooBot", &page));
    assert!(!allowed(&body, "FooBot", &url("/x/y.html")));
    let body = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n";
    assert!(allowed(body, "FooBot", &url("/x/page")));
    assert!(!allowed(body, "FooBot", &url("/y/page")));
    // Order of precedence from Google's documentation.
    assert!(allowed(
        &foo("allow: /p\ndisallow: /\n"),
        "FooBot",
        &url("/page")
    ));
    assert!(allowed(
        &foo("allow: /folder\ndisallow: /folder\n"),
        "FooBot",
        &url("/folder/page")
    ));
    assert!(!allowed(
        &foo("allow: /page\ndisallow: /*.htm\n"),
        "FooBot",
        &url("/page.htm")
    ));
    let body = foo("allow: /$\ndisallow: /\n");
    assert!(allowed(&body, "FooBot", &url("/")));
    assert!(!allowed(&body, "FooBot", &url("/page.html")));
}

#[test]
fn empty_patterns_match_with_priority_zero() {
    let body = "User-agent: *\nDisallow:\n";
    assert!(allowed(body, "x", &url("/anything")));
    assert_eq!(line(body, "x", &url("/anything")), 0);
    let body = "User-agent: *\nAllow:\nDisallow: /a\n";
    assert!(!allowed(body, "x", &url("/a")));
}

#[test]
fn index_html_is_a_directory() {
    let body = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
    assert!(allowed(body, "foobot", &url("/allowed-slash/")));
    assert!(!allowed(body, "foobot", &url("/allowed-slash/index.htm")));
    assert!(allowed(body, "foobot", &url("/allowed-slash/index.html")));
    assert!(!allowed(body, "foobot", &url("/anyother-url")));
    // The retry is `/dir/$`: only the directory itself, not what is below it.
    assert!(!allowed(body, "foobot", &url("/allowed-slash/other")));
    // index.htm and index.html5 count too; the reported line is the allow's.
    for name in ["index.htm", "index.html5", "index.htmx"] {
        let body = format!("User-Agent: *\nDisallow: /d/\nAllow: /d/{name}\n");
        assert!(allowed(&body, "x", &url("/d/")), "{name}");
        assert_eq!(line(&body, "x", &url("/d/")), 3);
    }
    // Only for allow lines.
    let body = "User-Agent: *\nDisallow: /d/index.html\n";
    assert!(allowed(body, "x", &url("/d/")));
    let matcher =
        RobotsTxt::parse(b"User-Agent: *\nDisallow: /\nAllow: /d/index.html\n").matcher("x");
    let verdict = matcher.check_url(&url("/d/"));
    assert_eq!(verdict.rule.map(|r| r.pattern), Some(&b"/d/index.html"[..]));
}

#[test]
fn the_matched_rule_is_reported() {
    let body = "User-agent: FooBot\n# comment\nAllow: /a\nDisallow: /a\nDisallow: /b\nDisallow: /b\nDisallow: /c%7e\n";
    let robots = RobotsTxt::parse(body.as_bytes());
    let m = robots.matcher("FooBot");
    let rule = |path: &str| {
        m.check_url(&url(path)).rule.map(|r| {
            (
                r.line,
                r.kind,
                String::from_utf8_lossy(r.pattern).into_owned(),
            )
        })
    };
    // Tie between allow and disallow: the allow is reported.
    assert_eq!(rule("/a"), Some((3, RuleKind::Allow, "/a".into())));
    // Equal priorities of one kind: the earliest line.
    assert_eq!(rule("/b"), Some((5, RuleKind::Disallow, "/b".into())));
    // The pattern as written, not escaped.
    assert_eq!(rule("/c%7E"), Some((7, RuleKind::Disallow, "/c%7e".into())));
    assert_eq!(rule("/z"), None);
}

#[test]
fn robots_txt_itself_is_not_special() {
    assert!(!allowed(
        "User-agent: *\nDisallow: /\n",
        "x",
        &url("/robots.txt")
    ));
}

// ---------------------------------------------------------------- 5. URL to path

#[test]
fn url_to_path() {
    let body = "User-agent: *\nDisallow: /$\nDisallow: /;p\nDisallow: /?a\nDisallow: /p\n";
    assert!(!allowed(body, "x", "http://h"));
    assert!(!allowed(body, "x", "http://h?a"));
    assert!(!allowed(body, "x", "http://h;p"));
    assert!(!allowed(body, "x", "http://h#/x"));
    assert!(!allowed(body, "x", "//h/p"));
    // The fragment is not part of the path; params and the query are.
    let body = "User-agent: *\nDisallow: /a$\nDisallow: /b?q=1$\n";
    assert!(!allowed(body, "x", "https://h/a#frag"));
    assert!(!allowed(body, "x", "https://h/b?q=1#frag"));
    // Nothing is decoded and dot segments are kept.
    let body = "User-agent: *\nDisallow: /private\n";
    assert!(allowed(body, "x", "https://h/public/../private"));
    assert!(allowed(body, "x", "https://h/%70rivate"));
}

// ---------------------------------------------------------------- 6. Other records

#[test]
fn crawl_delay_and_request_rate_follow_the_group_selection() {
    let body = b"User-agent: *\nCrawl-delay: 1\nDisallow: /\n\nUser-agent: Baiduspider\nCrawl-delay: 10\n\nUser-agent: Googlebot\nCrawl-delay: abc\nCrawl-delay: 0.5\nRequest-rate: 1/10s\nDisallow: /x\n";
    let robots = RobotsTxt::parse(body);
    for matcher in [
        robots.matcher("Googlebot"),
        robots_core::Matcher::from_body(body, ["Googlebot"]),
    ] {
        // The Crawl-delay between Baiduspider and Googlebot belongs to their shared group.
        assert_eq!(
            matcher.crawl_delay().map(|c| (c.delay.as_millis(), c.line)),
            Some((10_000, 6))
        );
        assert_eq!(
            matcher
                .request_rate()
                .map(|(r, line)| (r.interval().as_secs(), line)),
            Some((10, 11))
        );
    }
    let other = robots.matcher("Other");
    assert_eq!(
        other.crawl_delay().map(|c| (c.delay.as_secs(), c.line)),
        Some((1, 2))
    );
    assert_eq!(other.request_rate(), None);
    // Invalid values are skipped: the first valid one counts.
    let robots =
        RobotsTxt::parse(b"User-agent: *\nCrawl-delay: -1\nCrawl-delay: soon\nCrawl-delay: .5\n");
    assert_eq!(
        robots
            .matcher("x")
            .crawl_delay()
            .map(|c| (c.delay.as_millis(), c.line)),
        Some((500, 4))
    );
    // None when no group applies.
    assert_eq!(
        RobotsTxt::parse(b"User-agent: a\nCrawl-delay: 3\n")
            .matcher("b")
            .crawl_delay(),
        None
    );
}

#[test]
fn sitemaps_and_other_records_are_kept_in_file_order() {
    let body = b"Sitemap: https://e.com/a.xml\nUser-agent: x\nHost: e.com\nContent-Signal: search=yes, ai-train=no\nSitemap: https://e.com/b.xml\nClean-param: ref /articles/\n";
    let robots = RobotsTxt::parse(body);
    let sitemaps: Vec<(u32, &[u8])> = robots.sitemaps().map(|s| (s.line, s.url)).collect();
    assert_eq!(
        sitemaps,
        [
            (1, &b"https://e.com/a.xml"[..]),
            (5, b"https://e.com/b.xml")
        ]
    );
    let records: Vec<(u32, String, String)> = robots
        .records()
        .map(|r| {
            (
                r.line,
                String::from_utf8_lossy(r.key).into_owned(),
                String::from_utf8_lossy(r.value).into_owned(),
            )
        })
        .collect();
    assert_eq!(
        records,
        [
            (3, "Host".to_string(), "e.com".to_string()),
            (
                4,
                "Content-Signal".to_string(),
                "search=yes, ai-train=no".to_string()
            ),
            (6, "Clean-param".to_string(), "ref /articles/".to_string()),
        ]
    );
    // They never affect allow/disallow.
    assert!(robots.matcher("x").is_allowed("https://e.com/articles/"));
}

// ---------------------------------------------------------------- The view's guarantees

#[test]
fn views_are_cheap_to_clone_and_shareable_across_threads() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<robots_core::Matcher>();
    shareable::<RobotsTxt>();
    let matcher = RobotsTxt::parse(b"User-agent: *\nDisallow: /x\n").matcher("FooBot");
    let clone = matcher.clone();
    // Clones share the compiled rules: the same bytes, not a copy.
    let a = matcher
        .check_url("http://h/x")
        .rule
        .map(|r| r.pattern.as_ptr());
    let b = clone
        .check_url("http://h/x")
        .rule
        .map(|r| r.pattern.as_ptr());
    assert_eq!(a, b);
    let handle = std::thread::spawn(move || clone.is_allowed("http://h/x"));
    assert!(!handle.join().unwrap());
}

/// Spec section 5, served paths: a path as a server serves it is matched against the patterns
/// normalised the same way (unreserved escapes decoded, other escapes' hex in uppercase), by
/// the compiled view and by the scan alike, so a file's own rules keep their meaning.
#[test]
fn served_paths_meet_the_patterns_normalised() {
    use robots_core::url_path::served_paths;
    let body = b"User-agent: *\nDisallow: /enc/\nAllow: /enc/%62%61%7A\nDisallow: /~user\nDisallow: /x%2fy\nAllow: /index.html\nDisallow: /\n";
    let robots = RobotsTxt::parse(body);
    let matcher = robots.matcher("FooBot");
    let scan = robots.rule_scan("FooBot");
    // What a polite front end decides: the path as given, and each path it may be served as.
    let polite = |url: &str| {
        let path = robots_core::path_of(url);
        let given = matcher.check_path(path.as_bytes());
        assert_eq!(given, scan.check_path(&robots, path.as_bytes()), "{url}");
        let served: Vec<_> = served_paths(&path)
            .into_iter()
            .map(|served| {
                let verdict = matcher.check_served_path(served.as_bytes());
                assert_eq!(
                    verdict,
                    scan.check_served_path(&robots, served.as_bytes()),
                    "{url}"
                );
                (served, verdict.allowed, verdict.rule.map(|r| r.line))
            })
            .collect();
        (
            given.allowed && served.iter().all(|(_, allowed, _)| *allowed),
            served,
        )
    };
    // Served as `/enc/baz.html`: the Allow (line 3), normalised, outranks `/enc/`.
    let (allowed, served) = polite("http://h/enc/%62%61%7A.html");
    assert!(allowed, "{served:?}");
    assert_eq!(served, [("/enc/baz.html".to_string(), true, Some(3))]);
    // Lowercase hex: served the same, but Google's verdict on the path as given (which the
    // polite front ends keep) does not match the Allow's uppercase escape.
    let (allowed, served) = polite("http://h/enc/%62%61%7a.html");
    assert!(!allowed);
    assert_eq!(served, [("/enc/baz.html".to_string(), true, Some(3))]);
    // As given, `/enc/baz` meets the Allow as written, which it does not match.
    assert!(!polite("http://h/enc/baz").0);
    // `/%7Euser/` is served as `/~user/`.
    let (allowed, served) = polite("http://h/%7Euser/");
    assert!(!allowed);
    assert_eq!(served, [("/~user/".to_string(), false, Some(4))]);
    // An escape that is not of an unreserved character stays one, its hex in uppercase.
    assert!(!matcher.check_served_path(b"/x%2Fy/z").allowed);
    assert_eq!(
        matcher.check_served_path(b"/x%2fy/z").rule.map(|r| r.line),
        Some(5)
    );
    // The index.html retry keeps its meaning for a served path.
    let verdict = matcher.check_served_path(b"/%69ndex.html");
    assert!(verdict.allowed, "{verdict:?}");
    // A file with no escape in its patterns checks served paths as given paths.
    let plain = RobotsTxt::parse(b"User-agent: *\nDisallow: /~user\n");
    let plain_matcher = plain.matcher("FooBot");
    assert!(!plain_matcher.check_served_path(b"/~user/").allowed);
    assert!(plain_matcher.check_served_path(b"/%7Eother").allowed);
}
