//! [`RobotsHooks`]: the layer's checks and politeness without HTTP plumbing, for frameworks whose
//! hooks are not tower layers or reqwest middleware (a `Fetcher`, a `before_request`, a rate
//! limiter): ask for a URL's verdict, take the origin's turn, report the response.

use std::sync::Arc;
use std::time::Duration;

use robots_fetch::{CachedRobots, FetchClient, Origin, RobotsCache, path_of_url};
use url::Url;

use crate::engine::gate::{Admission, Gate};
use crate::engine::info::RobotsInfo;
use crate::engine::overrides::Overrides;
use crate::error::{DecidingRule, RobotsError};
use crate::front::config::{ForHooks, RobotsConfig};

/// The robots check and per-origin politeness as plain calls, for framework hooks that are
/// not HTTP layers. Shares its state with the layer or middleware it came from
/// ([`crate::RobotsLayer::hooks_with`], `RobotsMiddleware::hooks` (feature `reqwest`)), or stands alone
/// ([`RobotsHooks::builder`]). robots.txt is fetched with the client it holds.
///
/// A request goes: [`RobotsHooks::admit`] (verdict, then the origin's turn) → send it with
/// [`RobotsHooks::identify`]'d headers → [`Ticket::head`] when the response head arrives (a
/// 429/503 pauses the origin) → [`Ticket::finish`] once its body has been read: a request is
/// in flight until its last byte. In schedule mode ([`crate::WhenNotReady::Fail`]) `admit` never
/// waits: it answers [`RobotsError::NotReady`] with when to come back. robots.txt's own request
/// takes a turn too, so the first page of an origin is told to come back an interval after it.
///
/// The hooks cannot see the connections of the client that sends the pages: give it the hooks'
/// resolver (`hooks.cache().fetch_config().resolver`, for reqwest's `dns_resolver` or
/// hyper-util's connector), which applies the address rule to the address each new connection
/// uses; without it, a URL a server handed on is judged at [`RobotsHooks::admit_handed`] only.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let site = wiremock::MockServer::start().await; // a local stand-in for a real site
/// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
/// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n"))
/// #     .mount(&site).await;
/// use std::time::Duration;
/// use robots_tower::{WhenNotReady, RobotsError, RobotsHooks};
/// let hooks = RobotsHooks::builder("FooBot/1.0")
///     .min_delay(Duration::from_millis(200))
///     .when_not_ready(WhenNotReady::Fail)
///     .build()?;
/// let resolver = hooks.cache().fetch_config().resolver.clone();
/// let http = reqwest::Client::builder()
///     .dns_resolver(std::sync::Arc::new(resolver))
///     .build()?;
/// let url: url::Url = format!("{}/page", site.uri()).parse()?;
///
/// // A scheduler requeues a request that is not ready, for as long as it is told.
/// let mut ticket = loop {
///     match hooks.admit(&url).await {
///         Ok(ticket) => break ticket, // allowed, and the origin's turn is ours
///         Err(RobotsError::NotReady { ready_in, .. }) => {
///             tokio::time::sleep(ready_in.unwrap_or(Duration::from_millis(100))).await;
///         }
///         Err(refused) => return Err(refused.into()),
///     }
/// };
/// let mut request = http.get(url.clone()).build()?;
/// hooks.identify(&url, request.headers_mut());
/// let response = http.execute(request).await?;
/// let (status, headers) = (response.status().as_u16(), response.headers().clone());
/// let info = ticket.head(status, &headers).await;
/// let page = response.text().await?;
/// ticket.finish(status, &headers).await; // the last byte is in: the request ends
/// println!("{status} ({}), {} bytes", info.source().describe(), page.len());
///
/// // The next request to the origin must wait 200 ms: requeue it.
/// match hooks.admit(&url).await {
///     Err(RobotsError::NotReady { ready_in, reason, .. }) => println!("requeue in {ready_in:?}: {reason}"),
///     other => println!("{other:?}"),
/// }
/// let private: url::Url = format!("{}/private/x", site.uri()).parse()?;
/// assert!(matches!(hooks.check(&private).await, Err(RobotsError::Disallowed { .. })));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RobotsHooks<C> {
    gate: Arc<Gate>,
    client: C,
}

impl<C> std::fmt::Debug for RobotsHooks<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsHooks")
            .field("agent", &self.gate.agent())
            .finish_non_exhaustive()
    }
}

/// A request's turn at its origin, from [`RobotsHooks::admit`] or [`RobotsHooks::acquire`]:
/// the request counts as in flight until [`Ticket::finish`], or until the ticket is dropped
/// (which ends it without a status, or, after [`Ticket::head`], with the head's): what the server
/// sees as one request lasts until its response's last byte, so end it then.
pub struct Ticket {
    admission: Admission,
    gate: Arc<Gate>,
    /// What [`Ticket::head`] learnt, once the response head came.
    answered: Option<RobotsInfo>,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket")
            .field("origin", self.admission.entry.origin())
            .field("rule", &self.admission.rule)
            .field("waited", &self.admission.waited)
            .field("answered", &self.answered.is_some())
            .finish_non_exhaustive()
    }
}

impl Ticket {
    /// The origin whose turn this is.
    pub fn origin(&self) -> &Origin {
        self.admission.entry.origin()
    }

    /// The rule that allowed the URL (`None` when no rule matched, or for a bare
    /// [`RobotsHooks::acquire`]).
    pub fn rule(&self) -> Option<&DecidingRule> {
        self.admission.rule.as_ref()
    }

    /// How long the turn was waited for.
    pub fn waited(&self) -> Duration {
        self.admission.waited
    }

    /// The interval applied to the origin.
    pub fn interval(&self) -> Duration {
        self.admission.interval
    }

    /// Learns from the response head as it arrives (429/503 pause the origin's group now,
    /// `Retry-After` honoured; a success ends a pause) and keeps the turn: the request stays in
    /// flight until [`Ticket::finish`] or the ticket is dropped, once its body has been read,
    /// and the adaptive delay is measured to then. Returns what a layer would attach to the
    /// response. A second call returns the first answer's info.
    pub async fn head(&mut self, status: u16, headers: &http::HeaderMap) -> RobotsInfo {
        if let Some(info) = &self.answered {
            return info.clone();
        }
        let info = self
            .gate
            .observe_head_in_place(&mut self.admission, status, headers)
            .await;
        self.answered = Some(info.clone());
        info
    }

    /// Ends the request with its response, once its body has been read (or given up): 429/503
    /// pause the origin (`Retry-After` honoured), a success ends a pause, and the turn is given
    /// back. Returns what a layer would attach to the response. After [`Ticket::head`], the
    /// head was learnt from already: this only ends the request.
    pub async fn finish(self, status: u16, headers: &http::HeaderMap) -> RobotsInfo {
        match self.answered {
            // Dropping the admission's place ends the request now.
            Some(info) => info,
            None => self.gate.observe(self.admission, status, headers).await,
        }
    }
}

/// Why [`RobotsHooks::get`] gave no response.
#[derive(Debug)]
pub(crate) enum GetError {
    /// The gate refused it (the address rule, robots.txt, the turn, a redirect).
    Refused(RobotsError),
    /// The request failed.
    Network(String),
}

impl RobotsHooks<()> {
    /// A builder for a crawler with this User-Agent; finish with `build()` (reqwest, feature
    /// `reqwest`) or [`RobotsConfig::build_hooks_with`].
    pub fn builder(user_agent: &str) -> RobotsConfig<ForHooks> {
        RobotsConfig::new(user_agent)
    }
}

impl<C> RobotsHooks<C> {
    pub(crate) fn from_gate(gate: Arc<Gate>, client: C) -> RobotsHooks<C> {
        RobotsHooks { gate, client }
    }

    /// The robots.txt cache.
    pub fn cache(&self) -> &RobotsCache {
        self.gate.cache()
    }

    /// Puts the crawler's `User-Agent` (and `From`) on the headers of a request to `url`, per
    /// the configured [`crate::IdentityHeaders`], and its Web Bot Auth signature when a signing
    /// key is configured (`RobotsConfig::signer`, feature `web-bot-auth`). Call it for each
    /// request as it is sent, each redirect hop and retry too: a signature is for one authority,
    /// and expires.
    pub fn identify(&self, url: &Url, headers: &mut http::HeaderMap) {
        self.gate.identify_url(url, headers);
    }

    /// The verdict for a URL from the cache alone: `None` when the origin's robots.txt is not
    /// cached (or due for a refresh); then [`RobotsHooks::check`] fetches it.
    pub fn verdict(&self, url: &Url) -> Option<Result<Option<DecidingRule>, RobotsError>> {
        let verdict = self.gate.cached_verdict(url)?;
        if verdict.is_ok() {
            crate::telemetry::decided("allowed");
        }
        Some(verdict)
    }

    /// Learns from a response seen without a ticket (a hook after the fact): a distress status
    /// or exhausted rate-limit headers pause the origin's group, any other response ends the
    /// back-off streak. In fleet mode every process learns it (sent to Redis in the background).
    /// (A [`Ticket::finish`] does this too.)
    pub fn observe(&self, origin: &Origin, status: u16, headers: &http::HeaderMap) {
        self.gate.observe_unadmitted(origin, status, headers);
    }
}

impl<C> RobotsHooks<C>
where
    C: FetchClient + Clone + 'static,
    <C::Body as http_body::Body>::Error: Send,
{
    /// A [`crate::Frontier`] paced with these hooks: a crawl's URLs wait in it, a queue per
    /// politeness group, and come out when their group can take a request. A site's robots.txt
    /// is fetched (with the hooks' client) before its first URL is handed out, so a URL it
    /// disallows is dropped at its turn and never handed to a worker.
    pub fn frontier(&self) -> crate::frontier::Frontier {
        self.frontier_with(crate::frontier::FrontierConfig::default())
    }

    /// [`Self::frontier`] set up with `config` (byte budget, cap per group, de-duplication).
    pub fn frontier_with(
        &self,
        config: crate::frontier::FrontierConfig,
    ) -> crate::frontier::Frontier {
        crate::frontier::Frontier::new(self.gate.clone(), config)
            .fetching_robots_with(self.client.clone())
    }
}

impl<C: FetchClient> RobotsHooks<C> {
    /// The robots.txt verdict for a URL, fetching robots.txt when needed: the deciding rule
    /// when allowed, else why not ([`RobotsError::Disallowed`], `RobotsUnreachable`…). Takes no
    /// turn at the origin.
    pub async fn check(&self, url: &Url) -> Result<Option<DecidingRule>, RobotsError> {
        self.check_with(url, &Overrides::default()).await
    }

    /// [`RobotsHooks::check`] for a URL a server handed on (found on the page `by`, named by the
    /// robots.txt or sitemap `by`, pointed to by a redirect from `by`): the address rule
    /// ([`crate::RobotsConfig::handed_url_rule`]) judges it first, so a public page cannot
    /// point the crawler into your network ([`RobotsError::AddressRefused`]).
    pub async fn check_handed(
        &self,
        url: &Url,
        by: &Url,
    ) -> Result<Option<DecidingRule>, RobotsError> {
        self.check_with(url, &Overrides::default().handed_by(by))
            .await
    }

    async fn check_with(
        &self,
        url: &Url,
        overrides: &Overrides,
    ) -> Result<Option<DecidingRule>, RobotsError> {
        let origin = Origin::from_url(url)?;
        let text = || url.to_string();
        let (_, rule) = self
            .gate
            .decide(&self.client, &origin, path_of_url(url), &text, overrides)
            .await?;
        Ok(rule)
    }

    /// The origin's robots.txt copy, fetched when needed through the gate: each request (the
    /// first, a refresh, every redirect hop) takes its place in its group's budget and is
    /// identified like a page, and redirects are followed by the fetcher's rule. Whatever it
    /// says (allowed, disallowed, unreachable); [`RobotsError::NotReady`] only in schedule mode,
    /// while another request fetches it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let site = wiremock::MockServer::start().await;
    /// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /a\n"))
    /// #     .mount(&site).await;
    /// let hooks = robots_tower::RobotsHooks::builder("FooBot/1.0").build()?;
    /// let origin = robots_fetch::Origin::from_url(&site.uri().parse()?)?;
    /// let robots = hooks.robots(&origin).await?;
    /// assert!(!robots.verdict_at(b"/a", tokio::time::Instant::now()).allowed);
    /// # Ok(()) }
    /// ```
    pub async fn robots(&self, origin: &Origin) -> Result<Arc<CachedRobots>, RobotsError> {
        self.gate.entry(&self.client, origin).await
    }

    /// The address rule alone for a URL `by` handed on.
    pub(crate) async fn check_address(&self, url: &Url, by: &Url) -> Result<(), RobotsError> {
        self.gate
            .check_handed(&|| url.to_string(), &Overrides::default().handed_by(by))
            .await
    }

    /// The address rule on the text of a URL `by` handed on that goes no further (see
    /// `Gate::refuses_by_text`).
    pub(crate) fn address_refusal_by_text(&self, url: &Url, by: &Url) -> Option<RobotsError> {
        self.gate.refuses_by_text(by, url)
    }

    /// [`RobotsHooks::check_handed`], judged by one of `copies` (robots.txt copies had
    /// earlier) when the URL's origin is theirs, whatever their age: a sitemap's pages are
    /// judged so while its body holds the group's place, which a refresh would wait for.
    pub(crate) async fn check_handed_by_copy(
        &self,
        url: &Url,
        by: &Url,
        copies: &[Arc<robots_fetch::CachedRobots>],
    ) -> Result<Option<DecidingRule>, RobotsError> {
        let origin = Origin::from_url(url)?;
        let Some(entry) = copies.iter().find(|c| c.origin() == &origin) else {
            return self.check_handed(url, by).await;
        };
        let overrides = Overrides::default().handed_by(by);
        let text = || url.to_string();
        self.gate.connects_as_judged(&origin)?;
        self.gate.check_handed(&text, &overrides).await?;
        let rule = self.gate.judge(
            entry,
            path_of_url(url),
            &text,
            &overrides,
            tokio::time::Instant::now(),
        )?;
        crate::telemetry::decided("allowed");
        Ok(rule)
    }

    /// Claims a sitemap for this process (see `Gate::claim`), in its origin's host's name.
    pub(crate) async fn claim_sitemap(&self, sitemap: &Url, ttl: Duration) -> bool {
        let group = sitemap.host_str().unwrap_or_default();
        self.gate
            .claim(group, &format!("sitemap:{sitemap}"), ttl)
            .await
    }

    /// The origin's robots.txt entry, fetched when needed.
    pub(crate) async fn entry(
        &self,
        origin: &Origin,
    ) -> Result<std::sync::Arc<robots_fetch::CachedRobots>, RobotsError> {
        self.gate.entry(&self.client, origin).await
    }

    /// What the layer does before sending: the verdict, then the origin's turn (waited for, or
    /// in schedule mode refused with [`RobotsError::NotReady`]).
    pub async fn admit(&self, url: &Url) -> Result<Ticket, RobotsError> {
        self.admit_with(url, &Overrides::default()).await
    }

    /// [`RobotsHooks::admit`] for a URL a server handed on (a link found on the page `by`, a
    /// sitemap or page named by `by`, a redirect's target from `by`): the address rule
    /// ([`crate::RobotsConfig::handed_url_rule`]) judges it before anything else, so nothing a
    /// public server sends leads the crawler into your network
    /// ([`RobotsError::AddressRefused`]).
    pub async fn admit_handed(&self, url: &Url, by: &Url) -> Result<Ticket, RobotsError> {
        self.admit_with(url, &Overrides::default().handed_by(by))
            .await
    }

    async fn admit_with(&self, url: &Url, overrides: &Overrides) -> Result<Ticket, RobotsError> {
        let origin = Origin::from_url(url)?;
        let admission = self
            .gate
            .admit(
                &self.client,
                &origin,
                path_of_url(url),
                || url.to_string(),
                overrides,
            )
            .await?;
        Ok(self.ticket(admission))
    }

    /// GETs `url` as a page is fetched (the sitemap expansion's requests): admitted by the
    /// gate (the address rule when `handed_by` names who handed it on, robots.txt, the
    /// group's turn), identified and signed, its head learnt from, and its redirects followed
    /// hop by hop as the gate decides, at most `limit` hops, each admitted as a URL the hop
    /// before handed on. The response comes with its ticket, which holds the group's place
    /// until it is dropped: read the body, then drop both.
    pub(crate) async fn get(
        &self,
        url: &Url,
        handed_by: Option<&Url>,
        limit: usize,
    ) -> Result<(http::Response<C::Body>, Ticket), GetError> {
        let mut overrides = match handed_by {
            Some(by) => Overrides::default().handed_by(by),
            None => Overrides::default(),
        };
        let mut chain = self.gate.redirect_chain(url.clone(), limit);
        loop {
            let url = chain.url().clone();
            let mut ticket = self
                .admit_with(&url, &overrides)
                .await
                .map_err(GetError::Refused)?;
            let mut request = http::Request::get(url.as_str())
                .body(())
                .map_err(|e| GetError::Network(e.to_string()))?;
            self.identify(&url, request.headers_mut());
            let response = match self.client.send(request).await {
                Ok(response) => response,
                Err(error) => {
                    // A connect error, reset or timeout backs the group off, as for a page.
                    let refused = crate::engine::gate::refused_at_connection(&url, error.as_ref());
                    self.gate
                        .observe_failure(ticket.admission, error.as_ref())
                        .await;
                    if let Some(refused) = refused {
                        return Err(GetError::Refused(refused));
                    }
                    return Err(GetError::Network(error.to_string()));
                }
            };
            let status = response.status().as_u16();
            // A 429 or 503 pauses the group now, as for a page.
            ticket.head(status, response.headers()).await;
            let next = self
                .gate
                .next_hop(&mut chain, status, response.headers())
                .await
                .map_err(GetError::Refused)?;
            match next {
                Some(_) => overrides = Overrides::default().handed_by(&url),
                None => return Ok((response, ticket)),
            }
        }
    }

    /// The origin's turn alone (its robots.txt is fetched when needed, for its Crawl-delay and
    /// to refuse an origin whose robots.txt is unreachable); for frameworks that decided the
    /// URL already with [`RobotsHooks::check`].
    pub async fn acquire(&self, origin: &Origin) -> Result<Ticket, RobotsError> {
        let text = || origin.to_string();
        self.gate.connects_as_judged(origin)?;
        let entry = self.gate.entry(&self.client, origin).await?;
        if entry.is_blocked_by_outage(tokio::time::Instant::now()) {
            // Decided like any URL of the origin: refused with when to retry.
            self.gate.judge(
                &entry,
                "/",
                &text,
                &Overrides::default(),
                tokio::time::Instant::now(),
            )?;
        }
        // (The URL's decision was counted by `check`: a Crawl-delay refused here is not a second.)
        let interval = self.gate.interval_for(&entry)?;
        let admission = self.gate.pace(entry, None, interval, None).await?;
        Ok(self.ticket(admission))
    }

    /// How long until the origin could take a request: zero when now, `None` when every place
    /// is taken by requests in flight (ready when one ends). Takes nothing. The interval comes
    /// from the cached robots.txt (the minimum delay when none is cached).
    pub async fn next_ready(&self, origin: &Origin) -> Result<Option<Duration>, RobotsError> {
        self.gate.next_ready(origin).await
    }

    fn ticket(&self, admission: Admission) -> Ticket {
        Ticket {
            admission,
            gate: self.gate.clone(),
            answered: None,
        }
    }
}
