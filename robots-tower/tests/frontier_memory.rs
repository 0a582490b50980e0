//! A frontier's memory is bounded in bytes: a million queued URLs over 100,000 groups hold no
//! more than the frontier counts against its budget, and a push that would go over the budget
//! is refused. Counted by a global allocator; this file is its own test binary and its one test
//! does all the counting, so no other test allocates at the same time.
//!
//! `cargo test -p robots-tower --test frontier_memory -- --nocapture` prints the bytes per URL
//! (BENCHMARKS.md has them).

use robots_test_support::alloc::{Counting, live_bytes};
use std::time::Duration;

use robots_tower::{FrontierConfig, PushError, RobotsLayer};

#[global_allocator]
static GLOBAL: Counting = Counting;

const URLS: usize = 1_000_000;
const GROUPS: usize = 100_000;

fn url(i: usize) -> url::Url {
    // Paths of a real crawl's length: 36 to 46 bytes a URL.
    format!("https://site{}.example/articles/{i}.html", i % GROUPS)
        .parse()
        .unwrap()
}

#[test]
fn a_million_urls_over_100k_groups_stay_within_the_budget() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let layer = RobotsLayer::builder("FooBot/1.0")
            .min_delay(Duration::ZERO)
            .build();
        let budget = 160 << 20;
        let before = live_bytes();
        let frontier = layer.frontier_with(FrontierConfig::default().max_bytes(budget));
        let mut text = 0;
        for i in 0..URLS {
            let url = url(i);
            text += url.as_str().len();
            frontier.try_push(url).unwrap();
        }
        let held = usize::try_from(live_bytes() - before).unwrap();
        let stats = frontier.stats();
        assert_eq!((stats.queued, stats.groups), (URLS, GROUPS));
        assert!(
            held <= stats.bytes,
            "the queue holds {held} bytes but counts {}",
            stats.bytes
        );
        assert!(stats.bytes <= budget);
        println!(
            "{URLS} URLs over {GROUPS} groups ({:.1} bytes of text a URL): {held} bytes held \
             ({:.1} a URL), {} counted against the budget ({:.1} a URL)",
            text as f64 / URLS as f64,
            held as f64 / URLS as f64,
            stats.bytes,
            stats.bytes as f64 / URLS as f64,
        );

        // Half of them handed out (and their jobs ended): what is given back is counted back.
        for _ in 0..URLS / 2 {
            let job = frontier.next().await.unwrap();
            drop(job);
        }
        let held = usize::try_from(live_bytes() - before).unwrap();
        assert!(held <= frontier.bytes(), "{held} > {}", frontier.bytes());
        drop(frontier);

        // A budget too small for them all: pushes are refused at it, and it holds.
        let budget = 8 << 20;
        let before = live_bytes();
        let frontier = layer.frontier_with(FrontierConfig::default().max_bytes(budget));
        let mut queued = 0;
        for i in 0..URLS {
            match frontier.try_push(url(i)) {
                Ok(_) => queued += 1,
                Err(PushError::Full { max_bytes, .. }) => assert_eq!(max_bytes, budget),
                Err(other) => panic!("{other}"),
            }
        }
        let held = usize::try_from(live_bytes() - before).unwrap();
        assert!(queued > 10_000 && queued < URLS, "{queued} queued");
        assert!(
            held <= budget,
            "{held} bytes held over a budget of {budget}"
        );
        println!("{queued} URLs fit in {budget} bytes; {held} bytes held");
    });
}
