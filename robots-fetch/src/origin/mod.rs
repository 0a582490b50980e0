//! One robots.txt per origin (spec section 7): scheme + host + port, the host lowercase and in its
//! IDNA (punycode) form, default ports dropped, and a trailing dot removed (`example.com.` is the
//! same host to DNS, so it gets the same robots.txt and the same pacing). The `url` crate does
//! the rest of the normalising.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use url::{Position, Url};

/// Why a URL has no origin to fetch robots.txt from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    /// The text is not a URL.
    #[error("`{url}` is not a valid URL: {source}")]
    InvalidUrl {
        /// The text as given.
        url: String,
        /// What the URL parser said.
        source: url::ParseError,
    },
    /// The URL has no host (`file:`, `mailto:`, `data:`…).
    #[error("`{url}` has no host, so it has no robots.txt")]
    NoHost {
        /// The URL.
        url: String,
    },
}

/// An origin: `scheme://host[:port]`, normalised so that equal origins compare equal
/// (`HTTPS://Example.COM:443` is `https://example.com`; `http://bücher.de` is
/// `http://xn--bcher-kva.de`). Cheap to clone.
///
/// ```
/// use robots_fetch::Origin;
/// let origin = Origin::parse("HTTPS://user:pw@Example.COM:443/a/b?c").unwrap();
/// assert_eq!(origin.as_str(), "https://example.com");
/// assert_eq!(origin.robots_url().as_str(), "https://example.com/robots.txt");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin(Arc<str>);

impl Origin {
    /// The origin of a URL given as text.
    pub fn parse(url: &str) -> Result<Origin, OriginError> {
        let parsed = Url::parse(url).map_err(|source| OriginError::InvalidUrl {
            url: url.to_string(),
            source,
        })?;
        Origin::of(&parsed)
    }

    /// The origin of a parsed URL.
    pub fn of(url: &Url) -> Result<Origin, OriginError> {
        match origin_str(url) {
            Some(s) => Ok(Origin(s.into())),
            None => match url.host_str().filter(|h| !h.is_empty()) {
                None => Err(OriginError::NoHost {
                    url: url.to_string(),
                }),
                // Userinfo or a trailing dot: rebuild without them.
                Some(host) => {
                    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
                    let host = strip_root_dot(host);
                    Ok(Origin(format!("{}://{host}{port}", url.scheme()).into()))
                }
            },
        }
    }

    /// `scheme://host[:port]`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The scheme (`http`, `https`…).
    pub fn scheme(&self) -> &str {
        self.0.split_once("://").map_or("", |(scheme, _)| scheme)
    }

    /// Where this origin's robots.txt is: always `/robots.txt` at the root.
    pub fn robots_url(&self) -> Url {
        // An origin string always parses: it was produced by the URL parser.
        Url::parse(&format!("{}/robots.txt", self.0))
            .unwrap_or_else(|_| unreachable!("origin {} re-parses", self.0))
    }
}

/// The origin of `url` as a slice of it, without allocating: `None` when the URL has no host, or
/// carries userinfo or a trailing dot on its host (which the origin leaves out; [`Origin::of`]
/// handles those).
pub fn origin_str(url: &Url) -> Option<&str> {
    if url.host().is_none()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.host_str().is_some_and(|h| h.ends_with('.'))
    {
        return None;
    }
    Some(&url[..Position::AfterPort])
}

/// `example.com.` → `example.com`: the root label's dot names the same host. A host that is only
/// dots is left alone (it resolves nowhere either way).
pub(crate) fn strip_root_dot(host: &str) -> &str {
    match host.strip_suffix('.') {
        Some(stripped) if !stripped.is_empty() && !stripped.ends_with('.') => stripped,
        _ => host,
    }
}

impl Borrow<str> for Origin {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Origin({})", self.0)
    }
}

impl std::str::FromStr for Origin {
    type Err = OriginError;
    fn from_str(s: &str) -> Result<Origin, OriginError> {
        Origin::parse(s)
    }
}

#[cfg(test)]
mod tests {
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
        // Other schemes with hosts have origins too.
        assert_eq!(
            origin("ftp://files.example.com/a"),
            "ftp://files.example.com"
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
    }

    #[test]
    fn urls_without_a_host_are_errors() {
        assert!(matches!(
            Origin::parse("mailto:a@b.c"),
            Err(OriginError::NoHost { .. })
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
    }

    #[test]
    fn borrowed_origin_matches_the_owned_one() {
        let url = Url::parse("https://Example.com:443/x?y").unwrap();
        assert_eq!(origin_str(&url), Some("https://example.com"));
        assert_eq!(origin_str(&Url::parse("https://u@e.com/").unwrap()), None);
        assert_eq!(origin_str(&Url::parse("https://e.com./").unwrap()), None);
    }
}
