//! AI usage preferences (spec section 10): what they cost, and that the plain check does not pay
//! for them.
//!
//! ```text
//! ROBOTS_CORPUS=../shared/corpus/robots cargo bench -p robots-bench --bench usage
//! ```
//!
//! Every corpus file is taken twice: as it is, and with two `Content-Signal` lines before its
//! first group (which apply to every crawler, so every view gets a usage table). The same URLs
//! are checked in both, plainly (`check_url`) and with preferences (`usage`). Without
//! `ROBOTS_CORPUS` only the dictionary benchmark runs.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robots_core::{AiPreferences, ContentSignal, MAX_BODY_BYTES, Matcher, RobotsTxt};

use robots_test_support::corpus;

const AGENTS: [&str; 3] = ["Googlebot", "bingbot", "FooBot"];
/// A corpus file as it is, with the usage lines in front, and its URLs.
struct File {
    body: Vec<u8>,
    with_usage: Vec<u8>,
    urls: Vec<String>,
}

const PREFIX: &[u8] =
    b"Content-Signal: search=yes, ai-train=no\nContent-Signal: /ai/ ai-train=yes\n";

/// Paths a crawler asks about: the file's own rules made literal, plus a few no rule names.
fn urls_for(body: &[u8]) -> Vec<String> {
    let robots = RobotsTxt::parse(body);
    let mut paths = vec!["/".to_string(), "/index.html".into(), "/ai/x?id=1".into()];
    for rule in robots.groups().flat_map(|g| g.rules().collect::<Vec<_>>()) {
        if paths.len() >= 30 {
            break;
        }
        let written = String::from_utf8_lossy(rule.written);
        let literal = written.replace('*', "x").trim_end_matches('$').to_string();
        paths.push(format!("/{}", literal.trim_start_matches('/')));
    }
    paths
        .into_iter()
        .map(|p| format!("https://example.com{p}"))
        .collect()
}

fn dictionaries(c: &mut Criterion) {
    let mut group = c.benchmark_group("usage_dictionary");
    for (name, value) in [
        ("short", &b"train-ai=n"[..]),
        ("two_keys", b"train-ai=y, search=n"),
        (
            "params_and_unknown",
            b"train-ai=n;reason=\"policy\", search=y, ai-use=n, bulk=?0",
        ),
        ("invalid", b"Train-AI=n"),
    ] {
        group.bench_function(format!("sfv/{name}"), |b| {
            b.iter(|| black_box(AiPreferences::parse_lenient(black_box(value))))
        });
    }
    group.bench_function("content_signal", |b| {
        b.iter(|| {
            black_box(ContentSignal::parse(black_box(
                b"search=yes, ai-train=no, ai-input=yes",
            )))
        })
    });
    group.finish();
}

fn corpus_views(c: &mut Criterion) {
    let Some(dir) = corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"), "the usage benchmarks") else {
        return;
    };
    let files: Vec<File> = corpus::corpus_files(&dir, MAX_BODY_BYTES)
        .into_iter()
        .map(|(_, body)| {
            let mut with_usage = PREFIX.to_vec();
            with_usage.extend_from_slice(&body);
            let urls = urls_for(&body);
            File {
                body,
                with_usage,
                urls,
            }
        })
        .collect();
    let views = |pick: fn(&File) -> &[u8]| -> Vec<Vec<Matcher>> {
        files
            .iter()
            .map(|f| {
                AGENTS
                    .iter()
                    .map(|a| Matcher::from_body(pick(f), [a]))
                    .collect()
            })
            .collect()
    };
    let plain = views(|f| &f.body);
    let with = views(|f| &f.with_usage);
    let checks: usize = files.iter().map(|f| f.urls.len() * AGENTS.len()).sum();
    println!(
        "usage bench: {} files, {checks} checks per pass",
        files.len()
    );

    let mut group = c.benchmark_group("usage_check_corpus");
    group.throughput(Throughput::Elements(checks as u64));
    group.sample_size(10);
    let run = |views: &[Vec<Matcher>], usage: bool| {
        let mut n = 0usize;
        for (vs, f) in views.iter().zip(&files) {
            for v in vs {
                for url in &f.urls {
                    n += if usage {
                        let u = v.usage(black_box(url));
                        usize::from(u.verdict.allowed) + u.preferences.may_train_ai() as usize
                    } else {
                        usize::from(v.check_url(black_box(url)).allowed)
                    };
                }
            }
        }
        n
    };
    group.bench_function("check_url/file_as_is", |b| {
        b.iter(|| black_box(run(&plain, false)))
    });
    group.bench_function("check_url/with_usage_lines", |b| {
        b.iter(|| black_box(run(&with, false)))
    });
    group.bench_function("usage/file_as_is", |b| {
        b.iter(|| black_box(run(&plain, true)))
    });
    group.bench_function("usage/with_usage_lines", |b| {
        b.iter(|| black_box(run(&with, true)))
    });
    group.finish();

    let bytes: usize = files.iter().map(|f| f.body.len()).sum();
    let mut group = c.benchmark_group("usage_parse_corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.bench_function("from_body/file_as_is", |b| {
        b.iter(|| {
            for f in &files {
                for a in AGENTS {
                    black_box(Matcher::from_body(&f.body, [a]));
                }
            }
        })
    });
    group.bench_function("from_body/with_usage_lines", |b| {
        b.iter(|| {
            for f in &files {
                for a in AGENTS {
                    black_box(Matcher::from_body(&f.with_usage, [a]));
                }
            }
        })
    });
    group.finish();

    // A policy token's view: compiled from a parse the crawler already has, or parsed anew.
    let parsed: Vec<RobotsTxt> = files.iter().map(|f| RobotsTxt::parse(&f.body)).collect();
    let mut group = c.benchmark_group("usage_policy_view");
    group.throughput(Throughput::Elements(files.len() as u64));
    group.sample_size(10);
    group.bench_function("from_the_same_parse", |b| {
        b.iter(|| {
            for robots in &parsed {
                black_box(robots.matcher(black_box("Google-Extended")));
            }
        })
    });
    group.bench_function("from_body", |b| {
        b.iter(|| {
            for f in &files {
                black_box(Matcher::from_body(&f.body, [black_box("Google-Extended")]));
            }
        })
    });
    group.finish();
}

/// Lint of a file of nothing but usage lines, 512,000 bytes of them (issue 53: it was quadratic,
/// 2.1 s; linear now, the same order as a file of Disallow lines). Both vocabularies, and one
/// alone, and Disallow lines of the same size to compare with.
fn lint_usage_lines(c: &mut Criterion) {
    let fill = |line: &str| {
        let mut body = b"User-agent: *\n".to_vec();
        while body.len() + line.len() <= MAX_BODY_BYTES {
            body.extend_from_slice(line.as_bytes());
        }
        body
    };
    let files = [
        ("content-usage", fill("Content-Usage: train-ai=n\n")),
        (
            "both-vocabularies",
            fill("Content-Usage: train-ai=n\nContent-Signal: ai-train=yes\n"),
        ),
        ("disallow", fill("Disallow: /private/x\n")),
    ];
    let mut group = c.benchmark_group("lint_512000_bytes");
    group.sample_size(10);
    for (name, body) in &files {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(*name, |b| {
            b.iter(|| robots_core::lint(black_box(body)).len());
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    lint_usage_lines(c);
    dictionaries(c);
    corpus_views(c);
}

criterion_group!(usage, benches);
criterion_main!(usage);
