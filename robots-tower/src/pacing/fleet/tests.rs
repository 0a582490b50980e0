//! The fleet's pace state against a real redis-server.
use super::*;
use robots_test_support::redis_server::RedisServer;

/// The pace state lives while anything it holds or announces does, each alone beside an idle
/// ttl far shorter (1 s): waiters it says may be queued, its first place, other places, the
/// reservation ahead, a pause. (The waiters' 4 s outlast every idle ttl in the fleet's other
/// tests, which therefore cannot tell whether `queued` counts.)
#[test]
fn the_pace_state_lives_while_anything_it_announces_does() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let script = concat!(
        include_str!("pace.lua"),
        "local t = redis.call('TIME')
        local now = t[1] * 1000 + math.floor(t[2] / 1000)
        local p = load_pace(KEYS[1])
        p[ARGV[1]] = now + 4000
        save_pace(KEYS[1], p, now, 1000)
        return redis.call('PTTL', KEYS[1])"
    );
    for field in ["queued", "lease_until", "others", "tat", "pause"] {
        let key = format!("g:{field}");
        let pttl = redis.integer(&["EVAL", script, "1", &key, field]);
        assert!(pttl.is_some_and(|ms| ms > 3_900), "{field}: {pttl:?}");
    }
}

/// A response that pauses the group (released on its own call, `release.lua`) never shortens
/// the group's state below the reservations ahead either (see the settle's test in
/// `outbox`).
#[tokio::test]
async fn a_pausing_release_never_shortens_the_state_below_the_reservations_ahead() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let fleet = RedisFleet::new(&redis.url()).unwrap();
    let config = PolitenessConfig {
        backoff_max: Duration::from_secs(60),
        ..PolitenessConfig::default()
    };
    let pacing = FleetPacing::new(
        fleet.clone(),
        config,
        FleetFallback::LocalFallback,
        1,
        Duration::from_secs(30),
        Duration::from_secs(2),
    );
    let keys = GroupKeys::of(&fleet, "g");
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let tat = (wall_ms + 3_600_000).to_string();
    redis.set_pace(&keys.pace, &[("tat", &tat)]);
    redis.command(&["PEXPIRE", &keys.pace, "3660000"]);
    // A 503 seen after the fact: the fleet pauses the group, for a few seconds.
    let observed = Observed {
        outcome: Outcome::Status(503),
        retry_after: Some(Duration::from_secs(5)),
        rate_limited: None,
        rate_limit_step: false,
    };
    pacing.observe("g", observed);
    assert!(fleet.settle(Duration::from_secs(2)).await);
    assert!(redis.pace_field(&keys.pace, "pause").is_some(), "paused");
    let pttl = redis.integer(&["PTTL", &keys.pace]).unwrap();
    assert!(
        pttl > 3_600_000,
        "the state lives {pttl} ms, under its reservations"
    );
}
