//! An in-memory site as a tower service, for tests on tokio's paused clock (the TCP site in
//! [`crate::site`] runs on the real clock). Each request is logged as it starts (host, path,
//! instant on tokio's clock), answered by `route(host, path, seen_before)` after the answer's
//! delay, and counted while in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How the site answers one request.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// How long the answer takes (the request is in flight meanwhile).
    pub delay: Duration,
}

impl Reply {
    /// A 200 with this body.
    pub fn ok(body: impl Into<String>) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// This status with these headers, and a short body.
    pub fn status(status: u16, headers: &[(&str, &str)]) -> Reply {
        Reply {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: "status".into(),
            delay: Duration::ZERO,
        }
    }

    /// The same answer after `delay`.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

/// One request as the site saw it start.
#[derive(Debug, Clone)]
pub struct Visit {
    pub host: String,
    pub path: String,
    pub at: Instant,
}

type Route = dyn Fn(&str, &str, usize) -> Reply + Send + Sync;

/// The site. Clones share the log and the counters.
#[derive(Clone)]
pub struct MemorySite {
    route: Arc<Route>,
    log: Arc<Mutex<Vec<Visit>>>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

impl MemorySite {
    /// A site answering with `route(host, path, how_many_times_seen_before)`.
    pub fn new(route: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static) -> MemorySite {
        MemorySite {
            route: Arc::new(route),
            log: Arc::default(),
            in_flight: Arc::default(),
            max_in_flight: Arc::default(),
        }
    }

    /// The site as a tower service.
    pub fn service(
        &self,
    ) -> impl tower::Service<
        http::Request<Full<Bytes>>,
        Response = http::Response<Full<Bytes>>,
        Error = BoxError,
        Future = impl Send,
    > + Clone
    + Send
    + Sync
    + 'static {
        let site = self.clone();
        tower::service_fn(move |request: http::Request<Full<Bytes>>| {
            let site = site.clone();
            async move {
                let host = request.uri().host().unwrap_or("").to_string();
                let path = request.uri().path().to_string();
                let seen_before = {
                    let mut log = site.log.lock().unwrap_or_else(|e| e.into_inner());
                    let before = log
                        .iter()
                        .filter(|v| v.host == host && v.path == path)
                        .count();
                    log.push(Visit {
                        host: host.clone(),
                        path: path.clone(),
                        at: Instant::now(),
                    });
                    before
                };
                let reply = (site.route)(&host, &path, seen_before);
                let now = site.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                site.max_in_flight.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(reply.delay).await;
                site.in_flight.fetch_sub(1, Ordering::SeqCst);
                let mut response = http::Response::builder().status(reply.status);
                for (name, value) in &reply.headers {
                    response = response.header(name.as_str(), value.as_str());
                }
                Ok::<_, BoxError>(response.body(Full::new(Bytes::from(reply.body)))?)
            }
        })
    }

    /// Every request so far, in order of arrival.
    pub fn visits(&self) -> Vec<Visit> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many requests for `path` (any host).
    pub fn count(&self, path: &str) -> usize {
        self.visits().iter().filter(|v| v.path == path).count()
    }

    /// How many requests for `path` at `host`.
    pub fn requests_for(&self, host: &str, path: &str) -> usize {
        self.visits()
            .iter()
            .filter(|v| v.host == host && v.path == path)
            .count()
    }

    /// When the page requests (not robots.txt) to `host` started.
    pub fn starts(&self, host: &str) -> Vec<Instant> {
        self.visits()
            .iter()
            .filter(|v| v.host == host && v.path != "/robots.txt")
            .map(|v| v.at)
            .collect()
    }

    /// The most requests that were in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}
