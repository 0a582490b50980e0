//! An in-memory robots.txt server for the cache tests: a function from the request's headers to
//! an answer, as a tower service (so these tests are also the `ServiceClient` path).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use robots_fetch::{FetchClient, ServiceClient};

/// One answer: status, headers, body.
pub(crate) type Answer = (u16, Vec<(&'static str, String)>, &'static str);

/// A client whose every request `answer` answers.
pub(crate) fn client<F>(answer: F) -> impl FetchClient + Clone
where
    F: Fn(&http::HeaderMap) -> Answer + Clone + Send + Sync + 'static,
{
    ServiceClient::<_, Full<Bytes>, Full<Bytes>>::new(tower::service_fn(
        move |request: http::Request<Full<Bytes>>| {
            let (status, headers, body) = answer(request.headers());
            let mut response = http::Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            std::future::ready(Ok::<_, Infallible>(
                response
                    .body(Full::new(Bytes::from_static(body.as_bytes())))
                    .expect("a response"),
            ))
        },
    ))
}
