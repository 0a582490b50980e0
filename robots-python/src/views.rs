//! The compiled views of one file, by the agent string a caller passed. A crawler asks with the
//! same User-Agent for every URL, so the reduction to a product token and the compilation
//! happen once, and a check is a string comparison and the matcher's own search. Two strings
//! of one token (`FooBot`, `FooBot/2.1 (+https://…)`) share one compiled view.

use std::sync::Mutex;

use robots_core::Matcher;

/// How many agents' views one file keeps; the oldest goes first. A crawler uses one or two, so
/// this bounds memory (each view holds about the file's rules) without ever mattering to it.
const MAX_VIEWS: usize = 8;

/// The key of the view of the `*` groups, which every token no group names shares (no token
/// is `*`: a token is letters, `-` and `_`, or a name as written that has none of them first).
const GLOBAL: &str = "*";

/// Views by agent string, most recently added last.
#[derive(Default)]
pub struct Views {
    views: Mutex<Vec<View>>,
}

struct View {
    /// The agent string as the caller passed it.
    agent: Box<str>,
    /// Its product token, which the view was compiled for, or [`GLOBAL`] for the `*` groups'.
    token: Box<str>,
    matcher: Matcher,
}

impl Views {
    /// The view for `agent` as given: a full User-Agent (`Mozilla/5.0 (compatible; FooBot/2.1)`)
    /// or a product token (`FooBot`), reduced as the `robots` command reduces `--user-agent`.
    /// A token no group names shares the one view of the `*` groups (`names` says which tokens
    /// a group names), so that the crawlers a file does not name cost one compilation between
    /// them. `compile` gets the token and runs without the lock held, so a slow compilation
    /// blocks no other check.
    pub fn get(
        &self,
        agent: &str,
        names: impl FnOnce(&str) -> bool,
        compile: impl FnOnce(&str) -> Matcher,
    ) -> Matcher {
        if let Some(view) = self.lock().iter().rev().find(|v| &*v.agent == agent) {
            return view.matcher.clone();
        }
        let reduced = robots_core::user_agent_token(agent);
        // An agent with no product token (`3bot`) is compared as written, as Google's library
        // compares it: it matches no named group. Its empty token would match every group
        // whose name also starts with a digit.
        let token = match (reduced.token, reduced.lost) {
            ("", Some(name)) => name,
            (token, _) => token,
        };
        let key = if names(token) { token } else { GLOBAL };
        let known = self
            .lock()
            .iter()
            .find(|v| &*v.token == key)
            .map(|v| v.matcher.clone());
        let matcher = known.unwrap_or_else(|| compile(token));
        let mut views = self.lock();
        if !views.iter().any(|v| &*v.agent == agent) {
            if views.len() == MAX_VIEWS {
                views.remove(0);
            }
            views.push(View {
                agent: agent.into(),
                token: key.into(),
                matcher: matcher.clone(),
            });
        }
        matcher
    }

    /// Heap bytes the kept views hold (each compiled view shared by several agents counted once
    /// per agent: an upper bound).
    pub fn heap_bytes(&self) -> usize {
        self.lock()
            .iter()
            .map(|v| v.agent.len() + v.token.len() + v.matcher.heap_bytes() + size_of::<View>())
            .sum()
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
        get_in(BODY, views, agent, compiled)
    }

    fn get_in(body: &[u8], views: &Views, agent: &str, compiled: &Cell<usize>) -> Matcher {
        let robots = RobotsTxt::parse(body);
        views.get(
            agent,
            |token| robots.names_token(token),
            |token| {
                compiled.set(compiled.get() + 1);
                robots.matcher(token)
            },
        )
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
        // Every crawler the file does not name shares the `*` groups' view.
        for agent in ["ThirdBot", "Scrapy/2.13 (+https://scrapy.org)", "3bot"] {
            assert!(!get(&views, agent, &compiled).is_allowed("https://e.example/all"));
        }
        assert_eq!(compiled.get(), 2, "one view for the `*` groups");
    }

    #[test]
    fn no_more_than_max_views_are_kept_the_oldest_going_first() {
        let (views, compiled) = (Views::default(), Cell::new(0));
        let agents: Vec<String> = (0..3 * MAX_VIEWS)
            .map(|i| format!("Bot{}", char::from(b'a' + i as u8)))
            .collect();
        let body: String = agents
            .iter()
            .map(|agent| format!("User-agent: {agent}\nDisallow: /{agent}\n\n"))
            .collect();
        let get = |agent: &str| get_in(body.as_bytes(), &views, agent, &compiled);
        for agent in &agents {
            get(agent);
            assert!(views.lock().len() <= MAX_VIEWS);
        }
        assert_eq!(compiled.get(), agents.len());
        // The newest are kept; the first was evicted and is compiled again.
        get(&agents[agents.len() - 1]);
        assert_eq!(compiled.get(), agents.len());
        get(&agents[0]);
        assert_eq!(compiled.get(), agents.len() + 1);
    }
}
