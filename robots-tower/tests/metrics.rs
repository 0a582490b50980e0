//! The metrics (feature `metrics`), read back from a debugging recorder installed for this
//! thread while a few requests go through the layer on paused time.
#![cfg(feature = "metrics")]

mod support;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};

#[test]
fn decisions_fetches_waits_pauses_and_cache_size_are_measured() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            support::walk::walk_through_the_layer().await;
        });
    });
    let snapshot = snapshotter.snapshot().into_vec();
    let value = |name: &str, label: Option<(&str, &str)>| {
        snapshot
            .iter()
            .find(|(key, _, _, _)| {
                key.key().name() == name
                    && label.is_none_or(|(k, v)| {
                        key.key().labels().any(|l| l.key() == k && l.value() == v)
                    })
            })
            .map(|(_, _, _, value)| value)
    };
    assert_eq!(
        value("robots_decisions_total", Some(("outcome", "allowed"))),
        Some(&DebugValue::Counter(3))
    );
    assert_eq!(
        value("robots_decisions_total", Some(("outcome", "disallowed"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value("robots_fetches_total", Some(("outcome", "parsed"))),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value("robots_pauses_total", Some(("status", "429"))),
        Some(&DebugValue::Counter(1))
    );
    match value("robots_politeness_wait_seconds", None) {
        Some(DebugValue::Histogram(waits)) => {
            assert_eq!(waits.len(), 3);
            assert!(waits.iter().any(|w| w.into_inner() >= 0.099), "{waits:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        value("robots_cache_entries", None),
        Some(&DebugValue::Gauge(1.0.into()))
    );
    match value("robots_cache_bytes", None) {
        Some(DebugValue::Gauge(bytes)) => assert!(bytes.into_inner() > 100.0),
        other => panic!("{other:?}"),
    }
}
