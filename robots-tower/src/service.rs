//! `RobotsLayer` / `RobotsService`: the tower middleware.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use robots_fetch::{BoxError, ServiceClient};
use tower::ServiceExt;

use crate::config::RobotsConfig;
use crate::error::RobotsError;
use crate::gate::{Admission, Admit, Gate};

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
/// ```
/// use robots_tower::RobotsLayer;
/// let layer = RobotsLayer::builder("FooBot/1.0 (+https://foo.example/bot)").build();
/// # let _ = layer;
/// ```
#[derive(Clone)]
pub struct RobotsLayer {
    gate: Arc<Gate>,
}

impl std::fmt::Debug for RobotsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsLayer")
            .field("agent", &self.gate.agent)
            .finish_non_exhaustive()
    }
}

impl RobotsLayer {
    /// A builder for a crawler with this User-Agent.
    pub fn builder(user_agent: &str) -> RobotsConfig<crate::ForLayer> {
        RobotsConfig::new(user_agent)
    }

    pub(crate) fn from_gate(gate: Arc<Gate>) -> RobotsLayer {
        RobotsLayer { gate }
    }

    /// The robots.txt cache (shared with every clone and every service built from this layer).
    pub fn cache(&self) -> &robots_fetch::RobotsCache {
        &self.gate.cache
    }

    /// [`crate::RobotsHooks`] sharing this layer's cache and politeness, for hooks outside the
    /// tower stack; they fetch robots.txt with `client`.
    pub fn hooks_with<C>(&self, client: C) -> crate::RobotsHooks<C> {
        crate::RobotsHooks::from_gate(self.gate.clone(), client)
    }

    /// When an origin is paused by a 429/503, until when.
    pub fn paused_until(&self, origin: &robots_fetch::Origin) -> Option<tokio::time::Instant> {
        self.gate.politeness.paused_until(origin.as_str())
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
        // Waiting for robots.txt or the origin's turn.
        Waiting {
            future: BoxFuture<Result<S::Response, BoxError>>,
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
    type Output = Result<http::Response<ResB>, BoxError>;

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
                StateProj::Waiting { future } => return future.as_mut().poll(cx),
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
/// (its status and headers end the request's turn) and given what the gate knew. The
/// admission is taken once: the inner future is done after that.
fn poll_sent<F, E, ResB>(
    response: Pin<&mut F>,
    admission: &mut Option<Admission>,
    gate: &Gate,
    cx: &mut Context<'_>,
) -> Poll<Result<http::Response<ResB>, BoxError>>
where
    F: Future<Output = Result<http::Response<ResB>, E>>,
    E: Into<BoxError>,
{
    let mut response = std::task::ready!(response.poll(cx)).map_err(Into::into)?;
    if let Some(admission) = admission.take() {
        let info = gate.observe_now(admission, response.status().as_u16(), response.headers());
        attach(gate, info, &mut response);
    }
    Poll::Ready(Ok(response))
}

/// Puts what the gate knew on a response: its extensions, and its headers when mirroring.
#[inline]
fn attach<B>(gate: &Gate, info: crate::RobotsInfo, response: &mut http::Response<B>) {
    gate.mirror(&info, response.headers_mut());
    response.extensions_mut().insert(info);
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
    if let Some(scheme) = uri.scheme_str()
        && !matches!(scheme, "http" | "https")
    {
        return refused(RobotsError::UnsupportedScheme {
            url: uri.to_string(),
            scheme: scheme.to_string(),
        });
    }
    let mut key = [0u8; ORIGIN_KEY_MAX];
    let parsed;
    let origin = match origin_key(uri, &mut key) {
        Some(origin) => origin,
        // A very long host, or one the URL parser would normalise: its canonical origin.
        None => match robots_fetch::Origin::parse(&uri.to_string()) {
            Ok(origin) => {
                parsed = origin;
                parsed.as_str()
            }
            Err(_) if uri.host().is_none_or(str::is_empty) => {
                return refused(RobotsError::RelativeUri {
                    uri: uri.to_string(),
                });
            }
            Err(error) => {
                let cause = match error {
                    robots_fetch::OriginError::InvalidUrl { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                return refused(RobotsError::InvalidOrigin {
                    uri: uri.to_string(),
                    cause,
                });
            }
        },
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let overrides = crate::overrides::Overrides::of(request.extensions());
    let pending = match gate.admit_now(origin, path, &|| uri.to_string(), &overrides) {
        Ok(Admit::Now(admission)) => {
            gate.identify(request.headers_mut());
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
    let origin = origin.to_owned();
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
        gate.identify(request.headers_mut());
        let mut response = inner.oneshot(request).await.map_err(Into::into)?;
        let info = gate
            .observe(admission, response.status().as_u16(), response.headers())
            .await;
        attach(&gate, info, &mut response);
        Ok(response)
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
    type Response = http::Response<ResB>;
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

/// Longest `scheme://host:port` written without allocating; longer ones are parsed as URLs.
const ORIGIN_KEY_MAX: usize = 320;

/// The origin of an absolute URI as `scheme://host[:port]`, lowercase, default port dropped, a
/// trailing dot on the host removed, written into `buf`. `None` for a URI without scheme or
/// host. (A host the URL parser would normalise further only costs a cache lookup by the
/// canonical origin.)
fn origin_key<'b>(uri: &http::Uri, buf: &'b mut [u8; ORIGIN_KEY_MAX]) -> Option<&'b str> {
    let scheme = uri.scheme_str()?;
    let authority = uri.authority()?.as_str();
    let len = match bare_host_key(scheme, authority.as_bytes(), buf) {
        Some(len) => len,
        None => split_key(scheme, authority, buf)?,
    };
    std::str::from_utf8(&buf[..len]).ok()
}

/// The key of an authority that is a bare host (the usual one), written into `buf` in one
/// pass that lowercases it and looks for what needs [`split_key`]: userinfo, a port, an IPv6
/// literal. Its length, or `None` when the authority is not a bare host.
fn bare_host_key(scheme: &str, host: &[u8], buf: &mut [u8; ORIGIN_KEY_MAX]) -> Option<usize> {
    let start = scheme.len() + 3;
    let dest = buf.get_mut(..start + host.len())?;
    let mut split = host.is_empty();
    for (to, &from) in dest[start..].iter_mut().zip(host) {
        split |= matches!(from, b'@' | b':') || is_rewritten_byte(from);
        *to = from.to_ascii_lowercase();
    }
    let host = without_trailing_dot(host);
    if split || is_rewritten_ipv4(host) {
        return None;
    }
    copy_lowercase(&mut dest[..scheme.len()], scheme.as_bytes());
    dest[scheme.len()..start].copy_from_slice(b"://");
    Some(start + host.len())
}

/// Whether the URL parser keeps `host` (without its trailing dot) as written, but for case, so
/// that a key written from it is the canonical origin's and a cache hit finds it. Not so for an
/// IPv6 literal (written in its shortest form), a percent-escape (decoded), or an IPv4 address
/// not in its canonical form ([`is_rewritten_ipv4`]). Those hosts are left to the URL parser.
fn is_kept_as_written(host: &[u8]) -> bool {
    !host.iter().copied().any(is_rewritten_byte) && !is_rewritten_ipv4(host)
}

/// A byte that makes the URL parser rewrite a host: the brackets of an IPv6 literal, the `%` of
/// an escape.
#[inline]
fn is_rewritten_byte(b: u8) -> bool {
    matches!(b, b'[' | b']' | b'%')
}

/// Whether `host` (without its trailing dot) ends in a number, which the URL standard reads as
/// an IPv4 address in any of its forms (`127.1`, `0x7f.0.0.1`, `2130706433`, `010.0.0.1`), and
/// is not already four decimal numbers up to 255 without leading zeros.
fn is_rewritten_ipv4(host: &[u8]) -> bool {
    // A number ends in a hex digit (or is a bare `0x`); a name's last label (`.com`, `.org`)
    // seldom does.
    if !host
        .last()
        .is_some_and(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b'X'))
    {
        return false;
    }
    let last = host.rsplit(|&b| b == b'.').next().unwrap_or_default();
    let hex = |digits: &[u8]| digits.iter().all(u8::is_ascii_hexdigit);
    let is_number = match last {
        [] => false,
        [b'0', b'x' | b'X', digits @ ..] => hex(digits),
        digits => digits.iter().all(u8::is_ascii_digit),
    };
    if !is_number {
        return false;
    }
    let canonical_octet = |label: &[u8]| {
        matches!(label.len(), 1..=3)
            && label.iter().all(u8::is_ascii_digit)
            && (label.len() == 1 || label[0] != b'0')
            && label
                .iter()
                .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'))
                <= 255
    };
    let mut labels = 0;
    let canonical = host.split(|&b| b == b'.').all(|label| {
        labels += 1;
        canonical_octet(label)
    });
    !(canonical && labels == 4)
}

/// One trailing dot names the same host (not a lone dot, not two): the host without it.
fn without_trailing_dot(host: &[u8]) -> &[u8] {
    match host.strip_suffix(b".") {
        Some(stripped) if !stripped.is_empty() && !stripped.ends_with(b".") => stripped,
        _ => host,
    }
}

/// `from` into `to`, lowercased as copied (a plain loop: no call to `memcpy` for a few bytes).
fn copy_lowercase(to: &mut [u8], from: &[u8]) {
    for (to, from) in to.iter_mut().zip(from) {
        *to = from.to_ascii_lowercase();
    }
}

/// [`origin_key`] for any authority: split by hand from the authority `http` has validated, in
/// one pass from the end (`Uri::host` and `Uri::port_u16` would each search it). The key's
/// length in `buf`.
fn split_key(scheme: &str, authority: &str, buf: &mut [u8; ORIGIN_KEY_MAX]) -> Option<usize> {
    let bytes = authority.as_bytes();
    let (mut host_start, mut port_colon, mut in_brackets) = (0, None, false);
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b'@' => {
                host_start = i + 1;
                break;
            }
            // Colons before it are inside an IPv6 literal.
            b']' => in_brackets = true,
            b':' if !in_brackets && port_colon.is_none() => port_colon = Some(i),
            _ => {}
        }
    }
    let host_end = port_colon.unwrap_or(bytes.len());
    let host = bytes.get(host_start..host_end)?;
    let port = port_colon.map_or("", |colon| &authority[colon + 1..]);
    let host = without_trailing_dot(host);
    if host.is_empty() || !is_kept_as_written(host) {
        return None;
    }
    let default_port = match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    let port = match port {
        "" => None,
        // A port that is not a number of 16 bits has no origin.
        // (`u16::from_str` takes a leading `+`, the URL standard does not.)
        digits if !digits.bytes().all(|b| b.is_ascii_digit()) => return None,
        digits => Some(digits.parse::<u16>().ok()?).filter(|p| Some(*p) != default_port),
    };
    let mut len = 0;
    let mut push = |bytes: &[u8]| -> Option<()> {
        let end = len + bytes.len();
        copy_lowercase(buf.get_mut(len..end)?, bytes);
        len = end;
        Some(())
    };
    push(scheme.as_bytes())?;
    push(b"://")?;
    push(host)?;
    if let Some(port) = port {
        let mut digits = [0u8; 6];
        let mut n = port;
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        at -= 1;
        digits[at] = b':';
        push(&digits[at..])?;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_keys_match_the_canonical_origin() {
        for uri in [
            "https://example.com/a?b",
            "HTTPS://Example.COM:443/a",
            "http://example.com:80/",
            "http://example.com:8080/x",
            "http://127.0.0.1:3000/x",
            "https://user:pw@example.com/x",
            "http://example.com./x",
            "http://Example.com.:8080/x",
            "http://Example.com.:/x",
            "http://u:p@h.example:08080/x",
            "http://EXAMPLE.org../x",
            "http://a./x",
            "https://xn--bcher-kva.example/x",
            "http://h-1.example:/x",
            "http://10.0.0.255:8080/x",
            "http://1.2.3.4./x",
            "http://0.0.0.0/x",
            "http://a.1x/x",
            "http://a.0xg/x",
        ] {
            let parsed: http::Uri = uri.parse().unwrap();
            let mut buf = [0u8; ORIGIN_KEY_MAX];
            let key = origin_key(&parsed, &mut buf).unwrap();
            assert_eq!(
                key,
                robots_fetch::Origin::parse(uri).unwrap().as_str(),
                "{uri}"
            );
        }
        // Hosts the URL parser rewrites are left to it (the key must be the canonical origin's,
        // or the request would miss the cache under a key nothing is stored at).
        for uri in [
            "http://[::1]:8080/x",
            "https://u@[::1]:443/x",
            "https://[2001:DB8:0::1]/x",
            "http://u:p@[::1]:8080/x",
            "http://[::ffff:1.2.3.4]/x",
            "http://127.1/x",
            "http://0x7f.0.0.1:8080/x",
            "http://0X7F.0.0.1/x",
            "http://2130706433/x",
            "http://010.0.0.1/x",
            "http://1.2.3.256/x",
            "http://a.b.c.d.1/x",
            "http://u@1.2.3.04/x",
            "http://ex%41mple.com/x",
        ] {
            let Ok(parsed) = uri.parse::<http::Uri>() else {
                continue;
            };
            let mut buf = [0u8; ORIGIN_KEY_MAX];
            assert_eq!(origin_key(&parsed, &mut buf), None, "{uri}");
        }
        let mut buf = [0u8; ORIGIN_KEY_MAX];
        assert_eq!(origin_key(&"/relative".parse().unwrap(), &mut buf), None);
        // A port out of range is no origin (the request is refused, never sent elsewhere).
        if let Ok(uri) = "http://example.com:99999/".parse::<http::Uri>() {
            assert_eq!(origin_key(&uri, &mut buf), None);
        }
    }

    proptest::proptest! {
        /// Whatever the host, a key written without the URL parser is the canonical origin's.
        #[test]
        fn a_written_key_is_the_canonical_origin(
            host in "[0-9a-fA-FxXzZ.%\\[\\]:@_~!$&'()*+,;=-]{1,20}",
            port in proptest::option::of(0u32..70_000),
        ) {
            let port = port.map_or(String::new(), |p| format!(":{p}"));
            let uri = format!("http://{host}{port}/x");
            let mut buf = [0u8; ORIGIN_KEY_MAX];
            let key = uri.parse::<http::Uri>().ok().and_then(|parsed| {
                origin_key(&parsed, &mut buf).map(str::to_string)
            });
            if let Some(key) = key {
                let canonical = robots_fetch::Origin::parse(&uri).map(|o| o.as_str().to_string());
                proptest::prop_assert_eq!(Some(key), canonical.ok(), "{}", uri);
            }
        }
    }
}
