//! The middleware's own settings, and how it is built.

use super::{ForMiddleware, RobotsConfig};
use crate::front::middleware::RobotsMiddleware;

impl RobotsConfig<ForMiddleware> {
    /// Fetch robots.txt with this client: the framework's own, so that its proxies, DNS
    /// resolver, TLS roots and local address apply to robots.txt as to pages (the tower layer
    /// always fetches through its inner service). Without it, the middleware builds a client of
    /// its own with default network settings.
    ///
    /// Build it with `redirect(reqwest::redirect::Policy::none())`, so robots.txt redirects are
    /// counted and checked hop by hop (spec: 5 hops at most). A client that follows redirects
    /// itself still works: where it landed is checked against the robots.txt redirect rule, and
    /// a warning says once that the hops were not counted. The fetch timeout
    /// ([`RobotsConfig::fetch_timeout`]) applies on top of the client's own.
    ///
    /// ```
    /// use robots_tower::RobotsMiddleware;
    /// let config = RobotsMiddleware::builder("FooBot/1.0");
    /// let framework = reqwest::Client::builder()
    ///     .redirect(reqwest::redirect::Policy::none())
    ///     // The address rule where the connection is made.
    ///     .dns_resolver(std::sync::Arc::new(config.resolver_in_use()))
    ///     // .proxy(reqwest::Proxy::all("http://proxy.internal:3128")?) and the like
    ///     .build()?;
    /// let robots = config.robots_client(framework.clone()).build()?;
    /// let client = reqwest_middleware::ClientBuilder::new(framework).with(robots).build();
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn robots_client(mut self, client: reqwest::Client) -> Self {
        self.robots_client = Some(client);
        self
    }

    /// Sends a request again, at most `times` times, after a transient failure: a status of
    /// the back-off set (429, 500, 502, 503, 504 by default) or a connect error, reset or
    /// timeout. Every retry is a request of its own through the group's pacing: it waits for
    /// the pause the failure set (its `Retry-After`, or the back-off) and for its turn. Default
    /// 0, nothing is sent again. Put no retry middleware inside this one: its retries would
    /// skip the pacing (the facade's [composition guide]).
    ///
    /// [composition guide]: https://docs.rs/polite-robots/latest/polite_robots/guide/composition/
    pub fn retries(mut self, times: u32) -> Self {
        self.retries = times;
        self
    }

    /// The total time a page request of the clients the middleware builds
    /// ([`RobotsConfig::build_client`], [`RobotsMiddleware::client`]) may take, from connecting
    /// to the body's last byte, each redirect hop and each retry on its own: 30 s by default
    /// ([`crate::DEFAULT_PAGE_TIMEOUT`]); `None` for no limit. A request
    /// that runs out fails with reqwest's timeout error, and its server is backed off as for
    /// any timeout. A client of your own keeps its own timeouts.
    ///
    /// ```
    /// use std::time::Duration;
    /// use robots_tower::RobotsMiddleware;
    /// let client = RobotsMiddleware::builder("FooBot/1.0")
    ///     .page_timeout(Duration::from_secs(10))
    ///     .build_client()?;
    /// # let _ = client;
    /// # Ok::<(), reqwest::Error>(())
    /// ```
    pub fn page_timeout(mut self, timeout: impl Into<Option<std::time::Duration>>) -> Self {
        self.page_timeout = timeout.into();
        self
    }

    /// How the middleware follows redirects, checking robots.txt and pacing at every hop: a
    /// hop limit and a rule every hop must pass (default: 10 hops, none from a public host into
    /// a loopback, private or link-local address; `RedirectPolicy::none()` returns redirects to
    /// the caller). A refused hop is [`crate::RobotsError::RedirectRefused`]; it is never
    /// requested. This replaces the client's own redirect policy, so give it at least the
    /// client's restrictions (`HopRule::same_origin()`, your own `HopRule::from_fn`…).
    ///
    /// ```
    /// use robots_tower::{HopRule, RedirectPolicy, RobotsMiddleware};
    /// let client = RobotsMiddleware::builder("FooBot/1.0")
    ///     .redirect_policy(RedirectPolicy::limited(5).with_rule(HopRule::same_origin().and(HopRule::default())))
    ///     .build_client()?;
    /// # let _ = client;
    /// # Ok::<(), reqwest::Error>(())
    /// ```
    pub fn redirect_policy(mut self, policy: robots_fetch::RedirectPolicy) -> Self {
        self.redirects = policy;
        self
    }

    /// How refusals come back ([`crate::Refusals::Errors`]). With
    /// [`crate::Refusals::Responses`], for frameworks that keep only a status: a disallowed
    /// URL is a 403, robots.txt unreachable a 503 with `Retry-After`, and "not now" (schedule
    /// mode) a 429 with `Retry-After`, each with an `x-robots-refusal`
    /// header (and `x-robots-rule`), the error itself in the response's extensions.
    pub fn refusals(mut self, refusals: crate::front::status::Refusals) -> Self {
        self.refusals = refusals;
        self
    }

    /// The reqwest-middleware middleware. robots.txt is fetched with the client given to
    /// [`RobotsConfig::robots_client`], or else a client of its own (no redirect following,
    /// the configured timeouts). Add it to a client whose redirect following is off, or use
    /// [`RobotsConfig::build_client`].
    pub fn build(self) -> Result<RobotsMiddleware, reqwest::Error> {
        let gate = self.gate();
        let client = self.robots_reqwest_client(&gate)?;
        Ok(RobotsMiddleware::new(
            gate,
            client,
            self.redirects,
            self.refusals,
            (self.retries, self.page_timeout),
        ))
    }

    /// A ready, correctly wired reqwest client: redirect following off in reqwest and done hop
    /// by hop by the middleware (every hop checked and paced), the crawler's `User-Agent` set,
    /// connections through the guarded resolver, a page timeout
    /// ([`RobotsConfig::page_timeout`], 30 s), and the middleware added.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let site = wiremock::MockServer::start().await; // a local stand-in for a real site
    /// use robots_tower::RobotsMiddleware;
    /// let client = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)").build_client()?;
    /// let page = client.get(format!("{}/", site.uri())).send().await?;
    /// println!("{}", page.status());
    /// # Ok(()) }
    /// ```
    pub fn build_client(self) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
        self.build_client_with(|outside| outside)
    }

    /// [`Self::build_client`], with middleware of your own placed **outside** the robots
    /// middleware: `outside` gets the client builder before the robots middleware is added.
    /// That is where a retry or tracing middleware goes, so that every request it sends again is
    /// checked and paced (the facade's [composition guide]).
    ///
    /// [composition guide]: https://docs.rs/polite-robots/latest/polite_robots/guide/composition/
    ///
    /// ```
    /// use reqwest_middleware::ClientBuilder;
    /// use robots_tower::RobotsMiddleware;
    ///
    /// # #[derive(Clone)] struct Tracing;
    /// # #[async_trait::async_trait]
    /// # impl reqwest_middleware::Middleware for Tracing {
    /// #     async fn handle(&self, req: reqwest::Request, ext: &mut http::Extensions,
    /// #         next: reqwest_middleware::Next<'_>) -> reqwest_middleware::Result<reqwest::Response> {
    /// #         next.run(req, ext).await
    /// #     }
    /// # }
    /// let client = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)")
    ///     .build_client_with(|outside: ClientBuilder| outside.with(Tracing))?;
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_client_with(
        self,
        outside: impl FnOnce(reqwest_middleware::ClientBuilder) -> reqwest_middleware::ClientBuilder,
    ) -> Result<reqwest_middleware::ClientWithMiddleware, reqwest::Error> {
        self.build()?.client_with(outside)
    }
}
