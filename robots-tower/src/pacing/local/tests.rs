use super::*;
use crate::pacing::observed::{GroupPause, Observed, PauseReason};
use crate::pacing::rules::Outcome;
use crate::pacing::rules::{
    Interval, MAX_INTERVAL, OverlongCrawlDelay, PolitenessConfig, Spacing, StatusSet,
};
use robots_fetch::jittered;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn interval_is_raised_by_crawl_delay_and_never_lowered_unless_told() {
    let config = PolitenessConfig::default();
    assert_eq!(config.interval(None), Interval::Applied(secs(1), None));
    assert_eq!(
        config.interval(Some(Duration::from_millis(200))),
        Interval::Applied(secs(1), None)
    );
    assert_eq!(
        config.interval(Some(secs(5))),
        Interval::Applied(secs(5), None)
    );
    assert_eq!(
        config.interval(Some(secs(30))),
        Interval::Applied(secs(30), None)
    );
    // Above the maximum: refused by default, honoured or clamped by name.
    assert_eq!(config.interval(Some(secs(90))), Interval::TooLong(secs(90)));
    let honour = PolitenessConfig {
        overlong: OverlongCrawlDelay::Honour,
        ..Default::default()
    };
    assert_eq!(
        honour.interval(Some(secs(90))),
        Interval::Applied(secs(90), None)
    );
    let clamp = PolitenessConfig {
        overlong: OverlongCrawlDelay::Clamp,
        ..Default::default()
    };
    assert_eq!(
        clamp.interval(Some(secs(90))),
        Interval::Applied(secs(30), Some(secs(90)))
    );
    let ignoring = PolitenessConfig {
        obey_crawl_delay: false,
        ..Default::default()
    };
    assert_eq!(
        ignoring.interval(Some(secs(90))),
        Interval::Applied(secs(1), None)
    );
    for name in ["refuse", "honor", "clamp"] {
        assert_eq!(name.parse::<OverlongCrawlDelay>().unwrap().as_str(), name);
    }
    assert!("skip".parse::<OverlongCrawlDelay>().is_err());
}

/// The pause a group is under now, in milliseconds.
fn paused_ms(politeness: &Politeness, group: &str) -> u128 {
    politeness.paused_until(group).map_or(0, |until| {
        until.saturating_duration_since(Instant::now()).as_millis()
    })
}

#[tokio::test(start_paused = true)]
async fn distress_backs_off_with_jitter_and_any_other_response_ends_it() {
    let politeness = Politeness::new(PolitenessConfig {
        min_delay: Duration::ZERO,
        backoff_base: Duration::from_millis(400),
        backoff_max: Duration::from_millis(1600),
        ..Default::default()
    });
    let group = "example.com";
    let politeness = &politeness;
    let end = |outcome| async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (permit, _) = politeness.acquire(group, Duration::ZERO).await;
        politeness.finish(permit, Observed::failure(outcome))
    };
    let mut pauses = Vec::new();
    for outcome in [
        Outcome::Status(500),
        Outcome::NetworkError,
        Outcome::Status(502),
        Outcome::Status(504),
    ] {
        let pause = end(outcome).await.expect("distress pauses");
        pauses.push(pause);
    }
    for (pause, nominal) in pauses.iter().zip([400u64, 800, 1600, 1600]) {
        let ms = pause.duration.as_millis() as u64;
        assert!(
            ms >= nominal * 9 / 10 && ms <= nominal * 11 / 10,
            "{ms} ms for {nominal}"
        );
    }
    assert_eq!(pauses[3].reason, PauseReason::Backoff { failures: 4 });
    // The jitter varies pauses (two equal nominal ones are almost never equal).
    let varied: std::collections::BTreeSet<_> = (0..8)
        .map(|_| jittered(Duration::from_secs(100)).as_millis())
        .collect();
    assert!(varied.len() > 1);
    // A 404 is "any other response": the streak ends, and so does the pause.
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(end(Outcome::Status(404)).await, None);
    let pause = end(Outcome::Status(500)).await.unwrap();
    assert!(pause.duration <= Duration::from_millis(440), "{pause:?}");
    // A status outside the set, or a cancelled request, changes nothing.
    let quiet = Politeness::new(PolitenessConfig {
        backoff_statuses: StatusSet::of([429, 503]),
        backoff_on_network_errors: false,
        ..Default::default()
    });
    let (permit, _) = quiet.acquire(group, Duration::ZERO).await;
    assert_eq!(
        quiet.finish(permit, Observed::failure(Outcome::Status(500))),
        None
    );
    assert_eq!(
        quiet.observe(group, Observed::failure(Outcome::NetworkError)),
        None
    );
    assert_eq!(paused_ms(&quiet, group), 0);
}

#[tokio::test(start_paused = true)]
async fn retry_after_and_rate_limits_pause_for_what_they_say() {
    let politeness = Politeness::new(PolitenessConfig::default());
    let group = "example.com";
    let observed = |status, retry_after, rate_limited| Observed {
        outcome: Outcome::Status(status),
        retry_after,
        rate_limited,
        rate_limit_step: false,
    };
    let pause = politeness.observe(group, observed(503, Some(secs(7)), None));
    assert_eq!(
        pause,
        Some(GroupPause {
            duration: secs(7),
            reason: PauseReason::RetryAfter
        })
    );
    // Capped at the maximum.
    let pause = politeness.observe(group, observed(429, Some(secs(3600)), None));
    assert_eq!(pause.map(|p| p.duration), Some(secs(600)));
    // A success whose rate-limit headers say nothing is left: paused until the reset.
    let pause = politeness.observe(group, observed(200, None, Some(secs(2))));
    assert_eq!(
        pause,
        Some(GroupPause {
            duration: secs(2),
            reason: PauseReason::RateLimit
        })
    );
    assert_eq!(paused_ms(&politeness, group), 2000);
    let pause = politeness.observe(group, observed(200, None, Some(secs(86_400))));
    assert_eq!(pause.map(|p| p.duration), Some(secs(600)));
}

#[tokio::test(start_paused = true)]
async fn headers_only_lengthen_the_back_off_and_the_cap_holds_after_jitter() {
    let politeness = Politeness::new(PolitenessConfig {
        backoff_base: Duration::from_millis(400),
        backoff_max: Duration::from_secs(1),
        max_retry_after: Duration::from_secs(60),
        ..Default::default()
    });
    let group = "example.com";
    let distress = |retry_after| Observed {
        outcome: Outcome::Status(503),
        retry_after,
        rate_limited: None,
        rate_limit_step: false,
    };
    // `Retry-After: 0` waits the back-off its streak calls for: 0.4, 0.8, then the cap.
    for (nominal, failures) in [(400u128, 1), (800, 2), (1000, 3), (1000, 4)] {
        let pause = politeness
            .observe(group, distress(Some(Duration::ZERO)))
            .unwrap();
        assert_eq!(pause.reason, PauseReason::Backoff { failures });
        let ms = pause.duration.as_millis();
        assert!(
            ms >= nominal * 9 / 10 && ms <= 1000,
            "{ms} ms for {nominal}"
        );
    }
    // A longer one lengthens it.
    let pause = politeness.observe(group, distress(Some(secs(7)))).unwrap();
    assert_eq!(
        (pause.duration, pause.reason),
        (secs(7), PauseReason::RetryAfter)
    );
    // Never above the maximum after jitter, however often drawn.
    let config = PolitenessConfig {
        backoff_max: Duration::from_millis(1200),
        ..Default::default()
    };
    for failures in 1..40 {
        assert!(config.jittered_backoff(failures) <= Duration::from_millis(1200));
    }
    // Rate-limit headers that say "stop" without "until" are a back-off step, even on a 200;
    // a reset too long to represent is capped, not an overflow.
    let fresh = Politeness::new(PolitenessConfig::default());
    let pause = fresh
        .observe(
            group,
            Observed {
                outcome: Outcome::Status(200),
                retry_after: None,
                rate_limited: Some(Duration::MAX),
                rate_limit_step: true,
            },
        )
        .unwrap();
    assert_eq!(pause.duration, secs(600));
    assert_eq!(paused_ms(&fresh, group), 600_000);
    let step = fresh
        .observe(
            "other.example",
            Observed {
                outcome: Outcome::Status(200),
                retry_after: None,
                rate_limited: None,
                rate_limit_step: true,
            },
        )
        .unwrap();
    assert_eq!(step.reason, PauseReason::Backoff { failures: 1 });
    // A jitter on a maximum as long as `Duration::MAX` saturates instead of panicking.
    assert!(jittered(Duration::MAX) >= Duration::from_secs(u64::MAX / 2));
}

#[test]
fn intervals_above_a_day_are_refused_under_every_policy_and_never_reach_governor() {
    for overlong in [
        OverlongCrawlDelay::Refuse,
        OverlongCrawlDelay::Honour,
        OverlongCrawlDelay::Clamp,
    ] {
        let config = PolitenessConfig {
            overlong,
            ..Default::default()
        };
        for asked in [MAX_INTERVAL + Duration::from_secs(1), Duration::MAX] {
            assert_eq!(config.interval(Some(asked)), Interval::TooLong(asked));
        }
    }
    // A configured minimum beyond a day is bounded too: the pacer cannot be made to panic.
    let config = PolitenessConfig {
        min_delay: Duration::MAX,
        max_delay: Duration::MAX,
        ..Default::default()
    };
    assert_eq!(config.interval(None), Interval::Applied(MAX_INTERVAL, None));
    let politeness = Politeness::new(config);
    assert!(
        politeness
            .try_acquire("a.example", Duration::MAX, Instant::now())
            .is_ok()
    );
    assert!(
        politeness
            .try_acquire("a.example", Duration::MAX, Instant::now())
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn waiting_requests_start_in_the_order_they_began_to_wait() {
    let politeness = Arc::new(Politeness::new(PolitenessConfig {
        concurrency: 4,
        min_delay: Duration::from_millis(100),
        backoff_base: Duration::from_millis(100),
        ..Default::default()
    }));
    let group = "example.com";
    let interval = Duration::from_millis(100);
    let started = Arc::new(Mutex::new(Vec::new()));
    let request = |name: &'static str| {
        let (politeness, started) = (politeness.clone(), started.clone());
        tokio::spawn(async move {
            let (permit, _) = politeness.acquire(group, interval).await;
            started.lock().unwrap().push(name);
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(permit);
        })
    };
    let first = request("first");
    tokio::time::sleep(Duration::from_millis(1)).await;
    // `a` waits for the interval; then a 503 pauses the group, and `b` and `c` wait for the
    // pause's end. `a` looks again when its interval is over, after them: its timer is set
    // last, yet it began to wait first.
    let a = request("a");
    tokio::time::sleep(Duration::from_millis(10)).await;
    politeness.observe(
        group,
        Observed {
            outcome: Outcome::Status(503),
            retry_after: Some(secs(1)),
            rate_limited: None,
            rate_limit_step: false,
        },
    );
    let b = request("b");
    tokio::time::sleep(Duration::from_millis(1)).await;
    let c = request("c");
    for task in [first, a, b, c] {
        task.await.unwrap();
    }
    assert_eq!(*started.lock().unwrap(), ["first", "a", "b", "c"]);
}

#[tokio::test(start_paused = true)]
async fn the_interval_after_a_slow_answer_is_at_least_factor_times_its_time() {
    for (factor, expected) in [(0.0, 700), (1.0, 1200), (2.0, 1800)] {
        let politeness = Politeness::new(PolitenessConfig {
            min_delay: Duration::from_millis(100),
            delay_factor: factor,
            ..Default::default()
        });
        let interval = Duration::from_millis(100);
        let (permit, _) = politeness.acquire("slow.example", interval).await;
        let first = Instant::now();
        // The server takes 0.6 s to answer.
        tokio::time::sleep(Duration::from_millis(600)).await;
        politeness.finish(permit, Observed::failure(Outcome::Status(200)));
        let _second = politeness.acquire("slow.example", interval).await;
        assert_eq!(first.elapsed().as_millis(), expected, "factor {factor}");
    }
    // Never above the maximum delay.
    let config = PolitenessConfig::default();
    assert_eq!(config.adaptive(Duration::from_secs(3600)), secs(30));
}

#[test]
fn backoff_doubles_to_the_cap() {
    let config = PolitenessConfig::default();
    let secs: Vec<u64> = (1..=8)
        .map(|n| config.backoff_rule().pause(n).as_secs())
        .collect();
    assert_eq!(secs, [5, 10, 20, 40, 80, 160, 300, 300]);
}

#[tokio::test(start_paused = true)]
async fn paused_origins_are_swept_once_their_pause_is_long_over() {
    let politeness = Politeness::new(PolitenessConfig {
        min_delay: Duration::from_millis(10),
        ..Default::default()
    });
    for i in 0..3000 {
        let group = format!("https://paused{i}.example");
        let (permit, _) = politeness.acquire(&group, Duration::from_millis(10)).await;
        drop(permit);
        politeness.observe(
            &group,
            Observed {
                outcome: Outcome::Status(429),
                retry_after: Some(Duration::from_secs(60)),
                rate_limited: None,
                rate_limit_step: false,
            },
        );
    }
    assert_eq!(politeness.tracked(), 3000);
    // While paused (and for a while after), they are kept: forgetting would lose the pause
    // and the back-off count.
    tokio::time::advance(Duration::from_secs(120)).await;
    for i in 0..1100 {
        let (permit, _) = politeness
            .acquire(
                &format!("https://busy{i}.example"),
                Duration::from_millis(10),
            )
            .await;
        drop(permit);
    }
    assert!(politeness.tracked() >= 3000, "{}", politeness.tracked());
    // Once the pause has been over for the longest back-off, they go.
    tokio::time::advance(PolitenessConfig::default().backoff_max).await;
    for i in 0..3000 {
        let (permit, _) = politeness
            .acquire(
                &format!("https://later{i}.example"),
                Duration::from_millis(10),
            )
            .await;
        drop(permit);
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    let tracked = politeness.tracked();
    assert!(tracked < 2100, "{tracked} groups tracked");
    assert!(
        politeness.paused_until("https://paused0.example").is_none(),
        "a forgotten group has no pause"
    );
}

#[tokio::test(start_paused = true)]
async fn the_interval_runs_from_the_end_of_a_slow_request() {
    for (spacing, expected_gap) in [
        (Spacing::FromEnd, Duration::from_secs(4)),
        (Spacing::StartToStart, Duration::from_secs(3)),
    ] {
        let politeness = Politeness::new(PolitenessConfig {
            spacing,
            ..Default::default()
        });
        let group = "https://slow.example";
        let interval = Duration::from_secs(1);
        let (permit, _) = politeness.acquire(group, interval).await;
        let first = Instant::now();
        // The server takes 3 s to answer.
        tokio::time::sleep(Duration::from_secs(3)).await;
        drop(permit);
        let (_permit, _) = politeness.acquire(group, interval).await;
        assert_eq!(first.elapsed(), expected_gap, "{spacing:?}");
    }
    // With several requests in flight there is no single "previous end": start to start.
    let politeness = Politeness::new(PolitenessConfig {
        concurrency: 2,
        ..Default::default()
    });
    let (permit, _) = politeness
        .acquire("https://o.example", Duration::from_secs(1))
        .await;
    let first = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(permit);
    let _second = politeness
        .acquire("https://o.example", Duration::from_secs(1))
        .await;
    assert_eq!(first.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn idle_origins_are_swept() {
    let politeness = Politeness::new(PolitenessConfig {
        min_delay: Duration::from_millis(10),
        ..Default::default()
    });
    for i in 0..5000 {
        let (permit, _) = politeness
            .acquire(&format!("https://h{i}.example"), Duration::from_millis(10))
            .await;
        drop(permit);
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    assert!(
        politeness.tracked() < 2100,
        "{} groups tracked",
        politeness.tracked()
    );
}
