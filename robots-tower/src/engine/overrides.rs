//! Per-request overrides, as typed `http::Extensions` (the convention of reqwest-tracing and
//! http-cache): put one on a request — `http::Request::extensions_mut().insert(…)` with the tower
//! layer, `reqwest_middleware::RequestBuilder::with_extension(…)` with the middleware — and it
//! applies to that request (and its redirect hops) only.

use std::sync::Arc;

/// Check this request also as these policy tokens (`Google-Extended`, `Applebot-Extended`…): it
/// is sent only when the crawler's own rules *and* each token's rules allow it. The tokens must
/// be configured on the builder (`.policy_tokens([...])`), so that their views are compiled with
/// the file; an unconfigured token refuses the request with
/// [`RobotsError::PolicyTokenNotConfigured`](crate::RobotsError::PolicyTokenNotConfigured).
///
/// ```
/// let mut request = http::Request::get("https://example.com/article").body(()).unwrap();
/// request.extensions_mut().insert(robots_tower::AlsoCheckAs::new(["Google-Extended"]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlsoCheckAs(Arc<[String]>);

impl AlsoCheckAs {
    /// These tokens, each compared as given.
    pub fn new<I, S>(tokens: I) -> AlsoCheckAs
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AlsoCheckAs(tokens.into_iter().map(Into::into).collect())
    }

    /// The tokens.
    pub fn tokens(&self) -> &[String] {
        &self.0
    }
}

/// Send this request without checking robots.txt: an explicit, logged opt-out for a request the
/// caller is entitled to make whatever robots.txt says (a site's owner checking their own pages,
/// a URL a user typed in). The request is still paced with its origin, and logged at warn level
/// with the reason.
///
/// ```
/// let mut request = http::Request::get("https://example.com/private/report").body(()).unwrap();
/// request
///     .extensions_mut()
///     .insert(robots_tower::SkipRobotsCheck::because("the site's owner asked for this report"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkipRobotsCheck {
    reason: Arc<str>,
}

impl SkipRobotsCheck {
    /// Skips the check, for this reason (logged with every such request).
    pub fn because(reason: &str) -> SkipRobotsCheck {
        SkipRobotsCheck {
            reason: reason.into(),
        }
    }

    /// Why.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Says that this request's URL was handed to the crawler by a server: the page a link was
/// found on, the sitemap or robots.txt that named it, the response whose `Location` pointed
/// to it. The gate then applies the address rule (spec section 8): a URL handed on by a public
/// host is not fetched when it leads into a loopback, private, link-local, shared or
/// unspecified address, judged on the address the connection would use
/// ([`crate::RobotsError::AddressRefused`]). Only the URLs a caller gives directly may be
/// internal. The middleware puts it on every redirect hop itself, and the sitemap expansion on
/// every sitemap and page it reads; put it on the links a crawler finds.
///
/// ```
/// let page: url::Url = "https://example.com/blog/".parse().unwrap();
/// let mut request = http::Request::get("https://example.com/blog/post").body(()).unwrap();
/// request.extensions_mut().insert(robots_tower::HandedBy::new(page));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedBy(Arc<url::Url>);

impl HandedBy {
    /// The URL was found at (or pointed to by) `from`.
    pub fn new(from: url::Url) -> HandedBy {
        HandedBy(Arc::new(from))
    }

    /// Where the URL came from.
    pub fn url(&self) -> &url::Url {
        &self.0
    }
}

/// The overrides of one request (cheap clones of its extensions).
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    pub(crate) also: Option<AlsoCheckAs>,
    pub(crate) skip: Option<SkipRobotsCheck>,
    pub(crate) handed_by: Option<HandedBy>,
}

impl Overrides {
    pub(crate) fn of(extensions: &http::Extensions) -> Overrides {
        Overrides {
            also: extensions.get::<AlsoCheckAs>().cloned(),
            skip: extensions.get::<SkipRobotsCheck>().cloned(),
            handed_by: extensions.get::<HandedBy>().cloned(),
        }
    }

    /// These overrides for a URL handed on by `from` (a redirect hop, a sitemap's entry).
    pub(crate) fn handed_by(&self, from: &url::Url) -> Overrides {
        Overrides {
            handed_by: Some(HandedBy::new(from.clone())),
            ..self.clone()
        }
    }
}
