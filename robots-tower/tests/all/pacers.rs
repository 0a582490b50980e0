//! One table of spacing scenarios, run against both pacers: the in-process one (Rust) and the
//! fleet's (Lua scripts on a real `redis-server`). They implement the same rules twice; this table
//! keeps them from drifting apart. Each scenario is driven through `RobotsHooks` (acquire a turn,
//! hold it, finish with a status), in real time, and each start is checked against a window.

use std::time::{Duration, Instant};

use robots_fetch::Origin;
use robots_tower::{RobotsConfig, RobotsHooks, Spacing};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The interval of every scenario (the minimum delay; robots.txt asks for none).
const INTERVAL: u64 = 200;
/// How late a start may be against its window: scheduling, and a round trip to Redis.
const LATE: u64 = 150;

/// One request of a scenario.
struct Step {
    /// When it asks for its turn, in ms from the scenario's start.
    ask: u64,
    /// How long it holds its turn after starting (the time to the response head), ms.
    hold: u64,
    /// The response's status and headers.
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    /// Its start, in ms after the start of step `from` (or after the scenario's start).
    from: Option<usize>,
    window: (u64, u64),
}

struct Scenario {
    name: &'static str,
    concurrency: usize,
    spacing: Spacing,
    steps: &'static [Step],
}

const fn step(ask: u64, hold: u64, status: u16, from: Option<usize>, window: (u64, u64)) -> Step {
    Step {
        ask,
        hold,
        status,
        headers: &[],
        from,
        window,
    }
}

/// The table. Interval 200 ms, back-off 300 ms doubling, ±10% jitter, adaptive delay off.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "spacing: three at once go one interval apart",
        concurrency: 1,
        spacing: Spacing::StartToStart,
        steps: &[
            step(0, 0, 200, None, (0, 0)),
            step(0, 0, 200, Some(0), (INTERVAL, INTERVAL)),
            step(0, 0, 200, Some(1), (INTERVAL, INTERVAL)),
        ],
    },
    Scenario {
        name: "from the end: a slow answer gets a whole interval of quiet after it",
        concurrency: 1,
        spacing: Spacing::FromEnd,
        steps: &[
            step(0, 300, 200, None, (0, 0)),
            step(10, 0, 200, Some(0), (300 + INTERVAL, 300 + INTERVAL)),
        ],
    },
    Scenario {
        name: "start to start: one place, the next goes when the slow one ends",
        concurrency: 1,
        spacing: Spacing::StartToStart,
        steps: &[
            step(0, 300, 200, None, (0, 0)),
            step(10, 0, 200, Some(0), (300, 300)),
        ],
    },
    Scenario {
        name: "429 with Retry-After pauses the group for what it says",
        concurrency: 1,
        spacing: Spacing::FromEnd,
        steps: &[
            Step {
                headers: &[("retry-after", "1")],
                ..step(0, 0, 429, None, (0, 0))
            },
            step(50, 0, 200, Some(0), (1000, 1000)),
        ],
    },
    Scenario {
        name: "a back-off streak doubles, and a good answer ends it",
        concurrency: 1,
        spacing: Spacing::StartToStart,
        steps: &[
            step(0, 0, 500, None, (0, 0)),
            // 300 ms ±10%.
            step(10, 0, 500, Some(0), (270, 330)),
            // 600 ms ±10% after the second failure.
            step(400, 0, 200, Some(1), (540, 660)),
            // The streak is over: the interval only.
            step(1100, 0, 200, Some(2), (INTERVAL, INTERVAL + 240)),
        ],
    },
    Scenario {
        name: "two places: the interval between starts, a third waits for a place",
        concurrency: 2,
        spacing: Spacing::StartToStart,
        steps: &[
            step(0, 500, 200, None, (0, 0)),
            step(5, 500, 200, Some(0), (INTERVAL, INTERVAL)),
            step(10, 0, 200, Some(0), (500, 500)),
        ],
    },
];

async fn site() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_string("User-agent: *\nAllow: /\n"))
        .mount(&server)
        .await;
    server
}

fn config(scenario: &Scenario) -> RobotsConfig<robots_tower::ForHooks> {
    RobotsHooks::builder("FooBot/1.0")
        .min_delay(Duration::from_millis(INTERVAL))
        .concurrency(scenario.concurrency)
        .spacing(scenario.spacing)
        .delay_factor(0.0)
        .backoff(Duration::from_millis(300), Duration::from_secs(5))
        .politeness_key(robots_tower::PolitenessKey::Origin)
}

/// Runs one scenario; the starts in ms from the scenario's start.
async fn run(
    hooks: RobotsHooks<reqwest::Client>,
    origin: Origin,
    scenario: &'static Scenario,
) -> Vec<u64> {
    // robots.txt first, outside the clock: its own request is in the group's budget, so the
    // table starts an interval after it.
    let url: url::Url = format!("{origin}/").parse().unwrap();
    hooks.check(&url).await.unwrap();
    tokio::time::sleep(Duration::from_millis(INTERVAL)).await;
    let hooks = std::sync::Arc::new(hooks);
    let zero = Instant::now();
    let tasks = scenario.steps.iter().map(|step| {
        let (hooks, origin) = (hooks.clone(), origin.clone());
        async move {
            tokio::time::sleep(Duration::from_millis(step.ask)).await;
            let ticket = hooks.acquire(&origin).await.unwrap();
            let started = zero.elapsed();
            tokio::time::sleep(Duration::from_millis(step.hold)).await;
            let mut headers = http::HeaderMap::new();
            for (name, value) in step.headers {
                headers.insert(*name, value.parse().unwrap());
            }
            ticket.finish(step.status, &headers).await;
            u64::try_from(started.as_millis()).unwrap()
        }
    });
    futures_util::future::join_all(tasks).await
}

fn check(pacer: &str, scenario: &Scenario, starts: &[u64]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let base = step.from.map_or(0, |from| starts[from]);
        let (lo, hi) = (base + step.window.0, base + step.window.1 + LATE);
        // (The fleet counts whole milliseconds on the server's clock: 2 ms early is rounding.)
        if starts[i] + 2 < lo || starts[i] > hi {
            wrong.push(format!(
                "{pacer}, \"{}\", step {i}: started at {} ms, expected {lo}..={hi} (all starts {starts:?})",
                scenario.name, starts[i]
            ));
        }
    }
    wrong
}

#[tokio::test(flavor = "multi_thread")]
async fn both_pacers_follow_one_table_of_scenarios() {
    #[cfg(feature = "redis")]
    let redis = crate::redis_server::RedisServer::start();
    let mut runs = Vec::new();
    for scenario in SCENARIOS {
        let server = site().await;
        let origin = Origin::parse(&server.uri()).unwrap();
        let local = config(scenario).build().unwrap();
        runs.push(Box::pin(async move {
            let starts = run(local, origin, scenario).await;
            drop(server);
            check("in-process", scenario, &starts)
        })
            as std::pin::Pin<
                Box<dyn std::future::Future<Output = Vec<String>> + Send>,
            >);
        #[cfg(feature = "redis")]
        if let Some(redis) = &redis {
            let server = site().await;
            let origin = Origin::parse(&server.uri()).unwrap();
            let fleet = robots_tower::RedisFleet::new(&redis.url()).unwrap();
            // A server that has run for a while: no fence (spec 11) in the first interval.
            let epoch = fleet.epoch_key(origin.as_str());
            assert_eq!(redis.command(&["SET", &epoch, "0"]).trim(), "+OK");
            let shared = config(scenario).fleet(&fleet).build().unwrap();
            runs.push(Box::pin(async move {
                let starts = run(shared, origin, scenario).await;
                drop(server);
                check("fleet", scenario, &starts)
            }));
        }
    }
    #[cfg(not(feature = "redis"))]
    eprintln!("SKIPPED: the fleet's half of the pacer table (feature `redis` off)");
    let wrong: Vec<String> = futures_util::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
