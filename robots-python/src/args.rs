//! Arguments as Python gives them: `str` or `bytes`, never anything else, and never a panic on
//! what a `str` may hold (lone surrogates are replaced, as invalid UTF-8 bytes are).

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::utf8;

/// A text argument (a URL, a User-Agent) as UTF-8: a `str` as it is (lone surrogates replaced),
/// `bytes` decoded with invalid sequences replaced. Anything else is a `TypeError` naming the
/// argument.
pub fn text<'a>(value: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Cow<'a, str>> {
    if let Ok(string) = value.cast::<PyString>() {
        return Ok(match utf8::borrowed(string) {
            Some(text) => Cow::Borrowed(text),
            // Lone surrogates cannot be UTF-8; a URL or agent with them is read with U+FFFD.
            None => Cow::Owned(string.to_string_lossy().into_owned()),
        });
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(String::from_utf8_lossy(bytes.as_bytes()));
    }
    Err(type_error(value, name, "str or bytes"))
}

/// The `url` and `user_agent` arguments of a check, refusing urllib's order: a call made as
/// `robotparser.can_fetch(useragent, url)` passes an agent where the URL goes, and would
/// silently be answered for the wrong URL. Swapped means the agent argument is an http(s) URL
/// and the URL argument has no scheme.
pub fn url_and_agent<'a>(
    url: &'a Bound<'_, PyAny>,
    user_agent: &'a Bound<'_, PyAny>,
    method: &str,
) -> PyResult<(Cow<'a, str>, Cow<'a, str>)> {
    let (url, agent) = (text(url, "url")?, text(user_agent, "user_agent")?);
    if is_http_url(&agent) && !has_scheme(&url) {
        return Err(PyTypeError::new_err(format!(
            "{method}(url, user_agent) was given the user agent {url:?} as the URL and the URL \
             {agent:?} as the user agent (urllib.robotparser's order): call \
             {method}({agent:?}, {url:?})"
        )));
    }
    Ok((url, agent))
}

/// Whether `text` starts with `http://` or `https://`, in any case.
fn is_http_url(text: &str) -> bool {
    let bytes = text.as_bytes();
    let starts = |prefix: &[u8]| {
        bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    starts(b"http://") || starts(b"https://")
}

/// Whether `text` starts with a URL scheme and `:` (RFC 3986: a letter, then letters, digits,
/// `+`, `-` or `.`).
fn has_scheme(text: &str) -> bool {
    let Some(colon) = text.find(':') else {
        return false;
    };
    let scheme = &text.as_bytes()[..colon];
    scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// A robots.txt body as bytes: `bytes` as they are, a `str` encoded as UTF-8 (lone surrogates
/// replaced). Anything else is a `TypeError`.
pub fn body<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(string) = value.cast::<PyString>() {
        return Ok(match utf8::borrowed(string) {
            Some(text) => Cow::Borrowed(text.as_bytes()),
            None => Cow::Owned(string.to_string_lossy().into_owned().into_bytes()),
        });
    }
    Err(type_error(value, "body", "bytes or str"))
}

fn type_error(value: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyErr {
    let given = value
        .get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!("{name} must be {expected}, not {given}"))
}
