//! What a frontier is set up with: its byte budget, the cap per group, de-duplication, and who
//! hears of the URLs it drops.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use crate::error::RobotsError;

/// How a [`crate::Frontier`] is set up: give it to `frontier_with` on the layer, the
/// middleware or the hooks.
///
/// ```
/// use robots_tower::{Dedup, FrontierConfig};
/// let config = FrontierConfig::default()
///     .max_bytes(256 << 20)                // 256 MiB of queued URLs at most
///     .max_per_group(100_000)              // no site takes the whole budget
///     .dedup(Dedup::Exact { last: 1_000_000 })
///     .on_disallowed(|dropped| eprintln!("not fetched: {}", dropped.error));
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct FrontierConfig {
    pub(crate) max_bytes: usize,
    pub(crate) max_per_group: usize,
    pub(crate) dedup: Dedup,
    pub(crate) on_disallowed: Option<Arc<dyn Fn(Dropped) + Send + Sync>>,
    pub(crate) on_not_crawled: Option<Arc<dyn Fn(NotCrawled) + Send + Sync>>,
    pub(crate) job_overdraft: usize,
    pub(crate) max_retries: u32,
    pub(crate) distress_retries: u32,
    pub(crate) hold_unreachable: Duration,
    pub(crate) max_pages: Option<u64>,
}

pub use robots_fetch::DEFAULT_HOLD_UNREACHABLE;

impl std::fmt::Debug for FrontierConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontierConfig")
            .field("max_bytes", &self.max_bytes)
            .field("max_per_group", &self.max_per_group)
            .field("dedup", &self.dedup)
            .field("on_disallowed", &self.on_disallowed.is_some())
            .field("on_not_crawled", &self.on_not_crawled.is_some())
            .field("job_overdraft", &self.job_overdraft)
            .field("max_retries", &self.max_retries)
            .field("distress_retries", &self.distress_retries)
            .field("hold_unreachable", &self.hold_unreachable)
            .field("max_pages", &self.max_pages)
            .finish()
    }
}

impl Default for FrontierConfig {
    /// 64 MiB of queued URLs (about 600,000 URLs of 60 bytes), no cap per group, no
    /// de-duplication, dropped URLs only logged, 64 KiB of overdraft per job for the links it
    /// finds, 3 retries per URL, a site's URLs held a minute while its robots.txt is
    /// unreachable ([`DEFAULT_HOLD_UNREACHABLE`]).
    fn default() -> FrontierConfig {
        FrontierConfig {
            max_bytes: 64 << 20,
            max_per_group: usize::MAX,
            dedup: Dedup::Off,
            on_disallowed: None,
            on_not_crawled: None,
            job_overdraft: 64 << 10,
            max_retries: 3,
            distress_retries: 3,
            hold_unreachable: DEFAULT_HOLD_UNREACHABLE,
            max_pages: None,
        }
    }
}

impl FrontierConfig {
    /// The most memory queued URLs may hold, in bytes, their queues' bookkeeping included (see
    /// [`crate::Frontier::bytes`] for how it is counted). A push that would go over it waits
    /// ([`crate::Frontier::push`]) or is refused ([`crate::Frontier::try_push`]).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The most URLs one politeness group may have queued; a push beyond it is refused with
    /// [`PushError::GroupFull`] at once (waiting would let one slow site hold every push up).
    pub fn max_per_group(mut self, urls: usize) -> Self {
        self.max_per_group = urls.max(1);
        self
    }

    /// Whether a URL pushed before is dropped (see [`Dedup`]).
    pub fn dedup(mut self, dedup: Dedup) -> Self {
        self.dedup = dedup;
        self
    }

    /// How far past [`FrontierConfig::max_bytes`] the links a job finds may go, in bytes per
    /// job in progress ([`crate::Job::push`], and the links [`crate::Frontier::run`]'s handler
    /// returns). A job's links never wait for room: waiting would deadlock, as room is made
    /// only by handing URLs out, which the job's own place may be holding up. Past the
    /// overdraft a link is refused ([`PushError::Full`]) and counted
    /// ([`crate::FrontierStats::over_budget`]). Pushes from outside a job still wait within
    /// the budget, so it bounds what a crawl holds to `max_bytes + overdraft × jobs`.
    pub fn job_overdraft(mut self, bytes: usize) -> Self {
        self.job_overdraft = bytes;
        self
    }

    /// How many times one URL is retried ([`crate::Job::retry_after`], [`Visit::Retry`]: a
    /// network error, say) before it is given up ([`crate::FrontierStats::gave_up`]). 3 by
    /// default. Each cause has its own limit: a distress answer's retries count in
    /// [`FrontierConfig::distress_retries`], waiting for an unreachable robots.txt in
    /// [`FrontierConfig::hold_unreachable`].
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// How many times [`crate::Frontier::run`] retries one URL answered with a distress status
    /// (429, 5xx) before it is given up ([`crate::FrontierStats::gave_up_distress`]). 3 by
    /// default.
    pub fn distress_retries(mut self, retries: u32) -> Self {
        self.distress_retries = retries;
        self
    }

    /// How long [`crate::Frontier::run`] holds a site's URLs while its robots.txt cannot be
    /// had (a refusal [`RobotsError::RobotsUnreachable`]: no answer, or a 5xx): each is handed
    /// out again when robots.txt is tried next, as long as that try comes within `hold` of the
    /// outage's start ([`robots_fetch::waits_for_robots`]); else it is given up, counted in
    /// [`crate::FrontierStats::gave_up_unreachable`] (and in `gave_up`), and the site is named
    /// in a warning once. [`DEFAULT_HOLD_UNREACHABLE`] (a minute) by default, which suits a
    /// one-off crawl: a site that answers 5xx is tried at 0 and 10 s, one that does not answer
    /// at 0 and 60 s. A long-running crawler may wait out a longer outage (robots.txt is tried
    /// again 1, 2, 4, 8… minutes apart, up to an hour).
    ///
    /// ```
    /// use std::time::Duration;
    /// use robots_tower::FrontierConfig;
    /// // A crawler that runs for days waits up to an hour for a site to come back.
    /// let config = FrontierConfig::default().hold_unreachable(Duration::from_secs(3600));
    /// # let _ = config;
    /// ```
    pub fn hold_unreachable(mut self, hold: Duration) -> Self {
        self.hold_unreachable = hold;
        self
    }

    /// [`crate::Frontier::run`] fetches at most this many pages ([`Visit::Fetched`]), then
    /// stops as [`crate::Frontier::stop`] does: what is left queued is counted as not crawled
    /// ([`crate::FrontierStats::not_crawled`]). It never hands out more URLs than the pages
    /// still wanted, so the limit is exact whatever the workers. No limit by default.
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = Some(pages);
        self
    }

    /// Called with each URL the frontier drops because its robots.txt, cached, disallows it
    /// (at the push, or when its turn comes), and each URL the address rule refused (a link
    /// pushed from a public page into an internal address, [`Pushed::AddressRefused`]; under
    /// [`crate::Frontier::run`], one refused at admission or at its connection): it is never
    /// handed out, or was never sent. Called outside the frontier's lock, on the task that
    /// pushed, asked for the next URL or ran the crawl; keep it short.
    pub fn on_disallowed(mut self, hear: impl Fn(Dropped) + Send + Sync + 'static) -> Self {
        self.on_disallowed = Some(Arc::new(hear));
        self
    }

    /// Called with each URL the frontier leaves without handing it out, other than those
    /// [`FrontierConfig::on_disallowed`] hears of: what was queued or waiting for a retry
    /// when the crawl stopped ([`crate::Frontier::stop`], [`FrontierConfig::max_pages`]), a
    /// link found after it, and a link a job found that could not be queued (over the
    /// budget past its overdraft, over its group's cap). With both hooks, nothing a crawl is
    /// given or finds ends unheard: a handler of [`crate::Frontier::run`] says the rest. Called
    /// outside the frontier's lock; keep it short.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use std::sync::{Arc, Mutex};
    /// use robots_tower::{FrontierConfig, NotCrawled, RobotsLayer};
    /// let left = Arc::new(Mutex::new(Vec::new()));
    /// let heard = left.clone();
    /// let config = FrontierConfig::default().on_not_crawled(move |not| {
    ///     heard.lock().unwrap().push(not.url().to_string());
    /// });
    /// let frontier = RobotsLayer::builder("FooBot/1.0").build().frontier_with(config);
    /// frontier.try_push("https://a.example/1".parse().unwrap()).unwrap();
    /// frontier.stop();
    /// assert_eq!(*left.lock().unwrap(), ["https://a.example/1"]);
    /// # }
    /// ```
    pub fn on_not_crawled(mut self, hear: impl Fn(NotCrawled) + Send + Sync + 'static) -> Self {
        self.on_not_crawled = Some(Arc::new(hear));
        self
    }
}

/// A URL a frontier left without handing it out, given to [`FrontierConfig::on_not_crawled`].
#[derive(Debug)]
#[non_exhaustive]
pub enum NotCrawled {
    /// Queued or waiting for a retry when the crawl was stopped, or a link found after: the
    /// caller's own limit ([`crate::Frontier::stop`], [`FrontierConfig::max_pages`]).
    Stopped(Url),
    /// A link a job found that was not queued: over the budget past the job's overdraft
    /// ([`PushError::Full`]), over its group's cap ([`PushError::GroupFull`]), or too large
    /// alone. (Links the rules or the address rule refuse go to
    /// [`FrontierConfig::on_disallowed`].)
    Refused(PushError),
}

impl NotCrawled {
    /// The URL that was not crawled.
    pub fn url(&self) -> &Url {
        match self {
            NotCrawled::Stopped(url) => url,
            NotCrawled::Refused(error) => error.url(),
        }
    }

    /// Whether it was left by the caller's own limit or stop, rather than for want of room.
    pub fn by_the_callers_limit(&self) -> bool {
        matches!(self, NotCrawled::Stopped(_))
    }
}

/// Whether a frontier drops URLs it was given before. The memory it takes is fixed when the
/// frontier is made, apart from the queue's budget ([`crate::FrontierStats::dedup_bytes`]).
/// URLs are compared after their fragment is removed (`/a#x` is `/a`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum Dedup {
    /// Every URL pushed is queued (the default).
    #[default]
    Off,
    /// The last `last` distinct URLs pushed are remembered by a 64-bit hash (about 24 bytes
    /// each): a URL among them is dropped. Exact but for hash collisions (one in about 2^64 per
    /// pair); a URL older than the last `last` is forgotten and queued again.
    Exact {
        /// How many URLs are remembered.
        last: usize,
    },
    /// A Bloom filter sized for `expected` URLs with this rate of false positives: a fixed
    /// `-expected × ln(rate) / ln(2)²` bits (1.2 MB for a million at 1%). Never forgets, but a
    /// new URL is dropped as seen at about that rate (more once over `expected`): right for
    /// broad crawls, where a rare page missed costs less than memory.
    Bloom {
        /// How many URLs it is sized for.
        expected: usize,
        /// The rate of new URLs wrongly dropped at `expected` (0.01: one in a hundred).
        false_positive_rate: f64,
    },
}

/// A URL a frontier dropped, and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct Dropped {
    /// The URL as pushed (without its fragment).
    pub url: Url,
    /// Why: [`RobotsError::Disallowed`] (or `DisallowedFor`), as the layer would have refused it,
    /// or [`RobotsError::AddressRefused`].
    pub error: RobotsError,
}

/// What became of a URL given to [`crate::Frontier::push`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pushed {
    /// It waits in its group's queue.
    Queued,
    /// De-duplication had seen it: dropped ([`Dedup`]).
    Duplicate,
    /// Its robots.txt is cached and disallows it: dropped, counted, and given to
    /// [`FrontierConfig::on_disallowed`].
    Disallowed,
    /// A link the address rule refuses ([`crate::Frontier::push_link`]: a public page's link into
    /// an internal address): dropped, counted, and given to [`FrontierConfig::on_disallowed`]
    /// with [`RobotsError::AddressRefused`].
    AddressRefused,
}

/// Why a frontier did not take a URL; the URL comes back with it (boxed: a `Result` of a push
/// stays small).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The frontier was closed ([`crate::Frontier::close`]).
    #[error("the frontier is closed: {0} was not queued")]
    Closed(Box<Url>),
    /// Queuing it would go over the byte budget ([`crate::Frontier::try_push`]; `push` waits).
    #[error("the frontier is full ({max_bytes} bytes): {url} was not queued")]
    Full {
        /// The URL.
        url: Box<Url>,
        /// The budget.
        max_bytes: usize,
    },
    /// Its politeness group has [`FrontierConfig::max_per_group`] URLs queued already.
    #[error("{group} has {max} URLs queued already: {url} was not queued")]
    GroupFull {
        /// The URL.
        url: Box<Url>,
        /// Its politeness group.
        group: String,
        /// The cap.
        max: usize,
    },
    /// The URL alone is larger than the whole byte budget.
    #[error(
        "{url} needs {bytes} bytes of an empty frontier (its text, its queue's bookkeeping and the frontier's fixed part), more than the whole budget of {max_bytes}"
    )]
    TooLarge {
        /// The URL.
        url: Box<Url>,
        /// What it would take in an empty frontier: its text and slot, its group's and priority
        /// band's bookkeeping, and the queue's fixed part ([`crate::Frontier::bytes`]).
        bytes: usize,
        /// The budget.
        max_bytes: usize,
    },
    /// Not a URL a crawler fetches (not http or https, or without a host).
    #[error("{url} cannot be queued: {error}")]
    NotHttp {
        /// The URL.
        url: Box<Url>,
        /// Why.
        error: robots_fetch::OriginError,
    },
}

impl PushError {
    /// The URL that was not queued.
    pub fn url(&self) -> &Url {
        match self {
            PushError::Closed(url) => url,
            PushError::Full { url, .. }
            | PushError::GroupFull { url, .. }
            | PushError::TooLarge { url, .. }
            | PushError::NotHttp { url, .. } => url,
        }
    }

    /// The URL that was not queued, taken back.
    pub fn into_url(self) -> Url {
        match self {
            PushError::Closed(url) => *url,
            PushError::Full { url, .. }
            | PushError::GroupFull { url, .. }
            | PushError::TooLarge { url, .. }
            | PushError::NotHttp { url, .. } => *url,
        }
    }
}

/// What a [`crate::Frontier::run`] handler did with its job.
#[derive(Debug)]
#[non_exhaustive]
pub enum Visit {
    /// The response reached the worker; the links it found, queued as the job's links
    /// ([`crate::Job::push`]: within the overdraft, through scope and de-duplication). When the
    /// front end saw it answered with a distress status (429, 5xx), the loop retries it after
    /// the group's pause instead, whatever the handler returned
    /// ([`crate::FrontierStats::distress`]).
    Fetched(Vec<Url>),
    /// The front end refused it: [`RobotsError::Disallowed`] counts as disallowed,
    /// [`RobotsError::RobotsUnreachable`] is retried after its `retry_after` (while within
    /// [`FrontierConfig::hold_unreachable`]), anything else counts as refused.
    Refused(RobotsError),
    /// Put back, to be handed out again after this long (a 503, a network error), at most
    /// [`FrontierConfig::max_retries`] times.
    Retry(std::time::Duration),
    /// It failed otherwise, not to be retried.
    Failed,
}

impl From<Result<Vec<Url>, RobotsError>> for Visit {
    /// `Ok(links)` is [`Visit::Fetched`], an error [`Visit::Refused`].
    fn from(result: Result<Vec<Url>, RobotsError>) -> Visit {
        match result {
            Ok(links) => Visit::Fetched(links),
            Err(error) => Visit::Refused(error),
        }
    }
}

/// What became of a URL given back with [`crate::Job::retry_after`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Retried {
    /// It will be handed out again once its time comes; this is its `attempt`-th retry.
    Scheduled {
        /// 1 for the first retry.
        attempt: u32,
    },
    /// It was retried [`FrontierConfig::max_retries`] times already: given up, counted.
    GaveUp,
}

/// What a frontier holds and has done, from [`Frontier::stats`](crate::Frontier::stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrontierStats {
    /// URLs queued now.
    pub queued: usize,
    /// Groups with a URL queued or handed out.
    pub groups: usize,
    /// URLs handed out whose [`Job`](crate::Job)s have not been dropped.
    pub in_progress: usize,
    /// Bytes the queue holds, as counted against [`FrontierConfig::max_bytes`].
    pub bytes: usize,
    /// The budget.
    pub max_bytes: usize,
    /// Bytes de-duplication holds (fixed when the frontier was made).
    pub dedup_bytes: usize,
    /// URLs queued since the start.
    pub pushed: u64,
    /// URLs handed out by [`Frontier::next`](crate::Frontier::next) (a retried URL each time). Not all were
    /// fetched: see `fetched`, `disallowed`, `refused`.
    pub handed_out: u64,
    /// Under [`Frontier::run`](crate::Frontier::run): URLs whose response reached the handler ([`Visit::Fetched`]),
    /// what the server saw as pages.
    pub fetched: u64,
    /// URLs robots.txt disallows, never sent: dropped by the frontier once their robots.txt was
    /// cached (at the push, or at their turn), and under [`Frontier::run`](crate::Frontier::run) those the front end
    /// refused as disallowed ([`Visit::Refused`]; a site's first URL goes out before its
    /// robots.txt is known).
    pub disallowed: u64,
    /// Under [`Frontier::run`](crate::Frontier::run): URLs the front end refused for another reason (an
    /// overlong Crawl-delay…), never sent.
    pub refused: u64,
    /// Links the address rule refused (spec section 8), never sent: at the push
    /// ([`Pushed::AddressRefused`]), and under [`Frontier::run`](crate::Frontier::run) those refused at
    /// admission or where the connection was made ([`Visit::Refused`] with
    /// [`RobotsError::AddressRefused`]).
    pub address_refused: u64,
    /// Under [`Frontier::run`](crate::Frontier::run): URLs that failed otherwise ([`Visit::Failed`]).
    pub failed: u64,
    /// Under [`Frontier::run`](crate::Frontier::run): responses the front end saw answered with
    /// a distress status (429, 5xx: the pacing's back-off statuses). Each is retried once its
    /// group's pause is over, whatever the handler returned (within
    /// [`FrontierConfig::distress_retries`]; then given up), and counted as fetched only when a
    /// retry gets its page.
    pub distress: u64,
    /// URLs not crawled because the crawl was stopped ([`Frontier::stop`](crate::Frontier::stop),
    /// [`FrontierConfig::max_pages`]): what was queued or waiting for a retry then, and the
    /// links found after.
    pub not_crawled: u64,
    /// Retries scheduled ([`Job::retry_after`](crate::Job::retry_after), [`Visit::Retry`], an unreachable robots.txt, a distress answer).
    pub retried: u64,
    /// URLs given up: after [`FrontierConfig::max_retries`] retries, as many distress answers
    /// as [`FrontierConfig::distress_retries`] allows, or their robots.txt unreachable past
    /// [`FrontierConfig::hold_unreachable`].
    pub gave_up: u64,
    /// Of `gave_up`, URLs whose robots.txt stayed unreachable past
    /// [`FrontierConfig::hold_unreachable`].
    pub gave_up_unreachable: u64,
    /// Of `gave_up`, URLs answered with a distress status more often than
    /// [`FrontierConfig::distress_retries`] allows.
    pub gave_up_distress: u64,
    /// Links a job found that were refused past its overdraft
    /// ([`FrontierConfig::job_overdraft`]).
    pub over_budget: u64,
    /// URLs dropped as pushed before ([`Dedup`]).
    pub duplicates: u64,
    /// URLs refused by [`FrontierConfig::max_per_group`].
    pub over_group_cap: u64,
    /// Times the frontier asked the pacing when a group could go: once when a group gets
    /// its first URL and once when a job ends, while its group has URLs queued (more only while
    /// a request it did not hand out holds the group's place).
    pub gate_asks: u64,
}
