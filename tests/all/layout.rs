//! The house stays easy to read: inside each crate (the CLI included), the files depend on each
//! other in one direction only (no import circle), inside folders too: every file is a node
//! (`front/layer.rs` is `front::layer`, a folder's `mod.rs` the folder).
//!
//! Edges are the `crate::…` and `super::…` paths a file's code names (in `use` lines and
//! inline), each to the longest module it starts with, with the crate root's re-exports
//! (`crate::Matcher`) followed to the module that defines them. A folder's `mod.rs` naming its
//! own files (`use slot::Slot`) is not an edge: it is the folder's entrance, which its files may
//! use (`super::Gate`); files beside each other, and folders, may not name each other back.
//! Comments and `#[cfg(test)] mod tests` are left out: a test may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate's source root (the CLI is `robots-cli`).
const CRATES: [&str; 8] = [
    "robots-core/src",
    "robots-sitemap/src",
    "robots-python/src",
    "robots-fetch/src",
    "robots-tower/src",
    "robots-spider/src",
    "src",
    "robots-cli/src",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // The library's `src/bin/` holds other crates (walked as their own).
        if path.is_dir() && !path.ends_with("src/bin") {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `file`'s path below `root`, with forward slashes.
fn relative_to(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The folders of the packages whose `src/` is product code (`""`: the facade at the root).
const PRODUCT_PACKAGES: [&str; 8] = [
    "",
    "robots-core",
    "robots-sitemap",
    "robots-fetch",
    "robots-tower",
    "robots-spider",
    "robots-cli",
    "robots-python",
];

/// The code of a file without comments and without its unit-test module.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        // `#[cfg(test)]`, or a narrower `#[cfg(all(test, …))]`, on the tests module.
        if trimmed.starts_with("#[cfg(")
            && trimmed.contains("test")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            // `mod tests;` names a file of its own: the code goes on after it.
            if lines
                .next()
                .is_some_and(|next| next.trim_end().ends_with(';'))
            {
                continue;
            }
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// Every `crate::a::b…` path in `code`, as its segments.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `robots_crate::x` or `$crate::x` are not ours.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let segments = rest[..end]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        paths.push(segments);
        // `crate::{a, b}` and `crate::x::{a, b}`: the braces name more.
        if rest[end..].starts_with('{') && end == 0 {
            let close = rest.find('}').unwrap_or(rest.len());
            for name in rest[1..close].split(',') {
                let name = name.trim().split("::").next().unwrap_or_default();
                if !name.is_empty() {
                    paths.push(vec![name.to_string()]);
                }
            }
        }
    }
    paths
}

/// The crate root's `pub use module::path::{names}` re-exports: name → the module that
/// defines it (`RobotsLayer` → `front::layer`).
fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code_of(lib).replace('\n', " ");
    for statement in code.split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (path, names) = match used.split_once("::{") {
            Some((path, names)) => (path.to_string(), names.trim_end_matches('}').to_string()),
            None => match used.rsplit_once("::") {
                Some((path, name)) => (path.to_string(), name.to_string()),
                None => continue,
            },
        };
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or_default();
            let defined = format!("{path}::{name}");
            // A module re-exported (`pub use front::status`) is that module.
            let module = if modules.contains(&defined) {
                defined
            } else {
                path.clone()
            };
            if !name.is_empty() && modules.contains(&module) {
                map.insert(name.to_string(), module);
            }
        }
    }
    map
}

/// A cycle in `graph`, if there is one, as the modules along it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node.as_str()) {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(node, graph, &mut state, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

/// A file's module path inside its crate: `front/layer.rs` is `front::layer`, `pacing/mod.rs` is
/// `pacing`; the crate root (`lib.rs`, `main.rs`) is `None`.
fn file_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .filter_map(|c| c.as_os_str().to_str().map(String::from))
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        return None;
    }
    (!parts.is_empty()).then(|| parts.join("::"))
}

/// Every `super::…` path in `code`, as its segments after `super`.
fn super_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("super::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "super::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let segments: Vec<String> = rest[..end]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if rest[end..].starts_with('{') {
            let close = rest.find('}').unwrap_or(rest.len());
            for name in rest[end + 1..close].split(',') {
                let name = name.trim().split("::").next().unwrap_or_default();
                if !name.is_empty() {
                    let mut path = segments.clone();
                    path.push(name.to_string());
                    paths.push(path);
                }
            }
        } else {
            paths.push(segments);
        }
    }
    paths
}

/// Each crate's module graph, one node per file (`front::layer`, `pacing`, `pacing::fleet`):
/// file → the files whose items it names through `crate::` and `super::` paths.
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| file_module(src, f)).collect();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .find_map(|name| std::fs::read_to_string(src.join(name)).ok())
        .unwrap_or_default();
    let reexported = reexports(&root, &modules);
    // The longest known module a path starts with, or the module a re-exported name is from.
    let resolve = |path: &[String]| -> Option<String> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].join("::"))
            .find(|m| modules.contains(m))
            .or_else(|| reexported.get(path.first()?).cloned())
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(module) = file_module(src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file reads");
        let code = code_of(&text);
        let parent: Vec<String> = {
            let mut p: Vec<String> = module.split("::").map(String::from).collect();
            p.pop();
            p
        };
        let mut targets: Vec<Option<String>> =
            crate_paths(&code).iter().map(|p| resolve(p)).collect();
        for path in super_paths(&code) {
            let mut full = parent.clone();
            full.extend(path);
            targets
                .push(resolve(&full).or_else(|| (!parent.is_empty()).then(|| parent.join("::"))));
        }
        let edges = graph.entry(module.clone()).or_default();
        for target in targets.into_iter().flatten() {
            if target != module {
                edges.insert(target);
            }
        }
    }
    graph
}

#[test]
fn no_file_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for krate in CRATES {
        let graph = file_graph(&root.join(krate));
        checked += graph.len();
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate}: import circle {}", cycle.join(" → "));
        }
    }
    assert!(
        checked > 60,
        "only {checked} files found: is the layout walked?"
    );
}

#[test]
fn the_circle_finder_finds_circles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let paths = crate_paths(
        "use crate::{gate::Gate, error::RobotsError};\nlet x = crate::telemetry::waited(d);",
    );
    let firsts: Vec<&str> = paths
        .iter()
        .filter_map(|p| p.first().map(String::as_str))
        .collect();
    assert!(firsts.contains(&"gate") && firsts.contains(&"error") && firsts.contains(&"telemetry"));
}

/// `polite-robots` re-exports the `http`, `reqwest` and `reqwest_middleware` it is built with, so a
/// client built from them always fits the middleware (two reqwest versions in one build give
/// "expected `Client`, found `Client`").
#[test]
fn the_client_crates_are_re_exported_in_the_versions_that_fit() {
    let middleware = polite_robots::client::RobotsMiddleware::builder("FooBot/1.0")
        .build()
        .expect("middleware");
    let client: polite_robots::reqwest_middleware::ClientWithMiddleware =
        polite_robots::reqwest_middleware::ClientBuilder::new(polite_robots::reqwest::Client::new())
            .with(middleware)
            .build();
    let request = client.get("http://a.example/").build().expect("request");
    assert_eq!(request.method(), polite_robots::http::Method::GET);
}

/// The backticked words of `docs/architecture.md` that look like paths (a `/` or a file
/// extension, no spaces), in order.
fn named_paths(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.contains(' ') && !w.contains("::") && !w.starts_with(['<', '.']))
        .filter(|w| {
            w.contains('/')
                || [".rs", ".lua", ".md", ".toml"]
                    .iter()
                    .any(|e| w.ends_with(e))
        })
        .map(String::from)
        .collect()
}

/// docs/architecture.md names every path from the workspace root, or, right after a folder
/// named so, relative to it (`robots-tower/src/front/` … `layer.rs`), and every one exists.
#[test]
fn every_path_the_architecture_page_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the page");
    let paths = named_paths(&doc);
    assert!(paths.len() > 30, "only {} paths found", paths.len());
    // The folder named last from the root, and the one named last inside it.
    let (mut base, mut inner) = (PathBuf::new(), PathBuf::new());
    let mut missing = Vec::new();
    for path in &paths {
        let from_root = root.join(path.trim_end_matches('/'));
        if from_root.exists() {
            if from_root.is_dir() {
                (base, inner) = (from_root, PathBuf::new());
            }
            continue;
        }
        let relative = path.trim_end_matches('/');
        if base.join(relative).exists() {
            if base.join(relative).is_dir() {
                inner = PathBuf::from(relative);
            }
        } else if !base.join(&inner).join(relative).exists() {
            missing.push(path);
        }
    }
    assert!(missing.is_empty(), "named but missing: {missing:?}");
}

/// The dependency list of docs/architecture.md is the workspace crates' `[dependencies]` on
/// each other.
#[test]
fn the_architecture_page_lists_the_crates_dependencies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the page");
    let crates = [
        ("polite-robots", ""),
        ("robots-cli", "robots-cli/"),
        ("robots-spider", "robots-spider/"),
        ("robots-tower", "robots-tower/"),
        ("robots-fetch", "robots-fetch/"),
        ("robots-core", "robots-core/"),
        ("robots-sitemap", "robots-sitemap/"),
        ("robots-python", "robots-python/"),
    ];
    for (name, dir) in crates {
        let manifest =
            std::fs::read_to_string(root.join(dir).join("Cargo.toml")).expect("a manifest");
        // The normal dependencies only: from `[dependencies]` to the next table.
        let deps_table = manifest
            .split("\n[dependencies]\n")
            .nth(1)
            .map(|rest| rest.split("\n[").next().unwrap_or_default())
            .unwrap_or_default();
        let mut deps: Vec<&str> = deps_table
            .lines()
            .filter_map(|l| l.split(['=', '.', ' ']).next())
            .filter(|d| d.starts_with("robots-") && *d != name)
            .collect();
        deps.sort_unstable();
        let listed = if deps.is_empty() {
            "(none)".to_string()
        } else {
            deps.join(", ")
        };
        let line = format!("{name:<14} → {listed}");
        assert!(
            doc.lines().any(|l| l.trim_end() == line),
            "docs/architecture.md should list `{line}`"
        );
    }
}

/// Each package's tests and benchmarks take shared helpers from the `robots-test-support` crate,
/// never by including another package's files (`#[path = "../../…"]`).
#[test]
fn no_path_include_crosses_a_package() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let packages: Vec<&str> = PRODUCT_PACKAGES
        .iter()
        .copied()
        .chain(["test-support"])
        .collect();
    let mut crossing = Vec::new();
    for &package in &packages {
        let dir = root.join(package);
        let mut files = Vec::new();
        for sub in ["src", "tests", "benches", "examples"] {
            rust_files(&dir.join(sub), &mut files);
        }
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file reads");
            for line in text
                .lines()
                .filter(|l| l.trim_start().starts_with("#[path"))
            {
                let target = line.split('"').nth(1).unwrap_or_default();
                // Lexically, `..` taken off: where the include really points.
                let mut resolved = PathBuf::new();
                for part in file.parent().unwrap_or(root).join(target).components() {
                    match part {
                        std::path::Component::ParentDir => {
                            resolved.pop();
                        }
                        std::path::Component::CurDir => {}
                        other => resolved.push(other),
                    }
                }
                let other_package = packages
                    .iter()
                    .filter(|p| !p.is_empty() && **p != package)
                    .any(|p| resolved.starts_with(root.join(p)));
                if !resolved.starts_with(&dir) || other_package {
                    crossing.push(format!("{}: {line}", file.display()));
                }
            }
        }
    }
    assert!(crossing.is_empty(), "{crossing:#?}");
}

/// No product file grows past 700 lines: a file that long holds more than one idea, and is
/// split along them (a folder per concern, a module per idea). Tests (`tests.rs`, `tests/`)
/// are not product files.
#[test]
fn no_product_file_is_over_700_lines() {
    const MAX_LINES: usize = 700;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for package in PRODUCT_PACKAGES {
        rust_files(&root.join(package).join("src"), &mut files);
    }
    assert!(
        files.len() > 100,
        "only {} product files found",
        files.len()
    );
    let long: Vec<String> = files
        .iter()
        .filter(|file| file.file_name().is_some_and(|name| name != "tests.rs"))
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:#?}");
}

/// What a user of a published package reads (its crates.io page, its docs.rs front page, the
/// guides rendered in the facade's docs, the Python package's PyPI page) points nowhere its
/// reader cannot follow: every link is a web address (docs.rs, crates.io, a standard) or an
/// anchor of the page, and no sentence sends the reader to a file of the repository, which a
/// package does not carry.
#[test]
fn published_pages_point_only_where_their_readers_can_follow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Each published crate's page (the README test's list), the guides, the Python package's.
    let guides = [
        "docs/behaviour.md",
        "docs/composition.md",
        "docs/frameworks.md",
        "docs/json.md",
        "robots-python/README.md",
    ];
    let pages = crate::readme::READMES.into_iter().chain(guides);
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root.join(page)).expect("the page");
        for (number, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                let target = rest[at + 2..].split(')').next().unwrap_or_default();
                if !(target.starts_with("https://")
                    || target.starts_with("http://")
                    || target.starts_with('#'))
                {
                    found.push(format!("{page}:{}: link to `{target}`", number + 1));
                }
                rest = &rest[at + 2..];
            }
            for words in NOT_IN_A_PACKAGE {
                if line.contains(words) {
                    found.push(format!("{page}:{}: `{words}`", number + 1));
                }
            }
        }
    }
    // The API docs on docs.rs (and what `help()` shows in Python) and the messages the
    // crates log: their readers have the package alone too.
    let mut files = Vec::new();
    for package in PRODUCT_PACKAGES {
        rust_files(&root.join(package).join("src"), &mut files);
    }
    for file in files {
        let relative = relative_to(root, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            // Doc comments, and the strings of log and error messages.
            let doc = trimmed.starts_with("///") || trimmed.starts_with("//!");
            let string = !trimmed.starts_with("//") && trimmed.contains('"');
            // (`include_str!` brings a page in: the page itself is read above.)
            let read_by_users = (doc || string) && !line.contains("include_str!");
            if !read_by_users {
                continue;
            }
            for words in NOT_IN_A_PACKAGE {
                if line.contains(words) {
                    found.push(format!("{relative}:{}: `{words}`", number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// Words that send a reader to what a published package does not carry: the repository's files
/// and its workspace's commands.
const NOT_IN_A_PACKAGE: [&str; 7] = [
    "in the repository",
    "BENCHMARKS.md",
    "README.md",
    "`docs/",
    "(docs/",
    "docs/composition.md",
    "cargo run -p",
];

/// One way out (spec section 8, issue 53): every request the workspace sends leaves through a
/// front end of robots-tower, which asks the gate (the address rule, robots.txt, the group's
/// turn, identity, distress), or is a robots.txt fetch, whose client is the gate's paced one.
/// A new path that sends a request itself (a sitemap fetcher following redirects on its own, a
/// tool sending outside the middleware) breaks the promise: this fails until it goes through
/// the gate, or is added here with the reason it is one of these.
#[test]
fn every_request_leaves_through_the_gate() {
    // Where a request is handed to a transport, and why that place is the gate's.
    let allowed: [(&str, &str); 7] = [
        (
            "robots-fetch/src/client.rs",
            "the transports themselves (FetchClient for a tower service, reqwest)",
        ),
        (
            "robots-fetch/src/fetch.rs",
            "the robots.txt fetcher: its client is the gate's PacedFetch in every front end",
        ),
        (
            "robots-tower/src/engine/gate/paced_fetch.rs",
            "robots.txt requests, each after its turn",
        ),
        (
            "robots-tower/src/front/layer.rs",
            "the layer: after Gate::admit",
        ),
        (
            "robots-tower/src/front/middleware.rs",
            "the middleware: after Gate::admit, each hop from Gate::next_hop",
        ),
        (
            "robots-tower/src/front/hooks.rs",
            "the hooks' GET (sitemaps): after Gate::admit, each hop from Gate::next_hop",
        ),
        (
            "robots-tower/src/front/status.rs",
            "refusals as responses: wraps the layer, sends nothing of its own",
        ),
    ];
    let sends = [
        "client.send(",
        "client().send(",
        ".call(request",
        ".oneshot(request",
        ".run(request",
        ".execute(request",
        "reqwest::get(",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        for file in files {
            let relative = relative_to(root, &file);
            if allowed.iter().any(|(path, _)| *path == relative) {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&file).unwrap());
            for send in sends {
                if code.contains(send) {
                    offenders.push(format!("{relative}: `{send}`"));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "requests sent outside the gate's front ends: {offenders:?}"
    );
    for (path, _) in allowed {
        assert!(root.join(path).exists(), "{path} is gone: update the list");
    }
}

/// The address rule where the connection is made (spec section 8, issue 69): every HTTP client a
/// product file or a shipped example builds connects through the guarded resolver
/// (`robots_fetch::Resolver`, whose reqwest and hyper-util resolvers judge each new connection's
/// addresses). A client built without it would connect wherever DNS says, the second answer of a
/// rebinding name included: this fails until it is given the resolver.
#[test]
fn every_client_the_workspace_builds_connects_through_the_guarded_resolver() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for krate in CRATES.iter().chain(&["examples"]) {
        rust_files(&root.join(krate), &mut files);
    }
    // Clients that resolve on their own, which no product file may build.
    let unguarded = [
        "reqwest::Client::new()",
        "HttpConnector::new()",
        ".build_http(",
        "reqwest::get(",
    ];
    let mut offenders = Vec::new();
    let mut builders = 0;
    for file in files {
        let relative = relative_to(root, &file);
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for bare in unguarded {
            if code.contains(bare) {
                offenders.push(format!("{relative}: `{bare}`"));
            }
        }
        let mut rest = code.as_str();
        while let Some(at) = rest.find("reqwest::Client::builder()") {
            builders += 1;
            let chain = &rest[at..];
            let end = chain.find(".build()").unwrap_or(chain.len());
            if !chain[..end].contains(".dns_resolver(") {
                offenders.push(format!(
                    "{relative}: a reqwest client built without `.dns_resolver(…)`"
                ));
            }
            rest = &chain[end.min(chain.len())..];
            if end == chain.len() {
                break;
            }
        }
    }
    // robots-fetch's, the middleware's, and an example's (the tool uses the middleware's).
    assert!(
        builders >= 3,
        "the clients the workspace builds were found ({builders})"
    );
    assert!(
        offenders.is_empty(),
        "clients that connect without the guarded resolver: {offenders:?}"
    );
}

/// One redirect rule (issue 69): where a redirect points, whether it loops or is one hop too
/// many, and whether its target passes the hop rule are decided by robots-fetch's
/// `RedirectChain`, for robots.txt (`Retrieval`) and pages (`Gate::next_hop`) alike. A second
/// place that reads `Location` or judges hops by itself would decide some redirects otherwise:
/// this fails until it uses the chain.
#[test]
fn redirects_are_decided_by_one_chain() {
    let chain = "robots-fetch/src/redirect/chain.rs";
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    let mut users = BTreeSet::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        for file in files {
            let relative = relative_to(root, &file);
            let code = code_of(&std::fs::read_to_string(&file).unwrap());
            if relative == chain {
                continue;
            }
            for own in ["header::LOCATION", "\"location\"", "visited.contains("] {
                if code
                    .to_ascii_lowercase()
                    .contains(&own.to_ascii_lowercase())
                {
                    offenders.push(format!("{relative}: `{own}`"));
                }
            }
            if code.contains("RedirectChain") {
                users.insert(relative);
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "redirects decided outside RedirectChain: {offenders:?}"
    );
    for user in [
        "robots-fetch/src/retrieval.rs",
        "robots-tower/src/engine/gate/mod.rs",
    ] {
        assert!(
            users.contains(user),
            "{user} no longer uses RedirectChain: {users:?}"
        );
    }
}
