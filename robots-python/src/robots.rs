//! `RobotsTxt`: a parsed robots.txt, checked for any crawler. Everything it answers is
//! robots-core's; this file only converts arguments and answers.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};
use robots_core::url_path::served_paths;
use robots_core::{MAX_BODY_BYTES, Matcher, RuleScan};

use crate::args;
use crate::types::{Diagnostic, Record, RequestRate, Rule, Usage, Verdict};
use crate::views::{Answerer, Checker, Views};

/// Bodies this large are parsed, linted and compiled with the GIL released, so that other
/// Python threads run meanwhile; below it, giving the GIL up and taking it back costs more
/// than the work (robots-core parses 32 KiB in about 50 µs).
const DETACH_BYTES: usize = 32 * 1024;

/// A robots.txt, parsed once and checked for any crawler as Google's robots.txt library
/// checks it.
///
/// `RobotsTxt(body)` and `RobotsTxt.parse(body)` take the file's `bytes` (as fetched) or `str`.
/// As Google's crawler does, only the first 500 KiB (512,000 bytes) are read. Any body parses:
/// invalid lines are skipped (`lint()` tells about them), nothing raises but a `TypeError` for
/// a body that is neither `bytes` nor `str`.
///
/// Every method that takes a `user_agent` accepts a product token (`"FooBot"`) or a full
/// User-Agent (`"Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)"`), reduced to
/// its product token (see `product_token`). An agent's first 32 checks of a file scan its rules;
/// from the 33rd, the view compiled for it is kept, so checking many URLs for one crawler costs
/// one compilation, and a file checked a few times costs none. Instances are immutable and can
/// be shared between threads.
///
/// >>> robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /private\n")
/// >>> robots.can_fetch("https://example.com/private/x", "FooBot")
/// False
#[pyclass(frozen, subclass, module = "robots_core", name = "RobotsTxt")]
pub struct RobotsTxt {
    robots: robots_core::RobotsTxt,
    /// The body as read, for `lint()` and pickling: the 512,000 bytes parsed, and one more when
    /// there were more, so that `lint()` reports a body over the limit.
    body: Box<[u8]>,
    views: Views,
}

impl RobotsTxt {
    /// Parses `body` (its first 512,000 bytes), with the GIL released for a large one.
    pub fn from_bytes(py: Python<'_>, body: &[u8]) -> RobotsTxt {
        let kept = &body[..body.len().min(MAX_BODY_BYTES + 1)];
        let parse = || {
            let read = &kept[..kept.len().min(MAX_BODY_BYTES)];
            (robots_core::RobotsTxt::parse(read), Box::<[u8]>::from(kept))
        };
        let (robots, body) = if kept.len() >= DETACH_BYTES {
            py.detach(parse)
        } else {
            parse()
        };
        RobotsTxt {
            robots,
            body,
            views: Views::default(),
        }
    }

    /// The compiled view for the agent as given (reduced and compiled once, then kept).
    pub fn view(&self, py: Python<'_>, agent: &str) -> PyResult<Matcher> {
        Ok(self
            .views
            .get(&self.robots, agent, |scan| self.compile(py, scan)))
    }

    /// What answers one check for the agent as given: a scan of the rules for a view's first
    /// checks, then its compiled view (see `Views`).
    fn checker(&self, py: Python<'_>, agent: &str) -> Checker {
        self.views
            .checker(&self.robots, agent, |scan| self.compile(py, scan))
    }

    fn compile(&self, py: Python<'_>, scan: &RuleScan) -> Matcher {
        if self.body.len() >= DETACH_BYTES {
            py.detach(|| scan.matcher(&self.robots))
        } else {
            scan.matcher(&self.robots)
        }
    }

    /// `f` on what answers one check for the agent as given: under the views' lock when the
    /// agent is known (no reference counted), else through `checker` (which may compile).
    fn answer<R>(&self, py: Python<'_>, agent: &str, f: impl FnOnce(Answerer<'_>) -> R) -> R {
        match self.views.with_answerer(agent, f) {
            Ok(answer) => answer,
            Err(f) => f(self.checker(py, agent).answerer()),
        }
    }

    /// Google's verdict for `url` (as given).
    fn verdict(&self, py: Python<'_>, agent: &str, url: &str) -> Verdict {
        let path = robots_core::path_of(url);
        self.answer(py, agent, |answerer| {
            let verdict = answerer.check_path(&self.robots, path.as_bytes());
            Verdict {
                allowed: verdict.allowed,
                rule: Rule::of(verdict.rule),
                resolved_path: None,
            }
        })
    }

    /// Whether `url` (as given) is allowed: [`Self::verdict`] without the rule.
    fn allowed(&self, py: Python<'_>, agent: &str, url: &str) -> bool {
        let path = robots_core::path_of(url);
        self.answer(py, agent, |answerer| {
            answerer.check_path(&self.robots, path.as_bytes()).allowed
        })
    }

    /// The polite verdict for `url`: refused when its path or a path the server resolves it to
    /// is disallowed.
    pub fn resolved(&self, py: Python<'_>, agent: &str, url: &str) -> Verdict {
        self.answer(py, agent, |answerer| {
            resolved_verdict(
                |path, served| {
                    if served {
                        answerer.check_served_path(&self.robots, path)
                    } else {
                        answerer.check_path(&self.robots, path)
                    }
                },
                url,
            )
        })
    }
}

/// The verdict (by `check`) for `url` and for each path a server resolves it to (`check`'s
/// second argument `true`: against the patterns normalised); the first refusal.
pub fn resolved_verdict<'a>(
    check: impl Fn(&[u8], bool) -> robots_core::Verdict<'a>,
    url: &str,
) -> Verdict {
    let path = robots_core::path_of(url);
    let verdict = check(path.as_bytes(), false);
    if !verdict.allowed {
        return Verdict {
            allowed: false,
            rule: Rule::of(verdict.rule),
            resolved_path: None,
        };
    }
    for resolved in served_paths(&path) {
        let refused = check(resolved.as_bytes(), true);
        if !refused.allowed {
            return Verdict {
                allowed: false,
                rule: Rule::of(refused.rule),
                resolved_path: Some(resolved),
            };
        }
    }
    Verdict {
        allowed: true,
        rule: Rule::of(verdict.rule),
        resolved_path: None,
    }
}

#[pymethods]
impl RobotsTxt {
    #[new]
    fn new(py: Python<'_>, body: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(RobotsTxt::from_bytes(py, &args::body(body)?))
    }

    /// Parses a robots.txt body (`bytes` or `str`; the first 512,000 bytes are read).
    ///
    /// >>> RobotsTxt.parse("User-agent: *\nDisallow: /\n").can_fetch("https://example.com/", "FooBot")
    /// False
    #[classmethod]
    fn parse<'py>(
        cls: &Bound<'py, PyType>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        cls.call1((body,))
    }

    /// Whether `user_agent` may fetch `url`, as Google's library decides. `url` is checked as
    /// given (percent-encoding and dot segments as they are); a URL without a path is `/`.
    ///
    /// >>> RobotsTxt.parse(b"User-agent: FooBot\nDisallow: /x\n").can_fetch("https://e.com/x/1", "FooBot/2.1")
    /// False
    fn can_fetch(
        &self,
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (url, agent) = args::url_and_agent(url, user_agent, "can_fetch")?;
        Ok(self.allowed(py, &agent, &url))
    }

    /// The verdict for `url` with the rule that decided it (`Verdict.rule`: line, kind and
    /// pattern, or `None` when no rule matched).
    ///
    /// >>> RobotsTxt.parse(b"User-agent: *\nDisallow: /private\n").check("https://e.com/private", "FooBot")
    /// Verdict(allowed=False, rule=Rule(line=2, kind='disallow', pattern='/private'))
    fn check(
        &self,
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<Verdict> {
        let (url, agent) = args::url_and_agent(url, user_agent, "check")?;
        Ok(self.verdict(py, &agent, &url))
    }

    /// The verdict a polite crawler acts on: `url` is refused when its path, or a path the
    /// server resolves it to, is disallowed. Servers decode percent-encoded unreserved
    /// characters and remove dot segments, so `/%7Euser/` and `/public/../private` reach
    /// `/~user/` and `/private`; `check` judges the path as given (Google's verdict), this judges
    /// what is served. A refusal by a resolved path names it in `Verdict.resolved_path`.
    ///
    /// >>> robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /~user\n")
    /// >>> robots.check("https://e.com/%7Euser/", "FooBot").allowed
    /// True
    /// >>> robots.check_resolved("https://e.com/%7Euser/", "FooBot")
    /// Verdict(allowed=False, rule=Rule(line=2, kind='disallow', pattern='/~user'), resolved_path='/~user/')
    fn check_resolved(
        &self,
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<Verdict> {
        let (url, agent) = args::url_and_agent(url, user_agent, "check_resolved")?;
        Ok(self.resolved(py, &agent, &url))
    }

    /// The crawl verdict for `url` and the AI usage preferences robots.txt states for it
    /// (`Content-Usage` and `Content-Signal` records).
    ///
    /// >>> robots = RobotsTxt.parse(b"User-agent: *\nContent-Usage: train-ai=n\n")
    /// >>> robots.usage("https://e.com/a", "FooBot").train_ai
    /// False
    fn usage(
        &self,
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<Usage> {
        let (url, agent) = args::url_and_agent(url, user_agent, "usage")?;
        let view = self.view(py, &agent)?;
        Ok(Usage::of(&view.usage(&url)))
    }

    /// The `Crawl-delay` the crawler's group asks for, in seconds, or `None`. Google ignores
    /// it; Bing and Yandex honour it. The first valid value of the selected group counts.
    ///
    /// >>> RobotsTxt.parse(b"User-agent: *\nCrawl-delay: 2.5\n").crawl_delay("FooBot")
    /// 2.5
    fn crawl_delay(&self, user_agent: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let agent = args::text(user_agent, "user_agent")?;
        Ok(self
            .views
            .records(&self.robots, &agent)
            .crawl_delay(&self.robots))
    }

    /// The `Request-rate` the crawler's group asks for (`requests, seconds = rate`), or `None`.
    ///
    /// >>> tuple(RobotsTxt.parse(b"User-agent: *\nRequest-rate: 1/10s\n").request_rate("FooBot"))
    /// (1, 10.0)
    fn request_rate(&self, user_agent: &Bound<'_, PyAny>) -> PyResult<Option<RequestRate>> {
        let agent = args::text(user_agent, "user_agent")?;
        let checker = self.views.records(&self.robots, &agent);
        Ok(checker
            .request_rate(&self.robots)
            .map(|(rate, line)| RequestRate {
                requests: rate.requests,
                seconds: rate.per.as_secs_f64(),
                line,
            }))
    }

    /// The `Sitemap` URLs, in file order, as written (whatever group they are in).
    ///
    /// >>> RobotsTxt.parse(b"Sitemap: https://e.com/sitemap.xml\n").sitemaps
    /// ['https://e.com/sitemap.xml']
    #[getter]
    fn sitemaps(&self) -> Vec<String> {
        self.robots
            .sitemaps()
            .map(|sitemap| String::from_utf8_lossy(sitemap.url).into_owned())
            .collect()
    }

    /// The records that are neither rules, user-agents nor sitemaps (`Crawl-delay`, `Host`,
    /// `Visit-time`, unknown keys), in file order: all of them, or with `user_agent` those of
    /// the groups selected for it and those before the first group.
    ///
    /// >>> [(r.key, r.value) for r in RobotsTxt.parse(b"Host: e.com\nUser-agent: *\nVisit-time: 0600-0845\n").records()]
    /// [('Host', 'e.com'), ('Visit-time', '0600-0845')]
    #[pyo3(signature = (user_agent = None))]
    fn records(&self, user_agent: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Record>> {
        Ok(match user_agent {
            None => self.robots.records().map(|r| Record::of(&r)).collect(),
            Some(agent) => {
                let checker = self
                    .views
                    .records(&self.robots, &args::text(agent, "user_agent")?);
                self.robots
                    .records_for(checker.selection())
                    .iter()
                    .map(Record::of)
                    .collect()
            }
        })
    }

    /// The file's lint diagnostics: what a crawler reads otherwise than its author meant
    /// (severity `"error"`), what some crawlers read differently (`"warning"`), and notes
    /// (`"info"`), each with its line.
    ///
    /// >>> [(d.line, d.kind, d.severity) for d in RobotsTxt.parse(b"User-agent: *\nDisalow: /x\n").lint()]
    /// [(2, 'typo_key', 'warning')]
    fn lint(&self, py: Python<'_>) -> Vec<Diagnostic> {
        let diagnostics = if self.body.len() >= DETACH_BYTES {
            py.detach(|| robots_core::lint(&self.body))
        } else {
            robots_core::lint(&self.body)
        };
        diagnostics.iter().map(Diagnostic::of).collect()
    }

    /// Heap bytes this object holds: the body kept, its parse, and the views compiled so far
    /// (they grow as new crawlers ask). For caches bounded in bytes.
    #[getter]
    pub fn heap_bytes(&self) -> usize {
        self.body.len() + self.robots.heap_bytes() + self.views.heap_bytes()
    }

    /// The number of lines in the body read.
    #[getter]
    fn line_count(&self) -> u32 {
        self.robots.line_count()
    }

    /// Pickles as the body read, parsed again when unpickled.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let body = PyBytes::new(py, &slf.get().body);
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [body])?.into_any(),
            ],
        )
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.get();
        Ok(format!(
            "<{} {} bytes, {} lines, {} groups>",
            slf.get_type().qualname()?,
            this.body.len(),
            this.robots.line_count(),
            this.robots.groups().len()
        ))
    }
}
