//! [`Frontier::run`]: the crawl loop over a frontier's jobs.

use std::sync::Arc;

use super::config::Visit;
use super::{Counts, Frontier, FrontierStats, Job, Shared, is_disallowed};
use crate::error::RobotsError;
use tracing::debug;

/// What [`Frontier::run`] waited for: a visit's end, or the next job (none: the crawl is over).
enum Event<T> {
    Visited(T),
    Next(Option<Job>),
}

/// A visit of [`Frontier::run`] under way: counted until its links are queued, so the crawl
/// is not taken for over while its job is already dropped.
struct Visiting(Arc<Shared>);

impl Visiting {
    fn new(shared: &Arc<Shared>) -> Visiting {
        shared.lock().visiting += 1;
        Visiting(shared.clone())
    }
}

impl Drop for Visiting {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.visiting = state.visiting.saturating_sub(1);
        drop(state);
        self.0.changed.notify_waiters();
    }
}

impl Frontier {
    /// Runs a whole crawl: hands each URL to `visit` as its group can take it, up to `workers`
    /// at once, queues the links each visit returns ([`Visit::Fetched`], as [`Job::push`]
    /// does: never waiting, within the overdraft), retries what asks for it, and ends by
    /// itself once nothing is queued or waiting for a retry, no visit is running and no job is
    /// held; the frontier is closed then, and its stats returned.
    ///
    /// Retries it makes itself: a page the front end saw answered with a distress status (429,
    /// 5xx) once its group's pause is over, whatever `visit` returned (within
    /// [`FrontierConfig::distress_retries`](crate::FrontierConfig::distress_retries)); a URL refused for
    /// an unreachable robots.txt when robots.txt is tried again, within
    /// [`FrontierConfig::hold_unreachable`](crate::FrontierConfig::hold_unreachable). It stops
    /// at [`FrontierConfig::max_pages`](crate::FrontierConfig::max_pages) or at
    /// [`Frontier::stop`], what was left counted as not crawled.
    ///
    /// Push the start URLs before, or from a visit, or from outside while holding
    /// [`Frontier::feeding`]; a URL dropped as disallowed at its turn ends the crawl as well as
    /// a fetched one. `visit` gets the [`Job`], holding its group's place: keep it until the
    /// response's body was read. [`Job::will_retry`] tells it whether its visit is the URL's
    /// end, and [`FrontierConfig::on_not_crawled`](crate::FrontierConfig::on_not_crawled)
    /// hears of what the crawl leaves: with [`FrontierConfig::on_disallowed`](crate::FrontierConfig::on_disallowed),
    /// every URL's end is heard once.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let site = wiremock::MockServer::start().await; // a local stand-in for a real site
    /// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n"))
    /// #     .mount(&site).await;
    /// # wiremock::Mock::given(wiremock::matchers::path("/"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("/a /b /private/c"))
    /// #     .mount(&site).await;
    /// # wiremock::Mock::given(wiremock::matchers::any())
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("/a"))
    /// #     .mount(&site).await;
    /// use std::time::Duration;
    /// use robots_tower::{Dedup, FrontierConfig, RobotsError, RobotsMiddleware, Visit};
    ///
    /// let robots = RobotsMiddleware::builder("FooBot/1.0 (+https://foo.example/bot)")
    ///     .min_delay(Duration::from_millis(20))
    ///     .build()?;
    /// let client = robots.client()?;
    /// let frontier = robots.frontier_with(FrontierConfig::default().dedup(Dedup::Exact { last: 100_000 }));
    /// frontier.push(format!("{}/", site.uri()).parse()?).await?;
    /// let stats = frontier
    ///     .run(4, |job| {
    ///         let client = client.clone();
    ///         async move {
    ///             let response = match client.get(job.url().clone()).send().await {
    ///                 Ok(response) => response,
    ///                 Err(error) => return match RobotsError::from_middleware_error(&error) {
    ///                     Some(refused) => Visit::Refused(refused.clone()),
    ///                     None => Visit::Failed,
    ///                 },
    ///             };
    ///             let base = response.url().clone();
    ///             let body = response.text().await.unwrap_or_default();
    ///             // Links, however they are found (here: the words of the page).
    ///             let links = body.split_whitespace().filter_map(|l| base.join(l).ok()).collect();
    ///             Visit::Fetched(links) // `job` is dropped here, after the body
    ///         }
    ///     })
    ///     .await;
    /// assert_eq!((stats.fetched, stats.disallowed), (3, 1)); // /, /a, /b; /private/c never sent
    /// # Ok(()) }
    /// ```
    pub async fn run<F, Fut>(&self, workers: usize, mut visit: F) -> FrontierStats
    where
        F: FnMut(Job) -> Fut,
        Fut: std::future::Future<Output = Visit>,
    {
        use futures_util::StreamExt;
        use std::future::Future;
        let workers = workers.max(1);
        let mut running = futures_util::stream::FuturesUnordered::new();
        let mut asking = None;
        let mut over = false;
        loop {
            if !over
                && asking.is_none()
                && running.len() < workers
                && self.wants_pages(running.len())
            {
                asking = Some(Box::pin(self.next_until(true)));
            }
            if running.is_empty() && asking.is_none() {
                break;
            }
            // A visit's end first (its links queued before the next ask), then the next job.
            let event = std::future::poll_fn(|cx| {
                if let std::task::Poll::Ready(Some(done)) = running.poll_next_unpin(cx) {
                    return std::task::Poll::Ready(Event::Visited(done));
                }
                match asking.as_mut().map(|next| next.as_mut().poll(cx)) {
                    Some(std::task::Poll::Ready(job)) => std::task::Poll::Ready(Event::Next(job)),
                    _ => std::task::Poll::Pending,
                }
            })
            .await;
            match event {
                Event::Visited((retry, visiting, visited)) => {
                    self.visited(retry, visited);
                    drop(visiting);
                }
                Event::Next(Some(mut job)) => {
                    asking = None;
                    let visiting = Visiting::new(&self.shared);
                    let retry = (Box::<str>::from(job.url.as_str()), job.priority, job.tries);
                    // The front end notes a distress answer for it here, for `visited` (and
                    // `Job::will_retry`); held until the handler is done, the job gone or not.
                    let watch = self.shared.gate.watches().watch(job.url.as_str());
                    job.heard = Some(watch.heard());
                    let visited = visit(job);
                    running.push(async move {
                        let visit = visited.await;
                        let distress = watch.heard().distress();
                        drop(watch);
                        ((retry, distress), visiting, visit)
                    });
                }
                Event::Next(None) => {
                    asking = None;
                    over = true;
                }
            }
        }
        self.stats()
    }

    /// Whether another URL may be handed out with `running` visits under way: the page limit
    /// counts them as pages to come.
    fn wants_pages(&self, running: usize) -> bool {
        self.shared
            .max_pages
            .is_none_or(|most| self.shared.lock().counts.fetched + (running as u64) < most)
    }

    /// Whether the page limit was reached.
    fn pages_done(&self) -> bool {
        self.shared
            .max_pages
            .is_some_and(|most| self.shared.lock().counts.fetched >= most)
    }

    /// What a visit of [`Frontier::run`] came to, counted; its links queued, its retry made.
    /// A distress answer the front end saw for it is retried after its group's pause (within
    /// `distress_retries`), whatever the handler returned: its links, an error page's, are not
    /// queued (they come with the page).
    fn visited(
        &self,
        ((url, priority, tries), distress): ((Box<str>, i32, super::Tries), Option<u16>),
        visit: Visit,
    ) {
        let count = |bump: fn(&mut Counts)| bump(&mut self.shared.lock().counts);
        if let Some(status) = distress {
            count(|c| c.distress += 1);
            debug!(
                url = &*url,
                status, "answered with a distress status: retried after the group's pause"
            );
            self.retry_distress(&url, priority, tries);
            return;
        }
        match visit {
            Visit::Fetched(links) => {
                count(|c| c.fetched += 1);
                if self.pages_done() {
                    self.stop();
                }
                // The links are the page's, never the caller's: judged as handed on by it.
                if let Ok(page) = url::Url::parse(&url) {
                    for link in links {
                        let _ = self.offer_found(link, &page, 0);
                    }
                }
            }
            Visit::Refused(error) if is_disallowed(&error) => count(|c| c.disallowed += 1),
            Visit::Refused(RobotsError::RobotsUnreachable {
                origin,
                retry_after,
                unreachable_for,
                ..
            }) => {
                self.hold_for_robots(
                    &url,
                    priority,
                    tries,
                    (&origin, unreachable_for, retry_after),
                );
            }
            Visit::Refused(error @ RobotsError::AddressRefused { .. }) => {
                count(|c| c.address_refused += 1);
                if let Ok(url) = url::Url::parse(&url) {
                    self.shared.hear(vec![super::Dropped { url, error }]);
                }
            }
            Visit::Refused(_) => count(|c| c.refused += 1),
            Visit::Retry(wait) => {
                self.retry(&url, priority, tries, wait);
            }
            Visit::Failed => count(|c| c.failed += 1),
        }
    }
}
