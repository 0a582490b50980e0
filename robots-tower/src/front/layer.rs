//! `RobotsLayer` / `RobotsService`: the tower middleware.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use robots_fetch::{BoxError, Origin, ServiceClient};
use tower::ServiceExt;

use crate::engine::gate::{Admission, Admit, Gate};
use crate::error::RobotsError;
use crate::front::config::RobotsConfig;
use crate::pacing::Permit;
use crate::pacing::body::PacedBody;

/// A tower `Layer` that checks every request against its origin's robots.txt (fetched through
/// the same inner service and cached), paces requests per origin, and sets the crawler's
/// `User-Agent` (and `From`, when configured) on every request that has none. Build it with
/// [`RobotsLayer::builder`].
///
/// A request is refused when its path as given, or any path a server may resolve it to (dot
/// segments, encoded ones included, and merged slashes), is disallowed. Put
/// `tower_http::follow_redirect::FollowRedirectLayer` *outside* this layer so every hop is
/// checked.
///
/// The layer cannot see the connections of the client below it. Give that client's connector
/// the layer's resolver (hyper-util's `HttpConnector::new_with_resolver`, feature `hyper-util`
/// of robots-fetch; reqwest's `ClientBuilder::dns_resolver`): it applies the address rule to
/// the address each new connection uses, so a name that resolves (or rebinds) to an internal
/// address is refused there, as [`crate::RobotsError::AddressRefused`]. Without it, the layer
/// judges the URLs a server handed on at admission only (by their text and the address their
/// name resolves to then), and a name of the caller's that resolves inside is not refused.
///
/// ```
/// use robots_tower::RobotsLayer;
/// let config = RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)");
/// // For the connector below: `HttpConnector::new_with_resolver(resolver)`.
/// let resolver = config.resolver_in_use();
/// let layer = config.build();
/// # let _ = (layer, resolver);
/// ```
#[derive(Clone)]
pub struct RobotsLayer {
    gate: Arc<Gate>,
}

impl std::fmt::Debug for RobotsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsLayer")
            .field("agent", &self.gate.agent())
            .finish_non_exhaustive()
    }
}

impl RobotsLayer {
    /// A builder for a crawler with this User-Agent.
    pub fn builder(user_agent: &str) -> RobotsConfig<crate::front::config::ForLayer> {
        RobotsConfig::new(user_agent)
    }

    pub(crate) fn from_gate(gate: Arc<Gate>) -> RobotsLayer {
        RobotsLayer { gate }
    }

    /// The robots.txt cache (shared with every clone and every service built from this layer).
    pub fn cache(&self) -> &robots_fetch::RobotsCache {
        self.gate.cache()
    }

    /// [`crate::RobotsHooks`] sharing this layer's cache and politeness, for hooks outside the
    /// tower stack; they fetch robots.txt with `client`.
    pub fn hooks_with<C>(&self, client: C) -> crate::front::hooks::RobotsHooks<C> {
        crate::front::hooks::RobotsHooks::from_gate(self.gate.clone(), client)
    }

    /// A [`crate::Frontier`] paced with this layer (every service built from it): a crawl's
    /// URLs wait in it, a queue per politeness group, and come out when their group can take a
    /// request.
    pub fn frontier(&self) -> crate::frontier::Frontier {
        self.frontier_with(crate::frontier::FrontierConfig::default())
    }

    /// [`Self::frontier`] set up with `config` (byte budget, cap per group, de-duplication).
    pub fn frontier_with(
        &self,
        config: crate::frontier::FrontierConfig,
    ) -> crate::frontier::Frontier {
        crate::frontier::Frontier::new(self.gate.clone(), config)
    }

    /// Waits, at most `within`, for the work a fleet sends to Redis in the background (the
    /// release of a lease whose response body ended or was dropped), before a process exits.
    /// Whether all of it was done; `true` at once outside fleet mode.
    pub async fn settle(&self, within: std::time::Duration) -> bool {
        self.gate.settle(within).await
    }

    /// A `tower::retry` layer to put **outside** this one: a request that failed transiently
    /// (a status of the back-off set, a connect error, reset or timeout) is sent again at most
    /// `times` times, each time back through the robots check and the group's pacing, so it
    /// waits for the pause the failure set. Refusals are never retried. See [`crate::Retries`].
    pub fn retries(&self, times: u32) -> tower::retry::RetryLayer<crate::front::retry::Retries> {
        tower::retry::RetryLayer::new(crate::front::retry::Retries::new(
            times,
            self.gate.backoff_statuses(),
        ))
    }

    /// When the politeness group of an origin is paused (by a distress response or exhausted
    /// rate-limit headers), until when.
    pub fn paused_until(&self, origin: &robots_fetch::Origin) -> Option<tokio::time::Instant> {
        self.gate.paused_until(origin)
    }
}

impl<S> tower_layer::Layer<S> for RobotsLayer {
    type Service = RobotsService<S>;

    fn layer(&self, inner: S) -> RobotsService<S> {
        RobotsService {
            inner,
            gate: self.gate.clone(),
        }
    }
}

/// The service [`RobotsLayer`] produces.
#[derive(Clone)]
pub struct RobotsService<S> {
    inner: S,
    gate: Arc<Gate>,
}

impl<S> RobotsService<S> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for RobotsService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsService")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

pin_project! {
    /// The future a [`RobotsService`] returns: the inner service's response, with
    /// [`crate::RobotsInfo`] in its extensions, or why the request was refused
    /// ([`RobotsError`], boxed).
    ///
    /// Nothing is decided until it is first polled. Then a request whose rules are cached and
    /// whose origin's turn is free goes to the inner service at once and costs no allocation of
    /// its own; one that must wait for robots.txt or its turn becomes a boxed future.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use bytes::Bytes;
    /// use http_body_util::Full;
    /// use robots_tower::{ResponseFuture, RobotsLayer};
    /// use tower::{Layer, Service};
    ///
    /// let inner = tower::service_fn(|_: http::Request<Full<Bytes>>| async {
    ///     Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from_static(b"ok"))))
    /// });
    /// let mut service = RobotsLayer::builder("FooBot/1.0").build().layer(inner);
    /// // A relative URI has no robots.txt: refused when polled.
    /// let future: ResponseFuture<_, Full<Bytes>> = service.call(http::Request::new(Full::default()));
    /// # drop(future);
    /// ```
    pub struct ResponseFuture<S, ReqB>
    where
        S: tower_service::Service<http::Request<ReqB>>,
    {
        #[pin]
        state: State<S, ReqB>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, ReqB>
    where
        S: tower_service::Service<http::Request<ReqB>>,
    {
        // Not polled yet: nothing decided, no turn taken (a future that is never polled, or
        // polled late, must not hold its origin's place).
        Start {
            request: Option<http::Request<ReqB>>,
            inner: Option<S>,
            gate: Option<Arc<Gate>>,
        },
        // Admitted at the first poll, the inner service ready: its response future.
        Called {
            #[pin]
            response: S::Future,
            admission: Option<Admission>,
            gate: Arc<Gate>,
        },
        // Admitted at the first poll, the inner service not ready yet: the request waits for it
        // (boxed: this rare state would otherwise make every request's future larger, and a
        // future is moved several times before it completes).
        Sent {
            response: Pin<Box<tower::util::Oneshot<S, http::Request<ReqB>>>>,
            admission: Option<Admission>,
            gate: Arc<Gate>,
        },
        // Waiting for robots.txt or the origin's turn; then the response and the place its
        // body holds.
        Waiting {
            future: BoxFuture<Result<(S::Response, Permit), BoxError>>,
        },
        // Refused at the first poll (a `RobotsError`), or the inner service failed to get ready.
        Refused {
            error: Option<BoxError>,
        },
    }
}

impl<S, ReqB> std::fmt::Debug for ResponseFuture<S, ReqB>
where
    S: tower_service::Service<http::Request<ReqB>>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Start { .. } => "start",
            State::Called { .. } | State::Sent { .. } => "sent",
            State::Waiting { .. } => "waiting",
            State::Refused { .. } => "refused",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}

impl<S, ReqB, ResB> Future for ResponseFuture<S, ReqB>
where
    S: tower_service::Service<http::Request<ReqB>, Response = http::Response<ResB>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ReqB: Default + Send + 'static,
    ResB: http_body::Body + Send + 'static,
    ResB::Data: Into<bytes::Bytes>,
    ResB::Error: Into<BoxError>,
{
    type Output = Result<http::Response<PacedBody<ResB>>, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let mut state = self.as_mut().project().state;
            match state.as_mut().project() {
                StateProj::Start {
                    request,
                    inner,
                    gate,
                } => {
                    // Taken one by one: a tuple of them would copy the request once more.
                    let (Some(inner), Some(gate)) = (inner.take(), gate.take()) else {
                        return Poll::Ready(Err(POLLED_AFTER_COMPLETION.into()));
                    };
                    let Some(request) = request.take() else {
                        return Poll::Ready(Err(POLLED_AFTER_COMPLETION.into()));
                    };
                    let next = start(gate, inner, request, cx);
                    state.set(next);
                }
                StateProj::Called {
                    response,
                    admission,
                    gate,
                } => return poll_sent(response, admission, gate, cx),
                StateProj::Sent {
                    response,
                    admission,
                    gate,
                } => return poll_sent(response.as_mut(), admission, gate, cx),
                StateProj::Waiting { future } => {
                    return future.as_mut().poll(cx).map_ok(|(response, permit)| {
                        response.map(|body| PacedBody::new(body, permit))
                    });
                }
                StateProj::Refused { error } => {
                    return Poll::Ready(Err(error
                        .take()
                        .unwrap_or_else(|| POLLED_AFTER_COMPLETION.into())));
                }
            }
        }
    }
}

/// The error of a future polled again after it completed (a caller's bug, not a panic).
const POLLED_AFTER_COMPLETION: &str = "ResponseFuture polled after completion";

/// Polls the inner service's response to an admitted request; when it comes, it is observed
/// (its status and headers teach the group) and given what the gate knew, and its body holds
/// the request's place until it has been read. The admission is taken once: the inner future
/// is done after that.
fn poll_sent<F, E, ResB>(
    response: Pin<&mut F>,
    admission: &mut Option<Admission>,
    gate: &Gate,
    cx: &mut Context<'_>,
) -> Poll<Result<http::Response<PacedBody<ResB>>, BoxError>>
where
    F: Future<Output = Result<http::Response<ResB>, E>>,
    E: Into<BoxError>,
    ResB: http_body::Body,
{
    let mut response = match std::task::ready!(response.poll(cx)) {
        Ok(response) => response,
        Err(error) => {
            let error: BoxError = error.into();
            let Some(admission) = admission.take() else {
                return Poll::Ready(Err(error));
            };
            gate.observe_failure_now(admission, &*error);
            return Poll::Ready(Err(at_connection(&error).unwrap_or(error)));
        }
    };
    let Some(admission) = admission.take() else {
        return Poll::Ready(Err(POLLED_AFTER_COMPLETION.into()));
    };
    let followed = gate.followed_below(&admission, response.extensions());
    let permit = gate.answer_now(admission, &mut response);
    if let Err(refused) = followed {
        return Poll::Ready(Err(refused.into()));
    }
    Poll::Ready(Ok(response.map(|body| PacedBody::new(body, permit))))
}

/// A request's first poll: the usual request (rules cached, the origin's turn free) is decided
/// here and goes to the inner service without a boxed future; this is the layer's cost per
/// request. One that must wait for robots.txt or its turn becomes a boxed future.
fn start<S, ReqB, ResB>(
    gate: Arc<Gate>,
    mut inner: S,
    mut request: http::Request<ReqB>,
    cx: &mut Context<'_>,
) -> State<S, ReqB>
where
    S: tower_service::Service<http::Request<ReqB>, Response = http::Response<ResB>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ReqB: Default + Send + 'static,
    ResB: http_body::Body + Send + 'static,
    ResB::Data: Into<bytes::Bytes>,
    ResB::Error: Into<BoxError>,
{
    let refused = |error: RobotsError| State::Refused {
        error: Some(error.into()),
    };
    let uri = request.uri();
    let origin = match Origin::from_uri(uri) {
        Ok(origin) => origin,
        Err(error) => return refused(error.into()),
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let overrides = crate::engine::overrides::Overrides::of(request.extensions());
    let pending = match gate.admit_now(&origin, path, &|| uri.to_string(), &overrides) {
        Ok(Admit::Now(admission)) => {
            let uri = request.uri().clone();
            gate.identify(&uri, request.headers_mut());
            // A ready inner service takes the request now: it is moved once, into the call.
            return match inner.poll_ready(cx) {
                Poll::Ready(Ok(())) => State::Called {
                    response: inner.call(request),
                    admission: Some(admission),
                    gate,
                },
                // The admission is dropped with the error: the request's turn ends.
                Poll::Ready(Err(error)) => State::Refused {
                    error: Some(error.into()),
                },
                Poll::Pending => State::Sent {
                    response: Box::pin(inner.oneshot(request)),
                    admission: Some(admission),
                    gate,
                },
            };
        }
        Ok(pending) => pending,
        Err(error) => return refused(error),
    };
    let future = async move {
        let uri = request.uri();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let client = ServiceClient::new(inner.clone());
        let admission = gate
            .admit_later(
                pending,
                &client,
                &origin,
                path,
                &|| uri.to_string(),
                &overrides,
            )
            .await?;
        let uri = request.uri().clone();
        gate.identify(&uri, request.headers_mut());
        // The inner error becomes a `BoxError` at once: it need not be `Send` across the wait.
        let sent = inner.oneshot(request).await.map_err(Into::<BoxError>::into);
        let mut response = match sent {
            Ok(response) => response,
            Err(error) => {
                gate.observe_failure(admission, &*error).await;
                return Err(at_connection(&error).unwrap_or(error));
            }
        };
        let followed = gate.followed_below(&admission, response.extensions());
        let permit = gate.answer(admission, &mut response).await;
        followed?;
        Ok((response, permit))
    };
    State::Waiting {
        future: Box::pin(future),
    }
}

impl<S, ReqB, ResB> tower_service::Service<http::Request<ReqB>> for RobotsService<S>
where
    S: tower_service::Service<http::Request<ReqB>, Response = http::Response<ResB>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ReqB: Default + Send + 'static,
    ResB: http_body::Body + Send + 'static,
    ResB::Data: Into<bytes::Bytes>,
    ResB::Error: Into<BoxError>,
{
    type Response = http::Response<PacedBody<ResB>>;
    type Error = BoxError;
    type Future = ResponseFuture<S, ReqB>;

    /// Always ready: readiness of the inner service is awaited in the response future, after
    /// the robots check and the politeness wait, so a waiting origin never holds a slot of it.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    /// Decides nothing yet: the robots check and the origin's turn come at the first poll, so
    /// futures take their turns in the order they are polled.
    fn call(&mut self, request: http::Request<ReqB>) -> Self::Future {
        ResponseFuture {
            state: State::Start {
                request: Some(request),
                inner: Some(self.inner.clone()),
                gate: Some(self.gate.clone()),
            },
        }
    }
}

/// The address rule's refusal at the connection, when the inner service failed with one (its
/// connector resolved through [`robots_fetch::Resolver`]): the layer's typed refusal instead of
/// the transport's error.
fn at_connection(error: &BoxError) -> Option<BoxError> {
    let url = robots_fetch::ConnectRefused::find(&**error).map(|refused| refused.name.clone())?;
    crate::engine::gate::refused_at_connection(&url, &**error).map(BoxError::from)
}
