//! [`PacedBody`]: a response body that holds its request's place in the politeness group until
//! it has been read to the end or dropped (REP.md section 8: a request is in flight until its
//! last byte, which is what the server sees).

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use crate::pacing::Permit;

pin_project! {
    /// The body of a response the layer (and the middleware, inside reqwest's body) lets
    /// through: the inner body, holding the request's place in its politeness group until it
    /// has been read to its end, fails, or is dropped. Then the request's end is recorded, the
    /// adaptive delay measured to the last byte, and the next request of the group may start.
    ///
    /// Read a response to its end, or drop it, before sending the next request to the same
    /// server: with one request in flight per group (the default), a response kept unread holds
    /// the group's only place, and a request that waits more than a minute for a place says so
    /// in a warning.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use bytes::Bytes;
    /// use http_body_util::{BodyExt, Full};
    /// use robots_tower::{PacedBody, RobotsLayer};
    /// use tower::{Layer, ServiceExt};
    ///
    /// let site = tower::service_fn(|_: http::Request<Full<Bytes>>| async {
    ///     Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from_static(b"page"))))
    /// });
    /// let service = RobotsLayer::builder("FooBot/1.0").build().layer(site);
    /// let request = http::Request::get("http://a.example/").body(Full::default()).unwrap();
    /// let response: http::Response<PacedBody<Full<Bytes>>> = service.oneshot(request).await.unwrap();
    /// // Reading the body to its end ends the request.
    /// let page = response.into_body().collect().await.unwrap().to_bytes();
    /// assert_eq!(page, "page");
    /// # }
    /// ```
    pub struct PacedBody<B> {
        #[pin]
        inner: B,
        place: Option<Permit>,
    }
}

impl<B: Body> PacedBody<B> {
    /// `inner`, holding `place` until its end (at once when it is empty).
    pub(crate) fn new(inner: B, place: Permit) -> PacedBody<B> {
        let place = (!inner.is_end_stream()).then_some(place);
        PacedBody { inner, place }
    }
}

impl<B> PacedBody<B> {
    /// Whether the body still holds its request's place (not yet read to its end nor failed).
    pub fn holds_place(&self) -> bool {
        self.place.is_some()
    }

    /// The inner body; the request's place is given back (the request ends now).
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Body> Body for PacedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let polled = this.inner.as_mut().poll_frame(cx);
        // The last byte (or a failure) ends the request: hyper stops polling once the body says
        // it is at its end, so that is looked at after every frame.
        let ended = match &polled {
            Poll::Ready(None | Some(Err(_))) => true,
            Poll::Ready(Some(Ok(_))) => this.inner.is_end_stream(),
            Poll::Pending => false,
        };
        if ended {
            this.place.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B: Default> Default for PacedBody<B> {
    /// An empty body holding no place.
    fn default() -> PacedBody<B> {
        PacedBody {
            inner: B::default(),
            place: None,
        }
    }
}

impl<B: std::fmt::Debug> std::fmt::Debug for PacedBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacedBody")
            .field("inner", &self.inner)
            .field("holds_place", &self.place.is_some())
            .finish()
    }
}
