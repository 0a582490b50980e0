//! Sitemaps expanded through the polite stack (spec section 13): found in robots.txt's
//! `Sitemap:` lines or given, each fetched once as any request of the crawler is (robots.txt
//! checked at every hop, paced in its group, identified and signed, backed off on distress, the
//! fleet's pacing in fleet mode), read by `robots-sitemap` as it streams, indexes followed to a
//! depth, and every page given with its sitemap, its `lastmod` and the crawler's verdict.

mod scope;

use std::collections::{HashSet, VecDeque};

use std::sync::Arc;

use robots_fetch::{BodyReader, CachedRobots, FetchClient, MAX_REDIRECTS, Origin};
use robots_sitemap::{AsyncSitemapReader, Item, LastMod};
use url::Url;

pub use scope::SitemapScope;

use crate::error::{DecidingRule, RobotsError};
use crate::front::hooks::{GetError, RobotsHooks, Ticket};

/// How far an expansion goes.
///
/// ```
/// use robots_tower::{SitemapOptions, SitemapScope};
/// let options = SitemapOptions::default().max_urls(10_000).scope(SitemapScope::Host);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SitemapOptions {
    /// Which URLs a sitemap may list ([`SitemapScope::Strict`] by default).
    pub scope: SitemapScope,
    /// Pages kept in all (1,000,000 by default); the expansion ends there.
    pub max_urls: usize,
    /// Sitemaps fetched in all (1,000 by default).
    pub max_sitemaps: usize,
    /// How deep indexes are followed (5: a sitemap listed by an index listed by robots.txt is
    /// depth 1).
    pub max_depth: usize,
    /// Each file's limits (sitemaps.org's by default).
    pub limits: robots_sitemap::Limits,
    /// In fleet mode, a sitemap one process of the fleet took is left by the others for this
    /// long (10 minutes by default): the fleet expands each sitemap once, and its pages are
    /// given by the process that read it. Alone, nothing is left.
    pub fleet_claim: std::time::Duration,
}

impl Default for SitemapOptions {
    fn default() -> SitemapOptions {
        SitemapOptions {
            scope: SitemapScope::Strict,
            max_urls: 1_000_000,
            max_sitemaps: 1_000,
            max_depth: 5,
            limits: robots_sitemap::Limits::default(),
            fleet_claim: std::time::Duration::from_secs(600),
        }
    }
}

impl SitemapOptions {
    /// Which URLs a sitemap may list.
    pub fn scope(mut self, scope: SitemapScope) -> Self {
        self.scope = scope;
        self
    }

    /// Pages kept in all.
    pub fn max_urls(mut self, urls: usize) -> Self {
        self.max_urls = urls;
        self
    }

    /// Sitemaps fetched in all.
    pub fn max_sitemaps(mut self, sitemaps: usize) -> Self {
        self.max_sitemaps = sitemaps;
        self
    }

    /// How deep indexes are followed.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Each file's limits.
    pub fn limits(mut self, limits: robots_sitemap::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How long a sitemap one process of a fleet took is left by the others.
    pub fn fleet_claim(mut self, claim: std::time::Duration) -> Self {
        self.fleet_claim = claim;
        self
    }
}

/// A page a sitemap lists, in scope.
#[derive(Debug)]
#[non_exhaustive]
pub struct ListedPage {
    /// The page.
    pub url: Url,
    /// Its `lastmod`, when it is a W3C datetime.
    pub lastmod: Option<LastMod>,
    /// The sitemap that listed it.
    pub sitemap: Url,
    /// The crawler's robots.txt verdict for it: the deciding rule, or why it may not be fetched.
    pub verdict: Result<Option<DecidingRule>, RobotsError>,
}

impl ListedPage {
    /// Whether the crawler may fetch it.
    pub fn allowed(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// Why a sitemap gave nothing, or stopped giving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SitemapFailure {
    /// Not fetched: robots.txt refuses it (disallowed, unreachable, an overlong Crawl-delay).
    #[error("not fetched: {0}")]
    Refused(RobotsError),
    /// The server answered with this status.
    #[error("the server answered {0}")]
    Status(u16),
    /// More than 5 redirects (a loop, or a chain too long).
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects,
    /// The request failed (connection, timeout, an encoding it cannot undo).
    #[error("the request failed: {0}")]
    Network(String),
    /// The body is not a sitemap, or broke off; the URLs before the break were kept.
    #[error("{0}")]
    Read(robots_sitemap::SitemapError),
}

/// A limit an expansion reached; the rest goes on, except past the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpansionLimit {
    /// One file's limit (URLs, or bytes): the rest of that file was not read.
    #[error("{0}")]
    File(robots_sitemap::Limit),
    /// An index deeper than [`SitemapOptions::max_depth`]: the sitemap it lists is not fetched.
    #[error("an index nested deeper than {0}: not followed")]
    Depth(usize),
    /// [`SitemapOptions::max_urls`] pages kept: the expansion ends.
    #[error("{0} pages kept: the expansion stops")]
    Urls(usize),
    /// [`SitemapOptions::max_sitemaps`] sitemaps fetched: the ones left are not.
    #[error("{0} sitemaps fetched: the rest are not")]
    Sitemaps(usize),
}

/// What an expansion gives, in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum SitemapEvent {
    /// A page in scope.
    Page(ListedPage),
    /// A sitemap that could not be fetched or read (to its end); what it gave before stands.
    Failed {
        /// The sitemap.
        sitemap: Url,
        /// Why.
        error: SitemapFailure,
    },
    /// A limit reached while reading `sitemap`.
    Limit {
        /// The sitemap being read (or, for the sitemaps budget, the first one left).
        sitemap: Url,
        /// Which.
        limit: ExpansionLimit,
    },
    /// A `Sitemap:` line of a robots.txt that is not an absolute http(s) URL: reported, not
    /// resolved.
    NotAbsolute {
        /// The robots.txt's origin.
        origin: Origin,
        /// The line's value.
        value: String,
    },
}

/// What an expansion did, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SitemapSummary {
    /// Sitemaps fetched (a successful response).
    pub sitemaps_fetched: usize,
    /// Sitemaps that failed (not fetched, an error status, broken off).
    pub sitemaps_failed: usize,
    /// Pages given.
    pub urls_kept: usize,
    /// URLs dropped as out of scope.
    pub out_of_scope: usize,
    /// Limits reached (each one reported).
    pub over_limit: usize,
    /// Pages given whose robots.txt disallows them.
    pub disallowed: usize,
    /// URLs a sitemap listed that are not URLs to keep (not absolute, too long…).
    pub skipped: usize,
    /// Sitemaps another process of the fleet took (fleet mode): read there, not here.
    pub claimed_elsewhere: usize,
}

/// A sitemap to fetch: its URL, how deep, the origin of the robots.txt that named it (or the
/// index above it), and the URL that handed it on (that robots.txt, or the index): the address
/// rule judges it by that. A sitemap the caller gave has none.
struct Pending {
    url: Url,
    depth: usize,
    named_by: Option<Url>,
    handed_by: Option<Url>,
}

/// A sitemap being read: its body as it streams, its request's place, held until the body
/// ends, and the robots.txt copies its pages are judged by.
struct Reading {
    reader: AsyncSitemapReader<BodyReader>,
    sitemap: Pending,
    /// The copies of the sitemap's origin and of the robots.txt that named it, as they were
    /// when the sitemap was fetched: its pages are judged by them, so a copy that expires while
    /// the body streams is not refreshed under the place the body holds (the refresh would
    /// wait for that place: a sitemap never waits on itself). The refresh comes with the next
    /// sitemap, after this one's body.
    copies: Vec<Arc<CachedRobots>>,
    _ticket: Ticket,
}

/// An expansion under way: call [`SitemapExpansion::next`] until it returns `None`, or take it
/// as a `Stream` ([`SitemapExpansion::into_stream`]). Made by [`RobotsHooks::sitemaps_of`] or
/// [`RobotsHooks::expand_sitemaps`].
pub struct SitemapExpansion<C> {
    hooks: RobotsHooks<C>,
    options: SitemapOptions,
    /// Origins whose robots.txt is still to be read for `Sitemap:` lines.
    discover: VecDeque<Origin>,
    queue: VecDeque<Pending>,
    /// Every sitemap queued once (by URL): each is fetched once.
    seen: HashSet<String>,
    reading: Option<Reading>,
    /// Fetches started, against the budget.
    attempts: usize,
    summary: SitemapSummary,
    done: bool,
    events: VecDeque<SitemapEvent>,
    /// The first sitemap left out for the budget, said once the others are read.
    left_out: Option<Url>,
}

impl<C> std::fmt::Debug for SitemapExpansion<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SitemapExpansion")
            .field("summary", &self.summary)
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl<C: FetchClient + Clone> RobotsHooks<C> {
    /// Expands the sitemaps the robots.txt of each origin names (absolute `Sitemap:` lines, in
    /// file order, once each), through these hooks: every sitemap fetch is checked against
    /// robots.txt, paced in its group, identified (and signed), and learnt from (a 429 or 503
    /// pauses the group), and is fetched with the hooks' client.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let site = wiremock::MockServer::start().await; // a local stand-in for a real site
    /// # let robots = format!("User-agent: *\nDisallow: /private\nSitemap: {}/sitemap.xml\n", site.uri());
    /// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string(robots)).mount(&site).await;
    /// # let xml = format!("<urlset><url><loc>{0}/a</loc></url><url><loc>{0}/private/b</loc></url></urlset>", site.uri());
    /// # wiremock::Mock::given(wiremock::matchers::path("/sitemap.xml"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string(xml)).mount(&site).await;
    /// use std::time::Duration;
    /// use robots_tower::{RobotsHooks, SitemapEvent, SitemapOptions};
    /// let hooks = RobotsHooks::builder("FooBot/1.0").min_delay(Duration::from_millis(10)).build()?;
    /// let origin = robots_fetch::Origin::parse(&site.uri())?;
    /// let mut expansion = hooks.sitemaps_of([origin], SitemapOptions::default());
    /// while let Some(event) = expansion.next().await {
    ///     if let SitemapEvent::Page(page) = event {
    ///         println!("{} (allowed: {})", page.url, page.allowed());
    ///     }
    /// }
    /// let summary = expansion.summary();
    /// assert_eq!((summary.urls_kept, summary.disallowed), (2, 1));
    /// # Ok(()) }
    /// ```
    pub fn sitemaps_of(
        &self,
        origins: impl IntoIterator<Item = Origin>,
        options: SitemapOptions,
    ) -> SitemapExpansion<C> {
        let mut expansion = SitemapExpansion::new(self.clone(), options);
        expansion.discover = origins.into_iter().collect();
        expansion
    }

    /// Expands these sitemaps (given, not found in robots.txt), as [`Self::sitemaps_of`] does.
    pub fn expand_sitemaps(
        &self,
        sitemaps: impl IntoIterator<Item = Url>,
        options: SitemapOptions,
    ) -> SitemapExpansion<C> {
        let mut expansion = SitemapExpansion::new(self.clone(), options);
        for url in sitemaps {
            expansion.enqueue(url, 0, None, None);
        }
        expansion
    }
}

impl<C> SitemapExpansion<C> {
    fn new(hooks: RobotsHooks<C>, options: SitemapOptions) -> SitemapExpansion<C> {
        SitemapExpansion {
            hooks,
            options,
            discover: VecDeque::new(),
            queue: VecDeque::new(),
            seen: HashSet::new(),
            reading: None,
            attempts: 0,
            summary: SitemapSummary::default(),
            done: false,
            events: VecDeque::new(),
            left_out: None,
        }
    }

    /// What it did so far.
    pub fn summary(&self) -> SitemapSummary {
        self.summary
    }

    /// Queues a sitemap, once.
    /// Queues a sitemap, once, while the budget has room for it: what is queued is never more
    /// than what may still be fetched, so an index listing 50,000 sitemaps a file cannot make the
    /// queue (or the set of those seen) outgrow the budget.
    fn enqueue(&mut self, url: Url, depth: usize, named_by: Option<Url>, handed_by: Option<Url>) {
        let mut key = url.clone();
        key.set_fragment(None);
        let key = String::from(key);
        if self.seen.contains(&key) {
            return;
        }
        if self.attempts + self.queue.len() >= self.options.max_sitemaps {
            self.left_out.get_or_insert(url);
            return;
        }
        self.seen.insert(key);
        self.queue.push_back(Pending {
            url,
            depth,
            named_by,
            handed_by,
        });
    }
}

impl<C> SitemapExpansion<C>
where
    C: FetchClient + Clone,
    <C::Body as http_body::Body>::Error: Send,
{
    /// The next event; `None` once every sitemap has been read (or the budget is spent).
    pub async fn next(&mut self) -> Option<SitemapEvent> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(event);
            }
            if self.done {
                return None;
            }
            if self.reading.is_some() {
                if let Some(event) = self.read_on().await {
                    return Some(event);
                }
                continue;
            }
            if let Some(origin) = self.discover.pop_front() {
                self.discover_in(origin).await;
                continue;
            }
            let Some(pending) = self.queue.pop_front() else {
                self.done = true;
                // The ones left out for the budget: one report for them all.
                let sitemap = self.left_out.take()?;
                self.summary.over_limit += 1;
                return Some(SitemapEvent::Limit {
                    sitemap,
                    limit: ExpansionLimit::Sitemaps(self.options.max_sitemaps),
                });
            };
            // In a fleet, each sitemap is read by one process.
            if !self
                .hooks
                .claim_sitemap(&pending.url, self.options.fleet_claim)
                .await
            {
                self.summary.claimed_elsewhere += 1;
                continue;
            }
            self.attempts += 1;
            match open(&self.hooks, &pending).await {
                Ok((reader, ticket, copies)) => {
                    self.summary.sitemaps_fetched += 1;
                    self.reading = Some(Reading {
                        reader: AsyncSitemapReader::with_limits(reader, self.options.limits),
                        sitemap: pending,
                        copies,
                        _ticket: ticket,
                    });
                }
                Err(error) => {
                    self.summary.sitemaps_failed += 1;
                    return Some(SitemapEvent::Failed {
                        sitemap: pending.url,
                        error,
                    });
                }
            }
        }
    }

    /// The expansion as a `Stream` of its events.
    pub fn into_stream(self) -> impl futures_util::Stream<Item = SitemapEvent>
    where
        C: 'static,
    {
        futures_util::stream::unfold(self, |mut expansion| async move {
            let event = expansion.next().await?;
            Some((event, expansion))
        })
    }

    /// Reads robots.txt's `Sitemap:` lines of `origin` into the queue.
    async fn discover_in(&mut self, origin: Origin) {
        let robots = format!("{}/robots.txt", origin.as_str());
        let Ok(robots) = Url::parse(&robots) else {
            return;
        };
        let entry = match self.hooks.entry(&origin).await {
            Ok(entry) => entry,
            Err(error) => {
                self.summary.sitemaps_failed += 1;
                self.events.push_back(SitemapEvent::Failed {
                    sitemap: robots,
                    error: SitemapFailure::Refused(error),
                });
                return;
            }
        };
        for line in entry.sitemaps() {
            match Url::parse(line) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                    self.enqueue(url, 0, Some(robots.clone()), Some(robots.clone()));
                }
                _ => self.events.push_back(SitemapEvent::NotAbsolute {
                    origin: origin.clone(),
                    value: line.to_string(),
                }),
            }
        }
    }

    /// Whether the sitemap being read may list `url`: `Ok(true)` when it may; `Ok(false)` when
    /// it is off the sitemap's scope (counted); a refusal when it is off its scope on an
    /// internal address a public sitemap may not lead to (the address rule, first of all rules,
    /// reported for each such URL; judged on its text, as it goes no further).
    fn in_scope(&mut self, url: &Url) -> Result<bool, RobotsError> {
        let Some(reading) = &self.reading else {
            return Ok(false);
        };
        let sitemap = &reading.sitemap;
        if scope::in_scope(
            self.options.scope,
            &sitemap.url,
            sitemap.named_by.as_ref(),
            url,
        ) {
            return Ok(true);
        }
        if let Some(refused) = self.hooks.address_refusal_by_text(url, &sitemap.url) {
            return Err(refused);
        }
        self.summary.out_of_scope += 1;
        Ok(false)
    }

    /// The next item of the sitemap being read, as an event (or nothing to say yet).
    async fn read_on(&mut self) -> Option<SitemapEvent> {
        let reading = self.reading.as_mut()?;
        let item = reading.reader.next().await;
        match item {
            None => {
                // Read to its end: the request ends with its body.
                self.reading = None;
                None
            }
            Some(Err(error)) => {
                self.summary.sitemaps_failed += 1;
                let sitemap = self.reading.take()?.sitemap.url;
                Some(SitemapEvent::Failed {
                    sitemap,
                    error: SitemapFailure::Read(error),
                })
            }
            Some(Ok(Item::Limit(limit))) => {
                self.summary.over_limit += 1;
                let sitemap = self.reading.take()?.sitemap.url;
                Some(SitemapEvent::Limit {
                    sitemap,
                    limit: ExpansionLimit::File(limit),
                })
            }
            Some(Ok(Item::Skipped(_))) => {
                self.summary.skipped += 1;
                None
            }
            Some(Ok(Item::Sitemap(listed))) => {
                match self.in_scope(&listed.url) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(refused) => {
                        self.summary.sitemaps_failed += 1;
                        return Some(SitemapEvent::Failed {
                            sitemap: listed.url,
                            error: SitemapFailure::Refused(refused),
                        });
                    }
                }
                let sitemap = &self.reading.as_ref()?.sitemap;
                let depth = sitemap.depth + 1;
                if depth > self.options.max_depth {
                    self.summary.over_limit += 1;
                    return Some(SitemapEvent::Limit {
                        sitemap: listed.url,
                        limit: ExpansionLimit::Depth(self.options.max_depth),
                    });
                }
                let named_by = sitemap.named_by.clone();
                let index = sitemap.url.clone();
                self.enqueue(listed.url, depth, named_by, Some(index));
                None
            }
            Some(Ok(Item::Page(page))) => {
                let refused = match self.in_scope(&page.url) {
                    Ok(true) => None,
                    Ok(false) => return None,
                    Err(refused) => Some(refused),
                };
                let sitemap = &self.reading.as_ref()?.sitemap;
                if self.summary.urls_kept >= self.options.max_urls {
                    self.summary.over_limit += 1;
                    self.done = true;
                    let sitemap = self.reading.take()?.sitemap.url;
                    return Some(SitemapEvent::Limit {
                        sitemap,
                        limit: ExpansionLimit::Urls(self.options.max_urls),
                    });
                }
                let sitemap = sitemap.url.clone();
                self.summary.urls_kept += 1;
                let copies = &self.reading.as_ref()?.copies;
                let verdict = match refused {
                    Some(refused) => Err(refused),
                    None => {
                        self.hooks
                            .check_handed_by_copy(&page.url, &sitemap, copies)
                            .await
                    }
                };
                if verdict.is_err() {
                    self.summary.disallowed += 1;
                }
                Some(SitemapEvent::Page(ListedPage {
                    url: page.url,
                    lastmod: page.lastmod,
                    sitemap,
                    verdict,
                }))
            }
            Some(Ok(_)) => None,
        }
    }
}

/// Fetches a sitemap as a page is fetched, through the gate (the address rule for a sitemap a
/// server named, robots.txt, the turn, identity, redirects hop by hop, 5 at most), its body
/// streamed. The robots.txt copies its pages are judged by are had first, before the sitemap
/// takes its group's place. (Apart from the expansion, whose reading body is not `Sync`: only
/// the hooks are shared.)
async fn open<C>(
    hooks: &RobotsHooks<C>,
    sitemap: &Pending,
) -> Result<(BodyReader, Ticket, Vec<Arc<CachedRobots>>), SitemapFailure>
where
    C: FetchClient,
    <C::Body as http_body::Body>::Error: Send,
{
    // The address rule before anything is fetched for it, its robots.txt included.
    if let Some(by) = &sitemap.handed_by {
        hooks
            .check_address(&sitemap.url, by)
            .await
            .map_err(SitemapFailure::Refused)?;
    }
    let mut copies = Vec::with_capacity(2);
    let origins = std::iter::once(&sitemap.url).chain(sitemap.named_by.as_ref());
    for url in origins {
        let origin = Origin::from_url(url).map_err(|e| SitemapFailure::Refused(e.into()))?;
        if copies
            .iter()
            .any(|c: &Arc<CachedRobots>| c.origin() == &origin)
        {
            continue;
        }
        copies.push(
            hooks
                .entry(&origin)
                .await
                .map_err(SitemapFailure::Refused)?,
        );
    }
    let (response, ticket) = hooks
        .get(&sitemap.url, sitemap.handed_by.as_ref(), MAX_REDIRECTS)
        .await
        .map_err(|error| match error {
            GetError::Refused(RobotsError::RedirectRefused {
                reason: robots_fetch::RedirectRefusal::TooManyHops { .. },
                ..
            }) => SitemapFailure::TooManyRedirects,
            GetError::Refused(refused) => SitemapFailure::Refused(refused),
            GetError::Network(message) => SitemapFailure::Network(message),
        })?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(SitemapFailure::Status(status));
    }
    let headers = response.headers().clone();
    let body = robots_fetch::body_reader(response.into_body(), &headers)
        .map_err(|e| SitemapFailure::Network(e.message))?;
    Ok((body, ticket, copies))
}
