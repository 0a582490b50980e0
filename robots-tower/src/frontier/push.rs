//! How URLs enter a frontier: the caller's own (seeds, [`Frontier::push`]) and the links a page
//! handed on ([`Frontier::push_link`], [`crate::Job::push`], [`Visit::Fetched`]), which the
//! address rule judges as the page's, never the caller's.

use tokio::time::Instant;
use url::Url;

use robots_fetch::Origin;

use super::config::{Dropped, NotCrawled, PushError, Pushed};
#[cfg(doc)]
use super::config::{FrontierConfig, Visit};
use super::queues::Refused;
use super::{Frontier, is_disallowed};

impl Frontier {
    /// Queues `url`, a URL of the caller's own (a seed), at priority 0, waiting for room when
    /// the byte budget is spent (see [`Frontier::push_with`]). A seed's address literal or
    /// `localhost` may be internal (the caller's word); a link a page handed on goes through
    /// [`Frontier::push_link`] or [`crate::Job::push`], never here.
    pub async fn push(&self, url: Url) -> Result<Pushed, PushError> {
        self.push_with(url, 0).await
    }

    /// Queues `url` behind its group's URLs of the same priority and ahead of lower ones
    /// (higher goes first), waiting for room when the byte budget is spent (a URL handed out
    /// or dropped makes room). Its fragment is removed. Refused at once when the frontier is
    /// closed, the URL is no http(s) URL, its group is at its cap, or it alone is over the
    /// budget. A URL whose cached robots.txt disallows it is dropped
    /// ([`Pushed::Disallowed`]; while its group has URLs queued or under way, it is queued and
    /// dropped at its turn instead, so that a group's URLs end in the order pushed); one pushed
    /// (or dropped as disallowed) before, with
    /// de-duplication on, too ([`Pushed::Duplicate`]): each URL is refused and counted once.
    pub async fn push_with(&self, mut url: Url, priority: i32) -> Result<Pushed, PushError> {
        loop {
            let room = self.shared.room.notified();
            let mut room = std::pin::pin!(room);
            room.as_mut().enable();
            match self.offer(url, priority, None) {
                Err(PushError::Full { url: back, .. }) => {
                    url = *back;
                    room.await;
                }
                other => return other,
            }
        }
    }

    /// [`Frontier::push`] without waiting: [`PushError::Full`] when the budget is spent.
    pub fn try_push(&self, url: Url) -> Result<Pushed, PushError> {
        self.offer(url, 0, None)
    }

    /// [`Frontier::push_with`] without waiting: [`PushError::Full`] when the budget is spent.
    pub fn try_push_with(&self, url: Url, priority: i32) -> Result<Pushed, PushError> {
        self.offer(url, priority, None)
    }

    /// Queues `url`, a link found on the page `from` (not the caller's own URL, as
    /// [`Frontier::push`]'s are): the address rule judges it as a URL `from` handed on
    /// (spec section 8), so a public page's link into an internal address is dropped
    /// ([`Pushed::AddressRefused`], counted, and given to [`FrontierConfig::on_disallowed`]),
    /// and a name it names may not connect to internal addresses. Within the budget plus the
    /// overdraft of the jobs in progress ([`FrontierConfig::job_overdraft`]); never waits.
    /// [`crate::Job::push`] and [`Visit::Fetched`]'s links come here.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use robots_tower::{Pushed, RobotsMiddleware};
    /// let frontier = RobotsMiddleware::builder("FooBot/1.0").build()?.frontier();
    /// let page: url::Url = "https://example.com/".parse()?;
    /// let pushed = frontier.push_link("http://169.254.169.254/latest/meta-data/".parse()?, &page)?;
    /// assert_eq!(pushed, Pushed::AddressRefused);
    /// assert_eq!(frontier.stats().address_refused, 1);
    /// // The caller's own URL on an internal address is a seed, and is queued.
    /// assert_eq!(frontier.push("http://127.0.0.1:8080/".parse()?).await?, Pushed::Queued);
    /// # Ok(()) }
    /// ```
    pub fn push_link(&self, url: Url, from: &Url) -> Result<Pushed, PushError> {
        self.offer_found(url, from, 0)
    }

    /// A link a page found: within the budget plus the overdraft of the jobs in progress.
    pub(crate) fn offer_found(
        &self,
        url: Url,
        from: &Url,
        priority: i32,
    ) -> Result<Pushed, PushError> {
        let pushed = self.offer(url, priority, Some(from));
        let not_crawled = match &pushed {
            Err(error @ PushError::Full { .. }) => {
                self.shared.lock().counts.over_budget += 1;
                Some(NotCrawled::Refused(error.clone()))
            }
            Err(error @ (PushError::GroupFull { .. } | PushError::TooLarge { .. })) => {
                Some(NotCrawled::Refused(error.clone()))
            }
            // A link found after a stop: not crawled, and said so in the count.
            Err(PushError::Closed(url)) => {
                let mut state = self.shared.lock();
                state.stopped.then(|| {
                    state.counts.not_crawled += 1;
                    NotCrawled::Stopped((**url).clone())
                })
            }
            _ => None,
        };
        if let Some(not) = not_crawled
            && self.shared.on_not_crawled.is_some()
        {
            self.shared.not_crawled(not);
        }
        pushed
    }

    /// Queues `url`: the caller's own (`found` is `None`), or a link the page `found` handed on.
    fn offer(&self, mut url: Url, priority: i32, found: Option<&Url>) -> Result<Pushed, PushError> {
        url.set_fragment(None);
        let origin = match Origin::from_url(&url) {
            Ok(origin) => origin,
            Err(error) => {
                return Err(PushError::NotHttp {
                    url: Box::new(url),
                    error,
                });
            }
        };
        if self.shared.lock().closed {
            return Err(PushError::Closed(Box::new(url)));
        }
        // A link from a public page into an internal address, by its text: dropped before it
        // takes any room. (A name is judged where its connection is made.)
        if let Some(error) = found.and_then(|from| self.shared.gate.refuses_by_text(from, &url)) {
            self.shared.lock().counts.address_refused += 1;
            self.shared.hear(vec![Dropped { url, error }]);
            return Ok(Pushed::AddressRefused);
        }
        let group = self.shared.gate.group_now(&origin);
        // Known to be disallowed: dropped before it takes any room, and remembered (with
        // de-duplication on), so that a URL linked many times is refused, counted and told
        // once; pushed again it is a duplicate. Not while its group has URLs queued or under
        // way: it is queued behind them and dropped at its turn, so that a group's URLs end in
        // the order pushed.
        if let Some(Err(error)) = self.shared.gate.cached_verdict(&url)
            && is_disallowed(&error)
            && !self.shared.busy(group.as_str())
        {
            let mut state = self.shared.lock();
            if state.seen.contains(url.as_str()) {
                state.counts.duplicates += 1;
                return Ok(Pushed::Duplicate);
            }
            state.seen.remember(url.as_str());
            state.counts.disallowed += 1;
            drop(state);
            self.shared.hear(vec![Dropped { url, error }]);
            return Ok(Pushed::Disallowed);
        }
        let mut state = self.shared.lock();
        if state.closed {
            return Err(PushError::Closed(Box::new(url)));
        }
        if state.seen.contains(url.as_str()) {
            state.counts.duplicates += 1;
            return Ok(Pushed::Duplicate);
        }
        // A job's links may overdraw the budget (see `FrontierConfig::job_overdraft`); others
        // fit in what the retries waiting leave of it.
        let max_bytes = self.shared.max_bytes;
        let limit = if found.is_some() {
            let jobs = state.queues.active() + state.visiting;
            max_bytes.saturating_add(self.shared.job_overdraft.saturating_mul(jobs.max(1)))
        } else {
            max_bytes.saturating_sub(state.retry_bytes)
        };
        match state.queues.push(
            group.as_str(),
            priority,
            Box::from(url.as_str()),
            limit,
            Instant::now(),
        ) {
            Ok(()) => {
                state.seen.remember(url.as_str());
                state.counts.pushed += 1;
                drop(state);
                self.shared.changed.notify_waiters();
                Ok(Pushed::Queued)
            }
            Err(Refused::GroupFull) => {
                state.counts.over_group_cap += 1;
                Err(PushError::GroupFull {
                    url: Box::new(url),
                    group: group.as_str().to_string(),
                    max: state.queues.max_per_group(),
                })
            }
            Err(Refused::Full { alone: true, bytes }) => Err(PushError::TooLarge {
                url: Box::new(url),
                bytes,
                max_bytes: self.shared.max_bytes,
            }),
            Err(Refused::Full { alone: false, .. }) => Err(PushError::Full {
                url: Box::new(url),
                max_bytes: self.shared.max_bytes,
            }),
        }
    }
}
