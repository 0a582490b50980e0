//! Every README snippet as a user outside the checkout meets it: a project of its own, with the
//! `[dependencies]` the README gives it (the toml block above it), our crates as path
//! dependencies to this checkout, since nothing is published yet. Each snippet builds alone
//! (features are not lent by another snippet), and the ones that need no network run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A Rust block of a README with the dependency lines that stand above it.
struct Snippet {
    name: String,
    dependencies: String,
    code: String,
    runs: bool,
}

/// The pages a user reads: each published crate's README (the facade's is docs/library.md).
pub(crate) const READMES: [&str; 7] = [
    "docs/library.md",
    "robots-core/README.md",
    "robots-sitemap/README.md",
    "robots-fetch/README.md",
    "robots-tower/README.md",
    "robots-spider/README.md",
    "robots-cli/README.md",
];

fn snippets(root: &Path) -> Vec<Snippet> {
    let mut found = Vec::new();
    for readme in READMES {
        let text = std::fs::read_to_string(root.join(readme)).expect("a README");
        let mut dependencies: Option<String> = None;
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(info) = line.strip_prefix("```") else {
                continue;
            };
            let block: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .collect();
            let block = block.join("\n");
            if info == "toml" && block.contains("[dependencies]") {
                dependencies = Some(block);
            } else if info.split(',').next() == Some("rust") {
                let flags: Vec<&str> = info.split(',').skip(1).collect();
                found.push(Snippet {
                    name: format!(
                        "{}-{}",
                        readme
                            .trim_end_matches("/README.md")
                            .trim_end_matches(".md")
                            .replace('/', "-")
                            .to_lowercase(),
                        found.len() + 1
                    ),
                    dependencies: dependencies.clone().unwrap_or_else(|| {
                        panic!("{readme}: a Rust snippet with no dependencies above it")
                    }),
                    code: block,
                    runs: !flags.contains(&"no_run") && !flags.contains(&"ignore"),
                });
            }
        }
    }
    found
}

/// The dependency lines with our crates pointing at this checkout.
fn as_path_dependencies(dependencies: &str, root: &Path) -> String {
    let ours = [
        ("polite-robots", root.to_path_buf()),
        ("robots-core", root.join("robots-core")),
        ("robots-sitemap", root.join("robots-sitemap")),
        ("robots-fetch", root.join("robots-fetch")),
        ("robots-tower", root.join("robots-tower")),
        ("robots-spider", root.join("robots-spider")),
    ];
    dependencies
        .lines()
        .map(|line| {
            let Some((name, spec)) = line.split_once(" = ") else {
                return line.to_string();
            };
            let Some((_, dir)) = ours.iter().find(|(ours, _)| *ours == name.trim()) else {
                return line.to_string();
            };
            let path = format!("path = {:?}", dir.display().to_string());
            let spec = spec.split('#').next().unwrap_or_default().trim();
            match spec.strip_prefix('{') {
                Some(rest) => format!("{name} = {{ {path}, {}", rest.trim_start()),
                None => format!("{name} = {{ {path}, version = {spec} }}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_readme_snippet_builds_outside_the_checkout_with_its_dependency_lines() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let snippets = snippets(&root);
    assert!(
        snippets.len() >= 14,
        "only {} snippets found",
        snippets.len()
    );
    let project = std::env::temp_dir().join(format!("polite-robots-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&project);
    let mut members = Vec::new();
    for snippet in &snippets {
        let dir = project.join(&snippet.name);
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = format!(
            "[package]\nname = \"snippet-{}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[[bin]]\nname = \"snippet-{}\"\npath = \"main.rs\"\n\n{}\n",
            snippet.name,
            snippet.name,
            as_path_dependencies(&snippet.dependencies, &root)
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::write(dir.join("main.rs"), &snippet.code).unwrap();
        members.push(format!("{:?}", snippet.name));
    }
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [{}]\n",
            members.join(", ")
        ),
    )
    .unwrap();
    // The checkout's versions of everything else, so that the test checks our lines and not
    // the registry's latest releases of the neighbours.
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = root.join("target/readme-snippets");
    let mut crawl_programs = 0;
    for snippet in &snippets {
        let package = format!("snippet-{}", snippet.name);
        let crawl_program = snippet.code.contains("frontier\n        .run(");
        // Every snippet is built, not only checked: the ones that run need their dependencies
        // built anyway, and a check of the others compiles those dependencies a second time,
        // as metadata, which cost more than it saved (304 s from a clean clone with 12 checked
        // and 5 built, against 267 s with all 14 of 2026-11-27 built).
        let build = Command::new(&cargo)
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target)
            // Nobody debugs these programs: without debug info and incremental caches their
            // build holds a third of the disk (5.4 GB to 1.7 GB; a CI machine may have little
            // to spare) and takes a quarter less time.
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env("CARGO_INCREMENTAL", "0")
            .args(["build", "--quiet", "-p", &package])
            .output()
            .expect("cargo runs");
        assert!(
            build.status.success(),
            "{} does not build with its README dependency lines:\n{}\n{}",
            snippet.name,
            snippet.dependencies,
            String::from_utf8_lossy(&build.stderr)
        );
        if crawl_program {
            crawl_program_crawls_local_sites(&target.join("debug").join(&package));
            crawl_programs += 1;
        }
        if snippet.runs {
            let run = Command::new(target.join("debug").join(&package))
                .output()
                .expect("the snippet runs");
            assert!(
                run.status.success(),
                "{} fails: {}",
                snippet.name,
                String::from_utf8_lossy(&run.stderr)
            );
        }
    }
    assert_eq!(
        crawl_programs, 1,
        "the README's crawl program (Frontier::run) was not found"
    );
    let _ = std::fs::remove_dir_all(&project);
}

/// The README's crawl program (`Frontier::run`), run as a user runs it: three local sites whose
/// pages link to each other, to pages robots.txt forbids and to `/busy`, which answers 429
/// (`Retry-After: 1`) the first time; start URLs on stdin. It ends by itself, sends nothing
/// forbidden and says each such URL, fetches `/busy` again after the pause and gets its 200,
/// and its summary counts what the servers saw.
fn crawl_program_crawls_local_sites(program: &Path) {
    use std::io::Write;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sites: Vec<crate::site::Site> = runtime.block_on(async {
        let mut sites = Vec::new();
        for _ in 0..3 {
            sites.push(
                crate::site::Site::start(|target, seen| match target {
                    "/robots.txt" => crate::site::Answer::ok("User-agent: *\nDisallow: /private\n"),
                    "/" => crate::site::Answer::ok(
                        "<a href=\"/a\">a</a> <a href=\"b\">b</a> <a href=\"/private/x\">x</a> <a href=\"https://elsewhere.example/\">out</a> <a href=\"/busy\">busy</a>",
                    ),
                    "/busy" if seen == 0 => crate::site::Answer::status(
                        "429 Too Many Requests",
                        &["Retry-After: 1"],
                    ),
                    "/a" => crate::site::Answer::ok("<a href=\"/\">home</a> <a href=\"/c#top\">c</a>"),
                    _ => crate::site::Answer::ok("<a href=\"/a\">a</a>"),
                })
                .await,
            );
        }
        sites
    });
    let mut child = Command::new(program)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the crawl program starts");
    let starts: String = sites.iter().map(|s| format!("{}\n", s.url("/"))).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(starts.as_bytes())
        .unwrap();
    // It ends by itself (wait_with_output would wait for ever if it did not: bounded here).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the README's crawl did not end by itself"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pages: usize = sites.iter().map(|s| s.pages().len()).sum();
    // /, /a, /b, /c and /busy twice on each site; /private/x never sent, elsewhere.example not
    // followed.
    assert_eq!(pages, 18, "{stdout}");
    assert!(sites.iter().all(|s| s.count("/private/x") == 0));
    assert!(sites.iter().all(|s| s.count("/busy") == 2), "{stdout}");
    for site in &sites {
        let busy = site.url("/busy");
        // Its 429 was retried by the loop: one line, its end (`Job::will_retry`).
        assert!(!stdout.contains(&format!("429 {busy}")), "{stdout}");
        assert_eq!(
            stdout.matches(&format!("200 {busy}\n")).count(),
            1,
            "{stdout}"
        );
        let private = site.url("/private/x");
        assert!(
            stdout.contains(&format!("disallowed: {private}")),
            "{stdout}"
        );
    }
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with(&format!(
                "{} fetched, 3 disallowed, 0 refused, 0 failed, 3 retried, 0 given up",
                pages - 3
            ))),
        "{stdout}"
    );
    drop(runtime);
}
