//! [`Frontier`]: a crawl's URLs wait in a queue per politeness group, not in tasks, and are
//! handed out when their group can take a request, so one slow site never holds up the others.
//! The ready times come from the gate the layer, the middleware and the hooks pace with (the
//! fleet's, in fleet mode); the front end still enforces every turn, so a wrong guess costs a
//! wait, never a burst.

mod config;
mod dedup;
mod job;
mod push;
mod queues;
mod retry;
mod run;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_fetch::Origin;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::debug;
use url::Url;

pub use config::{
    DEFAULT_HOLD_UNREACHABLE, Dedup, Dropped, FrontierConfig, FrontierStats, NotCrawled, PushError,
    Pushed, Retried, Visit,
};
use dedup::Seen;
pub use job::Job;
use queues::{Answer, Key, Queues};
use retry::{RetryAt, Tries, take_due};

use crate::engine::gate::Gate;
use crate::error::RobotsError;

/// A crawl's queue of URLs, in front of the layer, the middleware or the hooks it came from
/// ([`crate::RobotsLayer::frontier`], `RobotsMiddleware::frontier` (feature `reqwest`),
/// [`crate::RobotsHooks::frontier`]), sharing their pacing.
///
/// - **Per group**: URLs wait in a queue per politeness group (the configured
///   [`crate::PolitenessKey`]), highest priority first, first in first out within a priority.
/// - **Ready only**: [`Frontier::next`] hands out the next URL of a group that can take a
///   request now, groups taking turns (round robin), and sleeps (a timer, no polling) until
///   the earliest group is ready. The request it makes goes through the front end without
///   waiting. A frontier made by the middleware or the hooks fetches a site's robots.txt (on
///   a task of its own) before its first URL goes; one made by the layer, which has no client
///   of its own, lets the first URL fetch it through the front end. A group paused by a 429,
///   a 503 or rate-limit headers opens when its pause ends.
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
    on_not_crawled: Option<Arc<dyn Fn(NotCrawled) + Send + Sync>>,
    max_bytes: usize,
    job_overdraft: usize,
    max_retries: u32,
    distress_retries: u32,
    hold_unreachable: Duration,
    /// `Frontier::run` stops once this many pages were fetched.
    max_pages: Option<u64>,
    /// Fetches an origin's robots.txt into the gate's cache, when the frontier was made by a
    /// front end with a client of its own (the middleware, the hooks).
    robots: Option<FetchRobots>,
    /// robots.txt fetches under way at once at most ([`ROBOTS_FETCHES`]).
    robots_fetches: tokio::sync::Semaphore,
}

/// How many robots.txt a frontier fetches at once, over every site: enough to keep a crawl of
/// many sites busy, few enough that their connections take little memory.
const ROBOTS_FETCHES: usize = 32;

/// See `Shared::robots`.
type FetchRobots = Arc<
    dyn Fn(Origin) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync,
>;

struct State {
    queues: Queues,
    seen: Seen,
    closed: bool,
    counts: Counts,
    /// URLs given back, each waiting for its time (earliest first), then queued again.
    retries: BinaryHeap<Reverse<RetryAt>>,
    /// How many times each URL queued again was retried, until it is handed out.
    attempts: HashMap<Box<str>, Tries>,
    /// Bytes `retries` and `attempts` hold (counted in `Frontier::bytes`).
    retry_bytes: usize,
    /// Jobs `Frontier::run` handed to its handler whose links are not queued yet: the crawl
    /// is not over while there are any, even with every job dropped.
    visiting: usize,
    retry_seq: u64,
    /// Sites whose URLs were given up for an unreachable robots.txt, the most recent last
    /// (at most [`UNREACHABLE_NAMED`]): each is named in a warning once, not once a URL.
    gave_up_sites: std::collections::VecDeque<Origin>,
    /// [`Frontier::stop`] was called: what is found from now on is not crawled.
    stopped: bool,
    /// [`Feeding`] guards held: `Frontier::run` does not end while seeds may still come.
    feeding: usize,
    /// URLs dropped at their turn whose listener is being told (outside the lock): a URL
    /// pushed meanwhile is not dropped ahead of them.
    hearing: usize,
}

/// Bytes an `attempts` entry is charged beyond its URL's text (its slot, and the map's spare).
const ATTEMPT_OVERHEAD: usize = 2 * size_of::<(Box<str>, Tries)>() + 1;

#[derive(Default, Clone, Copy)]
struct Counts {
    pushed: u64,
    handed_out: u64,
    disallowed: u64,
    duplicates: u64,
    over_group_cap: u64,
    gate_asks: u64,
    fetched: u64,
    refused: u64,
    address_refused: u64,
    failed: u64,
    retried: u64,
    gave_up: u64,
    gave_up_unreachable: u64,
    gave_up_distress: u64,
    distress: u64,
    not_crawled: u64,
    over_budget: u64,
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

    /// Tells whoever listens of URLs dropped as disallowed or refused by the address rule
    /// (outside the lock).
    fn hear(&self, dropped: Vec<Dropped>) {
        for dropped in dropped {
            debug!(url = %dropped.url, error = %dropped.error, "not fetched: dropped from the frontier");
            if let Some(hear) = &self.on_disallowed {
                hear(dropped);
            }
        }
    }

    /// Whether a URL of `group` pushed now would end after others: its group has URLs queued
    /// or under way, or URLs dropped at their turn are being told of.
    fn busy(&self, group: &str) -> bool {
        let state = self.lock();
        state.hearing > 0 || state.queues.busy(group)
    }

    /// Tells whoever listens of a URL left without being handed out (outside the lock).
    fn not_crawled(&self, not: NotCrawled) {
        debug!(url = %not.url(), ?not, "not crawled");
        if let Some(hear) = &self.on_not_crawled {
            hear(not);
        }
    }
}

/// A promise of more URLs to come from outside a crawl ([`Frontier::feeding`]): while one is
/// held, [`Frontier::run`] does not take an empty frontier for a finished crawl. Drop it once
/// the last URL is pushed.
#[must_use = "the crawl may end as soon as the guard is dropped"]
pub struct Feeding {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Feeding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeding").finish_non_exhaustive()
    }
}

impl Drop for Feeding {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.feeding = state.feeding.saturating_sub(1);
        drop(state);
        self.shared.changed.notify_waiters();
    }
}

/// When the gate says `origin`'s group can take a request.
async fn ask(gate: &Gate, origin: &Origin) -> Answer {
    match gate.next_ready(origin).await {
        Ok(Some(wait)) => Answer::In(wait),
        Ok(None) => Answer::WhenOneEnds,
        // Refused whatever the wait (an overlong Crawl-delay, an unreachable fleet that fails
        // closed): the front end says why.
        Err(_) => Answer::In(Duration::ZERO),
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
                    retries: BinaryHeap::new(),
                    attempts: HashMap::new(),
                    retry_bytes: 0,
                    visiting: 0,
                    retry_seq: 0,
                    gave_up_sites: std::collections::VecDeque::new(),
                    stopped: false,
                    feeding: 0,
                    hearing: 0,
                }),
                changed: Notify::new(),
                room: Notify::new(),
                on_disallowed: config.on_disallowed,
                on_not_crawled: config.on_not_crawled,
                max_bytes: config.max_bytes,
                job_overdraft: config.job_overdraft,
                max_retries: config.max_retries,
                distress_retries: config.distress_retries,
                hold_unreachable: config.hold_unreachable,
                max_pages: config.max_pages,
                robots: None,
                robots_fetches: tokio::sync::Semaphore::new(ROBOTS_FETCHES),
            }),
        }
    }

    /// The same frontier, fetching a site's robots.txt with `client` (through the gate: paced,
    /// identified, cached) before its first URL is handed out: a URL it disallows is then
    /// dropped at its turn, never handed to a worker, and the first URL comes out when the
    /// site can take it (an interval after its robots.txt), instead of waiting in the front
    /// end. The fetch runs on a task of its own, so a slow robots.txt holds up no other site.
    pub(crate) fn fetching_robots_with<C>(mut self, client: C) -> Frontier
    where
        C: robots_fetch::FetchClient + Clone + 'static,
        <C::Body as http_body::Body>::Error: Send,
    {
        let gate = self.shared.gate.clone();
        let fetch: FetchRobots = Arc::new(move |origin: Origin| {
            let (gate, client) = (gate.clone(), client.clone());
            Box::pin(async move {
                // A failure is cached as such (unreachable, retried after its pause): the
                // front end says why when the URL goes.
                let _ = gate.entry(&client, &origin).await;
            })
        });
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.robots = Some(fetch);
        }
        self
    }

    /// The next URL whose group can take a request now, groups in turn; sleeps until one can
    /// (a timer, or a push, or a job's end), and is `None` once the frontier is closed and
    /// nothing is queued. Cancel-safe: a `next` dropped while it waits loses nothing.
    pub async fn next(&self) -> Option<Job> {
        self.next_until(false).await
    }

    /// [`Frontier::next`]; with `idle_ends`, also `None` (and the frontier closed) once the
    /// crawl is over: nothing queued or waiting for a retry, no job held, no handler of
    /// [`Frontier::run`] with links still to queue.
    async fn next_until(&self, idle_ends: bool) -> Option<Job> {
        let shared = &self.shared;
        loop {
            let changed = shared.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            let mut dropped = Vec::new();
            let (step, due) = {
                let mut guard = shared.lock();
                let state = &mut *guard;
                let now = Instant::now();
                state.queues.wake(now);
                // Retries whose time came: queued again below, once the lock is let go.
                let due = take_due(state, now);
                let gate = &shared.gate;
                let (attempts, retry_bytes) = (&mut state.attempts, &mut state.retry_bytes);
                // The attempts of a URL leaving the queue (handed out or dropped) are let go.
                let mut attempt_of = |text: &str| {
                    if attempts.is_empty() {
                        return Tries::default();
                    }
                    let attempt = attempts.remove(text).unwrap_or_default();
                    if attempt.all > 0 {
                        *retry_bytes = retry_bytes.saturating_sub(text.len() + ATTEMPT_OVERHEAD);
                    }
                    attempt
                };
                let handed = state.queues.pop_ready(now, |text| {
                    let attempt = attempt_of(text);
                    let url = Url::parse(text).ok()?;
                    match gate.cached_verdict(&url) {
                        Some(Err(error)) if is_disallowed(&error) => {
                            dropped.push(Dropped { url, error });
                            None
                        }
                        _ => Some((url, attempt)),
                    }
                });
                state.counts.disallowed += dropped.len() as u64;
                if !dropped.is_empty() {
                    state.hearing += 1;
                }
                let empty = state.queues.len() == 0 && state.retries.is_empty() && due.is_empty();
                let step = if let Some(handed) = handed {
                    state.counts.handed_out += 1;
                    let (url, tries) = handed.item;
                    Step::Job(Job {
                        url,
                        priority: handed.priority,
                        tries,
                        waited: handed.waited,
                        key: handed.key,
                        shared: shared.clone(),
                        heard: None,
                    })
                } else if let Some((key, head)) = state.queues.next_to_ask() {
                    state.counts.gate_asks += 1;
                    Step::Ask(key, head)
                } else if empty && state.closed {
                    Step::Done
                } else if empty
                    && idle_ends
                    && state.queues.active() == 0
                    && state.visiting == 0
                    && state.feeding == 0
                {
                    // Over: nothing can push any more but from outside, which `run` rules out.
                    state.closed = true;
                    shared.room.notify_waiters();
                    shared.changed.notify_waiters();
                    Step::Done
                } else {
                    let retry = state.retries.peek().map(|Reverse(r)| r.at);
                    let wake = match (state.queues.next_wake(), retry) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    Step::Sleep(wake)
                };
                (step, due)
            };
            if !dropped.is_empty() {
                shared.hear(dropped);
                let mut state = shared.lock();
                state.hearing = state.hearing.saturating_sub(1);
            }
            if !due.is_empty() {
                self.requeue(due);
                // They may be ready now: looked at again before any sleep.
                if matches!(step, Step::Sleep(_)) {
                    continue;
                }
            }
            match step {
                Step::Job(job) => {
                    shared.room.notify_waiters();
                    return Some(job);
                }
                Step::Done => return None,
                Step::Ask(key, head) => {
                    // A site whose robots.txt is not known yet: fetched first, on a task of its
                    // own, which answers for the group once it is there.
                    if let Some(fetch) = &shared.robots
                        && let Ok(Ok(origin)) = Url::parse(&head).map(|u| Origin::from_url(&u))
                        && shared.gate.cache().cached_any(&origin).is_none()
                    {
                        let (fetch, shared) = (fetch.clone(), shared.clone());
                        tokio::spawn(async move {
                            // A few at once: each holds a connection and its buffers, and a
                            // crawl of many sites asks for all of theirs at the start. (The
                            // fetch is made only with its permit: waiting costs a few bytes.)
                            let permit = shared.robots_fetches.acquire().await;
                            fetch(origin.clone()).await;
                            drop(permit);
                            let answer = ask(&shared.gate, &origin).await;
                            shared.lock().queues.answer(&key, answer, Instant::now());
                            shared.changed.notify_waiters();
                        });
                        continue;
                    }
                    let asking = Asking {
                        shared,
                        key: Some(key),
                    };
                    let answer = match Url::parse(&head).map(|url| Origin::from_url(&url)) {
                        Ok(Ok(origin)) => ask(&shared.gate, &origin).await,
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

    /// Stops the crawl: nothing more is handed out and pushes are refused (closed); what is
    /// queued or waiting for a retry is dropped and counted as not crawled
    /// ([`FrontierStats::not_crawled`], with the links jobs still running find). Jobs handed
    /// out run to their end, and [`Frontier::run`] ends once they have. Call it from anywhere:
    /// a signal handler's task, a visit, another frontier's handle (`Frontier` is a handle,
    /// cheap to clone).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use robots_tower::{FrontierConfig, RobotsLayer};
    /// let frontier = RobotsLayer::builder("FooBot/1.0").build().frontier_with(FrontierConfig::default());
    /// for n in 0..3 {
    ///     frontier.try_push(format!("https://a.example/{n}").parse().unwrap()).unwrap();
    /// }
    /// frontier.stop();
    /// let stats = frontier.stats();
    /// assert_eq!((stats.queued, stats.not_crawled), (0, 3));
    /// assert!(frontier.next().await.is_none());
    /// # }
    /// ```
    pub fn stop(&self) {
        let mut state = self.shared.lock();
        // The URLs themselves only for a listener (a stop may drop a whole budget of them).
        let mut left = Vec::new();
        let hear = self.shared.on_not_crawled.is_some();
        let mut dropped = state.queues.drain(|text| {
            if hear {
                left.push(text);
            }
        });
        let retries = std::mem::take(&mut state.retries);
        dropped += retries.len();
        if hear {
            left.extend(retries.into_iter().map(|Reverse(retry)| retry.into_url()));
        }
        state.attempts = HashMap::new();
        state.retry_bytes = 0;
        state.counts.not_crawled += dropped as u64;
        state.closed = true;
        state.stopped = true;
        drop(state);
        if dropped > 0 {
            debug!(dropped, "frontier stopped: what was queued is not crawled");
        }
        self.shared.changed.notify_waiters();
        self.shared.room.notify_waiters();
        for text in left {
            if let Ok(url) = Url::parse(&text) {
                self.shared.not_crawled(NotCrawled::Stopped(url));
            }
        }
    }

    /// A promise that URLs are still to come from outside (seeds read from a file, a
    /// socket, another crawl): [`Frontier::run`] goes on while the guard is held, however
    /// long the frontier stands empty, and ends as usual once it is dropped. Without one, a
    /// crawl whose seeds are pushed as it runs could end between two of them.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use robots_tower::{FrontierConfig, RobotsLayer, Visit};
    /// let frontier = RobotsLayer::builder("FooBot/1.0").build().frontier_with(FrontierConfig::default());
    /// let feeding = frontier.feeding();
    /// let seeder = frontier.clone();
    /// tokio::spawn(async move {
    ///     tokio::task::yield_now().await; // seeds arriving later, one by one
    ///     seeder.stop(); // (a real seeder pushes; here nothing is fetched)
    ///     drop(feeding);
    /// });
    /// let stats = frontier.run(4, |_job| async { Visit::Failed }).await;
    /// assert!(frontier.is_closed() && stats.handed_out == 0);
    /// # }
    /// ```
    pub fn feeding(&self) -> Feeding {
        self.shared.lock().feeding += 1;
        Feeding {
            shared: self.shared.clone(),
        }
    }

    /// Whether [`Frontier::stop`] was called (or `FrontierConfig::max_pages` was reached).
    pub fn is_stopped(&self) -> bool {
        self.shared.lock().stopped
    }

    /// Whether [`Frontier::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// Groups with a URL queued or handed out now ([`FrontierStats::groups`], without the
    /// rest of the stats).
    pub fn groups(&self) -> usize {
        self.shared.lock().queues.groups()
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
    /// allocations hold, measured: a million URLs of about 46 bytes over 100,000 groups held 91
    /// bytes a URL and were counted as 161, so the default 64 MiB holds at least about 400,000
    /// such URLs.
    pub fn bytes(&self) -> usize {
        let state = self.shared.lock();
        state.queues.bytes() + state.retry_bytes
    }

    /// What it holds and has done.
    pub fn stats(&self) -> FrontierStats {
        let state = self.shared.lock();
        FrontierStats {
            queued: state.queues.len(),
            groups: state.queues.groups(),
            in_progress: state.queues.active(),
            bytes: state.queues.bytes() + state.retry_bytes,
            max_bytes: self.shared.max_bytes,
            dedup_bytes: state.seen.bytes(),
            pushed: state.counts.pushed,
            handed_out: state.counts.handed_out,
            fetched: state.counts.fetched,
            disallowed: state.counts.disallowed,
            refused: state.counts.refused,
            address_refused: state.counts.address_refused,
            failed: state.counts.failed,
            retried: state.counts.retried,
            gave_up: state.counts.gave_up,
            gave_up_unreachable: state.counts.gave_up_unreachable,
            distress: state.counts.distress,
            gave_up_distress: state.counts.gave_up_distress,
            not_crawled: state.counts.not_crawled,
            over_budget: state.counts.over_budget,
            duplicates: state.counts.duplicates,
            over_group_cap: state.counts.over_group_cap,
            gate_asks: state.counts.gate_asks,
        }
    }
}
