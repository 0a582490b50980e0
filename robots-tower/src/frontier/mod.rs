//! [`Frontier`]: a crawl's URLs wait in a queue per politeness group, not in tasks, and are
//! handed out when their group can take a request, so one slow site never holds up the others.
//! The ready times come from the gate the layer, the middleware and the hooks pace with (the
//! fleet's, in fleet mode); the front end still enforces every turn, so a wrong guess costs a
//! wait, never a burst.

mod config;
mod dedup;
mod queues;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_fetch::Origin;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::debug;
use url::Url;

pub use config::{Dedup, Dropped, FrontierConfig, PushError, Pushed};
use dedup::Seen;
use queues::{Answer, Key, Queues, Refused};

use crate::engine::gate::Gate;
use crate::error::RobotsError;

/// A crawl's queue of URLs, in front of the layer, the middleware or the hooks it came from
/// ([`crate::RobotsLayer::frontier`], [`crate::RobotsMiddleware::frontier`],
/// [`crate::RobotsHooks::frontier`]), sharing their pacing.
///
/// - **Per group**: URLs wait in a queue per politeness group (the configured
///   [`crate::PolitenessKey`]), highest priority first, first in first out within a priority.
/// - **Ready only**: [`Frontier::next`] hands out the next URL of a group that can take a
///   request now, groups taking turns (round robin), and sleeps (a timer, no polling) until
///   the earliest group is ready. The request it makes goes through the front end without
///   waiting, save for its robots.txt's first fetch. A group paused by a 429, a 503 or
///   rate-limit headers opens when its pause ends.
/// - **One place per request**: a group gets no more URLs out at once than its concurrency
///   (1 by default); a [`Job`] holds the place until it is dropped, so hold it until the
///   response's body has been read.
/// - **Bounded**: the queued URLs take at most [`FrontierConfig::max_bytes`]; [`Frontier::push`]
///   waits for room, [`Frontier::try_push`] refuses. A cap per group and de-duplication are
///   options ([`FrontierConfig`]).
/// - **Never sent when known disallowed**: a URL whose robots.txt is cached and disallows it is
///   dropped, at the push or when its turn comes, counted ([`FrontierStats::disallowed`]) and
///   given to [`FrontierConfig::on_disallowed`].
///
/// In a fleet, each process keeps its own frontier; the ready times come from the shared
/// pacing. Under [`crate::PolitenessKey::Ip`], a host is queued under its name until its
/// address is known (the first ask about it resolves it), then under the address.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let site = wiremock::MockServer::start().await; // a local stand-in for real sites
/// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
/// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n"))
/// #     .mount(&site).await;
/// # wiremock::Mock::given(wiremock::matchers::any())
/// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("a page"))
/// #     .mount(&site).await;
/// use std::time::Duration;
/// use robots_tower::RobotsMiddleware;
///
/// let robots = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)")
///     .min_delay(Duration::from_millis(50))
///     .build()?;
/// let client = robots.client()?; // every request through the middleware
/// let frontier = robots.frontier(); // its URLs come out when their site can take them
/// for path in ["/a", "/b", "/private/c"] {
///     frontier.push(format!("{}{path}", site.uri()).parse()?).await?;
/// }
/// frontier.close(); // no more URLs: `next` ends once the queue is empty
/// while let Some(job) = frontier.next().await {
///     let page = client.get(job.url().clone()).send().await?.text().await?;
///     println!("{}: {} bytes", job.url(), page.len());
///     // `job` is dropped here, after the body: its group may go again.
/// }
/// // /private/c was dropped once robots.txt was known: never sent.
/// assert_eq!(frontier.stats().disallowed, 1);
/// # Ok(()) }
/// ```
///
/// Several workers share one frontier by cloning it (a handle).
#[derive(Clone)]
pub struct Frontier {
    shared: Arc<Shared>,
}

struct Shared {
    gate: Arc<Gate>,
    state: Mutex<State>,
    /// Something changed that a `next` may be waiting for (a push, an answer, a job's end,
    /// the close).
    changed: Notify,
    /// Room was made (a URL left the queue), or the frontier closed: pushes waiting look again.
    room: Notify,
    on_disallowed: Option<Arc<dyn Fn(Dropped) + Send + Sync>>,
    max_bytes: usize,
}

struct State {
    queues: Queues,
    seen: Seen,
    closed: bool,
    counts: Counts,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    pushed: u64,
    handed_out: u64,
    disallowed: u64,
    duplicates: u64,
    over_group_cap: u64,
    gate_asks: u64,
}

/// What a frontier holds and has done, from [`Frontier::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrontierStats {
    /// URLs queued now.
    pub queued: usize,
    /// Groups with a URL queued or handed out.
    pub groups: usize,
    /// URLs handed out whose [`Job`]s have not been dropped.
    pub in_progress: usize,
    /// Bytes the queue holds, as counted against [`FrontierConfig::max_bytes`].
    pub bytes: usize,
    /// The budget.
    pub max_bytes: usize,
    /// Bytes de-duplication holds (fixed when the frontier was made).
    pub dedup_bytes: usize,
    /// URLs queued since the start.
    pub pushed: u64,
    /// URLs handed out by [`Frontier::next`].
    pub handed_out: u64,
    /// URLs dropped because their cached robots.txt disallows them.
    pub disallowed: u64,
    /// URLs dropped as pushed before ([`Dedup`]).
    pub duplicates: u64,
    /// URLs refused by [`FrontierConfig::max_per_group`].
    pub over_group_cap: u64,
    /// Times the frontier asked the pacing when a group could go: once when a group gets
    /// its first URL and once when a job ends, while its group has URLs queued (more only while
    /// a request it did not hand out holds the group's place).
    pub gate_asks: u64,
}

/// A URL handed out by [`Frontier::next`]: its group's place is held until the job is dropped,
/// so keep it until the response's body has been read (or given up).
pub struct Job {
    url: Url,
    priority: i32,
    key: Key,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("url", &self.url.as_str())
            .field("priority", &self.priority)
            .field("group", &&*self.key)
            .finish()
    }
}

impl Job {
    /// The URL to fetch.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The priority it was pushed with (0 for [`Frontier::push`]).
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Its politeness group.
    pub fn group(&self) -> &str {
        &self.key
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.shared.lock().queues.job_ended(&self.key);
        self.shared.changed.notify_waiters();
    }
}

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells whoever listens of URLs dropped as disallowed (outside the lock).
    fn hear(&self, dropped: Vec<Dropped>) {
        for dropped in dropped {
            debug!(url = %dropped.url, "disallowed by robots.txt: dropped from the frontier");
            if let Some(hear) = &self.on_disallowed {
                hear(dropped);
            }
        }
    }
}

/// What one look at the queues found for [`Frontier::next`].
enum Step {
    Job(Job),
    Ask(Key, String),
    Sleep(Option<Instant>),
    Done,
}

/// A group being asked about by a `next` whose future may be dropped mid-ask: the group is
/// then asked again by the next one, not left out.
struct Asking<'a> {
    shared: &'a Shared,
    key: Option<Key>,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.shared.lock().queues.ask_abandoned(&key);
            self.shared.changed.notify_waiters();
        }
    }
}

/// Whether a verdict's refusal is robots.txt's "no" (the one the frontier drops for).
fn is_disallowed(error: &RobotsError) -> bool {
    matches!(
        error,
        RobotsError::Disallowed { .. } | RobotsError::DisallowedFor { .. }
    )
}

impl Frontier {
    pub(crate) fn new(gate: Arc<Gate>, config: FrontierConfig) -> Frontier {
        let queues = Queues::new(
            config.max_bytes,
            config.max_per_group,
            gate.concurrency(),
            gate.min_delay(),
        );
        Frontier {
            shared: Arc::new(Shared {
                gate,
                state: Mutex::new(State {
                    queues,
                    seen: Seen::new(config.dedup),
                    closed: false,
                    counts: Counts::default(),
                }),
                changed: Notify::new(),
                room: Notify::new(),
                on_disallowed: config.on_disallowed,
                max_bytes: config.max_bytes,
            }),
        }
    }

    /// Queues `url` at priority 0, waiting for room when the byte budget is spent (see
    /// [`Frontier::push_with`]).
    pub async fn push(&self, url: Url) -> Result<Pushed, PushError> {
        self.push_with(url, 0).await
    }

    /// Queues `url` behind its group's URLs of the same priority and ahead of lower ones
    /// (higher goes first), waiting for room when the byte budget is spent (a URL handed out
    /// or dropped makes room). Its fragment is removed. Refused at once when the frontier is
    /// closed, the URL is no http(s) URL, its group is at its cap, or it alone is over the
    /// budget. A URL whose cached robots.txt disallows it is dropped
    /// ([`Pushed::Disallowed`]); one pushed before, with de-duplication on, too
    /// ([`Pushed::Duplicate`]).
    pub async fn push_with(&self, mut url: Url, priority: i32) -> Result<Pushed, PushError> {
        loop {
            let room = self.shared.room.notified();
            let mut room = std::pin::pin!(room);
            room.as_mut().enable();
            match self.offer(url, priority) {
                Err(PushError::Full { url: back, .. }) => {
                    url = *back;
                    room.await;
                }
                other => return other,
            }
        }
    }

    /// [`Frontier::push`] without waiting: [`PushError::Full`] when the budget is spent.
    pub fn try_push(&self, url: Url) -> Result<Pushed, PushError> {
        self.offer(url, 0)
    }

    /// [`Frontier::push_with`] without waiting: [`PushError::Full`] when the budget is spent.
    pub fn try_push_with(&self, url: Url, priority: i32) -> Result<Pushed, PushError> {
        self.offer(url, priority)
    }

    fn offer(&self, mut url: Url, priority: i32) -> Result<Pushed, PushError> {
        url.set_fragment(None);
        let origin = match Origin::from_url(&url) {
            Ok(origin) => origin,
            Err(error) => {
                return Err(PushError::NotHttp {
                    url: Box::new(url),
                    error,
                });
            }
        };
        if self.shared.lock().closed {
            return Err(PushError::Closed(Box::new(url)));
        }
        // Known to be disallowed: dropped before it takes any room.
        if let Some(Err(error)) = self.shared.gate.cached_verdict(&url)
            && is_disallowed(&error)
        {
            self.shared.lock().counts.disallowed += 1;
            self.shared.hear(vec![Dropped { url, error }]);
            return Ok(Pushed::Disallowed);
        }
        let group = self.shared.gate.group_now(&origin);
        let mut state = self.shared.lock();
        if state.closed {
            return Err(PushError::Closed(Box::new(url)));
        }
        if state.seen.contains(url.as_str()) {
            state.counts.duplicates += 1;
            return Ok(Pushed::Duplicate);
        }
        match state
            .queues
            .push(group.as_str(), priority, Box::from(url.as_str()))
        {
            Ok(()) => {
                state.seen.remember(url.as_str());
                state.counts.pushed += 1;
                drop(state);
                self.shared.changed.notify_waiters();
                Ok(Pushed::Queued)
            }
            Err(Refused::GroupFull) => {
                state.counts.over_group_cap += 1;
                Err(PushError::GroupFull {
                    url: Box::new(url),
                    group: group.as_str().to_string(),
                    max: state.queues.max_per_group(),
                })
            }
            Err(Refused::Full { alone: true, bytes }) => Err(PushError::TooLarge {
                url: Box::new(url),
                bytes,
                max_bytes: self.shared.max_bytes,
            }),
            Err(Refused::Full { alone: false, .. }) => Err(PushError::Full {
                url: Box::new(url),
                max_bytes: self.shared.max_bytes,
            }),
        }
    }

    /// The next URL whose group can take a request now, groups in turn; sleeps until one can
    /// (a timer, or a push, or a job's end), and is `None` once the frontier is closed and
    /// nothing is queued. Cancel-safe: a `next` dropped while it waits loses nothing.
    pub async fn next(&self) -> Option<Job> {
        let shared = &self.shared;
        loop {
            let changed = shared.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            let mut dropped = Vec::new();
            let step = {
                let mut state = shared.lock();
                let now = Instant::now();
                state.queues.wake(now);
                let gate = &shared.gate;
                let handed = state.queues.pop_ready(now, |text| {
                    let url = Url::parse(text).ok()?;
                    match gate.cached_verdict(&url) {
                        Some(Err(error)) if is_disallowed(&error) => {
                            dropped.push(Dropped { url, error });
                            None
                        }
                        _ => Some(url),
                    }
                });
                state.counts.disallowed += dropped.len() as u64;
                if let Some(handed) = handed {
                    state.counts.handed_out += 1;
                    Step::Job(Job {
                        url: handed.item,
                        priority: handed.priority,
                        key: handed.key,
                        shared: shared.clone(),
                    })
                } else if let Some((key, head)) = state.queues.next_to_ask() {
                    state.counts.gate_asks += 1;
                    Step::Ask(key, head)
                } else if state.closed && state.queues.len() == 0 {
                    Step::Done
                } else {
                    Step::Sleep(state.queues.next_wake())
                }
            };
            if !dropped.is_empty() {
                shared.hear(dropped);
            }
            match step {
                Step::Job(job) => {
                    shared.room.notify_waiters();
                    return Some(job);
                }
                Step::Done => return None,
                Step::Ask(key, head) => {
                    let asking = Asking {
                        shared,
                        key: Some(key),
                    };
                    let answer = match Url::parse(&head).map(|url| Origin::from_url(&url)) {
                        Ok(Ok(origin)) => match shared.gate.next_ready(&origin).await {
                            Ok(Some(wait)) => Answer::In(wait),
                            Ok(None) => Answer::WhenOneEnds,
                            // Refused whatever the wait (an overlong Crawl-delay, an
                            // unreachable fleet that fails closed): the front end says why.
                            Err(_) => Answer::In(Duration::ZERO),
                        },
                        _ => Answer::In(Duration::ZERO),
                    };
                    let mut asking = asking;
                    if let Some(key) = asking.key.take() {
                        shared.lock().queues.answer(&key, answer, Instant::now());
                    }
                    // Another `next` may sleep past the time this answer named.
                    shared.changed.notify_waiters();
                }
                Step::Sleep(Some(until)) => {
                    let _ = tokio::time::timeout_at(until, changed).await;
                }
                Step::Sleep(None) => changed.await,
            }
        }
    }

    /// No more URLs: pushes are refused from now on, and [`Frontier::next`] returns `None` once
    /// the queue is empty. Jobs handed out are not touched.
    pub fn close(&self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_waiters();
        self.shared.room.notify_waiters();
    }

    /// Whether [`Frontier::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// URLs queued now.
    pub fn len(&self) -> usize {
        self.shared.lock().queues.len()
    }

    /// Whether no URL is queued (some may be handed out still).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the queue holds, as counted against [`FrontierConfig::max_bytes`]: each URL's text
    /// and its slot (three pointers, spare room included), each group's name and its
    /// bookkeeping (a few hundred bytes), and a fixed part. An upper bound on what the
    /// allocations hold, measured (BENCHMARKS.md has the numbers).
    pub fn bytes(&self) -> usize {
        self.shared.lock().queues.bytes()
    }

    /// What it holds and has done.
    pub fn stats(&self) -> FrontierStats {
        let state = self.shared.lock();
        FrontierStats {
            queued: state.queues.len(),
            groups: state.queues.groups(),
            in_progress: state.queues.active(),
            bytes: state.queues.bytes(),
            max_bytes: self.shared.max_bytes,
            dedup_bytes: state.seen.bytes(),
            pushed: state.counts.pushed,
            handed_out: state.counts.handed_out,
            disallowed: state.counts.disallowed,
            duplicates: state.counts.duplicates,
            over_group_cap: state.counts.over_group_cap,
            gate_asks: state.counts.gate_asks,
        }
    }
}
