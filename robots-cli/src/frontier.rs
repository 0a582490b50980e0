//! `robots crawl`'s queue of URLs: one queue per origin, so that each origin's URLs start in
//! the order given and no more than its concurrency are handed to the client at once, while
//! origins take turns. Every operation is O(1) on the number of queued URLs (a crawl may be
//! given millions on stdin).

use std::collections::{HashMap, VecDeque};

use url::Url;

#[derive(Default)]
struct OriginQueue {
    urls: VecDeque<String>,
    /// Handed out and not yet done.
    active: usize,
    /// In `ready` now.
    scheduled: bool,
}

pub struct Frontier {
    origins: HashMap<String, OriginQueue>,
    /// Origins with a queued URL and room for it, in turn order.
    ready: VecDeque<String>,
    per_origin: usize,
}

/// What a URL is queued by: its origin, or the text itself when it has none (its line will
/// say why).
fn origin_key(url: &str) -> String {
    Url::parse(url).map_or_else(|_| url.to_string(), |u| u.origin().ascii_serialization())
}

impl Frontier {
    /// An empty frontier handing out at most `per_origin` URLs of one origin at a time.
    pub fn new(per_origin: usize) -> Frontier {
        Frontier {
            origins: HashMap::new(),
            ready: VecDeque::new(),
            per_origin: per_origin.max(1),
        }
    }

    /// Queues `url` behind its origin's others.
    pub fn push(&mut self, url: String) {
        let key = origin_key(&url);
        let queue = self.origins.entry(key.clone()).or_default();
        queue.urls.push_back(url);
        if !queue.scheduled && queue.active < self.per_origin {
            queue.scheduled = true;
            self.ready.push_back(key);
        }
    }

    /// The next URL to start: the earliest of the next origin with room, if any.
    pub fn pop(&mut self) -> Option<String> {
        while let Some(key) = self.ready.pop_front() {
            let Some(queue) = self.origins.get_mut(&key) else {
                continue;
            };
            queue.scheduled = false;
            let Some(url) = queue.urls.pop_front() else {
                continue;
            };
            queue.active += 1;
            if !queue.urls.is_empty() && queue.active < self.per_origin {
                queue.scheduled = true;
                self.ready.push_back(key);
            }
            return Some(url);
        }
        None
    }

    /// `url`, handed out by [`Frontier::pop`], is done: its origin has room again.
    pub fn done(&mut self, url: &str) {
        let key = origin_key(url);
        let Some(queue) = self.origins.get_mut(&key) else {
            return;
        };
        queue.active = queue.active.saturating_sub(1);
        if queue.urls.is_empty() {
            if queue.active == 0 {
                self.origins.remove(&key);
            }
        } else if !queue.scheduled {
            queue.scheduled = true;
            self.ready.push_back(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_origin_in_order_one_at_a_time_origins_in_turn() {
        let mut frontier = Frontier::new(1);
        for url in [
            "http://a/1",
            "http://a/2",
            "http://b/1",
            "http://a/3",
            "http://b/2",
        ] {
            frontier.push(url.to_string());
        }
        assert_eq!(frontier.pop().as_deref(), Some("http://a/1"));
        assert_eq!(frontier.pop().as_deref(), Some("http://b/1"));
        // Both origins are busy.
        assert_eq!(frontier.pop(), None);
        frontier.done("http://b/1");
        assert_eq!(frontier.pop().as_deref(), Some("http://b/2"));
        frontier.done("http://a/1");
        assert_eq!(frontier.pop().as_deref(), Some("http://a/2"));
        frontier.done("http://a/2");
        assert_eq!(frontier.pop().as_deref(), Some("http://a/3"));
        frontier.done("http://a/3");
        frontier.done("http://b/2");
        assert_eq!(frontier.pop(), None);
        assert!(frontier.origins.is_empty());
    }

    #[test]
    fn concurrency_hands_out_several_of_an_origin_in_order() {
        let mut frontier = Frontier::new(2);
        for n in 0..4 {
            frontier.push(format!("http://a/{n}"));
        }
        frontier.push("not a url".to_string());
        assert_eq!(frontier.pop().as_deref(), Some("http://a/0"));
        assert_eq!(frontier.pop().as_deref(), Some("not a url"));
        assert_eq!(frontier.pop().as_deref(), Some("http://a/1"));
        assert_eq!(frontier.pop(), None);
        frontier.done("http://a/0");
        assert_eq!(frontier.pop().as_deref(), Some("http://a/2"));
    }
}
