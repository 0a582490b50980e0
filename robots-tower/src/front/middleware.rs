//! `RobotsMiddleware` for reqwest-middleware: the same checks and politeness as the layer, and
//! redirects followed here so that every hop is checked (turn the client's own following off, or
//! let [`RobotsConfig::build_client`] build the client). A client that follows redirects itself
//! is detected: the final URL is checked, refused when disallowed, and reported.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http::{Extensions, Method, StatusCode, header};
use reqwest_middleware::{Error, Middleware, Next};
use robots_fetch::{Origin, path_of_url};

use crate::engine::gate::Gate;
use crate::error::RobotsError;
use crate::front::config::{ForMiddleware, RobotsConfig};

/// The longest page timeout applied (a year): a longer one is this.
const MAX_PAGE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// How long a built client keeps an idle connection: twice the interval and a second, at
/// least 3 s (a group's next request comes an interval after its last one ended).
fn idle_timeout(min_delay: std::time::Duration) -> std::time::Duration {
    min_delay
        .min(MAX_PAGE_TIMEOUT)
        .saturating_mul(2)
        .saturating_add(std::time::Duration::from_secs(1))
        .max(std::time::Duration::from_secs(3))
}

/// A reqwest-middleware `Middleware` enforcing robots.txt and per-origin politeness, and setting
/// the crawler's `User-Agent` (and `From`, when configured) on every request that has none.
/// Errors come back as `reqwest_middleware::Error::Middleware`; `downcast_ref::<RobotsError>()`
/// finds the reason.
///
/// The easy way is [`RobotsConfig::build_client`], which returns a ready client. To add the
/// middleware to a client of your own, turn the client's redirect following off, so that every
/// hop comes back here to be checked and paced, and give it the middleware's resolver, so that
/// the address rule is applied to the address each new connection uses (without it, a name
/// that resolves or rebinds to an internal address is judged at admission only):
///
/// ```
/// use robots_tower::RobotsMiddleware;
/// let config = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)");
/// let resolver = std::sync::Arc::new(config.resolver_in_use());
/// let robots = config.build()?;
/// let inner = reqwest::Client::builder()
///     .redirect(reqwest::redirect::Policy::none())
///     .dns_resolver(resolver)
///     .build()?;
/// let client = reqwest_middleware::ClientBuilder::new(inner).with(robots).build();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A client that follows redirects itself is caught after the fact: when the response comes
/// from another URL, that URL is checked, refused with [`RobotsError::Disallowed`] when
/// disallowed (it was fetched, so a warning says so), and a warning says once per middleware
/// that the client's redirect policy should be `none`.
#[derive(Clone)]
pub struct RobotsMiddleware {
    gate: Arc<Gate>,
    client: reqwest::Client,
    redirects: robots_fetch::RedirectPolicy,
    refusals: crate::front::status::Refusals,
    /// Sends again after a transient failure, this many times at most.
    retries: u32,
    /// The total time of a page request by the clients this builds.
    page_timeout: Option<std::time::Duration>,
    /// Whether the "client follows redirects itself" warning was given.
    warned_redirects: Arc<AtomicBool>,
    /// Said once: a reqwest-retry middleware runs inside this one.
    #[cfg(feature = "reqwest-retry")]
    warned_inner_retry: Arc<AtomicBool>,
}

impl RobotsMiddleware {
    /// The middleware over a gate, fetching robots.txt with `client`.
    pub(crate) fn new(
        gate: Arc<Gate>,
        client: reqwest::Client,
        redirects: robots_fetch::RedirectPolicy,
        refusals: crate::front::status::Refusals,
        (retries, page_timeout): (u32, Option<std::time::Duration>),
    ) -> RobotsMiddleware {
        RobotsMiddleware {
            gate,
            client,
            redirects,
            refusals,
            retries,
            page_timeout,
            warned_redirects: Arc::new(AtomicBool::new(false)),
            #[cfg(feature = "reqwest-retry")]
            warned_inner_retry: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl std::fmt::Debug for RobotsMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsMiddleware")
            .field("agent", &self.gate.agent())
            .finish_non_exhaustive()
    }
}

impl RobotsMiddleware {
    /// A builder for a crawler with this User-Agent; finish with [`RobotsConfig::build`] (the
    /// middleware) or [`RobotsConfig::build_client`] (a ready client with it).
    pub fn builder(user_agent: &str) -> RobotsConfig<ForMiddleware> {
        RobotsConfig::new(user_agent)
    }

    /// The robots.txt cache.
    pub fn cache(&self) -> &robots_fetch::RobotsCache {
        self.gate.cache()
    }

    /// [`crate::RobotsHooks`] sharing this middleware's cache, politeness and robots.txt
    /// client, for framework hooks outside the HTTP client.
    pub fn hooks(&self) -> crate::front::hooks::RobotsHooks<reqwest::Client> {
        crate::front::hooks::RobotsHooks::from_gate(self.gate.clone(), self.client.clone())
    }

    /// A [`crate::Frontier`] paced with this middleware: a crawl's URLs wait in it, a queue per
    /// politeness group, and come out when their group can take a request.
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

    /// A client with this middleware, made as [`RobotsConfig::build_client`] makes one (its own
    /// redirect following off, the crawler's `User-Agent`, the resolver requests are grouped
    /// by, the page timeout): for when the middleware itself is wanted too, for a [`Self::frontier`] or
    /// [`Self::hooks`]. Every client made from one middleware shares its cache and pacing.
    ///
    /// ```
    /// use robots_tower::RobotsMiddleware;
    /// let robots = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)").build()?;
    /// let client = robots.client()?;
    /// let frontier = robots.frontier();
    /// # let _ = (client, frontier);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn client(&self) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
        self.client_with(|outside| outside)
    }

    /// The total time a page request of the clients this builds may take
    /// ([`RobotsConfig::page_timeout`]; `None`: no limit).
    ///
    /// ```
    /// use robots_tower::{DEFAULT_PAGE_TIMEOUT, RobotsMiddleware};
    /// let robots = RobotsMiddleware::builder("FooBot/1.0").build()?;
    /// assert_eq!(robots.page_timeout(), Some(DEFAULT_PAGE_TIMEOUT));
    /// # Ok::<(), reqwest::Error>(())
    /// ```
    pub fn page_timeout(&self) -> Option<std::time::Duration> {
        self.page_timeout
    }

    /// [`Self::client`], with middleware of your own placed **outside** this one (see
    /// [`RobotsConfig::build_client_with`]).
    pub fn client_with(
        &self,
        outside: impl FnOnce(reqwest_middleware::ClientBuilder) -> reqwest_middleware::ClientBuilder,
    ) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
        // The resolver the gate groups and judges hops by: the address paced is the one
        // connected to.
        let mut inner = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(self.gate.user_agent().clone())
            .dns_resolver(Arc::new(self.gate.resolver().clone()))
            // Idle connections bounded (spec section 14): per host, as many as its group's
            // requests in flight; each closed once idle past its group's usual turn, so that
            // a broad crawl holds none for the sites it is done with.
            .pool_max_idle_per_host(self.gate.concurrency())
            .pool_idle_timeout(idle_timeout(self.gate.min_delay()));
        if let Some(timeout) = self.page_timeout {
            // Clamped: a deadline past the clock's range would be no deadline at all.
            inner = inner.timeout(timeout.min(MAX_PAGE_TIMEOUT));
        }
        let inner = inner.build()?;
        Ok(outside(reqwest_middleware::ClientBuilder::new(inner))
            .with(self.clone())
            .build())
    }

    /// Waits, at most `within`, for the work a fleet sends to Redis in the background (the
    /// release of a lease whose response body ended or was dropped): call it before a process
    /// exits, so that its last leases are released rather than left to expire (the other
    /// processes would wait for that). Whether all of it was done; `true` at once outside
    /// fleet mode.
    pub async fn settle(&self, within: std::time::Duration) -> bool {
        self.gate.settle(within).await
    }
}

#[async_trait::async_trait]
impl Middleware for RobotsMiddleware {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        if self.refusals == crate::front::status::Refusals::Errors {
            return self.send(request, extensions, next).await;
        }
        // Only a synthetic response needs the URL kept.
        let url = request.url().clone();
        match self.send(request, extensions, next).await {
            Err(Error::Middleware(error)) => {
                match error
                    .downcast_ref::<RobotsError>()
                    .and_then(|e| synthetic(e, &url))
                {
                    Some(response) => Ok(response),
                    None => Err(Error::Middleware(error)),
                }
            }
            result => result,
        }
    }
}

/// The response with a body that holds the request's place in its group until it has been read
/// to the end or dropped ([`crate::PacedBody`] inside reqwest's body). The URL, the
/// extensions and everything else of the response stay as they were.
fn hold_place_in_body(
    response: reqwest::Response,
    permit: crate::pacing::Permit,
) -> reqwest::Response {
    use reqwest::ResponseBuilderExt;
    let url = response.url().clone();
    let (parts, body) = http::Response::from(response).into_parts();
    let body = reqwest::Body::wrap(crate::pacing::body::PacedBody::new(body, permit));
    let mut held = http::Response::new(body);
    *held.status_mut() = parts.status;
    *held.version_mut() = parts.version;
    *held.headers_mut() = parts.headers;
    *held.extensions_mut() = parts.extensions;
    let mut builder = http::Response::builder().url(url);
    if let Some(extensions) = builder.extensions_mut() {
        held.extensions_mut().extend(std::mem::take(extensions));
    }
    reqwest::Response::from(held)
}

/// A refusal as a reqwest response ([`crate::Refusals::Responses`]).
fn synthetic(error: &RobotsError, url: &url::Url) -> Option<reqwest::Response> {
    use reqwest::ResponseBuilderExt;
    let (parts, body) = crate::front::status::refusal_response(error)?.into_parts();
    let mut builder = http::Response::builder()
        .status(parts.status)
        .url(url.clone())
        .extension(error.clone());
    if let Some(headers) = builder.headers_mut() {
        *headers = parts.headers;
    }
    let response = builder.body(reqwest::Body::from(body)).ok()?;
    Some(reqwest::Response::from(response))
}

impl RobotsMiddleware {
    /// The request and the redirects it leads to, each hop checked and paced.
    async fn send(
        &self,
        request: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let mut request = request;
        let mut retried = 0;
        // The URLs this request's redirects requested, and the policy its hops pass.
        let mut chain = self.gate.redirect_chain(request.url().clone(), usize::MAX);
        // Set with `RequestBuilder::with_extension`; they apply to every hop (a hop is handed
        // on by the response before it).
        let base_overrides = crate::engine::overrides::Overrides::of(extensions);
        let mut overrides = base_overrides.clone();
        // A crawl loop watching the URL asked for hears of the answer at its last hop.
        let mut watched = None;
        loop {
            let url = request.url().clone();
            let origin =
                Origin::from_url(&url).map_err(|e| Error::middleware(RobotsError::from(e)))?;
            let mut admission = self
                .gate
                .admit(
                    &self.client,
                    &origin,
                    path_of_url(&url),
                    || url.to_string(),
                    &overrides,
                )
                .await
                .map_err(Error::middleware)?;
            match &admission.watch {
                Some(noted) => watched = Some(noted.clone()),
                None => admission.watch = watched.clone(),
            }
            self.gate.identify_url(&url, request.headers_mut());
            let replay = request.try_clone();
            // A copy to send again after a transient failure (none without retries, or for a
            // body that cannot be sent twice).
            let retry = (retried < self.retries)
                .then(|| replay.as_ref().and_then(reqwest::Request::try_clone))
                .flatten();
            let mut response = match next.clone().run(request, extensions).await {
                Ok(response) => response,
                Err(error) => {
                    let cause: &(dyn std::error::Error + 'static) = match &error {
                        Error::Reqwest(error) => error,
                        Error::Middleware(error) => error.as_ref(),
                    };
                    #[cfg(feature = "reqwest-retry")]
                    self.said_inner_retry(&error);
                    let transient = crate::pacing::distress::failure_outcome(cause)
                        == crate::pacing::rules::Outcome::NetworkError;
                    let refused = crate::engine::gate::refused_at_connection(&url, cause);
                    self.gate.observe_failure(admission, cause).await;
                    if let Some(refused) = refused {
                        return Err(Error::middleware(refused));
                    }
                    if let (true, Some(again)) = (transient, retry) {
                        retried += 1;
                        tracing::info!(url = %url, retried, %error, "sending again after a network error (paced)");
                        request = again;
                        continue;
                    }
                    return Err(error);
                }
            };
            let status = response.status();
            let permit = self.gate.answer(admission, &mut response).await;
            // The body holds the request's place until it has been read or dropped (a redirect
            // followed here drops it before the next hop).
            let response = hold_place_in_body(response, permit);
            if let Some(again) = retry.filter(|_| self.gate.is_distress(status.as_u16())) {
                // Dropped: the request ends, and the next waits for the pause it set.
                drop(response);
                retried += 1;
                tracing::info!(url = %url, retried, %status, "sending again after a transient failure (paced)");
                request = again;
                continue;
            }
            if response.url() != &url {
                self.check_followed(&url, response.url(), &overrides)
                    .await?;
            }
            // Whether and where to follow is the gate's to say (the one place redirects are
            // decided); the next hop is then admitted as a URL this response handed on.
            let target = self
                .gate
                .next_hop(&mut chain, status.as_u16(), response.headers())
                .await
                .map_err(Error::middleware)?;
            let Some(target) = target else {
                return Ok(response);
            };
            let target_origin =
                Origin::from_url(&target).map_err(|e| Error::middleware(RobotsError::from(e)))?;
            overrides = base_overrides.handed_by(&url);
            match redirect(replay, status, target, origin == target_origin) {
                Some(next_request) => request = next_request,
                None => return Ok(response),
            }
        }
    }
}

impl RobotsMiddleware {
    /// A reqwest-retry error from below: its retries were sent under this middleware, unchecked
    /// and unpaced. Said once, with the fix.
    #[cfg(feature = "reqwest-retry")]
    fn said_inner_retry(&self, error: &Error) {
        let below = matches!(error, Error::Middleware(e) if e.downcast_ref::<reqwest_retry::RetryError>().is_some());
        if below && !self.warned_inner_retry.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                %error,
                "a reqwest-retry middleware runs inside the robots middleware: its retries skip robots.txt and the pacing. Add it before the robots middleware (RobotsConfig::build_client_with), with robots_tower::RefusalAware as its strategy"
            );
        }
    }

    /// The client followed redirects itself (`requested` was answered from `fetched`): the hops
    /// went unchecked and unpaced. Refuse what robots.txt forbids and say how to fix the setup.
    async fn check_followed(
        &self,
        requested: &url::Url,
        fetched: &url::Url,
        overrides: &crate::engine::overrides::Overrides,
    ) -> reqwest_middleware::Result<()> {
        if !self.warned_redirects.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                %requested, %fetched,
                "the reqwest client follows redirects itself, so hops skip the robots check and pacing: build it with redirect::Policy::none() (or use RobotsConfig::build_client)"
            );
        }
        let url_text = || fetched.to_string();
        let origin =
            Origin::from_url(fetched).map_err(|e| Error::middleware(RobotsError::from(e)))?;
        let resolver = &self.gate.resolver();
        if !self
            .redirects
            .rule()
            .allows_resolved(requested, fetched, resolver)
            .await
        {
            tracing::warn!(%requested, %fetched, "a redirect followed inside the client went where the redirect rule forbids; it was fetched, and is refused");
            return Err(Error::middleware(RobotsError::RedirectRefused {
                from: requested.to_string(),
                to: fetched.to_string(),
                reason: robots_fetch::RedirectRefusal::Rule {
                    rule: self.redirects.rule().to_string(),
                },
            }));
        }
        match self
            .gate
            .decide(
                &self.client,
                &origin,
                path_of_url(fetched),
                &url_text,
                overrides,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(error) => {
                tracing::warn!(%requested, %fetched, %error, "a redirect followed inside the client reached a URL robots.txt forbids; it was fetched, and is refused");
                Err(Error::middleware(error))
            }
        }
    }
}

/// The request for the next hop, as reqwest builds it: 307/308 repeat the request (if its body
/// can be replayed); 301/302/303 keep GET and HEAD and turn any other method into a GET, and
/// drop the body. Credentials are not carried to another origin.
fn redirect(
    previous: Option<reqwest::Request>,
    status: StatusCode,
    target: url::Url,
    same_origin: bool,
) -> Option<reqwest::Request> {
    let previous = previous?;
    let mut next = match status {
        StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT => {
            let mut replay = previous;
            *replay.url_mut() = target;
            replay
        }
        _ => {
            // A HEAD stays a HEAD: a link checker must not download every redirected body.
            let method = match *previous.method() {
                Method::HEAD => Method::HEAD,
                _ => Method::GET,
            };
            let mut get = reqwest::Request::new(method, target);
            *get.headers_mut() = previous.headers().clone();
            for name in [
                header::CONTENT_LENGTH,
                header::CONTENT_TYPE,
                header::CONTENT_ENCODING,
                header::TRANSFER_ENCODING,
            ] {
                get.headers_mut().remove(name);
            }
            get
        }
    };
    if !same_origin {
        for name in [
            header::AUTHORIZATION,
            header::COOKIE,
            header::PROXY_AUTHORIZATION,
        ] {
            next.headers_mut().remove(name);
        }
    }
    next.headers_mut().remove(header::HOST);
    Some(next)
}
