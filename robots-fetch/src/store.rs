//! A robots store shared by many caches (spec section 11): one robots.txt fetch per origin for
//! a whole fleet of crawler processes. The store keeps what a fetch found — the raw body (at most
//! 512,000 bytes), the outcome, the status and wall-clock times — and each process parses and
//! compiles it locally into its own bounded [`crate::RobotsCache`].
//!
//! [`RobotsStore`] is the small trait a backend implements; [`InProcessStore`] (caches of one
//! process share it) sits beside it, and `RedisStore` (feature `redis`) shares across processes
//! and machines. A cache without a store behaves as before: one fetch per origin per cache.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use crate::outcome::{NetworkError, NetworkErrorKind, UnavailableReason, UnreachableCause};
use crate::validators::Validators;

/// A boxed future, as the store's methods return (the trait is used as `dyn RobotsStore`).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the shared store could not answer. The cache then works alone (local copy or local fetch,
/// the spec's outcomes unchanged): a store outage never fails open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the robots store is unavailable: {message}")]
pub struct StoreError {
    /// What the backend said.
    pub message: String,
}

/// A backend that shares fetched robots.txt files (and the right to fetch one) between caches.
/// Keys are opaque strings built by the cache from the origin and the crawler's identity.
pub trait RobotsStore: Send + Sync + 'static {
    /// The stored record for `key`, if any.
    fn load<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<StoredRobots>>;
    /// Stores `record` for `key`; it expires on its own after `ttl`.
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: &'a StoredRobots,
        ttl: Duration,
    ) -> StoreFuture<'a, ()>;
    /// Takes the fetch lock for `key` as `owner` unless someone holds it; it expires after `ttl`
    /// (so a lock whose owner died frees itself). `true` when taken.
    fn try_lock<'a>(&'a self, key: &'a str, owner: &'a str, ttl: Duration)
    -> StoreFuture<'a, bool>;
    /// Releases the fetch lock for `key` if `owner` still holds it.
    fn unlock<'a>(&'a self, key: &'a str, owner: &'a str) -> StoreFuture<'a, ()>;

    /// Whether the backend logs its own outages (once when one begins, once when it ends), so
    /// that the cache need not say it a second time. `false` by default.
    fn reports_outages(&self) -> bool {
        false
    }
}

/// What a fetch found, as shared: the good copy (if any) and the outage (if any), with
/// wall-clock Unix milliseconds so that every process reads the same times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRobots {
    /// What the rules are.
    pub kind: StoredKind,
    /// The HTTP status of the good copy, or of the failing answer when there is no copy.
    pub status: Option<u16>,
    /// The body of a parsed good copy (at most 512,000 bytes).
    pub body: Option<Bytes>,
    /// When the good copy was fetched (or, without one, when the outage began).
    pub fetched_at_ms: u64,
    /// When the rules are due to be fetched again.
    pub refresh_at_ms: u64,
    /// The outage under way, if the last fetch failed.
    pub outage: Option<StoredOutage>,
    /// The good copy's `ETag` and `Last-Modified`: whichever process refreshes it asks with
    /// them, and a `304 Not Modified` renews the record for the fleet.
    pub validators: Validators,
}

/// What the rules of a [`StoredRobots`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredKind {
    /// A parsed file (`body`).
    Parsed,
    /// robots.txt is unavailable (4xx): allow all (or disallow all for 401/403 when so configured).
    Unavailable(UnavailableReason),
    /// robots.txt is unreachable and no good copy is known.
    Unreachable,
}

/// An outage: since when, how often in a row, why, and the next try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOutage {
    /// When the outage began.
    pub since_ms: u64,
    /// When the next fetch may be tried.
    pub next_retry_ms: u64,
    /// Consecutive failed fetches.
    pub failures: u32,
    /// Why the last fetch failed.
    pub cause: UnreachableCause,
}

/// Wall-clock Unix milliseconds now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

/// A duration in whole milliseconds, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Converts between this process's clock (`tokio::time::Instant`, which tests pause) and the
/// wall-clock Unix milliseconds a store shares, from one reading of both clocks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clocks {
    now: tokio::time::Instant,
    wall: u64,
}

impl Clocks {
    pub(crate) fn read() -> Clocks {
        Clocks {
            now: tokio::time::Instant::now(),
            wall: now_ms(),
        }
    }

    /// The wall-clock milliseconds of `at`.
    pub(crate) fn wall_ms(&self, at: tokio::time::Instant) -> u64 {
        if at >= self.now {
            self.wall.saturating_add(millis(at - self.now))
        } else {
            self.wall.saturating_sub(millis(self.now - at))
        }
    }

    /// The instant of wall-clock milliseconds `ms` (saturating at both ends).
    pub(crate) fn instant(&self, ms: u64) -> tokio::time::Instant {
        if ms >= self.wall {
            crate::time::later(self.now, Duration::from_millis(ms - self.wall))
        } else {
            self.now
                .checked_sub(Duration::from_millis(self.wall - ms))
                .unwrap_or(self.now)
        }
    }
}

const MAGIC: &[u8] = b"robots-store 1\n";
/// A record whose body is deflated: a version of its own, so that a process that cannot read it
/// ignores it (and fetches for itself) rather than take it for a record without a body.
const MAGIC_DEFLATED: &[u8] = b"robots-store 2\n";
/// Bodies above this are stored deflated when that saves a tenth or more: in the corpus, the
/// files above 4 KiB hold 82% of the bytes and deflate to 17% of their size; smaller ones gain
/// little for the work.
const DEFLATE_ABOVE: usize = 4096;

/// `body` deflated, when that pays.
fn deflated(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    if body.len() <= DEFLATE_ABOVE {
        return None;
    }
    let mut encoder = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(body.len() / 4),
        flate2::Compression::default(),
    );
    encoder.write_all(body).ok()?;
    let out = encoder.finish().ok()?;
    (out.len() < body.len() - body.len() / 10).then_some(out)
}

/// A deflated body, at most [`robots_core::MAX_BODY_BYTES`] once inflated (more is not a record this
/// cache wrote).
fn inflated(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let limit = robots_core::MAX_BODY_BYTES as u64;
    let mut out = Vec::with_capacity(body.len() * 4);
    flate2::read::DeflateDecoder::new(body)
        .take(limit + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() as u64 <= limit).then_some(out)
}

impl StoredRobots {
    /// The record as bytes: a short header of `key=value` lines, a blank line, then the body.
    pub fn encode(&self) -> Vec<u8> {
        let raw = self.body.as_deref().unwrap_or_default();
        let deflated = deflated(raw);
        let body = deflated.as_deref().unwrap_or(raw);
        let mut out = Vec::with_capacity(body.len() + 256);
        out.extend_from_slice(if deflated.is_some() {
            MAGIC_DEFLATED
        } else {
            MAGIC
        });
        let mut field = |key: &str, value: String| {
            out.extend_from_slice(key.as_bytes());
            out.push(b'=');
            // One line per field: causes are messages and could hold a line break.
            out.extend(
                value
                    .bytes()
                    .map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
            );
            out.push(b'\n');
        };
        field(
            "kind",
            match self.kind {
                StoredKind::Parsed => "parsed".into(),
                StoredKind::Unavailable(reason) => format!("unavailable:{}", reason_name(reason)),
                StoredKind::Unreachable => "unreachable".into(),
            },
        );
        field(
            "status",
            self.status.map_or(String::new(), |s| s.to_string()),
        );
        field("body", u8::from(self.body.is_some()).to_string());
        field("fetched", self.fetched_at_ms.to_string());
        field("refresh", self.refresh_at_ms.to_string());
        // (Lines a reader of an older version ignores. A validator that is not visible ASCII
        // is not shared: the refresh is then a plain fetch.)
        let text = |value: &Option<http::HeaderValue>| {
            value
                .as_ref()
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        if let Some(etag) = text(&self.validators.etag) {
            field("etag", etag);
        }
        if let Some(modified) = text(&self.validators.last_modified) {
            field("modified", modified);
        }
        if let Some(max_age) = self.validators.max_age {
            field("maxage", millis(max_age).to_string());
        }
        if let Some(outage) = &self.outage {
            field("since", outage.since_ms.to_string());
            field("retry", outage.next_retry_ms.to_string());
            field("failures", outage.failures.to_string());
            match &outage.cause {
                UnreachableCause::Status { status, .. } => {
                    field("cause", format!("status:{status}"))
                }
                UnreachableCause::Network(e) => {
                    field("cause", format!("{}:{}", kind_name(e.kind), e.message))
                }
            }
        }
        out.push(b'\n');
        out.extend_from_slice(body);
        out
    }

    /// Reads what [`StoredRobots::encode`] wrote; `None` for anything else (a record written by
    /// another version is ignored, and the cache fetches for itself).
    pub fn decode(bytes: &[u8]) -> Option<StoredRobots> {
        let (rest, is_deflated) = match bytes.strip_prefix(MAGIC) {
            Some(rest) => (rest, false),
            None => (bytes.strip_prefix(MAGIC_DEFLATED)?, true),
        };
        let end = memchr_double_newline(rest)?;
        let header = std::str::from_utf8(&rest[..end]).ok()?;
        let body = &rest[end + 2..];
        let body = if is_deflated {
            Bytes::from(inflated(body)?)
        } else {
            Bytes::copy_from_slice(body)
        };
        let mut get = std::collections::HashMap::new();
        for line in header.lines() {
            let (k, v) = line.split_once('=')?;
            get.insert(k, v);
        }
        let num = |k: &str| get.get(k).and_then(|v| v.parse::<u64>().ok());
        let kind = match *get.get("kind")? {
            "parsed" => StoredKind::Parsed,
            "unreachable" => StoredKind::Unreachable,
            other => StoredKind::Unavailable(reason_of(other.strip_prefix("unavailable:")?)?),
        };
        let has_body = *get.get("body")? == "1";
        let outage = match (num("since"), num("retry"), num("failures")) {
            (Some(since_ms), Some(next_retry_ms), Some(failures)) => {
                let (cause_kind, message) = get.get("cause")?.split_once(':')?;
                let cause = match cause_kind {
                    "status" => UnreachableCause::Status {
                        status: message.parse().ok()?,
                        retry_after: None,
                    },
                    kind => UnreachableCause::Network(NetworkError {
                        kind: kind_of(kind)?,
                        message: message.to_string(),
                    }),
                };
                Some(StoredOutage {
                    since_ms,
                    next_retry_ms,
                    failures: u32::try_from(failures).unwrap_or(u32::MAX),
                    cause,
                })
            }
            _ => None,
        };
        Some(StoredRobots {
            kind,
            status: get.get("status").and_then(|s| s.parse().ok()),
            body: has_body.then_some(body),
            fetched_at_ms: num("fetched")?,
            refresh_at_ms: num("refresh")?,
            outage,
            validators: Validators {
                etag: header_value(get.get("etag")),
                last_modified: header_value(get.get("modified")),
                max_age: num("maxage").map(Duration::from_millis),
            },
        })
    }

    /// Heap bytes held (what [`InProcessStore`] weighs it by).
    pub fn heap_bytes(&self) -> usize {
        let cause = match self.outage.as_ref().map(|o| &o.cause) {
            Some(UnreachableCause::Network(e)) => e.message.len(),
            _ => 0,
        };
        std::mem::size_of::<Self>()
            + self.body.as_ref().map_or(0, |b| b.len())
            + cause
            + self.validators.heap_bytes()
    }
}

/// A stored validator (none when empty, overlong or not a header value).
fn header_value(text: Option<&&str>) -> Option<http::HeaderValue> {
    text.filter(|t| !t.is_empty() && t.len() <= crate::validators::MAX_VALIDATOR_BYTES)
        .and_then(|t| http::HeaderValue::from_str(t).ok())
}

/// Where the header ends: the first empty line (the body may hold anything after it).
fn memchr_double_newline(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"\n\n")
}

fn reason_name(reason: UnavailableReason) -> &'static str {
    match reason {
        UnavailableReason::Status => "status",
        UnavailableReason::TooManyRedirects => "too-many-redirects",
        UnavailableReason::RedirectLoop => "redirect-loop",
        UnavailableReason::BadLocation => "bad-location",
    }
}

fn reason_of(name: &str) -> Option<UnavailableReason> {
    Some(match name {
        "status" => UnavailableReason::Status,
        "too-many-redirects" => UnavailableReason::TooManyRedirects,
        "redirect-loop" => UnavailableReason::RedirectLoop,
        "bad-location" => UnavailableReason::BadLocation,
        _ => return None,
    })
}

const KINDS: [(NetworkErrorKind, &str); 9] = [
    (NetworkErrorKind::AddressRefused, "address-refused"),
    (NetworkErrorKind::UnsupportedScheme, "unsupported-scheme"),
    (NetworkErrorKind::Dns, "dns"),
    (NetworkErrorKind::Connect, "connect"),
    (NetworkErrorKind::Timeout, "timeout"),
    (NetworkErrorKind::Reset, "reset"),
    (NetworkErrorKind::Body, "body"),
    (NetworkErrorKind::Decode, "decode"),
    (NetworkErrorKind::Other, "other"),
];

fn kind_name(kind: NetworkErrorKind) -> &'static str {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("other", |(_, n)| n)
}

fn kind_of(name: &str) -> Option<NetworkErrorKind> {
    KINDS.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
}

/// The in-process [`RobotsStore`]: caches of one process that share it share one fetch per
/// origin. Bounded in bytes (the bodies it holds), with expiry like a server's.
///
/// ```
/// use std::sync::Arc;
/// use robots_fetch::{InProcessStore, RobotsCache};
/// let store = Arc::new(InProcessStore::new(64 * 1024 * 1024));
/// let a = RobotsCache::builder("FooBot").store(store.clone()).build();
/// let b = RobotsCache::builder("FooBot").store(store).build();
/// # let _ = (a, b);
/// ```
pub struct InProcessStore {
    records: quick_cache::sync::Cache<String, Arc<(StoredRobots, u64)>, RecordWeighter>,
    locks: Mutex<std::collections::HashMap<String, (String, u64)>>,
}

#[derive(Debug, Clone, Copy)]
struct RecordWeighter;

impl quick_cache::Weighter<String, Arc<(StoredRobots, u64)>> for RecordWeighter {
    fn weight(&self, key: &String, value: &Arc<(StoredRobots, u64)>) -> u64 {
        (key.len() + value.0.heap_bytes()) as u64
    }
}

impl std::fmt::Debug for InProcessStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessStore")
            .field("records", &self.records.len())
            .finish_non_exhaustive()
    }
}

impl InProcessStore {
    /// A store holding at most `max_bytes` of records (at least 4 MiB).
    pub fn new(max_bytes: u64) -> InProcessStore {
        let max_bytes = max_bytes.max(4 * 1024 * 1024);
        InProcessStore {
            records: quick_cache::sync::Cache::with_weighter(
                usize::try_from(max_bytes / 4096)
                    .unwrap_or(usize::MAX)
                    .max(16),
                max_bytes,
                RecordWeighter,
            ),
            locks: Mutex::default(),
        }
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl RobotsStore for InProcessStore {
    fn load<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<StoredRobots>> {
        let now = now_ms();
        let found = self
            .records
            .get(key)
            .filter(|r| r.1 > now)
            .map(|r| r.0.clone());
        ready(found)
    }

    fn save<'a>(
        &'a self,
        key: &'a str,
        record: &'a StoredRobots,
        ttl: Duration,
    ) -> StoreFuture<'a, ()> {
        let expires = now_ms().saturating_add(millis(ttl));
        self.records
            .insert(key.to_string(), Arc::new((record.clone(), expires)));
        ready(())
    }

    fn try_lock<'a>(
        &'a self,
        key: &'a str,
        owner: &'a str,
        ttl: Duration,
    ) -> StoreFuture<'a, bool> {
        let now = now_ms();
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        locks.retain(|_, (_, expires)| *expires > now);
        let taken = !locks.contains_key(key);
        if taken {
            let expires = now.saturating_add(millis(ttl));
            locks.insert(key.to_string(), (owner.to_string(), expires));
        }
        ready(taken)
    }

    fn unlock<'a>(&'a self, key: &'a str, owner: &'a str) -> StoreFuture<'a, ()> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        if locks.get(key).is_some_and(|(o, _)| o == owner) {
            locks.remove(key);
        }
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: Vec<u8>) -> StoredRobots {
        StoredRobots {
            kind: StoredKind::Parsed,
            status: Some(200),
            body: Some(Bytes::from(body)),
            fetched_at_ms: 1,
            refresh_at_ms: 2,
            outage: None,
            validators: Validators::default(),
        }
    }

    #[test]
    fn large_bodies_are_stored_deflated_when_that_pays() {
        // A large, repetitive file: deflated, and read back the same.
        let large: Vec<u8> = (0..2000)
            .flat_map(|i| format!("Disallow: /private/{i}/\n").into_bytes())
            .collect();
        let record = parsed(large.clone());
        let encoded = record.encode();
        assert!(encoded.starts_with(MAGIC_DEFLATED));
        assert!(
            encoded.len() < large.len() / 3,
            "{} of {}",
            encoded.len(),
            large.len()
        );
        assert_eq!(StoredRobots::decode(&encoded), Some(record));
        // A small file, and a large one that does not deflate, stay as they are.
        for body in [
            b"User-agent: *\nDisallow: /x\n".to_vec(),
            (0..8000)
                .scan(0x9e37_79b9_7f4a_7c15_u64, |x, _| {
                    // xorshift: bytes that do not deflate.
                    *x ^= *x << 13;
                    *x ^= *x >> 7;
                    *x ^= *x << 17;
                    Some((*x >> 32) as u8)
                })
                .collect(),
        ] {
            let record = parsed(body.clone());
            let encoded = record.encode();
            assert!(encoded.starts_with(MAGIC), "{}", body.len());
            assert!(encoded.ends_with(&body));
            assert_eq!(StoredRobots::decode(&encoded), Some(record));
        }
    }

    #[test]
    fn a_deflated_body_over_the_cap_or_broken_is_not_a_record() {
        use std::io::Write;
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        encoder
            .write_all(&vec![b'a'; robots_core::MAX_BODY_BYTES + 1])
            .unwrap();
        let bomb = encoder.finish().unwrap();
        let header = b"kind=parsed\nstatus=200\nbody=1\nfetched=1\nrefresh=2\n\n";
        for body in [bomb.as_slice(), b"not deflate at all".as_slice()] {
            let mut record = MAGIC_DEFLATED.to_vec();
            record.extend_from_slice(header);
            record.extend_from_slice(body);
            assert_eq!(StoredRobots::decode(&record), None);
        }
    }

    #[test]
    fn records_round_trip() {
        let records = [
            StoredRobots {
                kind: StoredKind::Parsed,
                status: Some(200),
                body: Some(Bytes::from_static(b"User-agent: *\n\nDisallow: /x\n\n")),
                fetched_at_ms: 1,
                refresh_at_ms: 2,
                outage: None,
                validators: Validators {
                    etag: Some(http::HeaderValue::from_static("W/\"v1\"")),
                    last_modified: Some(http::HeaderValue::from_static(
                        "Tue, 24 Nov 2026 10:00:00 GMT",
                    )),
                    max_age: Some(Duration::from_secs(60)),
                },
            },
            StoredRobots {
                kind: StoredKind::Unavailable(UnavailableReason::RedirectLoop),
                status: Some(301),
                body: None,
                fetched_at_ms: 3,
                refresh_at_ms: 4,
                outage: Some(StoredOutage {
                    since_ms: 5,
                    next_retry_ms: 6,
                    failures: 7,
                    cause: UnreachableCause::Network(NetworkError {
                        kind: NetworkErrorKind::Timeout,
                        message: "no answer: within\n10 s".into(),
                    }),
                }),
                validators: Validators::default(),
            },
            StoredRobots {
                kind: StoredKind::Unreachable,
                status: Some(503),
                body: None,
                fetched_at_ms: 8,
                refresh_at_ms: 9,
                outage: Some(StoredOutage {
                    since_ms: 10,
                    next_retry_ms: 11,
                    failures: 1,
                    cause: UnreachableCause::Status {
                        status: 503,
                        retry_after: None,
                    },
                }),
                validators: Validators::default(),
            },
        ];
        for record in records {
            let decoded = StoredRobots::decode(&record.encode()).unwrap();
            let mut expected = record.clone();
            if let Some(StoredOutage {
                cause: UnreachableCause::Network(e),
                ..
            }) = &mut expected.outage
            {
                e.message = e.message.replace('\n', " ");
            }
            assert_eq!(decoded, expected);
        }
        assert_eq!(StoredRobots::decode(b"something else"), None);
        // A record of the version before validators reads as one without them, and a reader of
        // that version skips the new lines (it looks fields up by name).
        let older = b"robots-store 1\nkind=parsed\nstatus=200\nbody=1\nfetched=1\nrefresh=2\n\nUser-agent: *\n";
        let read = StoredRobots::decode(older).unwrap();
        assert!(read.validators.is_empty());
        assert_eq!(read.body.as_deref(), Some(&b"User-agent: *\n"[..]));
        assert_eq!(StoredRobots::decode(b"robots-store 1\nkind=parsed\n"), None);
    }

    #[tokio::test]
    async fn locks_are_owned_and_expire() {
        let store = InProcessStore::new(0);
        assert!(
            store
                .try_lock("k", "a", Duration::from_secs(60))
                .await
                .unwrap()
        );
        assert!(
            !store
                .try_lock("k", "b", Duration::from_secs(60))
                .await
                .unwrap()
        );
        store.unlock("k", "b").await.unwrap(); // not the owner: nothing happens
        assert!(
            !store
                .try_lock("k", "b", Duration::from_secs(60))
                .await
                .unwrap()
        );
        store.unlock("k", "a").await.unwrap();
        assert!(
            store
                .try_lock("k", "b", Duration::from_millis(1))
                .await
                .unwrap()
        );
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            store
                .try_lock("k", "c", Duration::from_secs(60))
                .await
                .unwrap()
        );
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn instants_and_wall_clock_milliseconds_round_trip() {
        let clocks = Clocks::read();
        let later = clocks.now + Duration::from_secs(90);
        assert_eq!(clocks.wall_ms(later), clocks.wall + 90_000);
        assert_eq!(clocks.instant(clocks.wall + 90_000), later);
        let earlier = clocks.now - Duration::from_millis(1500);
        assert_eq!(clocks.instant(clocks.wall_ms(earlier)), earlier);
        // Far past and far future saturate instead of panicking.
        let _ = clocks.instant(0);
        let _ = clocks.instant(u64::MAX);
    }
}
