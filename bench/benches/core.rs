//! robots-core against texting_robots, robotxt and robotstxt, in one run.
//!
//! ```text
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-bench --bench core
//! ROBOTS_CORPUS=../shared/corpus/robots BENCH_ROUNDS=5 cargo bench -p robots-bench --bench core
//! ```
//!
//! Corpus benchmarks need `ROBOTS_CORPUS`; without it the generated inputs still run. Every
//! implementation gets the same files, parsed once per crawler (`Googlebot`, `bingbot`,
//! `FooBot`), and the same URLs: we get the full URL (path extraction timed), robotxt gets the
//! path (extraction not timed for it), texting_robots the full URL.
//!
//! The crawler workload (`parse_corpus_named`, `check_corpus_wild`) is closer to what a crawler
//! sees: each file parsed for the crawlers it names itself, and URLs with percent-escapes and
//! query strings of tracking parameters.
//!
//! The whole set runs `BENCH_ROUNDS` times (default 3), interleaved, so that load on a shared
//! machine hits every implementation alike. At the end the run prints the table that
//! BENCHMARKS.md quotes: per round the ratio of medians, then min/median/max over the rounds.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use robots_core::{MAX_BODY_BYTES, Matcher, RobotsTxt, ScanCost, path_of};

use robots_test_support::corpus;

#[path = "core/rules.rs"]
mod rules;
use rules::RulesFile;

/// A crawler with its own group in many files, one often named, and one never named.
const CRAWLERS: [&str; 3] = ["Googlebot", "bingbot", "FooBot"];

struct File {
    bytes: Vec<u8>,
    text: String,
    urls: Vec<String>,
    paths: Vec<String>,
    /// The crawler workload: the crawlers the file itself names (up to [`NAMED_MAX`]).
    named: Vec<String>,
    /// The crawler workload: URLs as crawlers find them in pages, with percent-escapes and
    /// query strings, and their paths (for robotxt).
    wild_urls: Vec<String>,
    wild_paths: Vec<String>,
    /// The second workload: URLs from the file's own rules, for crawlers it names.
    rules: RulesFile,
}

/// At most this many of a file's own crawler names are parsed for (some files name hundreds).
const NAMED_MAX: usize = 8;

impl File {
    fn new(bytes: Vec<u8>) -> File {
        let robots = RobotsTxt::parse(&bytes);
        let urls = urls_for(&robots);
        let wild_urls = wild_urls_for(&urls);
        let seed = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        File {
            rules: RulesFile::new(&robots, seed),
            text: String::from_utf8_lossy(&bytes).into_owned(),
            paths: urls.iter().map(|u| path_of(u).into_owned()).collect(),
            wild_paths: wild_urls.iter().map(|u| path_of(u).into_owned()).collect(),
            named: named_crawlers(&robots),
            bytes,
            urls,
            wild_urls,
        }
    }
}

/// The product tokens a file's groups name (not `*`), each once, in file order.
fn named_tokens(robots: &RobotsTxt) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    for agent in robots.groups().flat_map(|g| g.agents().collect::<Vec<_>>()) {
        let token = String::from_utf8_lossy(agent.token()).into_owned();
        if agent.is_global
            || token.is_empty()
            || named.iter().any(|n| n.eq_ignore_ascii_case(&token))
        {
            continue;
        }
        named.push(token);
    }
    named
}

/// The crawler workload's crawlers: the first [`NAMED_MAX`] tokens the file names.
fn named_crawlers(robots: &RobotsTxt) -> Vec<String> {
    let mut named = named_tokens(robots);
    named.truncate(NAMED_MAX);
    named
}

/// The derived URLs as a crawler meets them: every other one with a percent-escaped segment
/// (UTF-8 and reserved bytes, upper and lower case hex), and every one with a query string of
/// tracking parameters, some escaped.
fn wild_urls_for(urls: &[String]) -> Vec<String> {
    const ESCAPED: [&str; 4] = ["caf%C3%A9", "a%20b", "%7Euser", "x%2fy"];
    const QUERIES: [&str; 3] = [
        "utm_source=feed&utm_medium=rss&id=42",
        "q=robots%20txt&page=2&sort=desc",
        "ref=%2Fhome%3Fa%3D1&session=9f86d081884c7d65",
    ];
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            let (base, query) = url.split_once('?').unwrap_or((url, ""));
            let mut wild = base.to_string();
            if i % 2 == 0 {
                if !wild.ends_with('/') {
                    wild.push('/');
                }
                wild.push_str(ESCAPED[i / 2 % ESCAPED.len()]);
            }
            wild.push('?');
            if !query.is_empty() {
                wild.push_str(query);
                wild.push('&');
            }
            wild.push_str(QUERIES[i % QUERIES.len()]);
            wild
        })
        .collect()
}

fn corpus() -> Option<Vec<File>> {
    let dir = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the corpus benchmarks")?;
    Some(
        corpus::corpus_files(&dir, MAX_BODY_BYTES)
            .into_iter()
            .map(|(_, bytes)| File::new(bytes))
            .collect(),
    )
}

/// About 45 URLs per file, derived from the file's own rules: the pattern made literal, extended,
/// and cut short, plus a few paths no rule mentions.
fn urls_for(robots: &RobotsTxt) -> Vec<String> {
    let mut paths = vec![
        "/".to_string(),
        "/index.html".into(),
        "/some/page?id=1".into(),
    ];
    for rule in robots.groups().flat_map(|g| g.rules().collect::<Vec<_>>()) {
        if paths.len() >= 45 {
            break;
        }
        let written = String::from_utf8_lossy(rule.written);
        let literal = written.replace('*', "x").trim_end_matches('$').to_string();
        let literal = if literal.starts_with('/') {
            literal
        } else {
            format!("/{literal}")
        };
        paths.push(format!("{literal}more/page.html?q=1"));
        paths.push(literal.clone());
        if let Some(cut) = literal.get(..literal.len() / 2) {
            paths.push(cut.to_string());
        }
    }
    paths.truncate(45);
    paths
        .into_iter()
        .map(|p| format!("https://example.com{p}"))
        .collect()
}

/// A xorshift generator: the generated inputs are the same in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn letter(&mut self, from: u8, count: u8) -> u8 {
        from + (self.next() % u64::from(count)) as u8
    }
}

/// Files full of what real files get wrong: many short lines, CR, LF and CRLF mixed, misspelt
/// keys, missing colons, odd spacing, comments, bytes that need escaping, a BOM. 1,000 files of
/// about 2 KB.
fn quirk_files() -> Vec<File> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let agents = ["*", "Googlebot", "bingbot", "FooBot/1.0", "Slurp", "*bot"];
    let keys = [
        "Disallow",
        "disallow",
        "DISALLOW",
        "Dissallow",
        "Allow",
        "allow",
        "Disalow",
        "Allow ",
    ];
    let paths = [
        "/",
        "/tmp/",
        "/private",
        "/*.php$",
        "/a*b",
        "/search?q=",
        "/caf\u{e9}/",
        "/%7Euser/",
        "/~user/",
        "/a b",
        "/index.html",
        "*/print",
        "/cgi-bin/",
        "",
        "/x$y",
        "/%2F%2f",
    ];
    let ends = ["\n", "\r\n", "\r"];
    (0..1000)
        .map(|i| {
            let mut text = String::new();
            if i % 7 == 0 {
                text.push('\u{feff}');
            }
            while text.len() < 2048 {
                let end = ends[rng.below(ends.len())];
                match rng.below(12) {
                    0 | 1 => {
                        let sep = [": ", ":", " : ", "\t:\t", " "][rng.below(5)];
                        let key =
                            ["User-agent", "user-agent", "useragent", "User agent"][rng.below(4)];
                        text.push_str(&format!("{key}{sep}{}", agents[rng.below(agents.len())]));
                    }
                    2 => text.push_str(&format!("# comment {}", rng.below(1000))),
                    3 => {}
                    4 => text.push_str(&format!("Crawl-delay: {}", rng.below(10))),
                    5 => text.push_str("Sitemap: https://example.com/sitemap.xml"),
                    _ => {
                        let key = keys[rng.below(keys.len())];
                        let path = paths[rng.below(paths.len())];
                        let tail = ["", "  ", " # why", "\t"][rng.below(4)];
                        text.push_str(&format!("{key}: {path}{}{tail}", rng.below(100)));
                    }
                }
                text.push_str(end);
            }
            File::new(text.into_bytes())
        })
        .collect()
}

/// What one timed routine measured: nanoseconds per unit (per file set parsed, per check…).
#[derive(Default)]
struct Results {
    /// (comparison, implementation) → per round, the median over criterion's samples.
    times: BTreeMap<(String, String), Vec<f64>>,
}

static RESULTS: Mutex<Results> = Mutex::new(Results {
    times: BTreeMap::new(),
});

/// Criterion's samples go through `iter_custom`; each sample's time per iteration is also kept
/// here, and the round's figure is their median divided by `units`.
fn timed<F: FnMut()>(
    c: &mut Criterion,
    group: &str,
    name: &str,
    round: usize,
    units: usize,
    mut routine: F,
) {
    let mut samples: Vec<f64> = Vec::new();
    c.benchmark_group(group)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .bench_function(BenchmarkId::new(name, format!("round-{round}")), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    routine();
                }
                let elapsed = start.elapsed();
                samples.push(elapsed.as_nanos() as f64 / iters as f64);
                elapsed
            })
        });
    if samples.is_empty() {
        return; // filtered out on the command line
    }
    let per_unit = median(&mut samples) / units.max(1) as f64;
    if let Ok(mut results) = RESULTS.lock() {
        results
            .times
            .entry((group.to_string(), name.to_string()))
            .or_default()
            .push(per_unit);
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn parse(c: &mut Criterion, group: &str, files: &[File], round: usize) {
    let units = files.len() * CRAWLERS.len();
    // `robots-core` is the one-pass parse into one crawler's view; `robots-core-full` parses
    // everything (all groups, sitemaps, records) and then compiles the view.
    timed(c, group, "robots-core", round, units, || {
        for f in files {
            for agent in CRAWLERS {
                black_box(Matcher::from_body(black_box(&f.bytes), [agent]));
            }
        }
    });
    timed(c, group, "robots-core-full", round, units, || {
        for f in files {
            for agent in CRAWLERS {
                black_box(RobotsTxt::parse(black_box(&f.bytes)).matcher(agent));
            }
        }
    });
    timed(c, group, "robotxt", round, units, || {
        for f in files {
            for agent in CRAWLERS {
                let _ = black_box(robotxt::Robots::parse(black_box(&f.bytes), agent));
            }
        }
    });
    timed(c, group, "texting_robots", round, units, || {
        for f in files {
            for agent in CRAWLERS {
                let _ = black_box(texting_robots::Robot::new(agent, black_box(&f.bytes)));
            }
        }
    });
}

fn check(c: &mut Criterion, files: &[File], round: usize) {
    let views = |f: &File| CRAWLERS.map(|agent| Matcher::from_body(&f.bytes, [agent]));
    let ours: Vec<_> = files.iter().map(views).collect();
    let robotxt: Vec<_> = files
        .iter()
        .map(|f| CRAWLERS.map(|agent| robotxt::Robots::parse(&f.bytes, agent)))
        .collect();
    let texting: Vec<_> = files
        .iter()
        .map(|f| CRAWLERS.map(|agent| texting_robots::Robot::new(agent, &f.bytes).ok()))
        .collect();
    let checks = files.iter().map(|f| f.urls.len()).sum::<usize>() * CRAWLERS.len();

    timed(c, "check_corpus", "robots-core", round, checks, || {
        for (views, f) in ours.iter().zip(files) {
            for m in views {
                for url in &f.urls {
                    black_box(m.check_url(black_box(url)).allowed);
                }
            }
        }
    });
    timed(c, "check_corpus", "robots-core-path", round, checks, || {
        for (views, f) in ours.iter().zip(files) {
            for m in views {
                for path in &f.paths {
                    black_box(m.check_path(black_box(path.as_bytes())).allowed);
                }
            }
        }
    });
    timed(c, "check_corpus", "robotxt", round, checks, || {
        for (views, f) in robotxt.iter().zip(files) {
            for r in views {
                for path in &f.paths {
                    black_box(r.is_allowed(black_box(path)));
                }
            }
        }
    });
    // texting_robots fails on some files; those are skipped for it, so its per-check figure is
    // over the files it parsed (all of them count in `checks`, which flatters it slightly).
    timed(c, "check_corpus", "texting_robots", round, checks, || {
        for (views, f) in texting.iter().zip(files) {
            for r in views.iter().flatten() {
                for url in &f.urls {
                    black_box(r.allowed(black_box(url)));
                }
            }
        }
    });

    // robotstxt re-parses the file for every check: a sample of every 25th file keeps it short.
    let sample: Vec<&File> = files.iter().step_by(25).collect();
    let sample_checks = sample.iter().map(|f| f.urls.len()).sum::<usize>();
    let sample_ours: Vec<_> = sample
        .iter()
        .map(|f| Matcher::from_body(&f.bytes, ["FooBot"]))
        .collect();
    timed(
        c,
        "check_sample",
        "robots-core",
        round,
        sample_checks,
        || {
            for (m, f) in sample_ours.iter().zip(&sample) {
                for url in &f.urls {
                    black_box(m.check_url(black_box(url)).allowed);
                }
            }
        },
    );
    timed(c, "check_sample", "robotstxt", round, sample_checks, || {
        for f in &sample {
            for url in &f.urls {
                let mut m = robotstxt::DefaultMatcher::default();
                black_box(m.one_agent_allowed_by_robots(black_box(&f.text), "FooBot", url));
            }
        }
    });
}

/// The crawler workload: each file parsed for the crawlers it names itself, and URLs with
/// escapes and query strings checked by those views (files that name none are skipped).
fn crawler_workload(c: &mut Criterion, files: &[File], round: usize) {
    fn crawlers(f: &File) -> &[String] {
        &f.named
    }
    fn urls(f: &File) -> (&[String], &[String]) {
        (&f.wild_urls, &f.wild_paths)
    }
    let named: Vec<&File> = files.iter().filter(|f| !f.named.is_empty()).collect();
    let groups = ("parse_corpus_named", "check_corpus_wild");
    named_workload(c, round, groups, &named, crawlers, urls);
}

/// The second workload (see `rules.rs`): each file parsed into the view of each crawler it
/// names, and URLs made from its own rules checked by those views.
fn rules_workload(c: &mut Criterion, files: &[File], round: usize) {
    fn crawlers(f: &File) -> &[String] {
        &f.rules.crawlers
    }
    fn urls(f: &File) -> (&[String], &[String]) {
        (&f.rules.urls, &f.rules.paths)
    }
    let files: Vec<&File> = files.iter().collect();
    let groups = ("parse_corpus_rules", "check_corpus_rules");
    named_workload(c, round, groups, &files, crawlers, urls);
}

/// Each file's views, one per crawler (`make` takes the body and the crawler's token).
fn views_of<T>(
    files: &[&File],
    crawlers: fn(&File) -> &[String],
    make: impl Fn(&[u8], &str) -> T,
) -> Vec<Vec<T>> {
    let per_file = |f: &&File| crawlers(f).iter().map(|a| make(&f.bytes, a)).collect();
    files.iter().map(per_file).collect()
}

/// Each file parsed into the view of each of its `crawlers` (group `parse_group`), then its
/// `urls` (full URLs, and their paths for robotxt) checked by those views (`check_group`).
fn named_workload(
    c: &mut Criterion,
    round: usize,
    (parse_group, check_group): (&str, &str),
    files: &[&File],
    crawlers: fn(&File) -> &[String],
    urls: fn(&File) -> (&[String], &[String]),
) {
    let parses = files.iter().map(|f| crawlers(f).len()).sum::<usize>();
    timed(c, parse_group, "robots-core", round, parses, || {
        for f in files {
            for agent in crawlers(f) {
                black_box(Matcher::from_body(black_box(&f.bytes), [agent.as_str()]));
            }
        }
    });
    timed(c, parse_group, "robotxt", round, parses, || {
        for f in files {
            for agent in crawlers(f) {
                let _ = black_box(robotxt::Robots::parse(black_box(&f.bytes), agent));
            }
        }
    });
    timed(c, parse_group, "texting_robots", round, parses, || {
        for f in files {
            for agent in crawlers(f) {
                let _ = black_box(texting_robots::Robot::new(agent, black_box(&f.bytes)));
            }
        }
    });

    let ours = views_of(files, crawlers, |body, agent| {
        Matcher::from_body(body, [agent])
    });
    let robotxt = views_of(files, crawlers, |body, agent| {
        robotxt::Robots::parse(body, agent)
    });
    let texting = views_of(files, crawlers, |body, agent| {
        texting_robots::Robot::new(agent, body).ok()
    });
    let checks = files
        .iter()
        .map(|f| urls(f).0.len() * crawlers(f).len())
        .sum::<usize>();
    timed(c, check_group, "robots-core", round, checks, || {
        for (views, f) in ours.iter().zip(files) {
            for m in views {
                for url in urls(f).0 {
                    black_box(m.check_url(black_box(url)).allowed);
                }
            }
        }
    });
    timed(c, check_group, "robots-core-path", round, checks, || {
        for (views, f) in ours.iter().zip(files) {
            for m in views {
                for path in urls(f).1 {
                    black_box(m.check_path(black_box(path.as_bytes())).allowed);
                }
            }
        }
    });
    timed(c, check_group, "robotxt", round, checks, || {
        for (views, f) in robotxt.iter().zip(files) {
            for r in views {
                for path in urls(f).1 {
                    black_box(r.is_allowed(black_box(path)));
                }
            }
        }
    });
    timed(c, check_group, "texting_robots", round, checks, || {
        for (views, f) in texting.iter().zip(files) {
            for r in views.iter().flatten() {
                for url in urls(f).0 {
                    black_box(r.allowed(black_box(url)));
                }
            }
        }
    });
}

/// The compile of a view against the parse of its file, file by file (issue 57: at most 2× at
/// the median and at p99): `RobotsTxt::parse`, then `RobotsTxt::matcher` for each of the second
/// workload's crawlers (their mean). Each is timed as the fastest of 5 batches of enough runs to
/// last about 20 µs. Printed: the ratio's median, p90, p99 and max, and the totals' ratio.
fn report_compile(files: &[File]) {
    fn fastest(runs: usize, mut f: impl FnMut()) -> f64 {
        (0..5)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..runs {
                    f();
                }
                start.elapsed().as_nanos() as f64 / runs as f64
            })
            .fold(f64::INFINITY, f64::min)
    }
    let mut ratios = Vec::with_capacity(files.len());
    let (mut parse_total, mut compile_total) = (0.0, 0.0);
    for f in files {
        let runs = (20_000 / f.bytes.len().max(1)).clamp(1, 200);
        let parse = fastest(runs, || {
            black_box(RobotsTxt::parse(black_box(&f.bytes)));
        });
        let robots = RobotsTxt::parse(&f.bytes);
        let crawlers = &f.rules.crawlers;
        let compile = fastest(runs, || {
            for agent in crawlers {
                black_box(robots.matcher(black_box(agent)));
            }
        }) / crawlers.len() as f64;
        ratios.push(compile / parse);
        parse_total += parse;
        compile_total += compile;
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    println!(
        "compile ÷ parse, per file ({} files): median {:.2}, p90 {:.2}, p99 {:.2}, max {:.2}; totals {:.2} (compile {} a file and crawler, parse {} a file)",
        ratios.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        compile_total / parse_total,
        human(compile_total / files.len() as f64),
        human(parse_total / files.len() as f64),
    );
}

/// Views' memory: the median file, the largest file, and the largest file that has rules for us.
fn report_memory(files: &[File]) {
    let mut by_size: Vec<&File> = files.iter().collect();
    by_size.sort_by_key(|f| f.bytes.len());
    let has_rules = |f: &&&File| Matcher::from_body(&f.bytes, ["FooBot"]).rule_count() > 0;
    let picks = [
        ("median", by_size.get(by_size.len() / 2)),
        ("largest", by_size.last()),
        ("largest with rules", by_size.iter().rev().find(has_rules)),
    ];
    for (label, f) in picks.into_iter().filter_map(|(l, f)| f.map(|f| (l, f))) {
        let robots = RobotsTxt::parse(&f.bytes);
        let view = robots.matcher("FooBot");
        println!(
            "memory: {label} file ({} bytes, {} groups, {} sitemaps): view for FooBot {} heap bytes ({} rules)",
            f.bytes.len(),
            robots.groups().len(),
            robots.sitemaps().len(),
            view.heap_bytes(),
            view.rule_count(),
        );
    }
}

/// A generated hostile file: a robots.txt and the path that is checked against it.
struct Hostile {
    name: &'static str,
    body: String,
    path: String,
}

/// Hostile files, every one of them crafted so that no rule matches (a check must try them all).
///
/// - `random`: 15,000 rules `/*c*c*c*c*c*c*c$` of random letters (~400 KiB) against a 2 KB path
///   of random letters, as an attacker without knowledge of the matcher would write.
/// - `adversarial`: 15,000 rules `/*a*y*x*y*x*y*z$` built against our filters: each passes the
///   prefix, `$`-suffix and byte-set checks and asks for a letter that only occurs earlier in
///   the path `/a…ab…b…y…yz`. `adversarial-late`: the same with every letter repeated once more
///   just before the end, which defeats the first/last-position tables too.
/// - `runs`: 2,400 rules `/*X*a*a*…*a*Y*X*a$` (96 `*a` segments each, the most that 2,400 lines fit in 512,000 bytes, X and Y random letters
///   other than `a`) against a 2 KB path of `a`s after every other letter once: the long run of
///   one-byte segments all match, and the rule fails only at its end. `runs-late`: the letters
///   repeated in reverse order at the path's end, so that the `Y` is found after the run and
///   only the last `X` fails.
fn hostile_files() -> Vec<Hostile> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut random = String::from("User-agent: *\n");
    for _ in 0..15_000 {
        random.push_str("Disallow: /");
        for _ in 0..7 {
            random.push('*');
            random.push(rng.letter(b'a', 26) as char);
        }
        random.push_str("$\n");
    }
    let random_path: String = std::iter::once('/')
        .chain((0..2000).map(|_| rng.letter(b'a', 26) as char))
        .collect();

    let mut adversarial = String::from("User-agent: *\n");
    for _ in 0..15_000 {
        let (x, y) = (rng.letter(b'a', 12) as char, rng.letter(b'm', 12) as char);
        adversarial.push_str(&format!("Disallow: /*a*{y}*{x}*{y}*{x}*{y}*z$\n"));
    }
    let adversarial_path: String = std::iter::once('/')
        .chain((b'a'..=b'y').flat_map(|b| std::iter::repeat_n(b as char, 80)))
        .chain(std::iter::once('z'))
        .collect();
    let adversarial_late =
        adversarial_path.trim_end_matches('z').to_string() + "abcdefghijklmnopqrstuvwxy" + "z";

    // X is later in the alphabet than Y: the path's head has the letters in order (Y after X
    // absent there), its tail in reverse order (Y after X present, X after that Y absent).
    let mut runs = String::from("User-agent: *\n");
    for _ in 0..2_400 {
        let (x, y) = (rng.letter(b'n', 13) as char, rng.letter(b'b', 12) as char);
        runs.push_str(&format!("Disallow: /*{x}{}*{y}*{x}*a$\n", "*a".repeat(96)));
    }
    let head: String = (b'b'..=b'z').map(char::from).collect();
    let runs_path = format!("/{head}{}", "a".repeat(2000));
    let tail: String = (b'b'..=b'z').rev().map(char::from).collect();
    let runs_late = format!("/{head}{}{tail}a", "a".repeat(2000));

    vec![
        Hostile {
            name: "random",
            body: random,
            path: random_path,
        },
        Hostile {
            name: "adversarial",
            body: adversarial.clone(),
            path: adversarial_path,
        },
        Hostile {
            name: "adversarial-late",
            body: adversarial,
            path: adversarial_late,
        },
        Hostile {
            name: "runs",
            body: runs.clone(),
            path: runs_path,
        },
        Hostile {
            name: "runs-late",
            body: runs,
            path: runs_late,
        },
    ]
}

fn hostile(c: &mut Criterion, files: &[Hostile], round: usize) {
    for h in files {
        let body = h.body.as_bytes();
        // The two variants of a family share a file: parse it once per family.
        if !h.name.ends_with("-late") {
            let group = format!("hostile_parse/{}", h.name);
            timed(c, &group, "robots-core", round, 1, || {
                black_box(Matcher::from_body(black_box(body), ["FooBot"]));
            });
            timed(c, &group, "robotxt", round, 1, || {
                let _ = black_box(robotxt::Robots::parse(black_box(body), "FooBot"));
            });
        }
        let group = format!("hostile_check/{}", h.name);
        let matcher = Matcher::from_body(body, ["FooBot"]);
        let url = format!("https://example.com{}", h.path);
        // The crafted files must make a check try every rule; the random one need not.
        assert!(
            h.name == "random" || matcher.is_allowed(&url),
            "hostile {}: no rule may match",
            h.name
        );
        timed(c, &group, "robots-core", round, 1, || {
            black_box(matcher.check_url(black_box(&url)).allowed);
        });
        let robotxt = robotxt::Robots::parse(body, "FooBot");
        timed(c, &group, "robotxt", round, 1, || {
            black_box(robotxt.is_allowed(black_box(&h.path)));
        });
        // A check by scan (`RuleScan`, a file's first check from Python and
        // `RobotsTxt::is_allowed`) of the largest part of the file that a scan is used for:
        // its first `ScanCost::MAX_WILDCARD_RULES` rules, within `ScanCost::MAX_STARS`.
        let head = scannable_head(&h.body);
        let robots = RobotsTxt::parse(head.as_bytes());
        let scan = robots.rule_scan("FooBot");
        assert!(scan.cost(&robots).scan_is_cheaper(), "hostile {}", h.name);
        let group = format!("hostile_scan/{}", h.name);
        timed(c, &group, "robots-core", round, 1, || {
            black_box(scan.check_url(&robots, black_box(&url)).allowed);
        });
    }
}

/// The first lines of a hostile file that a scan is still used for (see `ScanCost`).
fn scannable_head(body: &str) -> String {
    let (mut head, mut rules, mut stars) = (String::new(), 0, 0);
    for line in body.lines() {
        let line_stars = line.matches('*').count();
        if line.starts_with("Disallow") {
            if rules == ScanCost::MAX_WILDCARD_RULES || stars + line_stars > ScanCost::MAX_STARS {
                break;
            }
            rules += 1;
            stars += line_stars;
        }
        head.push_str(line);
        head.push('\n');
    }
    head
}

/// The table BENCHMARKS.md quotes: for each comparison, our median time per unit over the
/// rounds and each peer's ratio (peer time / our time, per round) as min / median / max.
fn report() {
    let Ok(results) = RESULTS.lock() else {
        return;
    };
    let ours = ["robots-core", "robots-core-path", "robots-core-full"];
    let mut groups: Vec<&String> = results.times.keys().map(|(g, _)| g).collect();
    groups.dedup();
    println!(
        "\n| group | implementation | median per unit | ratio to robots-core (min / median / max over rounds) |"
    );
    println!("|---|---|---|---|");
    for group in groups {
        let Some(base) = results
            .times
            .get(&(group.clone(), "robots-core".to_string()))
        else {
            continue;
        };
        for ((g, name), times) in results.times.iter().filter(|((g, _), _)| g == group) {
            let mut sorted = times.clone();
            let mid = median(&mut sorted);
            let mut ratios: Vec<f64> = times.iter().zip(base).map(|(t, b)| t / b).collect();
            ratios.sort_by(f64::total_cmp);
            let ratio = if name == "robots-core" {
                "—".to_string()
            } else if ours.contains(&name.as_str()) {
                format!(
                    "{:.2} / {:.2} / {:.2} (time ÷ robots-core)",
                    ratios[0],
                    median(&mut ratios.clone()),
                    ratios[ratios.len() - 1]
                )
            } else {
                format!(
                    "{:.2}× / {:.2}× / {:.2}×",
                    ratios[0],
                    median(&mut ratios.clone()),
                    ratios[ratios.len() - 1]
                )
            };
            println!("| {g} | {name} | {} | {ratio} |", human(mid));
        }
    }
    // The path check against robotxt is its own comparison.
    for group in ["check_corpus", "check_corpus_wild", "check_corpus_rules"] {
        if let (Some(path), Some(peer)) = (
            results
                .times
                .get(&(group.into(), "robots-core-path".into())),
            results.times.get(&(group.into(), "robotxt".into())),
        ) {
            let mut ratios: Vec<f64> = peer.iter().zip(path).map(|(p, o)| p / o).collect();
            ratios.sort_by(f64::total_cmp);
            println!(
                "| {group} | robotxt vs robots-core-path | | {:.2}× / {:.2}× / {:.2}× |",
                ratios[0],
                median(&mut ratios.clone()),
                ratios[ratios.len() - 1]
            );
        }
    }
}

fn human(ns: f64) -> String {
    match ns {
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.2} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

fn benches(c: &mut Criterion) {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let files = corpus();
    if let Some(files) = &files {
        let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
        let checks: usize = files.iter().map(|f| f.urls.len()).sum();
        println!(
            "corpus: {} files, {bytes} bytes, {checks} URLs, each for {} crawlers",
            files.len(),
            CRAWLERS.len()
        );
        let named: Vec<&File> = files.iter().filter(|f| !f.named.is_empty()).collect();
        println!(
            "crawler workload: {} files name crawlers, {} views (at most {NAMED_MAX} a file), {} checks of URLs with escapes and queries",
            named.len(),
            named.iter().map(|f| f.named.len()).sum::<usize>(),
            named
                .iter()
                .map(|f| f.wild_urls.len() * f.named.len())
                .sum::<usize>()
        );
        println!(
            "rules workload: {} views (at most {} a file), {} checks of URLs made from the files' own rules",
            files.iter().map(|f| f.rules.crawlers.len()).sum::<usize>(),
            rules::CRAWLERS_MAX,
            files
                .iter()
                .map(|f| f.rules.urls.len() * f.rules.crawlers.len())
                .sum::<usize>()
        );
        report_memory(files);
        if std::env::var_os("BENCH_SKIP_COMPILE").is_none() {
            report_compile(files);
        }
    }
    let quirks = quirk_files();
    println!(
        "quirks: {} generated files, {} bytes",
        quirks.len(),
        quirks.iter().map(|f| f.bytes.len()).sum::<usize>()
    );
    let hostile_files = hostile_files();
    for h in &hostile_files {
        println!(
            "hostile {}: file {} bytes, path {} bytes",
            h.name,
            h.body.len(),
            h.path.len()
        );
    }
    for round in 0..rounds {
        if let Some(files) = &files {
            parse(c, "parse_corpus", files, round);
            check(c, files, round);
            crawler_workload(c, files, round);
            rules_workload(c, files, round);
        }
        parse(c, "parse_quirks", &quirks, round);
        hostile(c, &hostile_files, round);
    }
    report();
}

criterion_group!(core, benches);
criterion_main!(core);
