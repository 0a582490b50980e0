//! Smoke and differential test over the real robots.txt corpus. The folder comes from
//! `ROBOTS_CORPUS` (e.g. `ROBOTS_CORPUS=../shared/corpus/robots`, relative to the workspace
//! root); without it the test says so on stderr and passes, as the corpus is not part of the
//! repository. Set but unreadable, it fails.

use crate::corpus_support as corpus;

use robots_core::reference::google_verdict;
use robots_core::{MAX_BODY_BYTES, Matcher, RobotsTxt, lint};

/// Paths derived from a file's own rules: the pattern made literal, extended, and cut short.
fn paths_for(robots: &RobotsTxt) -> Vec<String> {
    let mut paths = vec!["/".to_string(), "/index.html".into(), "/robots.txt".into()];
    for rule in robots.groups().flat_map(|g| g.rules().collect::<Vec<_>>()) {
        let written = String::from_utf8_lossy(rule.written);
        let literal = written.replace('*', "x").trim_end_matches('$').to_string();
        let literal = if literal.starts_with('/') {
            literal
        } else {
            format!("/{literal}")
        };
        paths.push(literal.clone());
        paths.push(format!("{literal}more?q=1"));
        if let Some(cut) = literal.get(..literal.len() / 2) {
            paths.push(cut.to_string());
        }
        if paths.len() > 120 {
            break;
        }
    }
    paths
}

#[test]
fn every_corpus_file_agrees_with_the_google_port() {
    let Some(dir) = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the corpus test") else {
        return;
    };
    let files = corpus::corpus_files(&dir, MAX_BODY_BYTES);
    assert!(
        files.len() > 1000,
        "the corpus should hold thousands of files, found {}",
        files.len()
    );
    let (mut checks, mut disallowed) = (0usize, 0usize);
    let mut disagreements = Vec::new();
    for (name, body) in &files {
        let robots = RobotsTxt::parse(body);
        let _ = lint(body);
        let mut agents: Vec<String> = vec!["Googlebot".into(), "FooBot".into()];
        for group in robots.groups().take(2) {
            for agent in group.agents().take(2) {
                agents.push(String::from_utf8_lossy(agent.token()).into_owned());
            }
        }
        // Keep the oracle affordable on the few huge files.
        let paths = paths_for(&robots);
        let paths = if body.len() > 100_000 {
            &paths[..paths.len().min(20)]
        } else {
            &paths[..]
        };
        for agent in &agents {
            let matcher = robots.matcher(agent);
            let fused = Matcher::from_body(body, [agent]);
            let scan = robots.rule_scan(agent);
            assert_eq!(matcher.crawl_delay(), fused.crawl_delay(), "{name}");
            assert_eq!(matcher.request_rate(), fused.request_rate(), "{name}");
            assert_eq!(matcher.crawl_delay(), scan.crawl_delay(&robots), "{name}");
            assert_eq!(matcher.request_rate(), scan.request_rate(&robots), "{name}");
            for path in paths {
                let url = format!("https://example.com{path}");
                let ours = matcher.check_url(&url);
                assert_eq!(ours, fused.check_url(&url), "{name} {agent} {url}");
                assert_eq!(ours, scan.check_url(&robots, &url), "{name} {agent} {url}");
                let google = google_verdict(body, &[agent.as_str()], &url);
                checks += 1;
                disallowed += usize::from(!ours.allowed);
                if (ours.allowed, ours.rule.map_or(0, |r| r.line)) != google {
                    disagreements.push(format!(
                        "{name} agent={agent} url={url} ours={ours:?} google={google:?}"
                    ));
                }
            }
        }
    }
    eprintln!(
        "{checks} checks over {} files, {disallowed} disallowed",
        files.len()
    );
    assert!(
        disallowed > checks / 10,
        "paths derived from rules should often be disallowed"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements, first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(5)]
    );
}

/// Section 10 over the corpus: how many files carry each kind of usage line (printed, for the
/// record), that both parses agree on the preferences, and that no preference is reported for a
/// disallowed URL.
#[test]
fn usage_preferences_in_the_corpus() {
    use robots_core::usage::split_path;
    use robots_core::{AiPreferences, Preference};
    let Some(dir) = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the usage corpus test") else {
        return;
    };
    let files = corpus::corpus_files(&dir, MAX_BODY_BYTES);
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    let mut stated = 0usize;
    for (name, body) in &files {
        let robots = RobotsTxt::parse(body);
        let records: Vec<_> = robots.records().collect();
        let grouped: Vec<_> = robots
            .groups()
            .flat_map(|g| g.records().collect::<Vec<_>>())
            .collect();
        let mut kinds = std::collections::BTreeSet::new();
        for record in &records {
            let in_group = grouped.iter().any(|g| g.line == record.line);
            let (path, preference) = split_path(record.written);
            if record.is("content-usage") {
                kinds.insert("content-usage");
                kinds.insert(if path.is_some() {
                    "content-usage with a path"
                } else {
                    "content-usage without a path"
                });
                if AiPreferences::parse(preference).is_err() {
                    kinds.insert("content-usage not a dictionary");
                }
            } else if record.is("content-signal") {
                kinds.insert("content-signal");
                kinds.insert(if in_group {
                    "content-signal in a group"
                } else {
                    "content-signal outside groups"
                });
                if path.is_some() {
                    kinds.insert("content-signal with a path");
                }
            }
        }
        for kind in kinds {
            *count.entry(kind).or_default() += 1;
        }
        for agent in ["Googlebot", "GPTBot", "FooBot"] {
            let full = robots.matcher(agent);
            let fused = Matcher::from_body(body, [agent]);
            for path in ["/", "/index.html", "/search?q=1", "/admin/"] {
                let url = format!("https://example.com{path}");
                let usage = full.usage(&url);
                assert_eq!(usage, fused.usage(&url), "{name} {agent} {url}");
                assert_eq!(usage.verdict, full.check_url(&url), "{name} {agent} {url}");
                if !usage.verdict.allowed {
                    assert!(!usage.preferences.is_stated(), "{name} {agent} {url}");
                }
                if path == "/" && usage.preferences.may_train_ai() != Preference::Unknown {
                    stated += 1;
                }
            }
        }
    }
    eprintln!(
        "usage lines in {} corpus files: {count:?}; (file, crawler) pairs with a training preference at `/`: {stated}",
        files.len()
    );
    // The corpus predates most Content-Usage deployments; Cloudflare's Content-Signal is in it.
    assert!(
        count.get("content-signal").copied().unwrap_or(0) > 0,
        "{count:?}"
    );
}

/// The lint table of `docs/behaviour.md`: each kind with its severity, and how often it is
/// found in the shared corpus (findings, files), then the share of files `robots lint` fails.
fn lint_table(files: Option<&[(String, Vec<u8>)]>) -> String {
    use robots_core::{DiagnosticKind, Severity};
    use std::collections::{BTreeMap, BTreeSet};
    let mut findings: BTreeMap<DiagnosticKind, (usize, BTreeSet<&str>)> = BTreeMap::new();
    let mut failing = 0;
    for (name, body) in files.unwrap_or_default() {
        let found = lint(body);
        failing += usize::from(found.iter().any(|d| d.severity() == Severity::Error));
        for d in found {
            let entry = findings.entry(d.kind).or_default();
            entry.0 += 1;
            entry.1.insert(name);
        }
    }
    let mut table =
        String::from("| kind | severity | fix | findings | files |\n|---|---|---|---|---|\n");
    for kind in DiagnosticKind::ALL {
        let (count, names) = findings.remove(&kind).unwrap_or_default();
        table.push_str(&format!(
            "| `{kind}` | {} | {} | {count} | {} |\n",
            kind.severity(),
            kind.fix(),
            names.len()
        ));
    }
    if let Some(files) = files {
        table.push_str(&format!(
            "\n`robots lint` fails (finds an error in) {failing} of the corpus's {} files ({:.1}%).\n",
            files.len(),
            failing as f64 * 100.0 / files.len() as f64
        ));
    }
    table
}

/// The part of `docs/behaviour.md` between the lint table's markers.
fn documented_lint_table() -> String {
    let root = corpus::workspace_root(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/behaviour.md")).expect("docs/behaviour.md");
    let start = "<!-- lint table: robots-core/tests/all/corpus.rs keeps it true -->\n";
    let from = doc.find(start).expect("the lint table's start marker") + start.len();
    let to = doc[from..]
        .find("<!-- end of lint table -->")
        .expect("its end marker")
        + from;
    doc[from..to].to_string()
}

/// Every kind's severity and fix, as documented (without the corpus, its counts are not read).
#[test]
fn the_documented_lint_table_has_every_kind_with_its_severity() {
    let documented = documented_lint_table();
    let expected = lint_table(None);
    for (row, want) in expected.lines().skip(2).enumerate() {
        let cells: Vec<&str> = want.split(" | ").take(3).collect();
        let found = documented.lines().nth(row + 2).unwrap_or_default();
        assert!(
            found.starts_with(&cells.join(" | ")),
            "docs/behaviour.md's lint table, row {}: expected `{}…`, found `{found}`",
            row + 1,
            cells.join(" | ")
        );
    }
}

/// The counts on the shared corpus, as documented: a change to lint changes the table with it.
#[test]
fn the_documented_lint_counts_are_the_corpus_counts() {
    let Some(dir) = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the lint table's counts")
    else {
        return;
    };
    // As `robots lint` reads a file: one byte past the limit tells it the file is too large.
    let files = corpus::corpus_files(&dir, MAX_BODY_BYTES + 1);
    let expected = lint_table(Some(&files));
    assert!(
        documented_lint_table() == expected,
        "docs/behaviour.md's lint table should read:\n{expected}"
    );
}
