//! [`Job`]: a URL handed out, holding its group's place until it is dropped.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

use super::config::{PushError, Pushed, Retried};
use super::queues::Key;
use super::{Frontier, Shared};

/// A URL handed out by [`Frontier::next`]: its group's place is held until the job is dropped,
/// so keep it until the response's body has been read (or given up).
pub struct Job {
    pub(super) url: Url,
    pub(super) priority: i32,
    pub(super) tries: super::Tries,
    pub(super) waited: Duration,
    pub(super) key: Key,
    pub(super) shared: Arc<Shared>,
    /// Under `Frontier::run`: what the front end hears of its answer (a distress status).
    pub(super) heard: Option<crate::engine::watch::Heard>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("url", &self.url.as_str())
            .field("priority", &self.priority)
            .field("group", &&*self.key)
            .finish()
    }
}

impl Job {
    /// The URL to fetch.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The priority it was pushed with (0 for [`Frontier::push`]).
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Its politeness group.
    pub fn group(&self) -> &str {
        &self.key
    }

    /// How long its group kept it for politeness: from when it stood first in its group's
    /// line with a place free (pushed, or the job before it ended) to when it was handed out
    /// (the interval, a Crawl-delay, a pause). Time queued behind the group's other URLs, or
    /// behind a request in flight, is not counted.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// How many URLs of its group are queued behind it now. With none, a connection kept open
    /// for the group after this request would idle until a link of it comes, if one does: a
    /// broad crawl, whose sites have a URL or two each, closes it instead (an HTTP/1.1
    /// `Connection: close` on the request) and holds no idle connection per site it met.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use robots_tower::{FrontierConfig, RobotsLayer};
    /// let frontier = RobotsLayer::builder("FooBot/1.0").build().frontier_with(FrontierConfig::default());
    /// for path in ["/a", "/b"] {
    ///     frontier.try_push(format!("http://127.0.0.1:9{path}").parse().unwrap()).unwrap();
    /// }
    /// frontier.close();
    /// let first = frontier.next().await.unwrap();
    /// assert_eq!(first.queued_behind(), 1);
    /// # }
    /// ```
    pub fn queued_behind(&self) -> usize {
        self.shared.lock().queues.queued_in(&self.key)
    }

    /// How many times it was retried before (0 the first time it is handed out).
    pub fn attempt(&self) -> u32 {
        self.tries.all
    }

    /// Under [`Frontier::run`]: whether the loop will send this URL again once the handler
    /// returns `visit`, rather than take it as the URL's end. It will after a distress answer
    /// the front end saw for it (429, 5xx: within
    /// [`FrontierConfig::distress_retries`](super::FrontierConfig::distress_retries), whatever
    /// `visit` says), a [`crate::RobotsError::RobotsUnreachable`] refusal within the hold
    /// ([`FrontierConfig::hold_unreachable`](super::FrontierConfig::hold_unreachable)), and a
    /// [`Visit::Retry`](super::Visit::Retry) within
    /// [`FrontierConfig::max_retries`](super::FrontierConfig::max_retries). A handler that
    /// records each URL's end once (a line, a row) records nothing for a visit that will be
    /// retried: the retry's visit says the end. Always `false` for a job from
    /// [`Frontier::next`], which retries nothing by itself. Ask it after the response came.
    ///
    /// ```
    /// # async fn handler(job: robots_tower::Job, client: reqwest_middleware::ClientWithMiddleware) -> robots_tower::Visit {
    /// use robots_tower::{RobotsError, Visit};
    /// let visit = match client.get(job.url().clone()).send().await {
    ///     Ok(response) => {
    ///         let status = response.status();
    ///         drop(response.bytes().await);
    ///         if !job.will_retry(&Visit::Fetched(Vec::new())) {
    ///             println!("{status} {}", job.url()); // a 429 or 503 retried says nothing yet
    ///         }
    ///         Visit::Fetched(Vec::new())
    ///     }
    ///     Err(error) => match RobotsError::from_middleware_error(&error) {
    ///         Some(refused) => Visit::Refused(refused.clone()),
    ///         None => Visit::Failed,
    ///     },
    /// };
    /// visit
    /// # }
    /// ```
    pub fn will_retry(&self, visit: &super::Visit) -> bool {
        let Some(heard) = &self.heard else {
            return false;
        };
        Frontier {
            shared: self.shared.clone(),
        }
        .retries_visit(self.tries, heard.distress(), visit)
    }

    /// Queues a link this job found, at priority 0 (see [`Job::push_with`]).
    pub fn push(&self, url: Url) -> Result<Pushed, PushError> {
        self.push_with(url, 0)
    }

    /// Queues a link this job found, like [`Frontier::try_push_with`] but never refused for
    /// the budget alone while within the overdraft ([`FrontierConfig::job_overdraft`](super::FrontierConfig::job_overdraft)): a job
    /// holds its group's place, and room is made only as URLs are handed out, so a job that
    /// waited for room could wait for ever. Never waits.
    pub fn push_with(&self, url: Url, priority: i32) -> Result<Pushed, PushError> {
        Frontier {
            shared: self.shared.clone(),
        }
        .offer_found(url, &self.url, priority)
    }

    /// Gives the URL back, to be handed out again once `wait` has passed, whatever the
    /// de-duplication (after a 503, a network error, [`crate::RobotsError::RobotsUnreachable`]'s
    /// `retry_after`), at most [`FrontierConfig::max_retries`](super::FrontierConfig::max_retries) times. Its group's place is
    /// freed now.
    ///
    /// ```
    /// # async fn crawl(frontier: robots_tower::Frontier, client: reqwest_middleware::ClientWithMiddleware) {
    /// use robots_tower::RobotsError;
    /// while let Some(job) = frontier.next().await {
    ///     match client.get(job.url().clone()).send().await {
    ///         Err(error) => match RobotsError::from_middleware_error(&error) {
    ///             Some(RobotsError::RobotsUnreachable { retry_after, .. }) => {
    ///                 let retry_after = *retry_after;
    ///                 job.retry_after(retry_after);
    ///             }
    ///             _ => eprintln!("{}: {error}", job.url()),
    ///         },
    ///         Ok(response) => drop(response.bytes().await),
    ///     }
    /// }
    /// # }
    /// ```
    pub fn retry_after(self, wait: Duration) -> Retried {
        Frontier {
            shared: self.shared.clone(),
        }
        .retry(self.url.as_str(), self.priority, self.tries, wait)
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.shared
            .lock()
            .queues
            .job_ended(&self.key, Instant::now());
        self.shared.changed.notify_waiters();
    }
}
