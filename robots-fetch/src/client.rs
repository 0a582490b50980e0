//! The HTTP client robots.txt is fetched with: `reqwest::Client`, or any tower
//! `Service<http::Request<B>>` (so a tower stack fetches robots.txt through its own inner service,
//! with the same TLS, proxies and timeouts).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Body;

/// A boxed error, as tower and http-body use.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Sends one GET without following redirects (the fetcher follows them itself, counting hops).
pub trait FetchClient: Send + Sync {
    /// The response body.
    type Body: Body<Data = Bytes, Error: Into<BoxError>> + Send + 'static;

    /// Sends the request and resolves to the response head and a streaming body.
    fn send(
        &self,
        request: http::Request<()>,
    ) -> impl Future<Output = Result<http::Response<Self::Body>, BoxError>> + Send;

    /// Waits until `request` may be sent (a politeness turn: robots-tower's front ends take a
    /// place in the server's group here, and leave what they took in the request's
    /// extensions for [`FetchClient::send`]). The time spent here is not part of the fetch's
    /// timeout, which counts network time. The default is ready at once.
    fn ready(
        &self,
        request: &mut http::Request<()>,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = request;
        std::future::ready(Ok(()))
    }
}

/// A tower `Service` used as a [`FetchClient`]. The request body is `ReqB::default()` (empty).
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::Full;
/// use robots_fetch::{Origin, RobotsCache, ServiceClient};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let inner = tower::service_fn(|_request: http::Request<Full<Bytes>>| async {
///     let body = Full::new(Bytes::from_static(b"User-agent: *\nDisallow: /\n"));
///     Ok::<_, std::convert::Infallible>(http::Response::new(body))
/// });
/// let client = ServiceClient::new(inner);
/// let cache = RobotsCache::builder("FooBot").build();
/// let entry = cache.get(&client, &Origin::parse("https://example.com").unwrap()).await;
/// assert!(!entry.check(&"https://example.com/x".parse().unwrap()).allowed);
/// # });
/// ```
pub struct ServiceClient<S, ReqB, ResB> {
    service: S,
    bodies: PhantomData<fn(ReqB) -> ResB>,
}

impl<S, ReqB, ResB> ServiceClient<S, ReqB, ResB> {
    /// Wraps a service. It is cloned for each request, as tower services usually are.
    pub fn new(service: S) -> Self {
        ServiceClient {
            service,
            bodies: PhantomData,
        }
    }
}

impl<S: Clone, ReqB, ResB> Clone for ServiceClient<S, ReqB, ResB> {
    fn clone(&self) -> Self {
        ServiceClient::new(self.service.clone())
    }
}

impl<S: std::fmt::Debug, ReqB, ResB> std::fmt::Debug for ServiceClient<S, ReqB, ResB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ServiceClient").field(&self.service).finish()
    }
}

impl<S, ReqB, ResB> FetchClient for ServiceClient<S, ReqB, ResB>
where
    S: tower_service::Service<http::Request<ReqB>, Response = http::Response<ResB>>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    ReqB: Default + Send + 'static,
    ResB: Body + Send + 'static,
    ResB::Data: Into<Bytes>,
    ResB::Error: Into<BoxError>,
{
    type Body = IntoBytes<ResB>;

    fn send(
        &self,
        request: http::Request<()>,
    ) -> impl Future<Output = Result<http::Response<Self::Body>, BoxError>> + Send {
        let mut service = self.service.clone();
        let request = request.map(|()| ReqB::default());
        async move {
            std::future::poll_fn(|cx| service.poll_ready(cx))
                .await
                .map_err(Into::into)?;
            let response = service.call(request).await.map_err(Into::into)?;
            Ok(response.map(|body| IntoBytes(Box::pin(body))))
        }
    }
}

/// A body whose frames are turned into [`Bytes`].
#[derive(Debug)]
pub struct IntoBytes<B>(Pin<Box<B>>);

impl<B> Body for IntoBytes<B>
where
    B: Body,
    B::Data: Into<Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        self.0
            .as_mut()
            .poll_frame(cx)
            .map(|frame| frame.map(|f| f.map(|f| f.map_data(Into::into)).map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.size_hint()
    }
}

/// Put in a response's extensions by a [`FetchClient`] that followed redirects itself: the URL
/// that finally answered. The fetcher then judges that hop with its redirect rule and records
/// where robots.txt came from (the hops in between were the client's to police).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedByClient(pub url::Url);

#[cfg(feature = "reqwest")]
mod reqwest_client {
    use super::*;

    impl FetchClient for reqwest::Client {
        type Body = reqwest::Body;

        fn send(
            &self,
            request: http::Request<()>,
        ) -> impl Future<Output = Result<http::Response<Self::Body>, BoxError>> + Send {
            let client = self.clone();
            let request =
                reqwest::Request::try_from(request.map(|()| reqwest::Body::from(Bytes::new())));
            async move {
                let request = request?;
                let requested = request.url().clone();
                let response = client.execute(request).await?;
                let landed = (response.url() != &requested).then(|| response.url().clone());
                let mut response = http::Response::from(response);
                if let Some(landed) = landed {
                    response.extensions_mut().insert(FollowedByClient(landed));
                }
                Ok(response)
            }
        }
    }
}
