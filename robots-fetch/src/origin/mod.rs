//! One robots.txt per origin (spec section 7): scheme + host + port, the host lowercase and in its
//! IDNA (punycode) form, default ports dropped, and a trailing dot removed (`example.com.` is the
//! same host to DNS, so it gets the same robots.txt and the same pacing).
//!
//! [`Origin`] is the only way from a request to a cache or pacing key: every front end (the
//! layer, the middleware, the hooks), the cache and the CLI build it here, from an `http::Uri`
//! ([`Origin::from_uri`]), a `url::Url` ([`Origin::from_url`]) or text ([`Origin::parse`]),
//! with the same scheme check and the same typed error.

mod uri;

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arrayvec::ArrayString;
use url::{Position, Url};

/// Why a request has no origin whose robots.txt could be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    /// The text is not a URL (or its host or port is not valid: `http://h:99999/`).
    #[error("`{url}` is not a valid URL: {source}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What the URL parser said.
        source: url::ParseError,
    },
    /// The URL has no host: a relative reference (`/path`) or a URL like `mailto:`.
    #[error("`{url}` has no host, so it has no robots.txt")]
    NoHost {
        /// The URL as given.
        url: String,
    },
    /// The URL is not `http` or `https` (a redirect to `file:`, `ftp:`…): robots.txt is an
    /// HTTP resource.
    #[error("`{url}` has the scheme `{scheme}`; only http and https URLs have a robots.txt")]
    UnsupportedScheme {
        /// The URL as given.
        url: String,
        /// Its scheme.
        scheme: String,
    },
}

/// The longest origin kept inline, so that an `Origin` is 64 bytes: it is built and moved on
/// every request, and moving a larger one cost more than the allocation it saves (a 256-byte
/// inline origin made a cache-hit decision 30% slower). Of the 5,095 sites of the corpus, two
/// have a longer `https://` origin (the longest is 59 bytes); such an origin is shared on the
/// heap instead.
const INLINE: usize = 56;

/// An origin: `scheme://host[:port]`, normalised so that equal origins compare equal
/// (`HTTPS://Example.COM:443` is `https://example.com`; `http://bücher.de` is
/// `http://xn--bcher-kva.de`). Only `http` and `https` URLs have one.
///
/// It is the key of everything per origin: the robots.txt cache, the pacing, the errors. Built
/// from a request's URI it does not allocate for an origin of up to 56 bytes (nearly all: the
/// longest in a corpus of 5,095 sites is 59), so a cache hit costs no allocation; cloning one
/// copies 64 bytes, or bumps a count for a longer origin.
///
/// ```
/// use robots_fetch::Origin;
/// let origin = Origin::parse("HTTPS://user:pw@Example.COM:443/a/b?c").unwrap();
/// assert_eq!(origin.as_str(), "https://example.com");
/// assert_eq!(origin.robots_url().as_str(), "https://example.com/robots.txt");
///
/// let uri: http::Uri = "http://Example.com.:8080/x".parse().unwrap();
/// assert_eq!(Origin::from_uri(&uri).unwrap().as_str(), "http://example.com:8080");
/// assert!(Origin::parse("file:///etc/passwd").is_err());
/// ```
#[derive(Clone)]
pub struct Origin(Repr);

// The size the docs state: 64 bytes, copied when cloned and moved on every request.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Origin>() == 64);

// Inline on purpose: boxing it would cost the allocation per request this type exists to avoid.
#[derive(Clone)]
enum Repr {
    Inline(ArrayString<INLINE>),
    Shared(Arc<str>),
}

impl Origin {
    /// The origin of a URL given as text.
    pub fn parse(url: &str) -> Result<Origin, OriginError> {
        let parsed = Url::parse(url).map_err(|source| OriginError::InvalidUrl {
            url: url.to_string(),
            source,
        })?;
        Origin::from_url(&parsed)
    }

    /// The origin of a parsed URL. Does not allocate.
    #[inline]
    pub fn from_url(url: &Url) -> Result<Origin, OriginError> {
        match Origin::key_of_url(url)? {
            OriginRef::Borrowed(text) => Ok(Origin::from_canonical(text)),
            OriginRef::Owned(origin) => Ok(*origin),
        }
    }

    /// The origin of a parsed URL without copying it when the URL's own text is the origin
    /// (the usual URL: no userinfo, no trailing dot): what a cache lookup from a URL needs, and
    /// nothing more (the cache's `RobotsCache::cached_at` takes it). The same errors as
    /// [`Origin::from_url`].
    ///
    /// ```
    /// use robots_fetch::{Origin, OriginRef};
    /// let url = url::Url::parse("https://Example.com:443/a?b")?;
    /// let key = Origin::key_of_url(&url)?;
    /// assert!(matches!(key, OriginRef::Borrowed("https://example.com")));
    /// assert_eq!(key.into_owned(), Origin::parse("https://example.com")?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn key_of_url(url: &Url) -> Result<OriginRef<'_>, OriginError> {
        check_scheme(url.scheme(), || url.to_string())?;
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(OriginError::NoHost {
                url: url.to_string(),
            });
        };
        // The URL parser has normalised the scheme, host and port already: the origin is its
        // text up to the port, unless userinfo or a trailing dot on the host must be left out.
        if url.username().is_empty() && url.password().is_none() && !host.ends_with('.') {
            return Ok(OriginRef::Borrowed(&url[..Position::AfterPort]));
        }
        Ok(OriginRef::Owned(Box::new(Origin::rebuilt_from_url(
            url, host,
        ))))
    }

    /// The origin of a URL whose text is not its origin (userinfo, a trailing dot).
    #[cold]
    fn rebuilt_from_url(url: &Url, host: &str) -> Origin {
        let mut key = Builder::default();
        key.push(url.scheme());
        key.push("://");
        key.push(strip_root_dot(host));
        if let Some(port) = url.port() {
            key.push(":");
            key.push(itoa_u16(port, &mut [0; 5]));
        }
        key.finish()
    }

    /// The origin of an absolute request URI (what a tower service receives). Does not
    /// allocate for the usual URI; a host the URL parser would rewrite (`127.1`, an IPv6
    /// literal, a percent-escape) goes through it.
    pub fn from_uri(uri: &http::Uri) -> Result<Origin, OriginError> {
        let no_host = || OriginError::NoHost {
            url: uri.to_string(),
        };
        let scheme = uri.scheme_str().ok_or_else(no_host)?;
        check_scheme(scheme, || uri.to_string())?;
        let authority = uri.authority().ok_or_else(no_host)?;
        let mut buf = [0u8; uri::KEY_MAX];
        match uri::write_key(scheme, authority.as_str(), &mut buf) {
            Some(key) => Ok(Origin::from_canonical(key)),
            None if authority.host().is_empty() => Err(no_host()),
            // A host the URL parser rewrites, or an invalid port: its canonical origin, or why
            // it has none.
            None => Origin::parse(&uri.to_string()),
        }
    }

    /// An origin from text already in canonical form.
    #[inline]
    fn from_canonical(key: &str) -> Origin {
        match ArrayString::from(key) {
            Ok(inline) => Origin(Repr::Inline(inline)),
            Err(_) => Origin(Repr::Shared(key.into())),
        }
    }

    /// `scheme://host[:port]`.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline(inline) => inline.as_str(),
            Repr::Shared(shared) => shared,
        }
    }

    /// The scheme: `http` or `https`.
    pub fn scheme(&self) -> &str {
        self.as_str()
            .split_once("://")
            .map_or("", |(scheme, _)| scheme)
    }

    /// The host, as in the origin (lowercase, punycode, an IPv6 literal in brackets).
    #[inline]
    pub fn host(&self) -> &str {
        let authority = self.authority();
        authority
            .get(..port_colon(authority).unwrap_or(authority.len()))
            .unwrap_or(authority)
    }

    /// `host[:port]`. Hand-written, because the politeness group is the host and is read on
    /// every request: the scheme is `http` or `https`, so no substring search is needed.
    #[inline]
    fn authority(&self) -> &str {
        let text = self.as_str();
        let skip = if text.starts_with("https://") {
            "https://".len()
        } else {
            "http://".len()
        };
        text.get(skip..).unwrap_or("")
    }

    /// The port connections go to: the origin's own, or the scheme's default (80, 443).
    ///
    /// ```
    /// use robots_fetch::Origin;
    /// assert_eq!(Origin::parse("https://example.com").unwrap().port(), 443);
    /// assert_eq!(Origin::parse("http://example.com:8080").unwrap().port(), 8080);
    /// ```
    pub fn port(&self) -> u16 {
        let authority = self.authority();
        match port_colon(authority) {
            Some(colon) => authority
                .get(colon + 1..)
                .and_then(|port| port.parse().ok())
                .unwrap_or(0),
            None if self.scheme() == "https" => 443,
            None => 80,
        }
    }

    /// Where this origin's robots.txt is: always `/robots.txt` at the root.
    pub fn robots_url(&self) -> Url {
        // An origin string always parses: it was produced by the URL parser.
        Url::parse(&format!("{}/robots.txt", self.as_str()))
            .unwrap_or_else(|_| unreachable!("origin {} re-parses", self.as_str()))
    }

    /// Bytes held on the heap (none unless the origin is over 56 bytes).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Inline(_) => 0,
            Repr::Shared(shared) => shared.len(),
        }
    }
}

/// Where the `:` before an authority's port is: the port is at most 5 digits at the end (an
/// origin keeps only non-default ports, always written in digits), so only the last 6 bytes are
/// looked at; an IPv6 literal ends in `]`. Hand-written: it runs on every request.
#[inline]
fn port_colon(authority: &str) -> Option<usize> {
    let bytes = authority.as_bytes();
    let from = bytes.len().saturating_sub(6);
    for at in (from..bytes.len()).rev() {
        match bytes.get(at) {
            Some(b':') => return Some(at),
            Some(b) if b.is_ascii_digit() => {}
            _ => return None,
        }
    }
    None
}

/// Only http(s) URLs have a robots.txt.
#[inline]
fn check_scheme(scheme: &str, url: impl FnOnce() -> String) -> Result<(), OriginError> {
    match scheme {
        "http" | "https" => Ok(()),
        other => Err(OriginError::UnsupportedScheme {
            url: url(),
            scheme: other.to_string(),
        }),
    }
}

/// An origin written piece by piece: inline while it fits, else on the heap.
#[derive(Default)]
struct Builder {
    inline: ArrayString<INLINE>,
    spilled: Option<String>,
}

impl Builder {
    fn push(&mut self, piece: &str) {
        match &mut self.spilled {
            Some(spilled) => spilled.push_str(piece),
            None => {
                if self.inline.try_push_str(piece).is_err() {
                    self.spilled = Some(format!("{}{piece}", self.inline));
                }
            }
        }
    }

    fn finish(self) -> Origin {
        match self.spilled {
            Some(spilled) => Origin(Repr::Shared(spilled.into())),
            None => Origin(Repr::Inline(self.inline)),
        }
    }
}

/// A port in decimal, written into `digits` (no allocation).
fn itoa_u16(port: u16, digits: &mut [u8; 5]) -> &str {
    let mut at = digits.len();
    let mut n = port;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

/// `example.com.` → `example.com`: the root label's dot names the same host. A host that is only
/// dots is left alone (it resolves nowhere either way).
fn strip_root_dot(host: &str) -> &str {
    match host.strip_suffix('.') {
        Some(stripped) if !stripped.is_empty() && !stripped.ends_with('.') => stripped,
        _ => host,
    }
}

/// An origin as a cache is looked up by: borrowed from a URL's text when that text is the
/// origin ([`Origin::key_of_url`]), else an owned [`Origin`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginRef<'a> {
    /// The URL's own text up to its port: already canonical.
    Borrowed(&'a str),
    /// Built, because the URL's text is not its origin (boxed: rare, and the usual key stays
    /// two words).
    Owned(Box<Origin>),
}

impl OriginRef<'_> {
    /// `scheme://host[:port]`.
    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            OriginRef::Borrowed(text) => text,
            OriginRef::Owned(origin) => origin.as_str(),
        }
    }

    /// The owned origin.
    pub fn into_owned(self) -> Origin {
        match self {
            OriginRef::Borrowed(text) => Origin::from_canonical(text),
            OriginRef::Owned(origin) => *origin,
        }
    }
}

/// What a cache lookup takes: an [`Origin`] or an [`OriginRef`] (sealed).
pub trait OriginKey: sealed::Sealed {
    /// The origin's canonical text, the cache's key.
    fn origin_text(&self) -> &str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Origin {}
    impl Sealed for super::OriginRef<'_> {}
}

impl OriginKey for Origin {
    #[inline]
    fn origin_text(&self) -> &str {
        self.as_str()
    }
}

impl OriginKey for OriginRef<'_> {
    #[inline]
    fn origin_text(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Origin {
    #[inline]
    fn eq(&self, other: &Origin) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Origin {}

/// Hashes as its text, so that maps keyed by `Origin` can be searched with a `&str`.
impl Hash for Origin {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for Origin {
    fn partial_cmp(&self, other: &Origin) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Origin {
    fn cmp(&self, other: &Origin) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Borrow<str> for Origin {
    #[inline]
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Origin {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Origin({})", self.as_str())
    }
}

impl std::str::FromStr for Origin {
    type Err = OriginError;
    fn from_str(s: &str) -> Result<Origin, OriginError> {
        Origin::parse(s)
    }
}

impl TryFrom<&Url> for Origin {
    type Error = OriginError;
    fn try_from(url: &Url) -> Result<Origin, OriginError> {
        Origin::from_url(url)
    }
}

impl TryFrom<&http::Uri> for Origin {
    type Error = OriginError;
    fn try_from(uri: &http::Uri) -> Result<Origin, OriginError> {
        Origin::from_uri(uri)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_and_port_of_every_form() {
        for (text, host, port) in [
            ("http://example.com", "example.com", 80),
            ("https://example.com", "example.com", 443),
            ("https://example.com:8443", "example.com", 8443),
            ("http://127.0.0.1:1", "127.0.0.1", 1),
            ("http://[::1]", "[::1]", 80),
            ("http://[::1]:65535", "[::1]", 65535),
            ("https://[2001:db8::1]", "[2001:db8::1]", 443),
            ("http://a1234", "a1234", 80),
        ] {
            let origin = Origin::parse(text).unwrap();
            assert_eq!((origin.host(), origin.port()), (host, port), "{text}");
        }
    }

    use super::*;

    fn origin(url: &str) -> String {
        Origin::parse(url)
            .map(|o| o.to_string())
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn normalisation() {
        assert_eq!(origin("https://example.com/a"), "https://example.com");
        assert_eq!(origin("HTTPS://EXAMPLE.com"), "https://example.com");
        // Default ports equal no port; other ports are other origins.
        assert_eq!(origin("https://example.com:443/x"), "https://example.com");
        assert_eq!(origin("http://example.com:80/x"), "http://example.com");
        assert_eq!(origin("https://example.com:80/x"), "https://example.com:80");
        assert_eq!(origin("http://example.com:8080"), "http://example.com:8080");
        // Schemes and subdomains are different origins.
        assert_ne!(origin("http://example.com"), origin("https://example.com"));
        assert_ne!(
            origin("https://www.example.com"),
            origin("https://example.com")
        );
        // IDN and punycode are the same origin.
        assert_eq!(origin("http://bücher.de/x"), "http://xn--bcher-kva.de");
        assert_eq!(
            origin("http://BÜCHER.de"),
            origin("http://xn--bcher-kva.de")
        );
        // IP hosts are their own origins.
        assert_eq!(origin("http://127.0.0.1:3000/a"), "http://127.0.0.1:3000");
        assert_eq!(origin("http://[::1]:8080/a"), "http://[::1]:8080");
        assert_eq!(origin("http://[::1]/a"), "http://[::1]");
        // Userinfo is ignored.
        assert_eq!(
            origin("https://user:pw@example.com:8443/a"),
            "https://example.com:8443"
        );
        assert_eq!(origin("https://user@example.com/a"), "https://example.com");
        // A trailing dot names the same host.
        assert_eq!(origin("http://example.com./a"), "http://example.com");
        assert_eq!(
            origin("http://Example.COM.:8080/a"),
            "http://example.com:8080"
        );
        assert_eq!(origin("https://u:p@example.com./a"), "https://example.com");
        assert_eq!(
            Origin::parse("http://example.com./x")
                .unwrap()
                .robots_url()
                .as_str(),
            "http://example.com/robots.txt"
        );
    }

    #[test]
    fn robots_url_is_at_the_root() {
        let o = Origin::parse("https://user:pw@example.com:8443/deep/path?q#f").unwrap();
        assert_eq!(
            o.robots_url().as_str(),
            "https://example.com:8443/robots.txt"
        );
        assert_eq!(o.scheme(), "https");
        assert_eq!(o.host(), "example.com");
        assert_eq!(Origin::parse("http://[::1]:8/").unwrap().host(), "[::1]");
        assert_eq!(Origin::parse("http://[::1]/").unwrap().host(), "[::1]");
        assert_eq!(Origin::parse("http://h/").unwrap().host(), "h");
    }

    #[test]
    fn what_has_no_origin_says_why() {
        assert!(matches!(
            Origin::parse("mailto:a@b.c"),
            Err(OriginError::UnsupportedScheme { scheme, .. }) if scheme == "mailto"
        ));
        assert!(matches!(
            Origin::parse("ftp://files.example.com/a"),
            Err(OriginError::UnsupportedScheme { scheme, .. }) if scheme == "ftp"
        ));
        assert!(matches!(
            Origin::parse("not a url"),
            Err(OriginError::InvalidUrl { .. })
        ));
        assert!(matches!(
            Origin::parse("/relative/path"),
            Err(OriginError::InvalidUrl { .. })
        ));
        let message = Origin::parse("data:text/plain,x").unwrap_err().to_string();
        assert!(message.contains("data:text/plain,x"), "{message}");
        let uri = |text: &str| text.parse::<http::Uri>().unwrap();
        assert!(matches!(
            Origin::from_uri(&uri("/relative")),
            Err(OriginError::NoHost { .. })
        ));
        if let Ok(file) = "file:///etc/passwd".parse::<http::Uri>() {
            assert!(matches!(
                Origin::from_uri(&file),
                Err(OriginError::UnsupportedScheme { .. })
            ));
        }
        assert!(matches!(
            Origin::from_uri(&uri("ftp://h/x")),
            Err(OriginError::UnsupportedScheme { .. })
        ));
        // A port out of range is no origin (the request is refused, never sent elsewhere).
        if let Ok(parsed) = "http://example.com:99999/".parse::<http::Uri>() {
            assert!(matches!(
                Origin::from_uri(&parsed),
                Err(OriginError::InvalidUrl { .. })
            ));
        }
    }

    #[test]
    fn long_origins_are_shared_and_equal_to_inline_ones() {
        let host = format!("{}.example", "a".repeat(240));
        let long = Origin::parse(&format!("https://{host}/x")).unwrap();
        assert_eq!(long.as_str(), format!("https://{host}"));
        assert!(long.heap_bytes() > 0);
        let via_uri = Origin::from_uri(&format!("https://{host}/x").parse().unwrap()).unwrap();
        assert_eq!(long, via_uri);
        let short = Origin::parse("https://e.com/").unwrap();
        assert_eq!(short.heap_bytes(), 0);
        // Userinfo on a long host goes through the builder's spill.
        let spilled = Origin::parse(&format!("https://u@{host}.:8443/x")).unwrap();
        assert_eq!(spilled.as_str(), format!("https://{host}:8443"));
    }
}
