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

    /// How many times it was retried before (0 the first time it is handed out).
    pub fn attempt(&self) -> u32 {
        self.tries.all
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
