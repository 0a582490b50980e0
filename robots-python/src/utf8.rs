//! A `str`'s UTF-8 without a copy: the hot path of every check.
//!
//! Written by hand because it is what makes a check fast: pyo3 built for the stable ABI of
//! CPython 3.9 (one wheel for every version) reads a `str` by encoding it into a new `bytes`
//! object and copying that, which tripled the cost of `can_fetch`. `PyUnicode_AsUTF8AndSize`
//! returns the UTF-8 CPython caches in the `str` itself; it is in the stable ABI from 3.10 and
//! exported by CPython 3.9 as well (pyo3's bindings leave it out only because 3.9's limited
//! API does not list it).
#![allow(unsafe_code)]

use std::os::raw::c_char;

use pyo3::ffi::{Py_ssize_t, PyObject};
use pyo3::prelude::*;
use pyo3::types::PyString;

unsafe extern "C" {
    fn PyUnicode_AsUTF8AndSize(unicode: *mut PyObject, size: *mut Py_ssize_t) -> *const c_char;
}

/// The string's UTF-8, borrowed from the `str` object (valid while it lives, and `str` objects
/// are immutable), or `None` when it has no UTF-8 form (lone surrogates); the error Python
/// raised then is cleared, for the caller to read the string otherwise.
pub fn borrowed<'a>(string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    let mut size: Py_ssize_t = 0;
    // SAFETY: `string` is a live `str` (the type was checked by the cast that made the
    // `Bound<PyString>`) and the GIL is held (a `Bound` proves it). On success CPython returns
    // a pointer to `size` bytes of valid UTF-8 owned by the object, which outlives `'a`.
    let data = unsafe { PyUnicode_AsUTF8AndSize(string.as_ptr(), &mut size) };
    if data.is_null() {
        // The UnicodeEncodeError must not stay set.
        drop(PyErr::take(string.py()));
        return None;
    }
    let len = usize::try_from(size).ok()?;
    // SAFETY: as above: `len` bytes at `data`, borrowed for `'a`.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
    // SAFETY: CPython encodes with the strict handler (a string it cannot encode returns
    // NULL, above), so the bytes are valid UTF-8; validating them again was a pass over every
    // URL and agent of every check.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}
