//! The fleet's side of the cache (spec section 11): the stored record is used when it is due
//! later; else one process takes the origin's lock and fetches while the others wait for what
//! it stores. Any store failure means working alone.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;
use tracing::{debug, warn};

use crate::client::FetchClient;
use crate::origin::Origin;
use crate::outcome::UnavailableReason;
use crate::store::{
    Clocks, RobotsStore, StoreError, StoredKind, StoredOutage, StoredRobots, now_ms,
};

use super::{CachedRobots, Previous, RobotsCache, Rules, Source};

impl RobotsCache {
    /// The fleet way (spec section 11): use the stored result when it is due later; else take
    /// the origin's fetch lock and fetch (and store) — or, when another process holds the lock,
    /// wait for its result, at most the fetch timeout plus a margin, then fetch here. Any store
    /// failure means working alone: the local copy, or a local fetch.
    pub(super) async fn fetch_shared<C: FetchClient>(
        &self,
        client: &C,
        origin: &Origin,
        previous: Option<Arc<CachedRobots>>,
        store: &dyn RobotsStore,
    ) -> Arc<CachedRobots> {
        let key = format!("{{{origin}}}:robots:{}", self.inner.identity);
        let stored = match self.store_result(store.load(&key).await) {
            Ok(stored) => stored,
            Err(()) => {
                return self
                    .fetch_here(client, origin, Previous::Local(previous.as_deref()), None)
                    .await
                    .0;
            }
        };
        if let Some(record) = &stored
            && record.refresh_at_ms > now_ms()
        {
            return Arc::new(self.entry_of_record(origin, record));
        }
        let lock_key = format!("{{{origin}}}:lock:{}", self.inner.identity);
        let lock_ttl = self.inner.fetch.timeout + Duration::from_secs(5);
        let owner = self.inner.owner.as_str();
        let previous_body = stored.as_ref().and_then(|r| r.body.clone());
        // The previous state: the fleet's when it has one (it knows more: an outage under
        // way), else ours.
        let previous = match &stored {
            Some(record) => Previous::Stored(record),
            None => Previous::Local(previous.as_deref()),
        };
        let locked = match self.store_result(store.try_lock(&lock_key, owner, lock_ttl).await) {
            Ok(true) => true,
            Ok(false) => {
                // Another process is fetching: wait for what it stores. Its lock expires if it
                // died, and then this process takes the lock and fetches.
                let deadline = tokio::time::Instant::now() + lock_ttl;
                let mut pause = Duration::from_millis(20);
                loop {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                    match self.store_result(store.load(&key).await) {
                        Ok(Some(record)) if record.refresh_at_ms > now_ms() => {
                            debug!(%origin, "robots.txt fetched by another process");
                            return Arc::new(self.entry_of_record(origin, &record));
                        }
                        Ok(_) => {}
                        Err(()) => break false,
                    }
                    match self.store_result(store.try_lock(&lock_key, owner, lock_ttl).await) {
                        Ok(true) => break true,
                        Err(()) => break false,
                        Ok(false) => {}
                    }
                    if tokio::time::Instant::now() >= deadline {
                        warn!(%origin, "no robots.txt from the fleet in time: fetching here");
                        break false;
                    }
                }
            }
            Err(()) => {
                return self
                    .fetch_here(client, origin, previous, previous_body)
                    .await
                    .0;
            }
        };
        // The lock may have been free because another process had just fetched, stored and
        // released it since this process looked: look again now that the lock is held (the
        // store-then-release race that made a 16-process fleet fetch some files twice).
        if locked
            && let Ok(Some(record)) = self.store_result(store.load(&key).await)
            && record.refresh_at_ms > now_ms()
        {
            let _ = self.store_result(store.unlock(&lock_key, owner).await);
            debug!(%origin, "robots.txt stored by another process just before the lock was free");
            return Arc::new(self.entry_of_record(origin, &record));
        }
        let (entry, body) = self
            .fetch_here(client, origin, previous, previous_body)
            .await;
        let record = record_of_entry(&entry, body);
        // Kept past its refresh time for the stale-copy and 30-day rules, then it expires.
        let ttl = Duration::from_millis(record.refresh_at_ms.saturating_sub(now_ms()))
            .saturating_add(self.inner.config.give_up_after);
        let _ = self.store_result(store.save(&key, &record, ttl).await);
        let _ = self.store_result(store.unlock(&lock_key, owner).await);
        entry
    }

    /// Logs a store outage once, and its end once (at debug level when the store says so itself).
    pub(super) fn store_result<T>(&self, result: Result<T, StoreError>) -> Result<T, ()> {
        let said = self
            .inner
            .store
            .as_ref()
            .is_some_and(|store| store.reports_outages());
        match result {
            Ok(value) => {
                if self.inner.store_down.swap(false, Ordering::Relaxed) {
                    if said {
                        debug!("the robots store is reachable again");
                    } else {
                        warn!(
                            "the robots store is reachable again: sharing robots.txt with the fleet"
                        );
                    }
                }
                Ok(value)
            }
            Err(error) => {
                if !self.inner.store_down.swap(true, Ordering::Relaxed) {
                    if said {
                        debug!(%error, "the robots store is unreachable");
                    } else {
                        warn!(%error, "the robots store is unreachable: robots.txt comes from the local copy or a local fetch until it is back");
                    }
                }
                Err(())
            }
        }
    }

    /// The entry a stored record stands for, its wall-clock times turned into this process's
    /// clock.
    pub(super) fn entry_of_record(&self, origin: &Origin, record: &StoredRobots) -> CachedRobots {
        let clocks = Clocks::read();
        let at = |ms: u64| clocks.instant(ms);
        let config = &self.inner.config;
        let rules = match record.kind {
            StoredKind::Parsed => Rules::Parsed(Arc::new(
                self.parse(record.body.as_deref().unwrap_or_default()),
            )),
            StoredKind::Unavailable(_) => {
                if config.auth_errors_disallow && matches!(record.status, Some(401 | 403)) {
                    Rules::DisallowAll
                } else {
                    Rules::AllowAll
                }
            }
            StoredKind::Unreachable => Rules::DisallowAll,
        };
        let refresh_at = at(record.refresh_at_ms);
        let status = record.status.unwrap_or(200);
        let (source, failures) = match (&record.outage, record.kind) {
            (Some(outage), StoredKind::Unreachable) => (
                Source::Unreachable {
                    cause: outage.cause.clone(),
                    since: at(outage.since_ms),
                    next_retry: at(outage.next_retry_ms),
                },
                outage.failures,
            ),
            (Some(outage), _) => (
                Source::Stale {
                    status,
                    fetched_at: at(record.fetched_at_ms),
                    cause: outage.cause.clone(),
                    unreachable_since: at(outage.since_ms),
                    next_retry: at(outage.next_retry_ms),
                },
                outage.failures,
            ),
            (None, StoredKind::Unavailable(reason)) => (
                Source::Unavailable {
                    status,
                    reason,
                    fetched_at: at(record.fetched_at_ms),
                    expires_at: refresh_at,
                },
                0,
            ),
            (None, _) => (
                Source::Parsed {
                    status,
                    redirected_to: None,
                    fetched_at: at(record.fetched_at_ms),
                    expires_at: refresh_at,
                    not_modified: false,
                },
                0,
            ),
        };
        let entry = CachedRobots::new(
            origin.clone(),
            rules,
            source,
            refresh_at,
            failures,
            config.give_up_after,
            &self.inner.policy_tokens,
        );
        // (Validators belong to a parsed copy, the only kind a 304 can confirm.)
        if record.kind == StoredKind::Parsed && record.body.is_some() {
            entry.with_validators(record.validators.clone())
        } else {
            entry
        }
    }
}

/// The record to share for an entry just fetched; `body` is the good copy's body, when there is
/// one (a parsed file, or the copy a stale entry still uses).
pub(super) fn record_of_entry(entry: &CachedRobots, body: Option<bytes::Bytes>) -> StoredRobots {
    let clocks = Clocks::read();
    let ms = |at: Instant| clocks.wall_ms(at);
    let parsed_kind = |rules: &Rules, body: &Option<bytes::Bytes>| match rules {
        Rules::Parsed(_) if body.is_some() => StoredKind::Parsed,
        Rules::Parsed(_) => StoredKind::Unreachable,
        _ => StoredKind::Unavailable(UnavailableReason::Status),
    };
    let (kind, status, fetched, outage) = match &entry.source {
        Source::Parsed {
            status, fetched_at, ..
        } => (StoredKind::Parsed, Some(*status), *fetched_at, None),
        Source::Inserted { at, .. } => (StoredKind::Parsed, Some(200), *at, None),
        Source::Unavailable {
            status,
            reason,
            fetched_at,
            ..
        } => (
            StoredKind::Unavailable(*reason),
            Some(*status),
            *fetched_at,
            None,
        ),
        Source::Stale {
            status,
            fetched_at,
            cause,
            unreachable_since,
            next_retry,
        } => (
            parsed_kind(&entry.rules, &body),
            Some(*status),
            *fetched_at,
            Some(StoredOutage {
                since_ms: ms(*unreachable_since),
                next_retry_ms: ms(*next_retry),
                failures: entry.failures,
                cause: cause.clone(),
            }),
        ),
        Source::Unreachable {
            cause,
            since,
            next_retry,
        } => (
            StoredKind::Unreachable,
            cause.status(),
            *since,
            Some(StoredOutage {
                since_ms: ms(*since),
                next_retry_ms: ms(*next_retry),
                failures: entry.failures,
                cause: cause.clone(),
            }),
        ),
    };
    // (A stale copy whose body this process does not have is shared as "no good copy": the
    // fleet then disallows rather than guesses; see `parsed_kind`.)
    let body = if kind == StoredKind::Parsed {
        body
    } else {
        None
    };
    StoredRobots {
        kind,
        status,
        validators: if body.is_some() {
            entry.validators.clone()
        } else {
            crate::validators::Validators::default()
        },
        body,
        fetched_at_ms: ms(fetched),
        refresh_at_ms: ms(entry.refresh_at),
        outage,
    }
}
