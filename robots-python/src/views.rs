//! The compiled views of one file, by the agent string a caller passed. A crawler asks with the
//! same User-Agent for every URL, so the reduction to a product token and the compilation
//! happen once, and a check is a string comparison and the matcher's own search. Two strings
//! of one token (`FooBot`, `FooBot/2.1 (+https://…)`) share one compiled view.

use std::sync::Mutex;

use robots_core::Matcher;

/// How many agents' views one file keeps; the oldest goes first. A crawler uses one or two, so
/// this bounds memory (each view holds about the file's rules) without ever mattering to it.
const MAX_VIEWS: usize = 8;

/// Views by agent string, most recently added last.
#[derive(Default)]
pub struct Views {
    views: Mutex<Vec<View>>,
}

struct View {
    /// The agent string as the caller passed it.
    agent: Box<str>,
    /// Its product token, which the view was compiled for.
    token: Box<str>,
    matcher: Matcher,
}

impl Views {
    /// The view for `agent` as given: a full User-Agent (`Mozilla/5.0 (compatible; FooBot/2.1)`)
    /// or a product token (`FooBot`), reduced as the `robots` command reduces `--user-agent`.
    /// `compile` gets the token and runs without the lock held, so a slow compilation blocks
    /// no other check.
    pub fn get(&self, agent: &str, compile: impl FnOnce(&str) -> Matcher) -> Matcher {
        if let Some(view) = self.lock().iter().rev().find(|v| &*v.agent == agent) {
            return view.matcher.clone();
        }
        let token = robots_core::user_agent_token(agent).token;
        let known = self
            .lock()
            .iter()
            .find(|v| &*v.token == token)
            .map(|v| v.matcher.clone());
        let matcher = known.unwrap_or_else(|| compile(token));
        let mut views = self.lock();
        if !views.iter().any(|v| &*v.agent == agent) {
            if views.len() == MAX_VIEWS {
                views.remove(0);
            }
            views.push(View {
                agent: agent.into(),
                token: token.into(),
                matcher: matcher.clone(),
            });
        }
        matcher
    }

    /// The lock, even if a thread panicked while holding it: the list is whole at every step.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<View>> {
        self.views
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use robots_core::{Matcher, RobotsTxt};

    use super::{MAX_VIEWS, Views};

    const BODY: &[u8] = b"User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /all\n";

    /// `views.get(agent)`, counting the compilations in `compiled`.
    fn get(views: &Views, agent: &str, compiled: &Cell<usize>) -> Matcher {
        views.get(agent, |token| {
            compiled.set(compiled.get() + 1);
            RobotsTxt::parse(BODY).matcher(token)
        })
    }

    #[test]
    fn an_agent_is_reduced_and_compiled_once() {
        let (views, compiled) = (Views::default(), Cell::new(0));
        let full = get(
            &views,
            "Mozilla/5.0 (compatible; FooBot/2.1; +https://f.example)",
            &compiled,
        );
        assert!(!full.is_allowed("https://e.example/foo"));
        assert!(full.is_allowed("https://e.example/all"));
        for agent in [
            "FooBot",
            "FooBot/2.1 (+https://f.example)",
            "Mozilla/5.0 (compatible; FooBot/2.1; +https://f.example)",
        ] {
            assert!(!get(&views, agent, &compiled).is_allowed("https://e.example/foo"));
        }
        assert_eq!(compiled.get(), 1, "one token, one compilation");
        assert!(!get(&views, "OtherBot", &compiled).is_allowed("https://e.example/all"));
        assert_eq!(compiled.get(), 2);
    }

    #[test]
    fn no_more_than_max_views_are_kept_the_oldest_going_first() {
        let (views, compiled) = (Views::default(), Cell::new(0));
        let agents: Vec<String> = (0..3 * MAX_VIEWS)
            .map(|i| format!("Bot{}", char::from(b'a' + i as u8)))
            .collect();
        for agent in &agents {
            get(&views, agent, &compiled);
            assert!(views.lock().len() <= MAX_VIEWS);
        }
        assert_eq!(compiled.get(), agents.len());
        // The newest are kept; the first was evicted and is compiled again.
        get(&views, &agents[agents.len() - 1], &compiled);
        assert_eq!(compiled.get(), agents.len());
        get(&views, &agents[0], &compiled);
        assert_eq!(compiled.get(), agents.len() + 1);
    }
}
