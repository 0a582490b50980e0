//! What the `robots` tool tells its user (issue 26), through the binary: no silent opposite
//! verdicts, no silent waits or successes, one message per cause.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::cli::robots;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const BODY: &[u8] = b"User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /all\n";

#[test]
fn an_agent_that_is_not_a_product_token_is_warned_about() {
    for name in [
        "FooBot/1.0 (+https://foo.example/bot)",
        "FooBot/1.0",
        "Foo Bot",
        "Mozilla(compatible)",
        // Names Google never matches either, though nothing in them looks like a User-Agent.
        "FooBot7",
        "FooBot!",
        "FööBot",
    ] {
        let out = robots(
            &[
                "check",
                "--robots",
                "-",
                "--agent",
                name,
                "https://e.com/foo",
            ],
            BODY,
        );
        // The verdict stays Google's for the name as given (only `*` applies)...
        assert_eq!(out.status.code(), Some(0), "{name}");
        // ...and one line says why it may not be what was meant.
        let warning = stderr(&out);
        assert_eq!(warning.lines().count(), 1, "{warning}");
        assert!(
            warning.starts_with("robots: warning: --agent")
                && warning.contains("so no named group can match it"),
            "{warning}"
        );
    }
    let warning = stderr(&robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot/1.0 (+https://foo.example/bot)",
            "https://e.com/",
        ],
        BODY,
    ));
    assert!(warning.contains("(`FooBot`)"), "{warning}");
    // A product token says nothing.
    let out = robots(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "https://e.com/foo",
        ],
        BODY,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn no_urls_at_all_is_a_usage_error_for_every_command() {
    let robots_file = std::env::temp_dir().join(format!("robots-msg-{}.txt", std::process::id()));
    std::fs::write(&robots_file, BODY).unwrap();
    let robots_file = robots_file.to_str().unwrap();
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["check", "--robots", robots_file, "--agent", "FooBot"],
        vec!["check", "--agent", "FooBot"],
        vec!["sitemaps"],
    ];
    if cfg!(feature = "redis") {
        commands.push(vec!["crawl", "--user-agent", "FooBot/1.0"]);
    }
    for command in commands {
        for input in [&b""[..], b"\n  \n\n"] {
            let out = robots(&command, input);
            assert_eq!(out.status.code(), Some(2), "{command:?}: {}", stderr(&out));
            assert_eq!(
                stderr(&out).trim(),
                "robots: no URLs given: pass them as arguments, or one per line on stdin",
                "{command:?}"
            );
            assert!(out.stdout.is_empty());
        }
    }
}

/// On a terminal, a command waiting for URLs on stdin says so. Run under `script`, which gives
/// the command a terminal; Ctrl-D (end of input) then ends it.
#[test]
fn waiting_on_a_terminal_says_so() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no `script` (util-linux) to give the CLI a terminal");
        return;
    }
    let binary = env!("CARGO_BIN_EXE_robots");
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!("{binary} check --robots /dev/null --agent FooBot"),
            "/dev/null",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    let mut input = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // One URL, then end of input (Ctrl-D) on the terminal.
    input.write_all(b"https://e.com/x\n\x04").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    // `script` merges the command's stdout and stderr into what it prints.
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(
        seen.contains("robots: reading URLs from stdin (one per line; Ctrl-D to end)"),
        "{seen}"
    );
    assert!(
        seen.contains("allowed") && seen.contains("https://e.com/x"),
        "{seen}"
    );
    // Not on a terminal: not a word.
    let out = robots(
        &["check", "--robots", "/dev/null", "--agent", "FooBot"],
        b"https://e.com/x\n",
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn one_message_per_cause_in_every_mode_and_command() {
    let robots_file = std::env::temp_dir().join(format!("robots-msg1-{}.txt", std::process::id()));
    std::fs::write(&robots_file, BODY).unwrap();
    let robots_file = robots_file.to_str().unwrap();
    // Neither a URL nor a path: the same words wherever a URL must be fetched (with --robots,
    // the conformance tool answers it as Google's library does: its path is `/`).
    let expected = "robots: `not a url` is neither a URL (it has no `://`), nor a host and path (`example.com/search`), nor a path starting with `/`";
    for args in [
        vec!["check", "--agent", "FooBot", "not a url"],
        vec!["sitemaps", "not a url"],
    ] {
        let out = robots(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out).trim(), expected, "{args:?}");
    }
    // A URL with an out-of-range port: Google's verdict with --robots (the conformance
    // tool reads it as Google's library does); the parser's cause where it must be fetched.
    let out = robots(
        &[
            "check",
            "--robots",
            robots_file,
            "--agent",
            "FooBot",
            "https://e.com:99999/foo",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for args in [
        vec!["check", "--agent", "FooBot", "https://e.com:99999/foo"],
        vec!["sitemaps", "https://e.com:99999/foo"],
    ] {
        let out = robots(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr(&out).trim(),
            "robots: `https://e.com:99999/foo` is not a valid URL: invalid port number",
            "{args:?}"
        );
    }
    // A path where a URL must be fetched: said as such, with `--robots` offered only by the
    // command that has it.
    let out = robots(&["check", "--agent", "FooBot", "/foo"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`/foo` is a path: give a full URL (`https://example.com/foo`)")
            && stderr(&out).contains("--robots"),
        "{}",
        stderr(&out)
    );
    let out = robots(&["sitemaps", "/foo"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`/foo` is a path: give a full URL")
            && !stderr(&out).contains("--robots"),
        "{}",
        stderr(&out)
    );
    if cfg!(feature = "redis") {
        // crawl reports the same words on the URL's own line.
        let out = robots(
            &[
                "crawl",
                "--user-agent",
                "FooBot/1.0",
                "--format",
                "json",
                "not a url",
            ],
            b"",
        );
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(
            line.contains(
                "`not a url` is neither a URL (it has no `://`), nor a host and path (`example.com/search`), nor a path starting with `/`"
            ),
            "{line}"
        );
    }
}

/// Issue 26: the README tells how to use the tool after its test command without a rebuild
/// (`cargo run --bin robots` builds it again with the package's own features): the binary the
/// tests build, `target/debug/robots`. That is where it is.
#[test]
fn the_readme_names_the_binary_the_tests_build() {
    let readme = include_str!("../../../README.md");
    assert!(
        readme.contains("./target/debug/robots check"),
        "the README names the tests' binary"
    );
    if option_env!("CARGO_TARGET_DIR").is_some() {
        eprintln!(
            "SKIPPED: CARGO_TARGET_DIR is set, so the binary is elsewhere than the README says"
        );
        return;
    }
    let expected = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/robots");
    let canonical =
        |path: &std::path::Path| std::fs::canonicalize(path).expect("the binary exists");
    assert_eq!(
        canonical(std::path::Path::new(env!("CARGO_BIN_EXE_robots"))),
        canonical(&expected)
    );
}
