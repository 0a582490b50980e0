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
