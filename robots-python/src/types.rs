//! The values a check or a lint gives Python: small frozen objects with Rust's field names,
//! compared by value, and with a `repr` that reads like the call that would make them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// The rule that decided a verdict: its line in the file, `"allow"` or `"disallow"`, and its
/// pattern as written.
#[pyclass(frozen, eq, hash, get_all, module = "robots_core")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The rule's line number (1-based).
    pub line: u32,
    /// `"allow"` or `"disallow"`.
    pub kind: &'static str,
    /// The pattern as written in the file (invalid UTF-8 replaced).
    pub pattern: String,
}

impl Rule {
    pub fn of(rule: Option<robots_core::MatchedRule<'_>>) -> Option<Rule> {
        rule.map(|rule| Rule {
            line: rule.line,
            kind: rule.kind.as_str(),
            pattern: rule.pattern_lossy().into_owned(),
        })
    }
}

#[pymethods]
impl Rule {
    #[new]
    fn new(line: u32, kind: &str, pattern: String) -> PyResult<Rule> {
        let kind = match kind {
            "allow" => "allow",
            "disallow" => "disallow",
            other => {
                return Err(PyValueError::new_err(format!(
                    "kind must be 'allow' or 'disallow', not {other:?}"
                )));
            }
        };
        Ok(Rule {
            line,
            kind,
            pattern,
        })
    }

    /// Pickles and copies by its fields.
    fn __getnewargs__(&self) -> (u32, &'static str, String) {
        (self.line, self.kind, self.pattern.clone())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Rule(line={}, kind={}, pattern={})",
            self.line,
            py_str(py, self.kind),
            py_str(py, &self.pattern)
        )
    }
}

/// Whether a crawler may fetch a URL (`allowed`), and the rule that decided (`rule`: `None`
/// when no rule matched, so the URL is allowed). From `check_resolved`, `resolved_path` is the
/// path a server resolves the URL to when that path was the one refused.
#[pyclass(frozen, eq, hash, get_all, module = "robots_core")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Verdict {
    /// Whether the crawler may fetch the URL.
    pub allowed: bool,
    /// The deciding rule, or `None` when no rule matched.
    pub rule: Option<Rule>,
    /// The resolved path that was refused (`/%7Euser/` resolves to `/~user/`), or `None`.
    pub resolved_path: Option<String>,
}

#[pymethods]
impl Verdict {
    #[new]
    #[pyo3(signature = (allowed, rule = None, resolved_path = None))]
    fn new(
        allowed: bool,
        rule: Option<&Bound<'_, Rule>>,
        resolved_path: Option<String>,
    ) -> Verdict {
        Verdict {
            allowed,
            rule: rule.map(|rule| rule.get().clone()),
            resolved_path,
        }
    }

    /// Pickles and copies by its fields.
    fn __getnewargs__(&self) -> (bool, Option<Rule>, Option<String>) {
        (self.allowed, self.rule.clone(), self.resolved_path.clone())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let resolved = self.resolved_path.as_ref().map_or(String::new(), |path| {
            format!(", resolved_path={}", py_str(py, path))
        });
        format!(
            "Verdict(allowed={}, rule={}{resolved})",
            py_bool(self.allowed),
            self.rule
                .as_ref()
                .map_or("None".into(), |rule| rule.__repr__(py))
        )
    }
}

/// What a crawler may do with a URL: the crawl verdict (`allowed`, `rule`) and the AI usage
/// preferences robots.txt states for it (`Content-Usage`, `Content-Signal`). Each preference is
/// `True` (yes), `False` (no) or `None` (not stated, or the URL may not be fetched: nothing
/// applies to what cannot be crawled).
#[pyclass(frozen, eq, hash, get_all, module = "robots_core")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Usage {
    /// Whether the crawler may fetch the URL.
    pub allowed: bool,
    /// The rule that decided the crawl verdict, or `None`.
    pub rule: Option<Rule>,
    /// May the content train AI models (`Content-Usage: train-ai`, `Content-Signal: ai-train`;
    /// any no gives no).
    pub train_ai: Option<bool>,
    /// May the content be used for search (both vocabularies' `search`).
    pub search: Option<bool>,
    /// May the content be given to AI models as input (`Content-Signal: ai-input`).
    pub ai_input: Option<bool>,
}

impl Usage {
    pub fn of(usage: &robots_core::Usage<'_>) -> Usage {
        let preferences = &usage.preferences;
        Usage {
            allowed: usage.verdict.allowed,
            rule: Rule::of(usage.verdict.rule),
            train_ai: as_bool(preferences.may_train_ai()),
            search: as_bool(preferences.may_search()),
            ai_input: as_bool(preferences.may_use_as_ai_input()),
        }
    }
}

fn as_bool(preference: robots_core::Preference) -> Option<bool> {
    match preference {
        robots_core::Preference::Yes => Some(true),
        robots_core::Preference::No => Some(false),
        _ => None,
    }
}

#[pymethods]
impl Usage {
    #[new]
    #[pyo3(signature = (allowed, rule = None, train_ai = None, search = None, ai_input = None))]
    fn new(
        allowed: bool,
        rule: Option<&Bound<'_, Rule>>,
        train_ai: Option<bool>,
        search: Option<bool>,
        ai_input: Option<bool>,
    ) -> Usage {
        Usage {
            allowed,
            rule: rule.map(|rule| rule.get().clone()),
            train_ai,
            search,
            ai_input,
        }
    }

    /// Pickles and copies by its fields.
    #[allow(clippy::type_complexity)]
    fn __getnewargs__(&self) -> (bool, Option<Rule>, Option<bool>, Option<bool>, Option<bool>) {
        (
            self.allowed,
            self.rule.clone(),
            self.train_ai,
            self.search,
            self.ai_input,
        )
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let opt = |v: Option<bool>| v.map_or("None", py_bool);
        format!(
            "Usage(allowed={}, rule={}, train_ai={}, search={}, ai_input={})",
            py_bool(self.allowed),
            self.rule
                .as_ref()
                .map_or("None".into(), |rule| rule.__repr__(py)),
            opt(self.train_ai),
            opt(self.search),
            opt(self.ai_input)
        )
    }
}

/// A `Request-rate: n/t` record: at most `requests` requests per `seconds`. Unpacks as
/// `requests, seconds = rate`.
#[pyclass(frozen, eq, get_all, module = "robots_core")]
#[derive(Clone, PartialEq)]
pub struct RequestRate {
    /// How many requests…
    pub requests: u32,
    /// …per this many seconds.
    pub seconds: f64,
    /// The record's line.
    pub line: u32,
}

#[pymethods]
impl RequestRate {
    #[new]
    #[pyo3(signature = (requests, seconds, line = 0))]
    fn new(requests: u32, seconds: f64, line: u32) -> RequestRate {
        RequestRate {
            requests,
            seconds,
            line,
        }
    }

    /// Pickles and copies by its fields.
    fn __getnewargs__(&self) -> (u32, f64, u32) {
        (self.requests, self.seconds, self.line)
    }

    /// The seconds between request starts the rate implies (`seconds / requests`).
    #[getter]
    fn interval(&self) -> f64 {
        self.seconds / f64::from(self.requests.max(1))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        PyTuple::new(
            py,
            [
                self.requests.into_pyobject(py)?.into_any(),
                self.seconds.into_pyobject(py)?.into_any(),
            ],
        )?
        .try_iter()
        .map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        format!(
            "RequestRate(requests={}, seconds={:?}, line={})",
            self.requests, self.seconds, self.line
        )
    }
}

/// One lint finding: its line, its kind (`"missing_colon"`), how much it matters
/// (`"error"`, `"warning"` or `"info"`), a sentence for people, and how to fix it.
#[pyclass(frozen, eq, hash, get_all, module = "robots_core")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Line number (1-based).
    pub line: u32,
    /// What it is about, as the `robots lint` command names it (`"missing_colon"`).
    pub kind: String,
    /// `"error"` (a crawler reads it otherwise than meant), `"warning"` or `"info"`.
    pub severity: String,
    /// A sentence for people.
    pub message: String,
    /// How to fix this kind of finding.
    pub fix: String,
}

impl Diagnostic {
    pub fn of(diagnostic: &robots_core::Diagnostic) -> Diagnostic {
        Diagnostic {
            line: diagnostic.line,
            kind: diagnostic.kind.as_str().to_string(),
            severity: diagnostic.severity().as_str().to_string(),
            message: diagnostic.message.clone(),
            fix: diagnostic.kind.fix().to_string(),
        }
    }
}

#[pymethods]
impl Diagnostic {
    #[new]
    fn new(line: u32, kind: String, severity: String, message: String, fix: String) -> Diagnostic {
        Diagnostic {
            line,
            kind,
            severity,
            message,
            fix,
        }
    }

    /// Pickles and copies by its fields.
    fn __getnewargs__(&self) -> (u32, String, String, String, String) {
        (
            self.line,
            self.kind.clone(),
            self.severity.clone(),
            self.message.clone(),
            self.fix.clone(),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Diagnostic(line={}, kind={}, severity={}, message={})",
            self.line,
            py_str(py, &self.kind),
            py_str(py, &self.severity),
            py_str(py, &self.message)
        )
    }

    fn __str__(&self) -> String {
        format!(
            "line {}: {}: {}: {}",
            self.line, self.severity, self.kind, self.message
        )
    }
}

/// A record that is neither a rule, a user-agent nor a sitemap (`Crawl-delay`, `Host`,
/// `Visit-time`, unknown keys), with its key and value as written.
#[pyclass(frozen, eq, hash, get_all, module = "robots_core")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// Line number (1-based).
    pub line: u32,
    /// The key as written (`Crawl-delay`).
    pub key: String,
    /// The value as written.
    pub value: String,
}

impl Record {
    pub fn of(record: &robots_core::Record<'_>) -> Record {
        Record {
            line: record.line,
            key: String::from_utf8_lossy(record.key).into_owned(),
            value: String::from_utf8_lossy(record.written).into_owned(),
        }
    }
}

#[pymethods]
impl Record {
    #[new]
    fn new(line: u32, key: String, value: String) -> Record {
        Record { line, key, value }
    }

    /// Pickles and copies by its fields.
    fn __getnewargs__(&self) -> (u32, String, String) {
        (self.line, self.key.clone(), self.value.clone())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Record(line={}, key={}, value={})",
            self.line,
            py_str(py, &self.key),
            py_str(py, &self.value)
        )
    }
}

fn py_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

/// A string as Python's `repr` writes it.
fn py_str(py: Python<'_>, text: &str) -> String {
    PyString::new(py, text)
        .repr()
        .map_or_else(|_| format!("{text:?}"), |repr| repr.to_string())
}
