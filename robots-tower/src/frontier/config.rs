//! What a frontier is set up with: its byte budget, the cap per group, de-duplication, and who
//! hears of the URLs it drops.

use std::sync::Arc;

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
}

impl std::fmt::Debug for FrontierConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontierConfig")
            .field("max_bytes", &self.max_bytes)
            .field("max_per_group", &self.max_per_group)
            .field("dedup", &self.dedup)
            .field("on_disallowed", &self.on_disallowed.is_some())
            .finish()
    }
}

impl Default for FrontierConfig {
    /// 64 MiB of queued URLs (about 600,000 URLs of 60 bytes), no cap per group, no
    /// de-duplication, dropped URLs only logged.
    fn default() -> FrontierConfig {
        FrontierConfig {
            max_bytes: 64 << 20,
            max_per_group: usize::MAX,
            dedup: Dedup::Off,
            on_disallowed: None,
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

    /// Called with each URL the frontier drops because its robots.txt, cached, disallows it
    /// (at the push, or when its turn comes): it is never handed out. Called outside the
    /// frontier's lock, on the task that pushed or asked for the next URL; keep it short.
    pub fn on_disallowed(mut self, hear: impl Fn(Dropped) + Send + Sync + 'static) -> Self {
        self.on_disallowed = Some(Arc::new(hear));
        self
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
    /// Why: [`RobotsError::Disallowed`] (or `DisallowedFor`), as the layer would have refused it.
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
}

/// Why a frontier did not take a URL; the URL comes back with it (boxed: a `Result` of a push
/// stays small).
#[derive(Debug, thiserror::Error)]
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
    #[error("{url} takes {bytes} bytes, more than the frontier's whole budget of {max_bytes}")]
    TooLarge {
        /// The URL.
        url: Box<Url>,
        /// What it would take.
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
