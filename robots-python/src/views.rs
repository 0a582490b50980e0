//! The views of one file, by the agent string a caller passed. A crawler asks with the same
//! User-Agent for every URL, so the reduction to a product token and the choice of groups
//! happen once, and a check is a string comparison and the rules' search. Two strings of one
//! token (`FooBot`, `FooBot/2.1 (+https://…)`) share one view.
//!
//! A view's first checks scan the rules of the parsed file ([`RuleScan`]); the one after
//! [`SCANS_BEFORE_COMPILING`] compiles the view ([`Matcher`]), which later checks use. A file
//! checked a few times is never compiled (a broad crawl meets many of them), and a deep crawl
//! compiles once per file. A view full of `*` rules is compiled at its first check
//! (`RuleScan::scan_is_cheaper`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use robots_core::{Matcher, RequestRate, RobotsTxt, RuleScan, Selection, Verdict};

/// How many agents' views one file keeps; the oldest goes first. A crawler uses one or two, so
/// this bounds memory (each view holds about the file's rules) without ever mattering to it.
const MAX_VIEWS: usize = 8;

/// How many checks a view answers by scan before it is compiled: 32, about where compiling
/// starts to pay. A scan skips the rules whose key a path does not have without reading them,
/// and on a corpus of 5,000 real robots.txt files scanning every check of a file costs less than compiling
/// its view at once up to 24 checks (3.4 against 4.0 µs a file for 16), about as much at 28,
/// and more from 32 (5.4 against 4.9). Deciding at the break-even, whatever the crawl, costs at
/// most about twice the better choice: a broad crawl (a few URLs of each site, for a crawler or
/// two) never compiles nor keeps a compiled view, and a deep crawl pays its first 32 scans, a
/// few µs, once a file.
const SCANS_BEFORE_COMPILING: u32 = 32;

/// Views by agent string, most recently added last.
#[derive(Default)]
pub struct Views {
    views: Mutex<Vec<View>>,
}

struct View {
    /// The agent string as the caller passed it.
    agent: Box<str>,
    slot: Arc<Slot>,
}

/// One view, shared by every agent string of its token.
pub struct Slot {
    /// The groups chosen, with the token when a group names it; without one, the view is the
    /// `*` groups', shared by every token no group names.
    scan: RuleScan,
    /// Checks answered by scan so far, and how many may be.
    scanned: AtomicU32,
    scans: u32,
    compiled: OnceLock<Matcher>,
}

impl Slot {
    /// Whether the view still answers a check by scan, counting the check when it does.
    fn take_scan(&self) -> bool {
        self.scanned.fetch_add(1, Ordering::Relaxed) < self.scans
    }
}

/// How one check is answered: by the compiled view, or by a scan of the parsed file.
pub enum Checker {
    Compiled(Matcher),
    Scan(Arc<Slot>),
}

impl Checker {
    /// Which groups apply.
    pub fn selection(&self) -> &Selection {
        match self {
            Checker::Compiled(matcher) => matcher.selection(),
            Checker::Scan(slot) => slot.scan.selection(),
        }
    }

    /// The crawler's `Crawl-delay`, in seconds.
    pub fn crawl_delay(&self, robots: &RobotsTxt) -> Option<f64> {
        let delay = match self {
            Checker::Compiled(matcher) => matcher.crawl_delay(),
            Checker::Scan(slot) => slot.scan.crawl_delay(robots),
        };
        delay.map(|delay| delay.delay.as_secs_f64())
    }

    /// The crawler's `Request-rate`, with its line.
    pub fn request_rate(&self, robots: &RobotsTxt) -> Option<(RequestRate, u32)> {
        match self {
            Checker::Compiled(matcher) => matcher.request_rate(),
            Checker::Scan(slot) => slot.scan.request_rate(robots),
        }
    }

    /// What answers the check, borrowed.
    pub fn answerer(&self) -> Answerer<'_> {
        match self {
            Checker::Compiled(matcher) => Answerer::Compiled(matcher),
            Checker::Scan(slot) => Answerer::Scan(&slot.scan),
        }
    }
}

/// What answers one check, borrowed: under the views' lock ([`Views::with_answerer`]), or from
/// a [`Checker`].
#[derive(Clone, Copy)]
pub enum Answerer<'a> {
    Compiled(&'a Matcher),
    Scan(&'a RuleScan),
}

impl<'a> Answerer<'a> {
    /// The verdict for a path (as [`robots_core::path_of`] gives it); `robots` is the parsed
    /// file the views are of.
    pub fn check_path(self, robots: &'a RobotsTxt, path: &[u8]) -> Verdict<'a> {
        match self {
            Answerer::Compiled(matcher) => matcher.check_path(path),
            Answerer::Scan(scan) => scan.check_path(robots, path),
        }
    }

    /// The verdict for a path a server may serve, against the patterns normalised as it was
    /// (spec section 5).
    pub fn check_served_path(self, robots: &'a RobotsTxt, path: &[u8]) -> Verdict<'a> {
        match self {
            Answerer::Compiled(matcher) => matcher.check_served_path(path),
            Answerer::Scan(scan) => scan.check_served_path(robots, path),
        }
    }
}

impl Views {
    /// The checker for one check by `agent` as given: a full User-Agent (`Mozilla/5.0
    /// (compatible; FooBot/2.1)`) or a product token (`FooBot`), reduced as the `robots`
    /// command reduces `--user-agent`. A token no group names shares the one view of the `*`
    /// groups, so that the crawlers a file does not name share its scans and its compilation.
    /// `compile` gets the scan (its groups, chosen once) and runs without the lock held, so a
    /// slow compilation blocks no other check.
    pub fn checker(
        &self,
        robots: &RobotsTxt,
        agent: &str,
        compile: impl FnOnce(&RuleScan) -> Matcher,
    ) -> Checker {
        let slot = self.slot(robots, agent);
        if let Some(matcher) = slot.compiled.get() {
            return Checker::Compiled(matcher.clone());
        }
        if slot.take_scan() {
            return Checker::Scan(slot);
        }
        Checker::Compiled(Self::compiled(&slot, compile))
    }

    /// `f` on what answers a check by `agent` as given, when the agent is known and its view
    /// compiled or still scanned (every check of a crawl but the first by each agent string, and
    /// the one that compiles): answered under the lock, with no reference count taken or
    /// dropped. A scan given to `f` counts as one. `f` back otherwise, for [`Views::checker`].
    pub fn with_answerer<R, F: FnOnce(Answerer<'_>) -> R>(
        &self,
        agent: &str,
        f: F,
    ) -> Result<R, F> {
        let views = self.lock();
        let Some(view) = views.iter().rev().find(|v| &*v.agent == agent) else {
            return Err(f);
        };
        let slot = &view.slot;
        if let Some(matcher) = slot.compiled.get() {
            return Ok(f(Answerer::Compiled(matcher)));
        }
        if slot.take_scan() {
            return Ok(f(Answerer::Scan(&slot.scan)));
        }
        Err(f)
    }

    /// What answers for `agent` besides a check (its groups, Crawl-delay, Request-rate): the
    /// compiled view if there is one, else the scan, neither compiling nor counting a check.
    pub fn records(&self, robots: &RobotsTxt, agent: &str) -> Checker {
        let slot = self.slot(robots, agent);
        match slot.compiled.get() {
            Some(matcher) => Checker::Compiled(matcher.clone()),
            None => Checker::Scan(slot),
        }
    }

    /// The compiled view for `agent` (for what only a compiled view answers: usage rules).
    pub fn get(
        &self,
        robots: &RobotsTxt,
        agent: &str,
        compile: impl FnOnce(&RuleScan) -> Matcher,
    ) -> Matcher {
        Self::compiled(&self.slot(robots, agent), compile)
    }

    /// The slot's compiled view, compiled now if it is not yet. Two threads may both compile
    /// it; the first kept wins. (Not `OnceLock::get_or_init`: a compilation that releases the
    /// GIL would deadlock with a thread waiting on the lock while holding the GIL.)
    fn compiled(slot: &Slot, compile: impl FnOnce(&RuleScan) -> Matcher) -> Matcher {
        if let Some(matcher) = slot.compiled.get() {
            return matcher.clone();
        }
        let matcher = compile(&slot.scan);
        let _ = slot.compiled.set(matcher.clone());
        slot.compiled.get().cloned().unwrap_or(matcher)
    }

    /// The view for `agent`: known by its string, or by its token, or made now.
    fn slot(&self, robots: &RobotsTxt, agent: &str) -> Arc<Slot> {
        if let Some(view) = self.lock().iter().rev().find(|v| &*v.agent == agent) {
            return view.slot.clone();
        }
        let reduced = robots_core::user_agent_token(agent);
        // An agent with no product token (`3bot`) is compared as written, as Google's library
        // compares it: it matches no named group. Its empty token would match every group
        // whose name also starts with a digit.
        let token = match (reduced.token, reduced.lost) {
            ("", Some(name)) => name,
            (token, _) => token,
        };
        // The groups are chosen once: they also say whether the token is named.
        let scan = robots.rule_scan(token);
        let known = self
            .lock()
            .iter()
            .find(|v| v.slot.scan.selection().token() == scan.selection().token())
            .map(|v| v.slot.clone());
        let slot = known.unwrap_or_else(|| {
            // A view full of `*` rules is compiled at once (`RuleScan::scan_is_cheaper`).
            let small = scan.scan_is_cheaper(robots);
            Arc::new(Slot {
                scan,
                scanned: AtomicU32::new(0),
                scans: if small { SCANS_BEFORE_COMPILING } else { 0 },
                compiled: OnceLock::new(),
            })
        });
        let mut views = self.lock();
        if !views.iter().any(|v| &*v.agent == agent) {
            if views.len() == MAX_VIEWS {
                views.remove(0);
            }
            views.push(View {
                agent: agent.into(),
                slot: slot.clone(),
            });
        }
        slot
    }

    /// Heap bytes the kept views hold (a view shared by several agents counted once per
    /// agent: an upper bound).
    pub fn heap_bytes(&self) -> usize {
        self.lock()
            .iter()
            .map(|v| {
                v.agent.len()
                    + size_of::<View>()
                    + size_of::<Slot>()
                    + v.slot.scan.heap_bytes()
                    + v.slot.compiled.get().map_or(0, Matcher::heap_bytes)
            })
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

    use robots_core::{Matcher, RobotsTxt, ScanCost};

    use super::{Answerer, Checker, MAX_VIEWS, SCANS_BEFORE_COMPILING, Views};

    const BODY: &[u8] = b"User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /all\n";

    /// `views.get(agent)`, counting the compilations in `compiled`.
    fn get(views: &Views, agent: &str, compiled: &Cell<usize>) -> Matcher {
        get_in(&RobotsTxt::parse(BODY), views, agent, compiled)
    }

    fn get_in(robots: &RobotsTxt, views: &Views, agent: &str, compiled: &Cell<usize>) -> Matcher {
        views.get(robots, agent, |scan| {
            compiled.set(compiled.get() + 1);
            scan.matcher(robots)
        })
    }

    /// One check through `views.checker`: its verdict, and whether it was a scan.
    fn check(
        robots: &RobotsTxt,
        views: &Views,
        agent: &str,
        path: &str,
        compiled: &Cell<usize>,
    ) -> (bool, bool) {
        let checker = views.checker(robots, agent, |scan| {
            compiled.set(compiled.get() + 1);
            scan.matcher(robots)
        });
        let allowed = checker
            .answerer()
            .check_path(robots, path.as_bytes())
            .allowed;
        (allowed, matches!(checker, Checker::Scan(_)))
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

    /// A view's first `SCANS_BEFORE_COMPILING` checks are scans, counted for every agent string
    /// of its token, whether they come through `checker` or under the lock (`with_answerer`);
    /// the check after them compiles the view, once, and later checks use it. Each view counts
    /// its own scans, and the verdicts never change.
    #[test]
    fn a_view_is_scanned_then_compiled_once() {
        let robots = RobotsTxt::parse(BODY);
        let (views, compiled) = (Views::default(), Cell::new(0));
        let check = |agent: &str, path: &str| check(&robots, &views, agent, path, &compiled);
        // Under the lock: the verdict, and whether a scan gave it; `None` when the slow path
        // must answer (an agent string not seen yet, or a view due to be compiled).
        let known = |agent: &str, path: &str| {
            views
                .with_answerer(agent, |a| {
                    let scanned = matches!(a, Answerer::Scan(_));
                    (a.check_path(&robots, path.as_bytes()).allowed, scanned)
                })
                .ok()
        };
        assert_eq!(known("FooBot", "/foo/x"), None, "not seen yet");
        assert_eq!(check("FooBot", "/foo/x"), (false, true));
        assert_eq!(check("OtherBot", "/all"), (false, true));
        // The rest of FooBot's scans, half under the lock, half not, and by another string of
        // its token.
        for i in 1..SCANS_BEFORE_COMPILING {
            if i % 2 == 0 {
                assert_eq!(known("FooBot", "/foo/x"), Some((false, true)), "{i}");
            } else {
                assert_eq!(check("FooBot/2.1", "/all"), (true, true), "{i}");
            }
        }
        assert_eq!(compiled.get(), 0, "scans only, nothing compiled");
        // Due to be compiled: not under the lock; the next check compiles.
        assert_eq!(known("FooBot", "/foo/x"), None);
        assert_eq!(check("FooBot", "/foo/x"), (false, false));
        assert_eq!(compiled.get(), 1);
        for _ in 0..3 {
            assert_eq!(check("FooBot", "/foo/x"), (false, false));
            assert_eq!(check("FooBot", "/all"), (true, false));
        }
        assert_eq!(compiled.get(), 1);
        // Compiled: answered under the lock for each agent string already seen, the same way.
        for agent in ["FooBot", "FooBot/2.1"] {
            assert_eq!(known(agent, "/foo/x"), Some((false, false)));
            assert_eq!(known(agent, "/all"), Some((true, false)));
        }
        assert_eq!(known("FooBot/3", "/foo/x"), None, "a string not seen yet");
        // The other view counts its own scans: still scanning.
        assert_eq!(known("OtherBot", "/all"), Some((false, true)));
        // What needs the compiled view gets the one compiled, or compiles it.
        get_in(&robots, &views, "FooBot", &compiled);
        assert_eq!(compiled.get(), 1);
        get_in(&robots, &views, "OtherBot", &compiled);
        assert_eq!(compiled.get(), 2);
        assert_eq!(known("OtherBot", "/all"), Some((false, false)));
    }

    /// A view with more `*` rules, or more `*`, than a scan may try is compiled at its first
    /// check; one with many plain rules is scanned.
    #[test]
    fn a_view_with_many_wildcards_is_compiled_at_once() {
        let compiled = Cell::new(0);
        let lines = |count: usize, line: &dyn Fn(usize) -> String| -> RobotsTxt {
            let body: String = std::iter::once("User-agent: *\n".to_string())
                .chain((0..count).map(line))
                .collect();
            RobotsTxt::parse(body.as_bytes())
        };
        let wild = lines(ScanCost::MAX_WILDCARD_RULES + 1, &|i| {
            format!("Disallow: /*{i}*x\n")
        });
        let stars = lines(ScanCost::MAX_STARS / 100 + 1, &|i| {
            format!("Disallow: /{i}{}\n", "*a".repeat(100))
        });
        for (count, robots) in [wild, stars].iter().enumerate() {
            let views = Views::default();
            assert!(!check(robots, &views, "FooBot", "/p7/x", &compiled).1);
            assert_eq!(compiled.get(), count + 1);
        }
        // Just within the bounds, or plain rules however many: scanned.
        let within = lines(ScanCost::MAX_WILDCARD_RULES, &|i| {
            format!("Disallow: /*{i}*x\n")
        });
        let plain = lines(20_000, &|i| format!("Disallow: /{i}/\n"));
        for (robots, path) in [(within, "/a7bx"), (plain, "/7/x")] {
            let views = Views::default();
            assert_eq!(
                check(&robots, &views, "FooBot", path, &compiled),
                (false, true)
            );
        }
        assert_eq!(compiled.get(), 2);
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
        let robots = RobotsTxt::parse(body.as_bytes());
        let get = |agent: &str| get_in(&robots, &views, agent, &compiled);
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
