//! robots-fetch's sans-I/O steps for Python: `Retrieval` (what each answer to a robots.txt
//! request means) and `CachedRobots` (what is held for an origin between retrievals, and for how
//! long). A Python client moves the bytes (Scrapy's downloader, in `robots_core.scrapy`); every
//! decision is robots-fetch's, the same table the Rust fetcher and cache apply.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use robots_core::MAX_BODY_BYTES;
use robots_fetch::{
    Answer, CacheConfig, FetchOutcome, HopRule, Kept, NetworkError, NetworkErrorKind, NextRules,
    Origin, Validators,
};

use crate::args;
use crate::robots::RobotsTxt;
use crate::types::Verdict;

/// One retrieval of an origin's robots.txt, without I/O: request `url`, give each response to
/// `answer`, and request the URL it returns (a redirect) until it returns `None`. A failure
/// below HTTP (DNS, connection, timeout) is `fail`. Redirects are followed as Google's crawler
/// follows them: up to five hops, a loop or a sixth hop counts as a 404, and a hop from a
/// public host into an internal address (loopback, private, link-local) is not followed.
///
/// >>> robots = CachedRobots("https://example.com/a/page")
/// >>> retrieval = robots.retrieval()
/// >>> retrieval.url
/// 'https://example.com/robots.txt'
/// >>> retrieval.answer(301, {"Location": "https://www.example.com/robots.txt"})
/// 'https://www.example.com/robots.txt'
/// >>> retrieval.answer(200, [], b"User-agent: *\nDisallow: /a\n") is None
/// True
/// >>> retrieval.outcome
/// 'parsed'
#[pyclass(module = "robots_core")]
pub struct Retrieval {
    steps: robots_fetch::Retrieval,
    /// The steps before the last redirect followed, and its target: for judging that hop again
    /// by the target's addresses (`refuse_hop_into`).
    before_hop: Option<(robots_fetch::Retrieval, url::Url)>,
    outcome: Option<FetchOutcome>,
    status: Option<u16>,
}

#[pymethods]
impl Retrieval {
    /// The URL to request now.
    #[getter]
    fn url(&self) -> String {
        self.steps.url().to_string()
    }

    /// Whether the request must carry the kept copy's validators (`request_headers`), so that
    /// `304 Not Modified` can confirm the copy.
    #[getter]
    fn conditional(&self) -> bool {
        self.steps.is_conditional()
    }

    /// Gives the response to `url`: its status, its headers (a mapping, whose values may be
    /// lists, or `(name, value)` pairs; `str` or `bytes`) and, for a 2xx, its body (the first
    /// 512,000 bytes are kept). Returns the next URL to request (a redirect), or `None` when the
    /// retrieval is over.
    #[pyo3(signature = (status, headers, body = None))]
    fn answer(
        &mut self,
        status: u16,
        headers: &Bound<'_, PyAny>,
        body: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<String>> {
        if self.outcome.is_some() {
            return Err(PyValueError::new_err("this retrieval is over"));
        }
        self.status = Some(status);
        self.before_hop = None;
        let headers = header_map(headers)?;
        let outcome = match self.steps.answer(status, &headers) {
            Answer::Done(outcome) => outcome,
            Answer::ReadBody => {
                let body = match body {
                    Some(body) => args::body(body)?,
                    None => {
                        return Err(PyTypeError::new_err(format!(
                            "a {status} answer needs its body"
                        )));
                    }
                };
                let kept = &body[..body.len().min(MAX_BODY_BYTES)];
                self.steps
                    .body(status, &headers, Bytes::copy_from_slice(kept))
            }
            // Judged by its text now (no addresses yet), by its addresses in `refuse_hop_into`.
            Answer::Redirect(next) => match self.steps.judge_hop_addresses(&next, &[]) {
                None => {
                    self.before_hop = Some((self.steps.clone(), next.clone()));
                    self.steps.follow(next);
                    return Ok(Some(self.steps.url().to_string()));
                }
                Some(refused) => refused,
            },
        };
        self.outcome = Some(outcome);
        Ok(None)
    }

    /// Judges the redirect `answer` just returned by the addresses its target's name resolves to
    /// (by the resolver the request will connect with): when they lead from a public host into
    /// an internal address, the hop is refused as `answer` refuses one by its text (robots.txt
    /// unreachable) and the retrieval is over. Returns whether it was refused; call it before
    /// requesting the redirect's URL. An address that is not one is a `ValueError`.
    ///
    /// >>> robots = CachedRobots("https://example.com")
    /// >>> retrieval = robots.retrieval()
    /// >>> retrieval.answer(301, {"Location": "http://rebound.example/admin"})
    /// 'http://rebound.example/admin'
    /// >>> retrieval.refuse_hop_into(["127.0.0.1"]), retrieval.outcome
    /// (True, 'unreachable')
    fn refuse_hop_into(&mut self, addresses: Vec<String>) -> PyResult<bool> {
        if self.outcome.is_some() {
            return Err(PyValueError::new_err("this retrieval is over"));
        }
        let addresses = ip_addresses(&addresses, "addresses")?;
        let Some((before, to)) = &self.before_hop else {
            return Ok(false);
        };
        match before.judge_hop_addresses(to, &addresses) {
            None => Ok(false),
            Some(refused) => {
                self.outcome = Some(refused);
                Ok(true)
            }
        }
    }

    /// The request failed below HTTP (`error` says how: an exception or a message). robots.txt
    /// is then unreachable: nothing is allowed until it is had again, or the last copy is kept.
    fn fail(&mut self, error: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.outcome.is_some() {
            return Err(PyValueError::new_err("this retrieval is over"));
        }
        // The exception's type and words say what failed (robots-fetch classifies a Rust
        // client's errors by their causes; a Python exception has none to walk).
        let message = error.str()?.to_string();
        let name = error.get_type().name()?;
        self.outcome = Some(FetchOutcome::Unreachable(
            robots_fetch::UnreachableCause::Network(NetworkError {
                kind: NetworkErrorKind::Other,
                message: format!("{name}: {message}"),
            }),
        ));
        Ok(())
    }

    /// `None` while the retrieval goes on, then `"parsed"`, `"not_modified"`, `"unavailable"`
    /// (a 4xx or an unfollowable redirect: allow all) or `"unreachable"` (429, 5xx, a network
    /// failure or a refused redirect: disallow all, or the last copy).
    #[getter]
    fn outcome(&self) -> Option<&'static str> {
        self.outcome.as_ref().map(FetchOutcome::name)
    }

    /// The last status answered, or `None`.
    #[getter]
    fn status(&self) -> Option<u16> {
        self.status
    }

    /// Why robots.txt was unreachable (or the redirect refused), or `None`.
    #[getter]
    fn error(&self) -> Option<String> {
        match &self.outcome {
            Some(FetchOutcome::Unreachable(cause)) => Some(cause.to_string()),
            _ => None,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<Retrieval {} {}>",
            self.steps.url(),
            self.outcome.as_ref().map_or("pending", FetchOutcome::name)
        )
    }
}

/// What a client holds for one origin's robots.txt between retrievals, as robots-fetch's cache
/// holds it (Google's rules, RFC 9309): the rules of a 2xx, allow all after a 4xx, disallow all
/// while robots.txt is unreachable (429, 5xx, network errors) with no earlier copy — the last
/// good copy goes on being used when there is one, and after 30 days unreachable with none,
/// everything is allowed. A good copy lives its `Cache-Control: max-age` within 1 minute and 24
/// hours (24 hours without one); an unreachable origin is retried after its `Retry-After` or a
/// back-off doubling from 1 minute up to 1 hour.
///
/// `now` is the caller's clock in seconds (`time.monotonic()`).
///
/// >>> robots = CachedRobots("https://example.com")
/// >>> retrieval = robots.retrieval()
/// >>> retrieval.answer(503, {"Retry-After": "120"}) is None
/// True
/// >>> robots.update(retrieval, now=1000.0)
/// >>> robots.rules, robots.refresh_at, robots.failures
/// ('disallow_all', 1120.0, 1)
/// >>> robots.check("https://example.com/", "FooBot").allowed
/// False
#[pyclass(module = "robots_core")]
pub struct CachedRobots {
    origin: Origin,
    config: CacheConfig,
    kept: Kept,
    validators: Validators,
    rules: Held,
    updated_at: Option<f64>,
    refresh_at: Option<f64>,
    last: Option<Last>,
}

/// The rules held.
enum Held {
    /// Not retrieved yet.
    Nothing,
    Parsed(Py<RobotsTxt>),
    AllowAll,
    DisallowAll,
}

/// What the last retrieval said.
struct Last {
    outcome: &'static str,
    status: Option<u16>,
    retry_after: Option<f64>,
    redirected_to: Option<String>,
    error: Option<String>,
}

#[pymethods]
impl CachedRobots {
    /// For the origin of `url` (any URL of it). `ValueError` for a URL with no http(s) origin.
    /// `auth_errors_disallow` reads 401 and 403 as disallow all (the older convention).
    #[new]
    #[pyo3(signature = (url, *, auth_errors_disallow = false))]
    fn new(url: &Bound<'_, PyAny>, auth_errors_disallow: bool) -> PyResult<CachedRobots> {
        let url = args::text(url, "url")?;
        let origin = Origin::parse(&url).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(CachedRobots {
            origin,
            config: CacheConfig {
                auth_errors_disallow,
                ..CacheConfig::default()
            },
            kept: Kept::default(),
            validators: Validators::default(),
            rules: Held::Nothing,
            updated_at: None,
            refresh_at: None,
            last: None,
        })
    }

    /// The origin (`https://example.com`, `http://example.com:8080`).
    #[getter]
    fn origin(&self) -> &str {
        self.origin.as_str()
    }

    /// A new retrieval of this origin's robots.txt, conditional when the copy held came with
    /// validators.
    fn retrieval(&self) -> Retrieval {
        Retrieval {
            steps: robots_fetch::Retrieval::revalidating(&self.origin, &self.validators),
            before_hop: None,
            outcome: None,
            status: None,
        }
    }

    /// The headers a retrieval's first request carries for a conditional refresh
    /// (`If-None-Match`, `If-Modified-Since`), as `(name, value)` pairs.
    fn request_headers(&self) -> Vec<(String, String)> {
        let mut headers = HeaderMap::new();
        self.validators.apply_to(&mut headers);
        headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.to_string(), value)
            })
            .collect()
    }

    /// Takes a finished retrieval's outcome at time `now`: what is held next, and until when.
    fn update(&mut self, py: Python<'_>, retrieval: &Retrieval, now: f64) -> PyResult<()> {
        let Some(outcome) = &retrieval.outcome else {
            return Err(PyValueError::new_err(
                "the retrieval is not over: answer it until answer() returns None",
            ));
        };
        if !now.is_finite() {
            return Err(PyValueError::new_err(
                "now must be a finite number of seconds",
            ));
        }
        let elapsed = self.updated_at.map_or(0.0, |then| (now - then).max(0.0));
        let kept = self
            .kept
            .aged(std::time::Duration::try_from_secs_f64(elapsed).unwrap_or_default());
        let next = self.config.next(kept, outcome);
        self.rules = match next.rules {
            NextRules::Parsed => match outcome {
                FetchOutcome::Parsed { body, .. } => {
                    Held::Parsed(Py::new(py, RobotsTxt::from_bytes(py, body))?)
                }
                _ => Held::DisallowAll,
            },
            NextRules::Kept => std::mem::replace(&mut self.rules, Held::Nothing),
            NextRules::AllowAll => Held::AllowAll,
            NextRules::DisallowAll => Held::DisallowAll,
        };
        match outcome {
            FetchOutcome::Parsed { validators, .. } => self.validators = validators.clone(),
            FetchOutcome::NotModified { validators, .. } if next.rules == NextRules::Kept => {
                self.validators = self.validators.updated_by(validators);
            }
            FetchOutcome::Unavailable { .. } => self.validators = Validators::default(),
            _ => {}
        }
        self.kept = kept.after(outcome, &next);
        self.updated_at = Some(now);
        self.refresh_at = Some(now + next.lives_for.as_secs_f64());
        let (retry_after, error) = match outcome {
            FetchOutcome::Unreachable(cause) => (
                cause.retry_after().map(|d| d.as_secs_f64()),
                Some(cause.to_string()),
            ),
            _ => (None, None),
        };
        self.last = Some(Last {
            outcome: outcome.name(),
            status: retrieval.status,
            retry_after,
            redirected_to: match outcome {
                FetchOutcome::Parsed { redirected_to, .. } => {
                    redirected_to.as_ref().map(ToString::to_string)
                }
                _ => None,
            },
            error,
        });
        Ok(())
    }

    /// Whose rules apply: `"none"` (never retrieved), `"parsed"`, `"allow_all"` or
    /// `"disallow_all"`.
    #[getter]
    fn rules(&self) -> &'static str {
        match self.rules {
            Held::Nothing => "none",
            Held::Parsed(_) => "parsed",
            Held::AllowAll => "allow_all",
            Held::DisallowAll => "disallow_all",
        }
    }

    /// The parsed robots.txt whose rules apply, or `None`.
    #[getter]
    fn robots(&self, py: Python<'_>) -> Option<Py<RobotsTxt>> {
        match &self.rules {
            Held::Parsed(robots) => Some(robots.clone_ref(py)),
            _ => None,
        }
    }

    /// When to retrieve robots.txt again, on the caller's clock, or `None` before the first.
    #[getter]
    fn refresh_at(&self) -> Option<f64> {
        self.refresh_at
    }

    /// Whether the rules held are still to be used at `now` (retrieved, and not due again).
    fn is_fresh(&self, now: f64) -> bool {
        self.refresh_at.is_some_and(|at| now < at)
    }

    /// How long robots.txt has been unreachable at `now`, in seconds, from the first failure
    /// of this outage; `None` when the last retrieval had an answer.
    fn unreachable_for(&self, now: f64) -> Option<f64> {
        let since_update = self.updated_at.map_or(0.0, |then| (now - then).max(0.0));
        let at_update = self.kept.unreachable_for?.as_secs_f64();
        let total = at_update + since_update;
        total.is_finite().then_some(total)
    }

    /// Whether a request refused at `now` because robots.txt is unreachable waits for its next
    /// retrieval (`True`) or is given up: it waits when that retrieval comes within `hold`
    /// seconds of the outage's start (robots-fetch's rule, as the Rust crawl loop applies it).
    fn waits_for_robots(&self, now: f64, hold: f64) -> PyResult<bool> {
        // (No number from a setting may panic: NaN is refused, a huge one is for ever.)
        let seconds = |value: f64, what: &str| {
            if value.is_nan() {
                return Err(PyValueError::new_err(format!(
                    "{what} must be a number of seconds, not NaN"
                )));
            }
            Ok(std::time::Duration::try_from_secs_f64(value.max(0.0))
                .unwrap_or(std::time::Duration::MAX))
        };
        let hold = seconds(hold, "hold")?;
        let Some(unreachable_for) = self.unreachable_for(now) else {
            return Ok(false);
        };
        let next_try_in = self.refresh_at.map_or(0.0, |at| at - now);
        Ok(robots_fetch::waits_for_robots(
            seconds(unreachable_for, "now")?,
            seconds(next_try_in, "now")?,
            hold,
        ))
    }

    /// Heap bytes held: the parsed copy (with the views compiled from it) and the validators.
    #[getter]
    fn heap_bytes(&self) -> usize {
        let rules = match &self.rules {
            Held::Parsed(robots) => robots.get().heap_bytes(),
            _ => 0,
        };
        size_of::<CachedRobots>() + self.origin.heap_bytes() + self.validators.heap_bytes() + rules
    }

    /// Unreachable retrievals in a row.
    #[getter]
    fn failures(&self) -> u32 {
        self.kept.failures
    }

    /// The last retrieval's outcome (`"parsed"`, `"not_modified"`, `"unavailable"`,
    /// `"unreachable"`), or `None`.
    #[getter]
    fn outcome(&self) -> Option<&'static str> {
        self.last.as_ref().map(|last| last.outcome)
    }

    /// The last retrieval's final status, or `None`.
    #[getter]
    fn status(&self) -> Option<u16> {
        self.last.as_ref().and_then(|last| last.status)
    }

    /// The `Retry-After` the last (unreachable) answer asked for, in seconds, or `None`.
    #[getter]
    fn retry_after(&self) -> Option<f64> {
        self.last.as_ref().and_then(|last| last.retry_after)
    }

    /// Where the parsed file was found when robots.txt redirected (the rules still belong to
    /// this origin alone), or `None`.
    #[getter]
    fn redirected_to(&self) -> Option<String> {
        self.last
            .as_ref()
            .and_then(|last| last.redirected_to.clone())
    }

    /// Why the last retrieval found robots.txt unreachable, or `None`.
    #[getter]
    fn error(&self) -> Option<String> {
        self.last.as_ref().and_then(|last| last.error.clone())
    }

    /// The verdict a polite crawler acts on for `url` ([`RobotsTxt.check_resolved`] on a parsed
    /// copy): allowed after a 4xx, refused while robots.txt is unreachable with no copy, and
    /// refused before the first retrieval.
    fn check(
        &self,
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<Verdict> {
        let (url, agent) = args::url_and_agent(url, user_agent, "check")?;
        let whole = |allowed| Verdict {
            allowed,
            rule: None,
            resolved_path: None,
        };
        Ok(match &self.rules {
            Held::Parsed(robots) => robots.get().resolved(py, &agent, &url),
            Held::AllowAll => whole(true),
            Held::DisallowAll | Held::Nothing => whole(false),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<CachedRobots {} {} failures={}>",
            self.origin.as_str(),
            self.rules(),
            self.kept.failures
        )
    }
}

/// Response headers from Python: a mapping (values a `str`, `bytes`, or a list of them, as
/// Scrapy's `Headers` holds them) or `(name, value)` pairs. Names or values HTTP cannot carry
/// are skipped, as a client would have refused them.
fn header_map(headers: &Bound<'_, PyAny>) -> PyResult<HeaderMap> {
    let pairs = if headers.hasattr("items")? {
        headers.call_method0("items")?
    } else {
        headers.clone()
    };
    let mut map = HeaderMap::new();
    for pair in pairs.try_iter()? {
        let pair = pair?;
        let pair = pair.cast::<PyTuple>().map_err(|_| {
            PyTypeError::new_err("headers must be a mapping or (name, value) pairs")
        })?;
        if pair.len() != 2 {
            return Err(PyTypeError::new_err(
                "headers must be a mapping or (name, value) pairs",
            ));
        }
        let name = args::text(&pair.get_item(0)?, "header name")?.into_owned();
        let Ok(name) = HeaderName::from_bytes(name.trim().as_bytes()) else {
            continue;
        };
        let value = pair.get_item(1)?;
        let values: Vec<Bound<'_, PyAny>> = match value.cast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => match value.cast::<PyTuple>() {
                Ok(tuple) => tuple.iter().collect(),
                Err(_) => vec![value],
            },
        };
        for value in values {
            let text = match args::body(&value) {
                Ok(bytes) => bytes.into_owned(),
                Err(_) => args::text(&value, "header value")?
                    .into_owned()
                    .into_bytes(),
            };
            if let Ok(value) = HeaderValue::from_bytes(&text) {
                map.append(name.clone(), value);
            }
        }
    }
    Ok(map)
}

/// How long a response asks its server's client to stop, in seconds, or `None`: its
/// `Retry-After` (seconds or an HTTP date) on a 429, 500, 502, 503 or 504, and the reset of
/// rate-limit headers that say nothing is left (`RateLimit`, `RateLimit-Remaining`,
/// `X-RateLimit-Remaining: 0` with their resets), whichever is longer. Uncapped: the caller
/// caps it (the Scrapy middleware at `ROBOTSTXT_MAX_RETRY_AFTER`, 10 minutes).
///
/// >>> server_pause(503, {"Retry-After": "120"})
/// 120.0
/// >>> server_pause(200, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"})
/// 30.0
/// >>> server_pause(404, {"Retry-After": "120"}) is None
/// True
#[pyfunction]
pub fn server_pause(status: u16, headers: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    let headers = header_map(headers)?;
    let asked = matches!(status, 429 | 500 | 502 | 503 | 504)
        .then(|| robots_fetch::retry_after(&headers))
        .flatten();
    let limited = robots_fetch::rate_limit_pause(&headers)
        .map(|pause| pause.reset)
        .filter(|reset| !reset.is_zero());
    Ok(asked.max(limited).map(|pause| pause.as_secs_f64()))
}

/// How long to leave a server alone after the `streak`-th distress answer in a row (a 429 or a
/// 5xx of `DISTRESS_STATUSES`, or a network error), in seconds: `base` doubled per answer after
/// the first, at most `cap`, varied by up to ±10% (never above `cap`), and lengthened to
/// `retry_after` (what the answer asked, as `server_pause` reads it) capped at
/// `max_retry_after`, never shortened by it. robots-fetch's rule, the Rust pacers' own.
///
/// >>> 4.5 <= backoff_pause(1) <= 5.5
/// True
/// >>> 18.0 <= backoff_pause(3, 1.0) <= 22.0
/// True
/// >>> backoff_pause(1, 120.0)
/// 120.0
/// >>> backoff_pause(40, 86400.0)
/// 600.0
/// >>> backoff_pause(1, 1.8e19), backoff_pause(1, float("inf"))
/// (600.0, 600.0)
#[pyfunction]
#[pyo3(signature = (streak, retry_after=None, *, base=5.0, cap=300.0, max_retry_after=600.0))]
pub fn backoff_pause(
    streak: u32,
    retry_after: Option<f64>,
    base: f64,
    cap: f64,
    max_retry_after: f64,
) -> PyResult<f64> {
    let seconds = |value: f64, name: &str| {
        Duration::try_from_secs_f64(value).map_err(|_| {
            PyValueError::new_err(format!(
                "{name} must be a non-negative finite number of seconds, not {value}"
            ))
        })
    };
    let backoff = robots_fetch::Backoff {
        base: seconds(base, "base")?,
        max: seconds(cap, "cap")?,
    };
    // What a server asked may be as long as it likes (`Retry-After: 99999999999999999999` is
    // 1.8e19 s, infinity too): saturated, then capped by `max_retry_after`. Never an error,
    // which would drop the pause.
    let asked = retry_after
        .map(|s| match Duration::try_from_secs_f64(s) {
            Ok(asked) => Ok(asked),
            Err(_) if s > 0.0 => Ok(Duration::MAX),
            Err(_) => seconds(s, "retry_after"),
        })
        .transpose()?;
    let pause = backoff.pause_after(streak, asked, seconds(max_retry_after, "max_retry_after")?);
    Ok(pause.as_secs_f64())
}

/// Whether a URL a server handed on (a redirect's `Location`, a link) may be followed from
/// the page that handed it: not from a public host into an internal address (loopback,
/// private, link-local such as 169.254.169.254, shared, unspecified; IPv4-mapped forms
/// included). Judged by the URLs' text, and by `to_addresses` when given: the addresses the
/// target's name resolves to, by the resolver the client connects with, so that a public name
/// resolving to an internal address is refused too (a name that did not resolve: none). From an
/// internal host anything may follow. A string that is not a URL or an address is a
/// `ValueError`.
///
/// >>> hop_allowed("https://example.com/a", "http://169.254.169.254/latest/meta-data/")
/// False
/// >>> hop_allowed("https://example.com/a", "https://example.org/b")
/// True
/// >>> hop_allowed("https://example.com/a", "http://rebound.example/admin", ["127.0.0.1"])
/// False
#[pyfunction]
#[pyo3(signature = (from_url, to_url, to_addresses=None))]
pub fn hop_allowed(
    from_url: &Bound<'_, PyAny>,
    to_url: &Bound<'_, PyAny>,
    to_addresses: Option<Vec<String>>,
) -> PyResult<bool> {
    let parse = |value: &Bound<'_, PyAny>, name: &str| -> PyResult<url::Url> {
        let text = args::text(value, name)?;
        url::Url::parse(&text).map_err(|e| PyValueError::new_err(format!("{name} {text:?}: {e}")))
    };
    let (from, to) = (parse(from_url, "from_url")?, parse(to_url, "to_url")?);
    let addresses = ip_addresses(&to_addresses.unwrap_or_default(), "to_addresses")?;
    Ok(HopRule::default().allows_addresses(&from, &to, &addresses))
}

/// Whether an IP address is internal (loopback, private, link-local such as 169.254.169.254,
/// shared, unspecified; IPv4-mapped and IPv4-compatible forms included): the addresses a
/// connection may not use for a name the caller did not allow. Not an address: `ValueError`.
///
/// >>> is_internal_address("169.254.169.254"), is_internal_address("::ffff:10.0.0.1")
/// (True, True)
/// >>> is_internal_address("93.184.215.14")
/// False
#[pyfunction]
pub fn is_internal_address(address: &str) -> PyResult<bool> {
    let address = ip_addresses(&[address.to_string()], "address")?;
    Ok(address.iter().any(|a| robots_fetch::is_internal_ip(*a)))
}

/// A host name in the one form every comparison uses: IDNA (punycode), lowercase, without a
/// trailing dot (`"Evil.Test."` is `"evil.test"`), as the Rust side judges names.
///
/// >>> normal_host("Evil.TEST."), normal_host("bücher.de")
/// ('evil.test', 'xn--bcher-kva.de')
#[pyfunction]
pub fn normal_host(host: &str) -> String {
    robots_fetch::normal_name(host).into_owned()
}

/// IP addresses from their text; one that is not is a `ValueError` naming the argument.
fn ip_addresses(texts: &[String], name: &str) -> PyResult<Vec<std::net::IpAddr>> {
    texts
        .iter()
        .map(|text| {
            text.parse().map_err(|e| {
                PyValueError::new_err(format!("{name}: {text:?} is not an IP address: {e}"))
            })
        })
        .collect()
}
