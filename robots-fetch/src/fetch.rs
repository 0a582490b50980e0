//! One fetch of an origin's robots.txt: a GET with the crawler's identity (conditional when a
//! kept copy's validators are given), redirects followed by hand (up to 5 hops, any host the
//! redirect rule allows), the body read up to the cap, the status turned into an outcome (spec
//! section 7), all within a total timeout.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use http::header;
use tracing::{Instrument, debug, warn};
use url::Url;

use crate::body::{Coding, read_capped};
use crate::client::{FetchClient, FollowedByClient};
use crate::origin::Origin;
use crate::outcome::{FetchOutcome, NetworkError, NetworkErrorKind, UnreachableCause};
use crate::redirect::HopRule;
use crate::retrieval::{Answer, Retrieval};
use crate::time::later;
use crate::validators::Validators;

/// Whether the "client follows redirects itself" warning was given (once per process).
static WARNED_CLIENT_REDIRECTS: AtomicBool = AtomicBool::new(false);

/// How robots.txt requests are made.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Sent as `User-Agent` on every robots.txt request.
    pub user_agent: http::HeaderValue,
    /// Sent as `From` when set.
    pub from: Option<http::HeaderValue>,
    /// The whole fetch, redirects and body included, must finish within this (default 10 s).
    pub timeout: Duration,
    /// Connect timeout for clients this crate builds (`reqwest_client` (feature `reqwest`); default 5 s).
    pub connect_timeout: Duration,
    /// How much of the decoded body is read (default [`robots_core::MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// Which robots.txt redirect hops are followed (default: not from a public host into an
    /// internal address); a refused hop leaves robots.txt unreachable, so nothing is allowed.
    /// Hops are judged by the addresses [`FetchConfig::resolver`] gives too.
    pub redirect_rule: HopRule,
    /// The resolver robots.txt redirect hops are judged by, and that clients built by
    /// `reqwest_client` (feature `reqwest`) connect with (default: the system's, cached).
    pub resolver: crate::Resolver,
    /// Signs every robots.txt request, each redirect hop anew (Web Bot Auth; none by default).
    #[cfg(feature = "web-bot-auth")]
    pub signer: Option<crate::RequestSigner>,
}

impl FetchConfig {
    /// Defaults for a crawler with this User-Agent.
    pub fn new(user_agent: http::HeaderValue) -> FetchConfig {
        FetchConfig {
            user_agent,
            from: None,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            max_body_bytes: robots_core::MAX_BODY_BYTES,
            redirect_rule: HopRule::default(),
            resolver: crate::Resolver::default(),
            #[cfg(feature = "web-bot-auth")]
            signer: None,
        }
    }
}

/// Fetches `origin`'s robots.txt with `client`, unconditionally. Never fails: every failure is
/// an outcome.
pub async fn fetch<C: FetchClient>(
    client: &C,
    origin: &Origin,
    config: &FetchConfig,
) -> FetchOutcome {
    fetch_with(client, origin, config, None).await
}

/// Refreshes a kept copy of `origin`'s robots.txt: [`fetch`], conditional on the copy's
/// `validators` (`If-None-Match`, `If-Modified-Since`, sent on every hop). The answer is
/// [`FetchOutcome::NotModified`] when the server says the copy is still the file, or any outcome
/// a fetch has. Without validators it is a plain fetch, and a 304 is then a malformed answer
/// (unreachable).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use robots_fetch::{FetchConfig, FetchOutcome, Origin, fetch, revalidate};
/// let config = FetchConfig::new(http::HeaderValue::from_static("FooBot/1.0"));
/// // No redirect following, the timeouts, and the guarded resolver.
/// let client = robots_fetch::reqwest_client(&config)?;
/// let origin = Origin::parse("https://example.com")?;
/// if let FetchOutcome::Parsed { validators, .. } = fetch(&client, &origin, &config).await {
///     // A day later:
///     match revalidate(&client, &origin, &config, &validators).await {
///         FetchOutcome::NotModified { .. } => println!("unchanged"),
///         other => println!("{other:?}"),
///     }
/// }
/// # Ok(())
/// # }
/// ```
pub async fn revalidate<C: FetchClient>(
    client: &C,
    origin: &Origin,
    config: &FetchConfig,
    validators: &Validators,
) -> FetchOutcome {
    fetch_with(client, origin, config, Some(validators)).await
}

/// A fetch, conditional when `validators` holds any.
pub(crate) async fn fetch_with<C: FetchClient>(
    client: &C,
    origin: &Origin,
    config: &FetchConfig,
    validators: Option<&Validators>,
) -> FetchOutcome {
    let validators = validators.filter(|v| !v.is_empty());
    let started = tokio::time::Instant::now();
    let span = tracing::debug_span!("robots_fetch", %origin);
    // The timeout counts network time: the deadline moves by the time spent waiting for a turn
    // (`FetchClient::ready`), so a Crawl-delay longer than the timeout cannot make every
    // refresh time out before it is sent.
    let waited = Turns::default();
    let attempt = fetch_following_redirects(client, origin, config, validators, &waited)
        .instrument(span.clone());
    let mut attempt = std::pin::pin!(attempt);
    let mut deadline = std::pin::pin!(tokio::time::sleep(config.timeout));
    let answered = std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(outcome) = attempt.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(outcome));
        }
        if waited.now.load(Ordering::Relaxed) {
            // Waiting for a turn: no deadline runs (the attempt wakes this when it has one).
            return std::task::Poll::Pending;
        }
        let due = later(
            started,
            config
                .timeout
                .saturating_add(Duration::from_nanos(waited.total.load(Ordering::Relaxed))),
        );
        if deadline.deadline() != due {
            deadline.as_mut().reset(due);
        }
        deadline.as_mut().poll(cx).map(|()| None)
    })
    .await;
    let outcome = answered.unwrap_or_else(|| {
        FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError {
            kind: NetworkErrorKind::Timeout,
            message: format!("no complete answer within {:?}", config.timeout),
        }))
    });
    span.in_scope(
        || debug!(elapsed = ?started.elapsed(), outcome = outcome.name(), "fetched robots.txt"),
    );
    outcome
}

/// The time a fetch spent waiting for its requests' turns, which its timeout does not count.
#[derive(Default)]
struct Turns {
    /// Waiting now.
    now: AtomicBool,
    /// Waited so far, in nanoseconds.
    total: AtomicU64,
}

async fn fetch_following_redirects<C: FetchClient>(
    client: &C,
    origin: &Origin,
    config: &FetchConfig,
    validators: Option<&Validators>,
    waited: &Turns,
) -> FetchOutcome {
    let mut retrieval = match validators {
        Some(validators) => Retrieval::revalidating(origin, validators),
        None => Retrieval::new(origin),
    }
    .with_redirect_rule(config.redirect_rule.clone());
    loop {
        let url = retrieval.url().clone();
        let mut request = match request(&url, config, validators) {
            Ok(request) => request,
            Err(error) => return FetchOutcome::Unreachable(UnreachableCause::Network(error)),
        };
        let before = tokio::time::Instant::now();
        waited.now.store(true, Ordering::Relaxed);
        let ready = client.ready(&mut request).await;
        waited.now.store(false, Ordering::Relaxed);
        let turn = u64::try_from(before.elapsed().as_nanos()).unwrap_or(u64::MAX);
        waited.total.fetch_add(turn, Ordering::Relaxed);
        if let Err(error) = ready {
            return FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError::classify(
                &*error,
            )));
        }
        // Signed when it goes (after its turn, which may be long), each hop anew.
        #[cfg(feature = "web-bot-auth")]
        if let Some(signer) = &config.signer {
            let uri = request.uri().clone();
            if let Err(error) = signer.sign(&uri, request.headers_mut()) {
                return FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError {
                    kind: NetworkErrorKind::Other,
                    message: error.to_string(),
                }));
            }
        }
        let response = match client.send(request).await {
            Ok(response) => response,
            Err(error) => {
                return FetchOutcome::Unreachable(UnreachableCause::Network(
                    NetworkError::classify(&*error),
                ));
            }
        };
        if let Some(FollowedByClient(landed)) = response.extensions().get().cloned() {
            // A client with its own redirect following (a framework's): its policy judged the
            // hops; ours judges where they ended.
            if !WARNED_CLIENT_REDIRECTS.swap(true, Ordering::Relaxed) {
                warn!(from = %url, to = %landed, "the robots.txt client follows redirects itself, so hops are not counted here: build it with redirect::Policy::none()");
            }
            let how = " (followed by the client)";
            if let Some(refused) = retrieval.judge_hop_as(&landed, &config.resolver, how).await {
                return refused;
            }
            retrieval.follow(landed);
        }
        let status = response.status().as_u16();
        match retrieval.answer(status, response.headers()) {
            Answer::Done(outcome) => return outcome,
            Answer::Redirect(next) => {
                if let Some(refused) = retrieval.judge_hop(&next, &config.resolver).await {
                    return refused;
                }
                debug!(from = %retrieval.url(), to = %next, status, "robots.txt redirect");
                retrieval.follow(next);
            }
            Answer::ReadBody => {
                let headers = response.headers().clone();
                let coding = match Coding::of(&headers) {
                    Ok(coding) => coding,
                    Err(error) => {
                        return FetchOutcome::Unreachable(UnreachableCause::Network(error));
                    }
                };
                return match read_capped(response.into_body(), coding, config.max_body_bytes).await
                {
                    Ok(body) => retrieval.body(status, &headers, body),
                    Err(error) => FetchOutcome::Unreachable(UnreachableCause::Network(error)),
                };
            }
        }
    }
}

fn request(
    url: &Url,
    config: &FetchConfig,
    validators: Option<&Validators>,
) -> Result<http::Request<()>, NetworkError> {
    let mut request = http::Request::new(());
    *request.uri_mut() = url
        .as_str()
        .parse()
        .map_err(|e: http::uri::InvalidUri| NetworkError {
            kind: NetworkErrorKind::Other,
            message: format!("`{url}` is not a valid request URI: {e}"),
        })?;
    // The client would connect elsewhere than the resolver's rule says (an override on
    // another port of the host): not sent.
    if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        config
            .resolver
            .connects_as_judged(host, port)
            .map_err(|refused| NetworkError {
                kind: NetworkErrorKind::Other,
                message: refused.to_string(),
            })?;
    }
    let headers = request.headers_mut();
    headers.insert(header::USER_AGENT, config.user_agent.clone());
    if let Some(from) = &config.from {
        headers.insert(header::FROM, from.clone());
    }
    headers.insert(
        header::ACCEPT_ENCODING,
        http::HeaderValue::from_static("gzip, deflate, br"),
    );
    if let Some(validators) = validators {
        validators.apply_to(headers);
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use http_body_util::Full;

    use super::*;

    /// A client whose turn comes after `turn`, and whose server answers after `answer`.
    struct Paced {
        turn: Duration,
        answer: Duration,
    }

    impl FetchClient for Paced {
        type Body = Full<Bytes>;

        async fn send(
            &self,
            _request: http::Request<()>,
        ) -> Result<http::Response<Full<Bytes>>, crate::BoxError> {
            tokio::time::sleep(self.answer).await;
            Ok(http::Response::new(Full::new(Bytes::from_static(
                b"User-agent: *\nDisallow: /\n",
            ))))
        }

        async fn ready(&self, _request: &mut http::Request<()>) -> Result<(), crate::BoxError> {
            tokio::time::sleep(self.turn).await;
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_timeout_counts_network_time_not_the_wait_for_a_turn() {
        let config = FetchConfig::new(http::HeaderValue::from_static("FooBot"));
        let origin = Origin::parse("https://example.com").unwrap();
        // A turn 60 s away (a Crawl-delay) and a quick answer: fetched, not timed out.
        let waited = Paced {
            turn: Duration::from_secs(60),
            answer: Duration::from_secs(1),
        };
        assert!(matches!(
            fetch(&waited, &origin, &config).await,
            FetchOutcome::Parsed { .. }
        ));
        // The server itself slower than the timeout: timed out, the wait not counted either way.
        let slow = Paced {
            turn: Duration::from_secs(60),
            answer: Duration::from_secs(11),
        };
        let started = tokio::time::Instant::now();
        match fetch(&slow, &origin, &config).await {
            FetchOutcome::Unreachable(UnreachableCause::Network(error)) => {
                assert_eq!(error.kind, NetworkErrorKind::Timeout);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(started.elapsed(), Duration::from_secs(70));
    }
}
