//! A kept copy's validators (`ETag`, `Last-Modified`) and the conditional refresh they make
//! (spec section 7): the refresh asks whether the file changed, and a `304 Not Modified` says it
//! did not, without a body.

use std::time::Duration;

use http::{HeaderMap, HeaderValue, header};

/// A validator longer than this is not kept (a hostile server cannot make entries heavy with
/// it); the copy is then refreshed unconditionally.
pub const MAX_VALIDATOR_BYTES: usize = 1024;

/// The validators a robots.txt response came with, sent back on its refresh: `ETag` as
/// `If-None-Match` and `Last-Modified` as `If-Modified-Since`, both exactly as given (a weak
/// `W/"…"` ETag too).
///
/// ```
/// use http::{HeaderMap, HeaderValue, header};
/// use robots_fetch::Validators;
///
/// let mut response = HeaderMap::new();
/// response.insert(header::ETAG, HeaderValue::from_static("W/\"v1\""));
/// response.insert(header::LAST_MODIFIED, HeaderValue::from_static("Tue, 24 Nov 2026 10:00:00 GMT"));
/// let validators = Validators::from_headers(&response);
///
/// let mut refresh = HeaderMap::new();
/// validators.apply_to(&mut refresh);
/// assert_eq!(refresh[header::IF_NONE_MATCH], "W/\"v1\"");
/// assert_eq!(refresh[header::IF_MODIFIED_SINCE], "Tue, 24 Nov 2026 10:00:00 GMT");
/// ```
///
/// With them is kept the copy's `Cache-Control: max-age`, the one caching header a refresh's
/// answer may leave out: a `304` updates only the headers it carries (RFC 9111 section 4.3.4),
/// so a bare 304 gives the copy the life it was given, never the 24-hour default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag`, as given.
    pub etag: Option<HeaderValue>,
    /// `Last-Modified`, as given.
    pub last_modified: Option<HeaderValue>,
    /// `Cache-Control: max-age` (`no-cache` and `no-store` as zero), as given, before the
    /// cache's bounds apply.
    pub max_age: Option<Duration>,
}

impl Validators {
    /// The validators in a response's headers (non-empty, at most [`MAX_VALIDATOR_BYTES`] each).
    pub fn from_headers(headers: &HeaderMap) -> Validators {
        let kept = |name| {
            headers
                .get(name)
                .filter(|v: &&HeaderValue| !v.is_empty() && v.len() <= MAX_VALIDATOR_BYTES)
                .cloned()
        };
        Validators {
            etag: kept(header::ETAG),
            last_modified: kept(header::LAST_MODIFIED),
            max_age: crate::headers::max_age(headers),
        }
    }

    /// Whether there is none: the refresh is unconditional.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// Adds the conditional headers to a refresh's request.
    pub fn apply_to(&self, headers: &mut HeaderMap) {
        if let Some(etag) = &self.etag {
            headers.insert(header::IF_NONE_MATCH, etag.clone());
        }
        if let Some(modified) = &self.last_modified {
            headers.insert(header::IF_MODIFIED_SINCE, modified.clone());
        }
    }

    /// These, updated by the validators a `304` came with (a 304 may say the copy's new ETag,
    /// date or `max-age`; those it does not say stay: RFC 9111 section 4.3.4).
    pub fn updated_by(&self, newer: &Validators) -> Validators {
        Validators {
            etag: newer.etag.clone().or_else(|| self.etag.clone()),
            last_modified: newer
                .last_modified
                .clone()
                .or_else(|| self.last_modified.clone()),
            max_age: newer.max_age.or(self.max_age),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.etag.as_ref().map_or(0, HeaderValue::len)
            + self.last_modified.as_ref().map_or(0, HeaderValue::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_overlong_validators_are_not_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(header::ETAG, HeaderValue::from_static(""));
        let long = "x".repeat(MAX_VALIDATOR_BYTES + 1);
        headers.insert(header::LAST_MODIFIED, HeaderValue::from_str(&long).unwrap());
        let validators = Validators::from_headers(&headers);
        assert!(validators.is_empty(), "{validators:?}");
        let mut request = HeaderMap::new();
        validators.apply_to(&mut request);
        assert!(request.is_empty());
    }

    #[test]
    fn a_304_updates_what_it_says_and_keeps_the_rest() {
        let old = Validators {
            etag: Some(HeaderValue::from_static("\"a\"")),
            last_modified: Some(HeaderValue::from_static("Mon, 23 Nov 2026 10:00:00 GMT")),
            max_age: Some(Duration::from_secs(60)),
        };
        let newer = Validators {
            etag: Some(HeaderValue::from_static("\"b\"")),
            last_modified: None,
            max_age: None,
        };
        let updated = old.updated_by(&newer);
        // A 304 without max-age keeps the stored one; one with it replaces it.
        assert_eq!(updated.max_age, Some(Duration::from_secs(60)));
        let renewed = old.updated_by(&Validators {
            max_age: Some(Duration::from_secs(5)),
            ..Validators::default()
        });
        assert_eq!(renewed.max_age, Some(Duration::from_secs(5)));
        assert_eq!(updated.etag.unwrap(), "\"b\"");
        assert_eq!(
            updated.last_modified.unwrap(),
            "Mon, 23 Nov 2026 10:00:00 GMT"
        );
        assert_eq!(old.heap_bytes(), 3 + 29);
    }
}
