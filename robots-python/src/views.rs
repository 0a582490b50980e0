//! The compiled views of one file, by the agent string a caller passed. A crawler asks with the
//! same User-Agent for every URL, so the reduction to a product token and the compilation
//! happen once, and a check is a string comparison and the matcher's own search.

use std::sync::Mutex;

use robots_core::Matcher;

/// How many agents' views one file keeps; the oldest goes first. A crawler uses one or two, so
/// this bounds memory (each view holds about the file's rules) without ever mattering to it.
const MAX_VIEWS: usize = 8;

/// Views by agent string, most recently added last.
#[derive(Default)]
pub struct Views {
    views: Mutex<Vec<(Box<str>, Matcher)>>,
}

impl Views {
    /// The view for `agent` as given: a full User-Agent (`Mozilla/5.0 (compatible; FooBot/2.1)`)
    /// or a product token (`FooBot`), reduced as the `robots` command reduces `--user-agent`.
    /// `compile` gets the token and runs without the lock held, so a slow compilation blocks
    /// no other check.
    pub fn get(&self, agent: &str, compile: impl FnOnce(&str) -> Matcher) -> Matcher {
        if let Some(found) = self.find(agent) {
            return found;
        }
        let matcher = compile(robots_core::user_agent_token(agent).token);
        let mut views = self.lock();
        if !views.iter().any(|(key, _)| &**key == agent) {
            if views.len() == MAX_VIEWS {
                views.remove(0);
            }
            views.push((agent.into(), matcher.clone()));
        }
        matcher
    }

    fn find(&self, agent: &str) -> Option<Matcher> {
        let views = self.lock();
        views
            .iter()
            .rev()
            .find(|(key, _)| &**key == agent)
            .map(|(_, matcher)| matcher.clone())
    }

    /// The lock, even if a thread panicked while holding it: the list is whole at every step.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Box<str>, Matcher)>> {
        self.views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
