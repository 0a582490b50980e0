//! `RobotsMiddleware` for reqwest-middleware: the same checks and politeness as the layer, and
//! redirects followed here so that every hop is checked (turn the client's own following off).

use std::sync::Arc;

use http::{Extensions, Method, StatusCode, header};
use reqwest_middleware::{Error, Middleware, Next};
use robots_fetch::{Origin, origin_str, path_of_url};

use crate::config::RobotsConfig;
use crate::error::RobotsError;
use crate::gate::Gate;

/// A reqwest-middleware `Middleware` enforcing robots.txt and per-origin politeness. Errors
/// come back as `reqwest_middleware::Error::Middleware`; `downcast_ref::<RobotsError>()` finds
/// the reason.
///
/// ```no_run
/// use robots_tower::RobotsMiddleware;
/// let robots = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)").build_middleware()?;
/// let inner = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
/// let client = reqwest_middleware::ClientBuilder::new(inner).with(robots).build();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RobotsMiddleware {
    gate: Arc<Gate>,
    client: reqwest::Client,
    max_redirects: Option<usize>,
}

impl std::fmt::Debug for RobotsMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsMiddleware")
            .field("agent", &self.gate.agent)
            .finish_non_exhaustive()
    }
}

impl RobotsMiddleware {
    /// A builder for a crawler with this User-Agent; finish with
    /// [`RobotsConfig::build_middleware`].
    pub fn builder(user_agent: &str) -> RobotsConfig {
        RobotsConfig::new(user_agent)
    }

    /// The robots.txt cache.
    pub fn cache(&self) -> &robots_fetch::RobotsCache {
        &self.gate.cache
    }
}

impl RobotsConfig {
    /// The reqwest-middleware middleware. robots.txt is fetched with a client of its own
    /// (no redirect following, the configured timeouts).
    pub fn build_middleware(self) -> Result<RobotsMiddleware, reqwest::Error> {
        let gate = self.gate();
        let client = robots_fetch::reqwest_client(gate.cache.fetch_config())?;
        Ok(RobotsMiddleware {
            gate,
            client,
            max_redirects: self.max_redirects,
        })
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
        let mut request = request;
        let mut hops = 0;
        loop {
            let url = request.url().clone();
            let owned_origin;
            let origin = match origin_str(&url) {
                Some(origin) => origin,
                None => {
                    owned_origin = Origin::of(&url).map_err(|_| {
                        Error::middleware(RobotsError::RelativeUri {
                            uri: url.to_string(),
                        })
                    })?;
                    owned_origin.as_str()
                }
            };
            let admission = self
                .gate
                .admit(&self.client, origin, path_of_url(&url), || url.to_string())
                .await
                .map_err(Error::middleware)?;
            let replay = request.try_clone();
            let mut response = next.clone().run(request, extensions).await?;
            let status = response.status();
            let info = self
                .gate
                .observe(admission, status.as_u16(), response.headers());
            response.extensions_mut().insert(info);
            let Some(max) = self.max_redirects.filter(|_| status.is_redirection()) else {
                return Ok(response);
            };
            let target = response
                .headers()
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok());
            let (Some(target), true) = (target, hops < max) else {
                return Ok(response);
            };
            match redirect(replay, status, target) {
                Some(next_request) => request = next_request,
                None => return Ok(response),
            }
            hops += 1;
        }
    }
}

/// The request for the next hop: 307/308 repeat the request (if its body can be replayed),
/// the others become a GET without body. Credentials are not carried to another origin.
fn redirect(
    previous: Option<reqwest::Request>,
    status: StatusCode,
    target: url::Url,
) -> Option<reqwest::Request> {
    let previous = previous?;
    let same_origin = origin_str(previous.url()) == origin_str(&target);
    let mut next = match status {
        StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT => {
            let mut replay = previous;
            *replay.url_mut() = target;
            replay
        }
        _ => {
            let mut get = reqwest::Request::new(Method::GET, target);
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
