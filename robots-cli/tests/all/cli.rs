//! The `robots` command-line contract, driven as other tools drive it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the `robots` binary with `args`, writing `stdin` to it.
pub(crate) fn robots(args: &[&str], stdin: &[u8]) -> Output {
    robots_with_env(args, stdin, &[])
}

/// [`robots`] with these environment variables set, and `RUST_LOG` unset unless among them.
pub(crate) fn robots_with_env(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_robots"))
        .args(args)
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the robots binary runs");
    if let Some(mut input) = child.stdin.take() {
        // The CLI may exit before reading stdin (usage errors); that is not a test failure.
        let _ = input.write_all(stdin);
    }
    child
        .wait_with_output()
        .expect("the robots binary finishes")
}

fn file(name: &str, body: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("robots-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, body).expect("temp file");
    path
}

const BODY: &[u8] = b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: FooBot\nDisallow: /foo\n";

#[test]
fn check_json_follows_the_contract_byte_for_byte() {
    let path = file("contract.txt", BODY);
    let out = robots(
        &[
            "check",
            "--robots",
            path.to_str().unwrap(),
            "--user-agent",
            "BarBot/1.0 (+https://bar.example)",
            "--format",
            "json",
            "--",
            "https://e.com/private/x",
            "https://e.com/private/ok",
            "https://e.com/",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        concat!(
            "{\"url\": \"https://e.com/private/x\", \"allowed\": false, \"rule\": {\"line\": 2, \"kind\": \"disallow\", \"pattern\": \"/private\"}, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n",
            "{\"url\": \"https://e.com/private/ok\", \"allowed\": true, \"rule\": {\"line\": 3, \"kind\": \"allow\", \"pattern\": \"/private/ok\"}, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n",
            "{\"url\": \"https://e.com/\", \"allowed\": true, \"rule\": null, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n",
        )
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn check_reports_patterns_as_written_and_escapes_json() {
    let path = file(
        "written.txt",
        "User-agent: *\nDisallow: /caf\u{e9}\"%7e\n".as_bytes(),
    );
    let out = robots(
        &[
            "check",
            "--robots",
            path.to_str().unwrap(),
            "--agent",
            "x",
            "--format",
            "json",
            "https://e.com/caf%C3%A9\"%7E",
        ],
        b"",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"url\": \"https://e.com/caf%C3%A9\\\"%7E\", \"allowed\": false, \"rule\": {\"line\": 2, \"kind\": \"disallow\", \"pattern\": \"/caf\u{e9}\\\"%7e\"}, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n"
    );
    // (Served as `/caf%C3%A9"~`, it meets the pattern normalised the same way, `%7e` as `~`: the
    // same verdict, so no resolved path is reported.)
}

#[test]
fn exit_status_is_zero_when_everything_is_allowed() {
    let path = file("allowed.txt", BODY);
    let out = robots(
        &[
            "check",
            "--robots",
            path.to_str().unwrap(),
            "--agent",
            "FooBot",
            "https://e.com/private",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "FooBot has its own group, so /private is allowed"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("allowed") && text.contains("no rule matched"),
        "{text}"
    );
}

#[test]
fn urls_come_from_stdin_in_order_when_none_are_given() {
    let path = file("stdin.txt", BODY);
    let out = robots(
        &[
            "check",
            "--robots",
            path.to_str().unwrap(),
            "--agent",
            "FooBot",
            "--format",
            "json",
        ],
        b"https://e.com/foo\r\n\n  https://e.com/bar  \nhttps://e.com/foo/x\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("{\"url\": \"https://e.com/foo\", \"allowed\": false"));
    assert!(lines[1].starts_with("{\"url\": \"https://e.com/bar\", \"allowed\": true"));
    assert!(lines[2].starts_with("{\"url\": \"https://e.com/foo/x\", \"allowed\": false"));
}

#[test]
fn text_format_shows_the_verdict_and_the_deciding_line() {
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "x",
            "https://e.com/private/a",
        ],
        BODY,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("DISALLOWED"), "{text}");
    assert!(
        text.contains("https://e.com/private/a") && text.contains("line 2: Disallow: /private"),
        "{text}"
    );
}

#[test]
fn only_the_first_512000_bytes_are_read() {
    let mut body = b"User-agent: *\nDisallow: /early\n".to_vec();
    while body.len() < 512_000 - 4 {
        body.extend_from_slice(b"# padding padding padding padding\n");
    }
    body.truncate(512_000 - 4);
    body.extend_from_slice(b"\nDisallow: /late\n");
    let path = file("big.txt", &body);
    let out = robots(
        &[
            "check",
            "--robots",
            path.to_str().unwrap(),
            "--agent",
            "x",
            "https://e.com/early",
            "https://e.com/late",
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("DISALLOWED"), "{text}");
    assert!(
        lines[1].starts_with("allowed"),
        "rules past 512,000 bytes are ignored: {text}"
    );
}

#[test]
fn usage_and_input_errors_exit_with_2() {
    let missing = robots(
        &[
            "check",
            "--robots",
            "/nonexistent/robots.txt",
            "--agent",
            "x",
            "/a",
        ],
        b"",
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/robots.txt"));
    let both_stdin = robots(&["check", "--robots", "-", "--agent", "x"], BODY);
    assert_eq!(both_stdin.status.code(), Some(2));
    assert!(!both_stdin.stderr.is_empty());
    let no_agent = robots(&["check", "--robots", "-", "/a"], BODY);
    assert_eq!(no_agent.status.code(), Some(2));
    let bad_format = robots(
        &[
            "check", "--robots", "-", "--agent", "x", "--format", "xml", "/a",
        ],
        BODY,
    );
    assert_eq!(bad_format.status.code(), Some(2));
}

#[test]
fn lint_reports_lines_and_kinds() {
    let body = b"Disallow: /x\nUser-agent: Googlebot/2.1\nDissallow: /a\nCrawl-delay: soon\n";
    let out = robots(&["lint", "--format", "json", "-"], body);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let kinds: Vec<&str> = text
        .lines()
        .map(|l| {
            l.split("\"kind\": \"")
                .nth(1)
                .and_then(|k| k.split('"').next())
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "rule_before_user_agent",
            "user_agent_cut_short",
            "typo_key",
            "non_google_key",
            "invalid_crawl_delay"
        ]
    );
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.starts_with("{\"line\": 1, \"severity\": \"error\", \"kind\": ")),
        "{text}"
    );
    let path = file("lint.txt", body);
    let out = robots(&["lint", path.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("lint.txt:3: warning: typo_key:"), "{text}");
    let clean = robots(&["lint", "-"], b"User-agent: *\nDisallow: /x\n");
    assert_eq!(clean.status.code(), Some(0));
    assert!(clean.stdout.is_empty());
}

/// A misspelt key Google does not read is said with what was meant: an error for a rule key
/// (the rule is lost), a warning for the others; and `check` shows why it matters.
#[test]
fn lint_says_what_a_misspelt_key_meant() {
    let body =
        b"User-agent: *\nDisallow: /private/\nAlow: /private/ok\nSitmap: https://e.com/s.xml\n";
    let out = robots(&["lint", "-"], body);
    assert_eq!(out.status.code(), Some(1), "an error is found");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "-:3: error: misspelt_rule: `Alow` is not a key crawlers read: did you mean `Allow`?"
        ),
        "{text}"
    );
    assert!(
        text.contains("-:4: warning: misspelt_key: `Sitmap` is not a key crawlers read: did you mean `Sitemap`?"),
        "{text}"
    );
    // The rule the owner meant is indeed lost: the URL is disallowed.
    let check = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "https://e.com/private/ok",
        ],
        body,
    );
    assert_eq!(check.status.code(), Some(1));
}

#[test]
fn agent_is_a_token_compared_as_given_and_user_agent_is_reduced() {
    let body = b"User-agent: FooBot\nDisallow: /foo\nUser-agent: *\nDisallow: /all\n";
    let check = |crawler: &[&str], url: &str| {
        let mut args = vec!["check", "--robots", "-"];
        args.extend_from_slice(crawler);
        args.extend_from_slice(&["--format", "json", url]);
        robots(&args, body)
    };
    // --agent: the token as given, like Google's robots_main.
    let out = check(&["--agent", "FooBot"], "https://e.com/foo");
    assert_eq!(out.status.code(), Some(1));
    for name in [
        "FooBot/1.0",
        "Foo Bar",
        "Mozilla/5.0 (compatible; FooBot/1.0)",
    ] {
        let out = check(&["--agent", name], "https://e.com/foo");
        assert_eq!(out.status.code(), Some(0), "{name} falls back to *");
        let out = check(&["--agent", name], "https://e.com/all");
        assert_eq!(out.status.code(), Some(1), "{name} falls back to *");
    }
    // --user-agent: reduced to its token.
    let out = check(
        &["--user-agent", "FooBot/2.1 (+https://foo.example/bot)"],
        "https://e.com/foo",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ...and says when that cuts the name short.
    let out = check(&["--user-agent", "AB42bot/1.0"], "https://e.com/x");
    let warning = String::from_utf8_lossy(&out.stderr);
    assert!(
        warning.contains("`AB42bot`") && warning.contains("`AB`"),
        "{warning}"
    );
    // One of the two is required.
    assert_eq!(check(&[], "https://e.com/").status.code(), Some(2));
    // Both: --agent selects the rules (--user-agent is what would be sent).
    let out = check(
        &["--agent", "FooBot", "--user-agent", "Other/1.0"],
        "https://e.com/foo",
    );
    assert_eq!(out.status.code(), Some(1), "FooBot's group applies");
}

/// Issue 36, point 3: `--agent` is repeatable, most specific first, and `--token` is its other
/// name, in `check` as in `crawl`.
#[test]
fn agent_is_repeatable_and_token_is_its_other_name() {
    let body = b"User-agent: FooBot\nDisallow: /foo\nUser-agent: *\nDisallow: /all\n";
    let check = |crawler: &[&str], url: &str| {
        let mut args = vec!["check", "--robots", "-"];
        args.extend_from_slice(crawler);
        args.push(url);
        robots(&args, body).status.code()
    };
    // FooBot-Image has no group of its own: the next token's group applies, not `*`.
    let both = ["--agent", "FooBot-Image", "--agent", "FooBot"];
    assert_eq!(check(&both, "https://e.com/foo"), Some(1));
    assert_eq!(check(&both, "https://e.com/all"), Some(0));
    assert_eq!(
        check(&["--agent", "FooBot-Image"], "https://e.com/all"),
        Some(1)
    );
    assert_eq!(check(&["--token", "FooBot"], "https://e.com/foo"), Some(1));
}

#[test]
fn text_output_notes_a_path_a_server_resolves_differently() {
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "https://e.com/public/../private/x",
            "https://e.com/public/x",
        ],
        b"User-agent: *\nDisallow: /private\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    // Google's verdict for the URL as given stays the verdict (and the exit status)...
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(lines[0].starts_with("allowed"), "{text}");
    // ...with a note that the resolved path is disallowed.
    assert!(
        lines[1].contains(
            "note: a server resolves the path to /private/x, which is disallowed by line 2"
        ),
        "{text}"
    );
    assert!(
        lines[2].starts_with("allowed") && lines.len() == 3,
        "{text}"
    );
    // JSON says it too (`resolved_path`), beside the verdict for the URL as given.
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "--format",
            "json",
            "https://e.com/public/../private/x",
        ],
        b"User-agent: *\nDisallow: /private\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"url\": \"https://e.com/public/../private/x\", \"allowed\": true, \"rule\": null, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": {\"path\": \"/private/x\", \"allowed\": false, \"line\": 2}}\n"
    );
}

#[test]
fn the_cli_explains_itself() {
    let body = b"User-agent: *\nDisallow: /private\n";
    let check = |args: &[&str], stdin: &[u8]| {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        robots(&all, stdin)
    };
    // Local mode is the conformance tool: every string gets Google's verdict, by the path
    // Google's library takes from it (robots_main answers them all), even one that is neither
    // a URL nor a path (its path is `/`), or a URL parser refuses.
    let out = check(&["--robots", "-", "--agent", "FooBot", "not a url"], body);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("allowed"));
    // Strings from other projects' suites that Google's library answers by its own path rule
    // (issue 53, point 8): a host without a dot, and punctuation before the first `;`.
    let rules = b"User-agent: *\nDisallow: /foo.js\nDisallow: /a/\nDisallow: /;;\n";
    for (string, path_rule) in [
        ("xyz/foo.js", "Disallow: /foo.js"),
        ("bob/a/home.html", "Disallow: /a/"),
        (":::::;;`\\|/.example.com/test/", "Disallow: /;;"),
    ] {
        let out = check(&["--robots", "-", "--agent", "FooBot", string], rules);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{string}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("DISALLOWED") && stdout.contains(path_rule),
            "{string}: {stdout}"
        );
    }
    let out = check(&["--robots", "-", "--agent", "FooBot", "http://[::1"], body);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("allowed"));
    // Empty names are usage errors.
    let out = check(&["--robots", "-", "--agent", "", "https://e.com/"], body);
    assert_eq!(out.status.code(), Some(2));
    let out = check(
        &["--robots", "-", "--user-agent", "123/4", "https://e.com/"],
        body,
    );
    assert_eq!(out.status.code(), Some(2));
    // --timeout means nothing with a local file.
    let out = check(
        &[
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "--timeout",
            "3",
            "https://e.com/",
        ],
        body,
    );
    assert_eq!(out.status.code(), Some(2));
    // A file cut at 512,000 bytes is mentioned.
    let mut big = b"User-agent: *\nDisallow: /private\n".to_vec();
    big.resize(600_000, b'#');
    let out = check(
        &["--robots", "-", "--agent", "FooBot", "https://e.com/"],
        &big,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("over 512000 bytes"));
    // --help lists the exit codes and examples.
    let help = String::from_utf8_lossy(&robots(&["--help"], b"").stdout).into_owned();
    assert!(
        help.contains("Exit status:") && help.contains("crawl     0"),
        "{help}"
    );
    let help = String::from_utf8_lossy(&robots(&["check", "--help"], b"").stdout).into_owned();
    assert!(
        help.contains("Examples:") && help.contains("1 any disallowed"),
        "{help}"
    );
    // lint reports an HTML body once, and stops.
    let mut html = b"<!doctype html>\n<html>\n".to_vec();
    for i in 0..500 {
        html.extend_from_slice(format!("<p>{i}</p>\n").as_bytes());
    }
    let out = robots(&["lint", "-"], &html);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("html_body"), "{text}");
}

#[test]
fn the_exit_status_survives_a_closed_pipe() {
    let path = file("pipe.txt", b"User-agent: *\nDisallow: /private\n");
    let mut args = vec![
        "check".to_string(),
        "--robots".into(),
        path.to_string_lossy().into_owned(),
        "--agent".into(),
        "FooBot".into(),
        "https://e.com/first".into(),
    ];
    // Enough output to fill the pipe, and a disallowed URL at the end.
    for i in 0..20_000 {
        args.push(format!("https://e.com/page-{i}"));
    }
    args.push("https://e.com/private/x".into());
    let mut child = Command::new(env!("CARGO_BIN_EXE_robots"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the robots binary runs");
    // `| head -1`: read one line, then close the pipe.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 64];
    let _ = std::io::Read::read(&mut stdout, &mut first);
    drop(stdout);
    let status = child.wait().expect("the robots binary finishes");
    assert_eq!(status.code(), Some(1), "the disallowed URL still counts");
}

#[test]
fn check_reports_usage_preferences_in_json_and_text() {
    let body = b"User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y, search=y\nContent-Signal: /news/ search=yes, ai-input=no\n";
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "ExampleBot",
            "--format",
            "json",
            "https://e.com/test",
            "https://e.com/never/x",
            "https://e.com/ai-ok/a",
            "https://e.com/news/1",
        ],
        body,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        concat!(
            "{\"url\": \"https://e.com/test\", \"allowed\": true, \"rule\": {\"line\": 2, \"kind\": \"allow\", \"pattern\": \"/\"}, \"usage\": {\"train-ai\": \"n\", \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n",
            "{\"url\": \"https://e.com/never/x\", \"allowed\": false, \"rule\": {\"line\": 3, \"kind\": \"disallow\", \"pattern\": \"/never/\"}, \"usage\": {\"train-ai\": null, \"search\": null, \"content-signal\": null}, \"resolved_path\": null}\n",
            "{\"url\": \"https://e.com/ai-ok/a\", \"allowed\": true, \"rule\": {\"line\": 2, \"kind\": \"allow\", \"pattern\": \"/\"}, \"usage\": {\"train-ai\": \"y\", \"search\": \"y\", \"content-signal\": null}, \"resolved_path\": null}\n",
            "{\"url\": \"https://e.com/news/1\", \"allowed\": true, \"rule\": {\"line\": 2, \"kind\": \"allow\", \"pattern\": \"/\"}, \"usage\": {\"train-ai\": \"n\", \"search\": null, \"content-signal\": {\"search\": \"yes\", \"ai-input\": \"no\", \"ai-train\": null}}, \"resolved_path\": null}\n",
        )
    );
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "ExampleBot",
            "https://e.com/news/1",
            "https://e.com/never/x",
        ],
        body,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\n            usage: train-ai=n (line 4); content-signal: search=yes (line 6), ai-input=no (line 6)\n"),
        "{text}"
    );
    // Nothing applies to a disallowed URL, and files without usage lines print no usage line.
    assert_eq!(text.matches("usage:").count(), 1, "{text}");
    let plain = robots(
        &["check", "--robots", "-", "--agent", "x", "https://e.com/"],
        BODY,
    );
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("usage"));
}

/// Issue 26: lint is a CI gate. Only errors fail, unless `--strict`; `--allow` silences a kind;
/// a relative Sitemap and a bad value behind a malformed key are errors.
#[test]
fn lint_fails_only_on_errors_unless_strict() {
    // The README's own example: valid, with a Crawl-delay Google ignores (a warning).
    let valid =
        b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n";
    let out = robots(&["lint", "-"], valid);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("-:3: warning: non_google_key:"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        robots(&["lint", "--strict", "-"], valid).status.code(),
        Some(1)
    );
    // Allowed, the kind is not even reported: nothing to fail on, strict or not.
    let out = robots(
        &["lint", "--strict", "--allow", "non_google_key", "-"],
        valid,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // An info alone passes too (a key no crawler uses).
    assert_eq!(
        robots(&["lint", "-"], b"User-agent: *\nFoo: bar\n")
            .status
            .code(),
        Some(0)
    );
    // Errors fail: a relative Sitemap, an invalid preference behind an uppercase key.
    let out = robots(
        &["lint", "--format", "json", "-"],
        b"User-agent: *\nSitemap: /relative.xml\nContent-Usage: / Train-AI=maybe\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("non_google_key"))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0]
            .starts_with("{\"line\": 2, \"severity\": \"error\", \"kind\": \"relative_sitemap\""),
        "{text}"
    );
    assert!(
        lines[1].contains("\"kind\": \"malformed_preference\"") && lines[1].contains("uppercase"),
        "{text}"
    );
    assert!(
        lines[2].contains("\"kind\": \"malformed_preference\"") && lines[2].contains("`maybe`"),
        "{text}"
    );
    // Allowing every error kind found leaves nothing to fail on.
    let out = robots(
        &[
            "lint",
            "--allow",
            "relative_sitemap",
            "--allow",
            "malformed_preference",
            "-",
        ],
        b"User-agent: *\nSitemap: /relative.xml\nContent-Usage: / Train-AI=maybe\n",
    );
    assert_eq!(out.status.code(), Some(0));
    // An unknown kind is a usage error, in one line naming the kinds.
    let out = robots(&["lint", "--allow", "nonsense", "-"], valid);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("`nonsense` is not a lint kind") && stderr.contains("non_google_key"),
        "{stderr}"
    );
}

#[test]
fn lint_reports_malformed_and_contradicting_preferences() {
    let body = b"User-agent: *\nDisallow: /private/\nContent-Usage: Train-AI=n\nContent-Usage: train-ai=no\nContent-Usage: private/ train-ai=n\nContent-Usage: /private/x train-ai=y\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: ai-train=no\n";
    let out = robots(&["lint", "--format", "json", "-"], body);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let kinds: Vec<(u32, &str)> = text
        .lines()
        .filter_map(|l| {
            let line = l
                .split("\"line\": ")
                .nth(1)?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            let kind = l.split("\"kind\": \"").nth(1)?.split('"').next()?;
            (kind != "non_google_key").then_some((line, kind))
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (3, "malformed_preference"),
            (4, "malformed_preference"),
            (5, "malformed_preference"),
            (5, "malformed_preference"),
            (6, "preference_for_disallowed_path"),
            // Both yeses sit under the Content-Signal's broader no.
            (6, "contradicting_preferences"),
            (7, "contradicting_preferences"),
        ],
        "{text}"
    );
}

/// `robots check` is the conformance tool: for every string it accepts, its verdict is the one
/// Google's library gives (the `reference` port), and it accepts every string with `://` or a
/// leading `/`. Generated URL strings of the shapes that trip URL parsers (`;` right after the
/// authority, `?` or `#` with no path, `//` prefixes, odd ports, spaces, percent-escapes,
/// non-ASCII) go through the binary, many per invocation, against a few quirk files.
#[test]
fn check_agrees_with_google_on_generated_url_strings() {
    use robots_core::reference::google_verdict;

    const FILES: [&[u8]; 3] = [
        b"User-agent: *\nDisallow: /;\nAllow: /;ok\nDisallow: /?\nDisallow: /a b\nAllow: /%61\n",
        b"User-agent: FooBot\nDisallow: /\nAllow: /$\nAllow: /*.html$\nDisallow: /caf%C3%A9\n\nUser-agent: *\nDisallow: /p\n",
        "User-agent: foobot\nDisallow: /x/../y\nDisallow: /*;\nAllow: /é\nDisallow: //\nDisallow: /%2F\n"
            .as_bytes(),
    ];
    const PREFIXES: [&str; 9] = [
        "http://", "https://", "HTTP://", "//", "/", "ftp://", "x://", "http:///", "://",
    ];
    const HOSTS: [&str; 8] = [
        "example.com",
        "EXAMPLE.com",
        "example.com:8443",
        "example.com:99999",
        "[::1]:80",
        "u:p@h.example",
        "bücher.de",
        "",
    ];
    const TAILS: [&str; 24] = [
        "",
        "/",
        ";folder",
        ";a%2Fb/x",
        "?",
        "?a=1",
        "#frag",
        "#/x",
        "/p",
        "/p;q",
        "/p?q#f",
        "/;",
        "/;ok",
        "//x",
        "/a b",
        "/%61",
        "/%2F",
        "/caf%C3%A9",
        "/café",
        "/x/../y",
        "/index.html",
        "?x;y",
        ";",
        "/é?é",
    ];
    // A small deterministic generator: the same strings on every run, and failures reproducible.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut urls = Vec::new();
    for prefix in PREFIXES {
        for host in HOSTS {
            for tail in TAILS {
                urls.push(format!("{prefix}{host}{tail}"));
            }
        }
    }
    for _ in 0..2000 {
        let pieces = 1 + next(3);
        let mut url = format!(
            "{}{}",
            PREFIXES[next(PREFIXES.len())],
            HOSTS[next(HOSTS.len())]
        );
        for _ in 0..pieces {
            url.push_str(TAILS[next(TAILS.len())]);
        }
        urls.push(url);
    }
    // Exactly the strings a conformance tool may refuse: neither `://` nor a leading `/`.
    urls.retain(|u| u.contains("://") || u.starts_with('/'));
    let mut checked = 0;
    for (n, body) in FILES.iter().enumerate() {
        let path = file(&format!("differential-{n}.txt"), body);
        for agent in ["FooBot", "BarBot"] {
            let mut args = vec![
                "check",
                "--robots",
                path.to_str().unwrap(),
                "--agent",
                agent,
                "--format",
                "json",
                "--",
            ];
            args.extend(urls.iter().map(String::as_str));
            let out = robots(&args, b"");
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "file {n}, agent {agent}: exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = stdout.lines().collect();
            assert_eq!(lines.len(), urls.len(), "one line per URL");
            for (url, line) in urls.iter().zip(lines) {
                let json: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let (allowed, rule_line) = google_verdict(body, &[agent], url);
                assert_eq!(json["url"], url.as_str());
                assert_eq!(
                    (json["allowed"].as_bool(), json["rule"]["line"].as_u64()),
                    (
                        Some(allowed),
                        (rule_line > 0).then_some(u64::from(rule_line))
                    ),
                    "file {n}, agent {agent}, url {url:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} checks made");
}

#[test]
fn check_refuses_only_strings_that_are_neither_urls_nor_paths() {
    // With --robots, the conformance tool refuses none: Google's library answers every string
    // by the path it takes from it (`/` when there is none), and so does robots_main.
    for input in ["not a url", "", "help", "mailto:a@b.example"] {
        let out = robots(
            &["check", "--robots", "-", "--agent", "x", "--", "/a", input],
            BODY,
        );
        // stdin is the file here, so the URLs come from the arguments.
        assert_ne!(out.status.code(), Some(2), "{input:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 2, "{input:?}: {stdout}");
    }
    let accepted = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "x",
            "--",
            "https://example.com:8443;folder",
            "http://EXAMPLE.com;a%2Fb/private",
        ],
        BODY,
    );
    assert_eq!(
        accepted.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
}

/// What people type, `example.com/search`, gets Google's verdict with `--robots` (host, then
/// path, as Google's library reads it), and is fetched over https:// otherwise, said once.
#[test]
fn a_scheme_less_host_and_path_is_checked_as_google_reads_it() {
    let body = b"User-agent: FooBot\nDisallow: /x\nAllow: /x/ok\n";
    for (input, path) in [
        ("example.com/x", "/x"),
        ("example.com/x/ok", "/x/ok"),
        ("example.com:8080/x?q=1", "/x?q=1"),
        ("localhost/x", "/x"),
        ("127.0.0.1/y", "/y"),
        ("[::1]:80/x", "/x"),
        ("example.com", "/"),
        ("Bücher.example/x", "/x"),
    ] {
        let out = robots(
            &[
                "check", "--robots", "-", "--agent", "FooBot", "--format", "json", input,
            ],
            body,
        );
        let line: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{input}: {e}"));
        let (google, _) = robots_core::reference::google_verdict(body, &["FooBot"], input);
        let (by_path, _) =
            robots_core::reference::google_verdict(body, &["FooBot"], &format!("http://h{path}"));
        assert_eq!(line["allowed"], google, "{input}");
        assert_eq!(google, by_path, "{input} reads as {path}");
        assert_eq!(
            out.status.code(),
            Some(if google { 0 } else { 1 }),
            "{input}"
        );
    }
    // Fetching commands assume https:// and say so once, whatever the number of such URLs. The
    // local server speaks plain HTTP, so the TLS handshake fails: robots.txt is unreachable.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let a = format!("127.0.0.1:{port}/a");
    let b = format!("127.0.0.1:{port}/b");
    let out = robots(
        &["check", "--agent", "FooBot", "--timeout", "2", &a, &b],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("has no scheme").count(), 1, "{stderr}");
    assert!(stderr.contains("https://"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&a) && stdout.contains(&b), "{stdout}");
    drop(listener);
}

/// The README's `check --format json` example is what the binary prints (it had lost a field).
#[test]
fn the_readme_check_json_example_is_what_check_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the tool's README");
    let example = readme
        .split("`--format json` prints one\nobject per URL, in input order:\n\n```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's check JSON example");
    let body = b"User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n";
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "--format",
            "json",
            "https://example.com/private/x",
            "https://example.com/",
        ],
        body,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), example);
}

/// Every line on stdin gets its verdict in local mode (Google's, for any string); where URLs
/// are fetched, a bad line is said with its line number, and every other line still gets its
/// verdict; the exit status is 2 at the end (issue 36, point 4).
#[test]
fn a_bad_input_line_is_named_and_the_others_still_checked() {
    let file = file("rules.txt", b"User-agent: *\nDisallow: /private\n");
    let out = robots(
        &[
            "check",
            "--robots",
            file.to_str().unwrap(),
            "--agent",
            "FooBot",
        ],
        b"https://e.com/a\nnot a url\n\n/private/x\n",
    );
    // (The conformance tool answers every string: `not a url` is the path `/`.)
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "allowed     https://e.com/a  (no rule matched)",
            "allowed     not a url  (no rule matched)",
            "DISALLOWED  /private/x  (line 2: Disallow: /private)",
        ]
    );
    // The same when fetching: the good URL is checked, the path is named as the input error.
    let out = robots(
        &[
            "check",
            "--agent",
            "FooBot",
            "--timeout",
            "2",
            "mailto:a@b.c",
            "/relative",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("mailto:a@b.c"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("robots: `/relative` is a path"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--user-agent` in the form most crawlers send, `Mozilla/5.0 (compatible; Name/x.y; +url)`,
/// is reduced to the crawler's name, not `Mozilla`; a browser's User-Agent is warned about
/// (issue 36, point 3).
#[test]
fn a_compatible_user_agent_is_reduced_to_the_crawler() {
    let body = b"User-agent: FooBot\nDisallow: /foo\nUser-agent: *\nDisallow: /all\n";
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--user-agent",
            "Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)",
            "https://e.com/foo",
        ],
        body,
    );
    assert_eq!(out.status.code(), Some(1), "FooBot's group applies");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--user-agent",
            "Mozilla/5.0 (X11; Linux x86_64)",
            "https://e.com/foo",
        ],
        body,
    );
    assert_eq!(out.status.code(), Some(0), "only `*` applies");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("reduces to `Mozilla`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 36, point 1: every finding says how to fix it, in text and in JSON.
#[test]
fn every_lint_finding_says_how_to_fix_it() {
    let body = b"Disallow: /before\nUser-agent: Googlebot/2.1\nAlow: /p\nDisallow x\nCrawl-delay: soon\nSitemap: /s.xml\nFoo: bar\nthis is not a line\n";
    let text = robots(&["lint", "-"], body);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.lines().count() >= 7, "{text}");
    for line in text.lines() {
        let fix = line
            .rsplit_once(" (fix: ")
            .map(|(_, fix)| fix.trim_end_matches(')'));
        assert!(fix.is_some_and(|f| f.len() > 5), "{line}");
    }
    let json = robots(&["lint", "--format", "json", "-"], body);
    for line in String::from_utf8_lossy(&json.stdout).lines() {
        let finding: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            finding["fix"].as_str().is_some_and(|f| f.len() > 5),
            "{finding}"
        );
    }
}
