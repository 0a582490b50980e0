//! robots-core against texting_robots, robotxt and robotstxt, in one run.
//!
//! ```text
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-core --bench core
//! ```
//!
//! Corpus benchmarks need `ROBOTS_CORPUS`; without it only the hostile-file benchmarks run.
//! Every implementation gets the same files and the same URLs (robotxt, which takes a path,
//! gets the path; extracting it is not timed for robotxt but is for us).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use robots_core::{MAX_BODY_BYTES, Matcher, RobotsTxt, path_of};

#[path = "../../tests/support/corpus.rs"]
mod corpus;

const AGENT: &str = "FooBot";

struct File {
    bytes: Vec<u8>,
    text: String,
    urls: Vec<String>,
}

fn corpus() -> Option<Vec<File>> {
    let dir = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the corpus benchmarks")?;
    let files = corpus::corpus_files(&dir, MAX_BODY_BYTES)
        .into_iter()
        .map(|(_, bytes)| {
            let urls = urls_for(&RobotsTxt::parse(&bytes));
            File {
                text: String::from_utf8_lossy(&bytes).into_owned(),
                bytes,
                urls,
            }
        })
        .collect();
    Some(files)
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

fn parse(c: &mut Criterion, files: &[File]) {
    let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
    let mut group = c.benchmark_group("parse_corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    // Peers parse for one agent. `robots-core` is the one-pass parse into the crawler's view;
    // `robots-core-full` parses everything (all groups, sitemaps, records) and then compiles.
    group.bench_function("robots-core", |b| {
        b.iter(|| {
            for f in files {
                black_box(Matcher::from_body(black_box(&f.bytes), [AGENT]));
            }
        })
    });
    group.bench_function("robots-core-full", |b| {
        b.iter(|| {
            for f in files {
                black_box(RobotsTxt::parse(black_box(&f.bytes)).matcher(AGENT));
            }
        })
    });
    group.bench_function("robotxt", |b| {
        b.iter(|| {
            for f in files {
                let _ = black_box(robotxt::Robots::parse(black_box(&f.bytes), AGENT));
            }
        })
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| {
            for f in files {
                let _ = black_box(texting_robots::Robot::new(AGENT, black_box(&f.bytes)));
            }
        })
    });
    group.finish();
}

fn check(c: &mut Criterion, files: &[File]) {
    let ours: Vec<_> = files
        .iter()
        .map(|f| RobotsTxt::parse(&f.bytes).matcher(AGENT))
        .collect();
    let robotxt: Vec<_> = files
        .iter()
        .map(|f| robotxt::Robots::parse(&f.bytes, AGENT))
        .collect();
    let texting: Vec<_> = files
        .iter()
        .map(|f| texting_robots::Robot::new(AGENT, &f.bytes).ok())
        .collect();
    let paths: Vec<Vec<String>> = files
        .iter()
        .map(|f| f.urls.iter().map(|u| path_of(u).into_owned()).collect())
        .collect();
    let checks: usize = files.iter().map(|f| f.urls.len()).sum();

    let mut group = c.benchmark_group("check_corpus");
    group.throughput(Throughput::Elements(checks as u64));
    group.sample_size(10);
    group.bench_function("robots-core", |b| {
        b.iter(|| {
            for (m, f) in ours.iter().zip(files) {
                for url in &f.urls {
                    black_box(m.check_url(black_box(url)).allowed);
                }
            }
        })
    });
    group.bench_function("robotxt", |b| {
        b.iter(|| {
            for (r, ps) in robotxt.iter().zip(&paths) {
                for p in ps {
                    black_box(r.is_allowed(black_box(p)));
                }
            }
        })
    });
    group.bench_function("texting_robots", |b| {
        b.iter(|| {
            for (r, f) in texting.iter().zip(files) {
                if let Some(r) = r {
                    for url in &f.urls {
                        black_box(r.allowed(black_box(url)));
                    }
                }
            }
        })
    });
    group.finish();

    // robotstxt re-parses the file for every check: a sample of every 25th file keeps it short.
    let sample: Vec<&File> = files.iter().step_by(25).collect();
    let sample_checks: usize = sample.iter().map(|f| f.urls.len()).sum();
    let mut group = c.benchmark_group("check_corpus_sample");
    group.throughput(Throughput::Elements(sample_checks as u64));
    group.sample_size(10);
    let sample_ours: Vec<_> = sample
        .iter()
        .map(|f| RobotsTxt::parse(&f.bytes).matcher(AGENT))
        .collect();
    group.bench_function("robots-core", |b| {
        b.iter(|| {
            for (m, f) in sample_ours.iter().zip(&sample) {
                for url in &f.urls {
                    black_box(m.check_url(black_box(url)).allowed);
                }
            }
        })
    });
    group.bench_function("robotstxt", |b| {
        b.iter(|| {
            for f in &sample {
                for url in &f.urls {
                    let mut m = robotstxt::DefaultMatcher::default();
                    black_box(m.one_agent_allowed_by_robots(black_box(&f.text), AGENT, url));
                }
            }
        })
    });
    group.finish();
}

/// Views' memory: the median file, the largest file, and the largest file that has rules for us.
fn report_memory(files: &[File]) {
    let mut by_size: Vec<&File> = files.iter().collect();
    by_size.sort_by_key(|f| f.bytes.len());
    let has_rules = |f: &&&File| Matcher::from_body(&f.bytes, [AGENT]).rule_count() > 0;
    let picks = [
        ("median", by_size.get(by_size.len() / 2)),
        ("largest", by_size.last()),
        ("largest with rules", by_size.iter().rev().find(has_rules)),
    ];
    for (label, f) in picks.into_iter().filter_map(|(l, f)| f.map(|f| (l, f))) {
        let robots = RobotsTxt::parse(&f.bytes);
        let view = robots.matcher(AGENT);
        println!(
            "memory: {label} file ({} bytes, {} groups, {} sitemaps): view for {AGENT} {} heap bytes ({} rules)",
            f.bytes.len(),
            robots.groups().len(),
            robots.sitemaps().len(),
            view.heap_bytes(),
            view.rule_count(),
        );
    }
}

/// A generated hostile file: 15,000 rules `/*c*c*c*c*c*c*c$` (~400 KiB) against 2,000-byte paths.
/// "random": random letters, as an attacker without knowledge of the matcher would write.
/// "adversarial": built against our filters: every rule passes the prefix, `$`-suffix and byte-set
/// checks and asks for a letter that only occurs earlier in the path.
/// "adversarial-late": the same with every letter repeated once more just before the end, which
/// defeats the last-position table too: each rule scans most of the path before failing (our
/// worst case: linear in path × rules, no worse).
fn hostile(c: &mut Criterion) {
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut letter = |n: u8| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        b'a' + (seed % u64::from(n)) as u8
    };
    let random_rule = |letter: &mut dyn FnMut(u8) -> u8| {
        let mut p = String::from("/");
        for _ in 0..7 {
            p.push('*');
            p.push(letter(26) as char);
        }
        p + "$"
    };
    let mut random = String::from("User-agent: *\n");
    for _ in 0..15_000 {
        random.push_str(&format!("Disallow: {}\n", random_rule(&mut letter)));
    }
    let random_path: String = std::iter::once('/')
        .chain((0..2000).map(|_| letter(26) as char))
        .collect();
    // Adversarial: the path is "/" + a…a b…b … y…y z: every letter present, in order. Each rule
    // asks for a letter after a later one ("…*y*a*z$"), so the greedy scan runs to the end.
    let mut adversarial = String::from("User-agent: *\n");
    for _ in 0..15_000 {
        let (x, y) = (letter(12), b'm' + letter(12) - b'a');
        adversarial.push_str(&format!(
            "Disallow: /*a*{}*{}*{}*{}*{}*z$\n",
            y as char, x as char, y as char, x as char, y as char
        ));
    }
    let adversarial_path: String = std::iter::once('/')
        .chain((b'a'..=b'y').flat_map(|b| std::iter::repeat_n(b as char, 80)))
        .chain(std::iter::once('z'))
        .collect();

    let late_path: String =
        adversarial_path.trim_end_matches('z').to_string() + "abcdefghijklmnopqrstuvwxy" + "z";
    println!(
        "hostile: random file {} bytes, adversarial file {} bytes, paths {} and {} bytes",
        random.len(),
        adversarial.len(),
        random_path.len(),
        adversarial_path.len()
    );
    let mut group = c.benchmark_group("hostile_parse");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for (name, body) in [("random", &random), ("adversarial", &adversarial)] {
        group.bench_with_input(BenchmarkId::new("robots-core", name), body, |b, body| {
            b.iter(|| black_box(RobotsTxt::parse(black_box(body.as_bytes())).matcher(AGENT)))
        });
    }
    group.bench_with_input(BenchmarkId::new("robotxt", "random"), &random, |b, body| {
        b.iter(|| black_box(robotxt::Robots::parse(black_box(body.as_bytes()), AGENT)))
    });
    group.bench_with_input(
        BenchmarkId::new("texting_robots", "random"),
        &random,
        |b, body| {
            b.iter(|| {
                black_box(texting_robots::Robot::new(AGENT, black_box(body.as_bytes())).is_ok())
            })
        },
    );
    group.finish();

    let mut group = c.benchmark_group("hostile_check");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    for (name, body, path) in [
        ("random", &random, &random_path),
        ("adversarial", &adversarial, &adversarial_path),
        ("adversarial-late", &adversarial, &late_path),
    ] {
        let matcher = RobotsTxt::parse(body.as_bytes()).matcher(AGENT);
        let url = format!("https://example.com{path}");
        println!("hostile {name}: allowed = {}", matcher.is_allowed(&url));
        group.bench_with_input(BenchmarkId::new("robots-core", name), &url, |b, url| {
            b.iter(|| black_box(matcher.check_url(black_box(url)).allowed))
        });
        let robotxt = robotxt::Robots::parse(body.as_bytes(), AGENT);
        group.bench_with_input(BenchmarkId::new("robotxt", name), path, |b, path| {
            b.iter(|| black_box(robotxt.is_allowed(black_box(path))))
        });
        if let Ok(texting) = texting_robots::Robot::new(AGENT, body.as_bytes()) {
            group.bench_with_input(BenchmarkId::new("texting_robots", name), &url, |b, url| {
                b.iter(|| black_box(texting.allowed(black_box(url))))
            });
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    if let Some(files) = corpus() {
        let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
        let checks: usize = files.iter().map(|f| f.urls.len()).sum();
        println!(
            "corpus: {} files, {bytes} bytes, {checks} checks",
            files.len()
        );
        report_memory(&files);
        parse(c, &files);
        check(c, &files);
    }
    hostile(c);
}

criterion_group!(core, benches);
criterion_main!(core);
