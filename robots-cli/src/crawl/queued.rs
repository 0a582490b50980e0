//! The lines of stdin on their way through the crawl: the results of those not queued, waiting
//! to be printed in bounded memory, and the text each queued URL was given as.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use robots_tower::RobotsError;
use url::Url;

use super::report::{Done, outcome_of, refusal};

/// The lines of URLs not queued, on their way to be printed, and how many there are.
#[derive(Clone)]
pub(super) struct Backlog {
    pub(super) sender: tokio::sync::mpsc::UnboundedSender<NotQueued>,
    pub(super) waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl Backlog {
    pub(super) fn channel() -> (Backlog, BacklogReceiver) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let waiting = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let backlog = Backlog {
            sender,
            waiting: waiting.clone(),
        };
        (backlog, BacklogReceiver { receiver, waiting })
    }

    /// (Sync: the frontier's `on_disallowed` sends from inside a push.)
    pub(super) fn send(&self, line: NotQueued) {
        // Counted before it can be received, so the count never goes below what waits.
        self.waiting
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.sender.send(line).is_err() {
            self.waiting
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub(super) fn backlog(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::Relaxed)
    }
}

pub(super) struct BacklogReceiver {
    pub(super) receiver: tokio::sync::mpsc::UnboundedReceiver<NotQueued>,
    pub(super) waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl BacklogReceiver {
    /// The next line, counted out (it is printed before the next is asked for).
    pub(super) async fn recv(&mut self) -> Option<NotQueued> {
        let line = self.receiver.recv().await;
        self.taken(line.is_some());
        line
    }

    pub(super) fn try_recv(&mut self) -> Result<NotQueued, tokio::sync::mpsc::error::TryRecvError> {
        let line = self.receiver.try_recv();
        self.taken(line.is_ok());
        line
    }

    pub(super) fn taken(&self, one: bool) {
        if one {
            self.waiting
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A line's result on its way to be printed: a visit's, or that of a URL the frontier did not
/// queue, dropped or left. (Boxed but for the commonest, so that a stop's burst of URLs left
/// takes a slot and a URL's text each.)
pub(super) enum NotQueued {
    /// Its robots.txt, cached, disallows it.
    Disallowed(Box<robots_tower::Dropped>),
    /// Refused (the frontier's budget, or closed).
    Refused(Box<robots_tower::PushError>),
    /// Left by --max-pages: queued, or found after.
    Stopped(Box<str>),
    /// A link the queue had no room for.
    NotCrawled(Box<robots_tower::NotCrawled>),
    /// Handed on by a server into an internal address (a sitemap's page): never queued.
    Address(Box<(Url, RobotsError)>),
    /// A line's result (a visit's, or a line not queued: not a URL to fetch, a scheme with
    /// no robots.txt).
    Done(Box<Done>),
}

/// How many results of lines not queued (dropped as disallowed, refused, not URLs) may wait
/// to be printed: stdin is read no faster than they are, so memory stays bounded whatever the
/// input (a million lines one robots.txt drops at once included). Queued lines are bounded by
/// the frontier's budget.
pub(super) const BACKLOG_LINES: usize = 4_096;

/// Each queued line's text and where it came from (`stdin line N`), by the normalised URL
/// queued for it, first given first: only lines waiting for their result are held.
#[derive(Default)]
pub(super) struct Given {
    pub(super) texts: HashMap<String, std::collections::VecDeque<(String, Option<String>)>>,
}

impl Given {
    pub(super) fn record(&mut self, url: &str, text: String, at: Option<String>) {
        self.texts
            .entry(url.to_string())
            .or_default()
            .push_back((text, at));
    }

    /// Gives back the text taken for a URL whose visit was not its end (a retry comes), to be
    /// taken again first.
    pub(super) fn put_back(&mut self, url: &str, text: String, at: Option<String>) {
        if text == url && at.is_none() && !self.texts.contains_key(url) {
            // No line gave it (a link, a sitemap's page): nothing to keep.
            return;
        }
        self.texts
            .entry(url.to_string())
            .or_default()
            .push_front((text, at));
    }

    /// The text a URL handed out (or dropped) was given as, and where; the URL itself for one
    /// no line gave (a sitemap's page, a link).
    pub(super) fn take(&mut self, url: &Url) -> (String, Option<String>) {
        self.take_text(url.as_str())
    }

    /// [`Given::take`] by the URL's text.
    pub(super) fn take_text(&mut self, url: &str) -> (String, Option<String>) {
        let Some(texts) = self.texts.get_mut(url) else {
            return (url.to_string(), None);
        };
        let Some(taken) = texts.pop_front() else {
            return (url.to_string(), None);
        };
        if texts.is_empty() {
            self.texts.remove(url);
        }
        taken
    }
}

/// The data behind a lock, whoever panicked while holding it (nothing here is left half done).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The words of a URL --max-pages left (its line's `error`).
pub(crate) const MAX_PAGES_LEFT: &str = "not crawled: --max-pages was reached";

/// The line of a URL the frontier dropped, refused or left (or a line's result as it came).
pub(super) fn refused_line(
    refused: NotQueued,
    given: &Mutex<Given>,
    frontier: &robots_tower::Frontier,
) -> Done {
    let line = |url: &Url, kind, message: String| {
        let (text, at) = lock(given).take(url);
        Done {
            outcome: outcome_of(text, kind, None, None, Duration::ZERO, Some(message)),
            not_a_url: false,
            at,
        }
    };
    let (url, error) = match refused {
        NotQueued::Done(done) => return *done,
        NotQueued::Disallowed(dropped) => (dropped.url, dropped.error),
        NotQueued::Address(refused) => *refused,
        NotQueued::Stopped(text) => {
            let (text, at) = lock(given).take_text(&text);
            return Done {
                outcome: outcome_of(
                    text,
                    "not-crawled",
                    None,
                    None,
                    Duration::ZERO,
                    Some(MAX_PAGES_LEFT.into()),
                ),
                not_a_url: false,
                at,
            };
        }
        NotQueued::NotCrawled(not) => {
            return line(
                not.url(),
                "not-crawled",
                format!("not crawled: {}", not_queued(&not)),
            );
        }
        NotQueued::Refused(error) => match *error {
            robots_tower::PushError::Closed(url) if frontier.is_stopped() => {
                return line(&url, "not-crawled", MAX_PAGES_LEFT.into());
            }
            error => return line(error.url(), "error", error.to_string()),
        },
    };
    let (text, at) = lock(given).take(&url);
    Done {
        outcome: refusal(text, &error, error.to_string()),
        not_a_url: false,
        at,
    }
}

/// Why a link was not queued, in the tool's words.
fn not_queued(not: &robots_tower::NotCrawled) -> String {
    match not {
        robots_tower::NotCrawled::Refused(robots_tower::PushError::Full { max_bytes, .. }) => {
            format!(
                "the crawl's queue was full ({} MiB of URLs)",
                max_bytes >> 20
            )
        }
        robots_tower::NotCrawled::Refused(error) => error.to_string(),
        other => format!("{other:?}"),
    }
}
