//! [`RobotsInfo`]: what the layer knew when it let a request through, attached to every
//! response, and the response's own `X-Robots-Tag` directives. Read by callers and by the
//! synthetic-response mirror (`status`); built by the gate.

use std::sync::Arc;
use std::time::Duration;

use robots_core::{AiPreferences, PageDirectives, Preference, UsagePreferences};
use robots_fetch::{CachedRobots, Origin, Source};

use crate::engine::packed::PackedUsage;
use crate::error::DecidingRule;
use crate::pacing::observed::GroupPause;

/// What the layer knew when it let a request through, attached to the response's extensions.
/// Its `Debug` shows times relative to now (`fetched 3 s ago`), not raw instants.
///
/// Read through its methods. It is built for every response, so it is small: what the cached
/// robots.txt already holds (origin, source, sitemaps) is read from it, and `X-Robots-Tag`
/// directives take room only on a response that has them.
#[derive(Clone)]
pub struct RobotsInfo {
    pub(crate) robots: Arc<CachedRobots>,
    pub(crate) rule: Option<DecidingRule>,
    pub(crate) waited: Duration,
    pub(crate) interval: Duration,
    pub(crate) usage: PackedUsage,
    pub(crate) content_usage: Option<AiPreferences>,
    /// `None` when the response has no `X-Robots-Tag` (most responses): nothing built.
    pub(crate) tags: Option<Box<PageTags>>,
    /// What only some responses have (boxed: the info stays small).
    pub(crate) rare: Option<Box<Rare>>,
}

/// The parts of a [`RobotsInfo`] that few responses have.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rare {
    /// The Crawl-delay asked, when it was clamped to the maximum (by choice).
    pub(crate) interval_clamped_from: Option<Duration>,
    /// The pause this response put its group under.
    pub(crate) pause: Option<GroupPause>,
}

impl RobotsInfo {
    /// Sets the rare parts, boxing them only when there is something to hold.
    #[inline]
    pub(crate) fn set_rare(&mut self, clamped_from: Option<Duration>, pause: Option<GroupPause>) {
        if clamped_from.is_some() || pause.is_some() {
            self.box_rare(clamped_from, pause);
        }
    }

    #[cold]
    fn box_rare(&mut self, clamped_from: Option<Duration>, pause: Option<GroupPause>) {
        self.rare = Some(Box::new(Rare {
            interval_clamped_from: clamped_from,
            pause,
        }));
    }
}

/// A response's `X-Robots-Tag` headers, parsed, and the directives for this crawler.
#[derive(Clone, Default)]
pub(crate) struct PageTags {
    page: PageDirectives,
    directives: robots_core::Directives,
}

/// What a response without `X-Robots-Tag` answers.
static NO_TAGS: std::sync::LazyLock<PageTags> = std::sync::LazyLock::new(PageTags::default);

impl RobotsInfo {
    /// The origin the rules belong to.
    pub fn origin(&self) -> &Origin {
        self.robots.origin()
    }

    /// The rule that allowed the URL, or `None` when no rule matched (or the check was
    /// skipped).
    pub fn rule(&self) -> Option<&DecidingRule> {
        self.rule.as_ref()
    }

    /// Where the rules came from and how fresh they are.
    pub fn source(&self) -> &Source {
        self.robots.source()
    }

    /// The pause this response put its politeness group under, and why: a distress status
    /// (`Retry-After` or the back-off) or rate-limit headers that said nothing is left. Every
    /// request to the group waits for it (in a fleet, every process's).
    pub fn pause(&self) -> Option<GroupPause> {
        self.rare.as_ref().and_then(|rare| rare.pause)
    }

    /// How long the request waited for politeness once it was its turn in this process: the
    /// interval (Crawl-delay), a pause, the fleet's other requests. Time queued behind this
    /// process's own earlier requests to the group is not counted.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// The interval between request starts applied to the origin.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The interval robots.txt asked for (Crawl-delay, Request-rate) when it was more than the
    /// configured maximum and so clamped.
    pub fn interval_clamped_from(&self) -> Option<Duration> {
        self.rare
            .as_ref()
            .and_then(|rare| rare.interval_clamped_from)
    }

    /// `X-Robots-Tag` headers of the response, parsed (empty without the header).
    pub fn page(&self) -> &PageDirectives {
        &self.tags.as_deref().unwrap_or(&NO_TAGS).page
    }

    /// The page directives that apply to this crawler (for all crawlers plus those scoped to
    /// it).
    pub fn directives(&self) -> &robots_core::Directives {
        &self.tags.as_deref().unwrap_or(&NO_TAGS).directives
    }

    /// The AI usage preferences robots.txt states for this URL (`Content-Usage`,
    /// `Content-Signal`), each with its line; nothing stated when the file has none.
    pub fn usage(&self) -> UsagePreferences {
        self.usage.unpack()
    }

    /// The response's `Content-Usage` header (the same dictionary, for this response), parsed:
    /// `None` without the header, every preference unknown when it is not a dictionary.
    pub fn content_usage(&self) -> Option<AiPreferences> {
        self.content_usage
    }

    /// The cached robots.txt the decision came from: sitemaps
    /// ([`CachedRobots::sitemaps`]), the crawler's records, the compiled rules.
    pub fn robots(&self) -> &Arc<CachedRobots> {
        &self.robots
    }

    /// May this response's content train AI models? robots.txt's preferences for the URL
    /// (`Content-Usage` `train-ai`, `Content-Signal` `ai-train`) and the response's
    /// `Content-Usage` header combined: any no gives no, else any yes gives yes.
    ///
    /// ```no_run
    /// # #[cfg(feature = "reqwest")]
    /// # async fn crawl() -> Result<(), Box<dyn std::error::Error>> {
    /// use robots_core::Preference;
    /// use robots_tower::{RobotsInfo, RobotsMiddleware};
    ///
    /// let client = RobotsMiddleware::builder("ExampleBot/1.0 (+https://example.com/bot)").build_client()?;
    /// let response = client.get("https://example.com/article").send().await?;
    /// let may_train = response
    ///     .extensions()
    ///     .get::<RobotsInfo>()
    ///     .map_or(Preference::Unknown, |info| info.may_train_ai());
    /// if may_train == Preference::No {
    ///     // keep the page out of the training set
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn may_train_ai(&self) -> Preference {
        let header = self.content_usage.unwrap_or_default().train_ai;
        self.usage().may_train_ai().combine(header)
    }

    /// May this response's content be used for search? As [`RobotsInfo::may_train_ai`], for
    /// `search`.
    pub fn may_search(&self) -> Preference {
        let header = self.content_usage.unwrap_or_default().search;
        self.usage().may_search().combine(header)
    }

    /// The sitemap URLs the origin's robots.txt lists, in file order.
    pub fn sitemaps(&self) -> impl Iterator<Item = &str> + '_ {
        self.robots.sitemaps()
    }
}

impl std::fmt::Debug for RobotsInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use robots_fetch::HumanDuration;
        f.debug_struct("RobotsInfo")
            .field("origin", self.origin())
            .field("rule", &self.rule)
            .field("source", &format_args!("{}", self.source().describe()))
            .field("waited", &format_args!("{}", HumanDuration(self.waited)))
            .field(
                "interval",
                &format_args!("{}", HumanDuration(self.interval)),
            )
            .field(
                "interval_clamped_from",
                &self.interval_clamped_from().map(HumanDuration),
            )
            .field("page", self.page())
            .field("directives", self.directives())
            .field("usage", &self.usage())
            .field("content_usage", &self.content_usage)
            .field("pause", &self.pause())
            .finish()
    }
}

/// The `X-Robots-Tag` directives of a response, and those for the crawler `agent`; `None`
/// (nothing parsed, nothing kept) for a response without the header, which most are.
#[inline(always)]
pub(crate) fn page_tags(headers: &http::HeaderMap, agent: &str) -> Option<Box<PageTags>> {
    let tags = headers.get_all(&X_ROBOTS_TAG);
    tags.iter().next().map(|_| {
        let page = PageDirectives::from_headers(tags.iter().filter_map(|v| v.to_str().ok()));
        let directives = if page.is_empty() {
            robots_core::Directives::default()
        } else {
            page.for_agent(agent)
        };
        Box::new(PageTags { page, directives })
    })
}

/// Read on every response: its name built once, not parsed per lookup.
static X_ROBOTS_TAG: http::HeaderName = http::HeaderName::from_static("x-robots-tag");

#[cfg(test)]
mod tests {
    use super::RobotsInfo;

    /// Every response gets one, moved several times on its way into the extensions: what the
    /// cached robots.txt holds is read from it, not copied in, and at 128 bytes or less the
    /// compiler copies it inline instead of calling `memcpy` (a third of the layer's time when
    /// it was 456 bytes).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn robots_info_stays_small() {
        let size = std::mem::size_of::<RobotsInfo>();
        assert!(size <= 128, "RobotsInfo grew to {size} bytes");
    }
}
