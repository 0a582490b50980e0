//! The answers a crawl loop waits to hear of (spec section 14, "distress is retried by the
//! loop"): `Frontier::run` watches each URL it hands out, the front end that sends it notes a
//! distress status (429, 5xx as the pacing's back-off statuses) on its admission, and the loop
//! reads it when the visit ends, whatever the handler returned.
//!
//! Only URLs handed out are watched (at most one entry per job running), and a front end with
//! none watched pays one atomic load per request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The URLs watched now, shared by the gate and the frontiers made on it.
#[derive(Default)]
pub(crate) struct Watches {
    /// How many watches are held (a request looks the URL up only when some are).
    held: AtomicUsize,
    urls: Mutex<HashMap<Box<str>, Watched>>,
}

struct Watched {
    seen: Arc<AtomicU16>,
    /// Jobs watching this URL (without de-duplication, one URL may run twice at once).
    holders: usize,
}

/// One job's watch on its URL: what a front end noted for it, until dropped.
pub(crate) struct Watch {
    watches: Arc<Watches>,
    url: Box<str>,
    seen: Arc<AtomicU16>,
}

/// Where a front end notes the status of a watched URL's response (held by its admission).
#[derive(Clone)]
pub(crate) struct Noted(Arc<AtomicU16>);

impl Watches {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Watched>> {
        self.urls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches `url` until the watch is dropped.
    pub(crate) fn watch(self: &Arc<Watches>, url: &str) -> Watch {
        let mut urls = self.lock();
        let watched = urls.entry(Box::from(url)).or_insert_with(|| Watched {
            seen: Arc::new(AtomicU16::new(0)),
            holders: 0,
        });
        watched.holders += 1;
        let seen = watched.seen.clone();
        self.held.fetch_add(1, Ordering::Release);
        Watch {
            watches: self.clone(),
            url: Box::from(url),
            seen,
        }
    }

    /// Where to note the answer of a request for `url`, when it is watched. (Built only then:
    /// a front end with nothing watched pays one load.)
    #[inline(always)]
    pub(crate) fn find(&self, url: &impl Fn() -> String) -> Option<Noted> {
        if self.held.load(Ordering::Acquire) == 0 {
            return None;
        }
        let url = url();
        self.lock()
            .get(url.as_str())
            .map(|watched| Noted(watched.seen.clone()))
    }
}

impl Noted {
    /// Notes the answer to the watched URL: its status when a distress one, else none (the
    /// last answer counts: a retry the front end made itself may have had its page).
    pub(crate) fn answered(&self, status: u16, distress: bool) {
        self.0
            .store(if distress { status } else { 0 }, Ordering::Release);
    }
}

/// A watch's reading, kept by the loop while the job holding the watch is with the handler.
pub(crate) struct Heard(Arc<AtomicU16>);

impl Heard {
    /// The distress status a front end noted last for the URL, if any.
    pub(crate) fn distress(&self) -> Option<u16> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            status => Some(status),
        }
    }
}

impl Watch {
    /// Where the loop reads what was noted, once the job is gone.
    pub(crate) fn heard(&self) -> Heard {
        Heard(self.seen.clone())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut urls = self.watches.lock();
        if let Some(watched) = urls.get_mut(&self.url) {
            watched.holders = watched.holders.saturating_sub(1);
            if watched.holders == 0 {
                urls.remove(&self.url);
            }
        }
        drop(urls);
        self.watches.held.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_answer_noted_for_a_watched_url_is_read_and_the_watch_leaves_nothing() {
        let watches = Arc::new(Watches::default());
        let url = || "http://a.example/busy".to_string();
        assert!(watches.find(&url).is_none(), "nothing watched");
        let watch = watches.watch("http://a.example/busy");
        let other = watches.watch("http://a.example/busy");
        assert!(
            watches
                .find(&|| "http://a.example/other".to_string())
                .is_none()
        );
        let heard = watch.heard();
        watches.find(&url).expect("watched").answered(429, true);
        assert_eq!(heard.distress(), Some(429));
        // A retry the front end made got its page: the last answer counts.
        watches.find(&url).expect("watched").answered(200, false);
        assert_eq!(heard.distress(), None);
        drop(watch);
        assert!(
            watches.find(&url).is_some(),
            "still watched by the other job"
        );
        drop(other);
        assert!(watches.find(&url).is_none());
        assert!(watches.lock().is_empty());
    }
}
