//! The errors the layer and the middleware return before a request reaches the network.

use std::fmt;
use std::time::Duration;

use robots_core::RulePattern;
use robots_fetch::{CachedRobots, Origin};

/// Why a request was not sent. Returned boxed (`BoxError`) by the layer, inside
/// `reqwest_middleware::Error::Middleware` by the middleware; get it back with
/// `downcast_ref::<RobotsError>()`.
///
/// ```
/// use robots_tower::RobotsError;
/// let error: robots_fetch::BoxError = Box::new(RobotsError::RelativeUri { uri: "/x".into() });
/// assert!(matches!(error.downcast_ref::<RobotsError>(), Some(RobotsError::RelativeUri { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RobotsError {
    /// robots.txt disallows the URL for this crawler.
    #[error("{url} is disallowed by robots.txt{}{}", DisallowedBy(rule.as_ref()), ResolvedTo(resolved_path.as_deref()))]
    Disallowed {
        /// The URL as requested.
        url: String,
        /// The deciding rule; `None` when everything is disallowed without a rule (a 401/403
        /// robots.txt under the option that treats those as disallow all).
        rule: Option<DecidingRule>,
        /// When the path as given is allowed but a server would resolve it to a disallowed one
        /// (`/public/../private/x` is `/private/x`), that path.
        resolved_path: Option<String>,
    },
    /// The crawler may fetch the URL, but a policy token the request is also checked as
    /// ([`crate::AlsoCheckAs`]) may not.
    #[error("{url} is disallowed by robots.txt for {token}{}", DisallowedBy(rule.as_ref()))]
    DisallowedFor {
        /// The URL as requested.
        url: String,
        /// The policy token.
        token: String,
        /// The deciding rule for that token.
        rule: Option<DecidingRule>,
    },
    /// A request asked to be checked as a policy token the builder was not given, so its rules
    /// were not compiled: the request is refused rather than sent unchecked.
    #[error(
        "`{token}` is not a configured policy token: add it with .policy_tokens([...]) on the builder"
    )]
    PolicyTokenNotConfigured {
        /// The token.
        token: String,
    },
    /// robots.txt could not be fetched and no good copy is known: nothing may be fetched from
    /// the origin for now. Reschedule after `retry_after`.
    #[error(
        "robots.txt of {origin} is unreachable ({cause}); nothing may be fetched there until it is known (retry in {})",
        robots_fetch::HumanDuration(*retry_after)
    )]
    RobotsUnreachable {
        /// The origin.
        origin: Origin,
        /// When the cache will try robots.txt again.
        retry_after: Duration,
        /// How long robots.txt has been unreachable (since the first failure of this outage):
        /// [`Frontier::run`](crate::Frontier::run) gives the origin's URLs up once the next try
        /// would come later than [`FrontierConfig::hold_unreachable`](crate::FrontierConfig::hold_unreachable) after that.
        unreachable_for: Duration,
        /// What went wrong.
        cause: String,
    },
    /// The request URI has no scheme or host, so it has no robots.txt.
    #[error("`{uri}` is not an absolute URI with a host; robots.txt applies per origin")]
    RelativeUri {
        /// The URI as given.
        uri: String,
    },
    /// The request URI has a host, but no origin can be made of it (a port out of range, a
    /// host the URL standard rejects): refused rather than sent where robots.txt was not read.
    #[error("`{uri}` has no valid origin, so its robots.txt cannot be read: {cause}")]
    InvalidOrigin {
        /// The URI as given.
        uri: String,
        /// What the URL parser said.
        cause: String,
    },
    /// The fleet's Redis is unreachable and pacing is set to fail closed
    /// (`FleetFallback::FailClosed`): nothing is sent until it is back. Reschedule.
    #[error("the fleet's Redis is unreachable and pacing fails closed: {message}")]
    FleetUnavailable {
        /// What went wrong.
        message: String,
    },
    /// The URL's scheme is not `http` or `https`, so robots.txt does not govern it: a request
    /// to it, or a redirect into it (`file:`, `javascript:`, `ftp:`), is refused.
    #[error("`{url}` has the scheme `{scheme}`; only http and https URLs are fetched")]
    UnsupportedScheme {
        /// The URL as given, or the redirect target.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// Schedule mode ([`crate::WhenNotReady::Fail`]): the origin cannot take a request now, so the
    /// request fails at once instead of waiting (and holding a framework's permit). Requeue it
    /// for `ready_in` from now; `None` means when a request in flight (or the robots.txt fetch)
    /// ends, so retry soon.
    #[error("{origin} is not ready for another request ({reason}){}", ReadyIn(*ready_in))]
    NotReady {
        /// The origin.
        origin: Origin,
        /// How long until it could take the request, when known.
        ready_in: Option<Duration>,
        /// Why it cannot now.
        reason: NotReadyReason,
    },
    /// The origin's robots.txt asks for a Crawl-delay (or Request-rate) above the maximum delay,
    /// and [`crate::OverlongCrawlDelay::Refuse`] (the default) refuses to crawl it faster than
    /// it asked. Drop the origin's URLs, or choose `Honour` (wait the whole delay) or `Clamp`
    /// (crawl faster than asked) by name.
    #[error(
        "{origin} asks for a Crawl-delay of {}, above the maximum of {}: its pages are not fetched (`overlong_crawl_delay(OverlongCrawlDelay::Honour)` waits it out, `::Clamp` crawls faster than asked)",
        robots_fetch::HumanDuration(*asked),
        robots_fetch::HumanDuration(*max)
    )]
    CrawlDelayTooLong {
        /// The origin.
        origin: Origin,
        /// The delay its robots.txt asks for.
        asked: Duration,
        /// The configured maximum delay.
        max: Duration,
    },
    /// A redirect the middleware was following was refused by its redirect policy
    /// (`RobotsConfig::redirect_policy`, feature `reqwest`): too many hops, or a hop the rule forbids (by
    /// default, from a public host into a loopback, private or link-local address). The target
    /// was not requested.
    #[error("redirect from {from} to {to} not followed: {reason}")]
    RedirectRefused {
        /// The URL that answered with the redirect.
        from: String,
        /// Where it pointed.
        to: String,
        /// Why it was refused.
        reason: robots_fetch::RedirectRefusal,
    },
    /// A URL the address rule refuses (spec section 8): by default, one that a server handed
    /// the crawler ([`crate::HandedBy`]: a redirect's `Location`, a `Sitemap:` line, a
    /// sitemap's entry, a link) leading from a public host into a loopback, private,
    /// link-local, shared or unspecified address, by its text or by the address its name
    /// resolves to ([`crate::RobotsConfig::handed_url_rule`]); and, where the connection is
    /// made, any URL whose name the caller's word did not make internal-allowed that resolves
    /// to internal addresses only ([`robots_fetch::ConnectRefused`]). It was not requested.
    #[error("{url}{}: the address rule refuses it ({rule}){}", from.as_ref().map(|f| format!(", handed on by {f}")).unwrap_or_default(), address.map(|a| format!(", address {a}")).unwrap_or_default())]
    AddressRefused {
        /// The URL refused.
        url: String,
        /// The URL that handed it on, when the refusal came at admission (`None`: refused
        /// where the connection is made).
        from: Option<String>,
        /// The internal address it would have reached, when known (an address literal's, or
        /// the address its name resolved to).
        address: Option<std::net::IpAddr>,
        /// The rule, as its `Display` describes it.
        rule: String,
    },
    /// The request's host is overridden for another port only (`--resolve HOST:PORT:ADDR`,
    /// [`robots_fetch::Resolver::with_override`]): the HTTP client, which resolves by name,
    /// would connect it to that override where the resolver's rule says DNS, so what is
    /// judged and paced would not be what is connected to. Not sent.
    #[error(transparent)]
    OverrideOnOtherPort(#[from] robots_fetch::OverrideOnOtherPort),
}

/// Why a request has no origin, as the refusal every front end gives: no host is
/// [`RobotsError::RelativeUri`], another scheme [`RobotsError::UnsupportedScheme`], and a host
/// the URL standard rejects [`RobotsError::InvalidOrigin`].
impl From<robots_fetch::OriginError> for RobotsError {
    fn from(error: robots_fetch::OriginError) -> RobotsError {
        use robots_fetch::OriginError;
        match error {
            OriginError::NoHost { url } => RobotsError::RelativeUri { uri: url },
            OriginError::UnsupportedScheme { url, scheme } => {
                RobotsError::UnsupportedScheme { url, scheme }
            }
            OriginError::InvalidUrl { url, source } => RobotsError::InvalidOrigin {
                uri: url,
                cause: source.to_string(),
            },
        }
    }
}

impl RobotsError {
    /// The `RobotsError` inside an error of a reqwest-middleware client, if that is why the
    /// request was not sent. It is found under `anyhow` contexts and causes that middleware
    /// outside ours added, and (feature `reqwest-retry`) under reqwest-retry's `RetryError`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let site = wiremock::MockServer::start().await; // a local stand-in for a real site
    /// # wiremock::Mock::given(wiremock::matchers::path("/robots.txt"))
    /// #     .respond_with(wiremock::ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n"))
    /// #     .mount(&site).await;
    /// use robots_tower::{RobotsError, RobotsMiddleware};
    /// let client = RobotsMiddleware::builder("FooBot/1.0").build_client()?;
    /// if let Err(error) = client.get(format!("{}/private", site.uri())).send().await {
    ///     match RobotsError::from_middleware_error(&error) {
    ///         Some(RobotsError::RobotsUnreachable { retry_after, .. }) => println!("retry in {retry_after:?}"),
    ///         Some(refused) => println!("not fetched: {refused}"),
    ///         None => println!("network error: {error}"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "reqwest")]
    pub fn from_middleware_error(error: &reqwest_middleware::Error) -> Option<&RobotsError> {
        match error {
            // `anyhow` finds it under any `.context(…)` a middleware around ours added; a
            // middleware that wrapped it in an error of its own may still name it as a cause.
            reqwest_middleware::Error::Middleware(e) => e
                .downcast_ref::<RobotsError>()
                .or_else(|| {
                    e.chain().find_map(|cause| {
                        cause.downcast_ref::<RobotsError>().or_else(|| {
                            // A middleware error as a cause (reqwest-retry's `WithRetries`).
                            cause
                                .downcast_ref::<reqwest_middleware::Error>()
                                .and_then(RobotsError::from_middleware_error)
                        })
                    })
                })
                .or_else(|| Self::under_retry(e)),
            reqwest_middleware::Error::Reqwest(_) => None,
        }
    }

    /// reqwest-retry's `RetryError::Error` is `#[error(transparent)]`: the error it wraps is not
    /// among the causes, so it is looked for by type.
    #[cfg(all(feature = "reqwest", feature = "reqwest-retry"))]
    fn under_retry(error: &anyhow::Error) -> Option<&RobotsError> {
        match error.downcast_ref::<reqwest_retry::RetryError>()? {
            reqwest_retry::RetryError::Error(inner)
            | reqwest_retry::RetryError::WithRetries { err: inner, .. } => {
                RobotsError::from_middleware_error(inner)
            }
        }
    }

    #[cfg(all(feature = "reqwest", not(feature = "reqwest-retry")))]
    fn under_retry(_: &anyhow::Error) -> Option<&RobotsError> {
        None
    }
}

/// Why an origin cannot take a request now ([`RobotsError::NotReady`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NotReadyReason {
    /// The interval since the previous request (Crawl-delay, the minimum delay) has not passed.
    Spacing,
    /// The origin answered 429 or 503 and is paused (`Retry-After` or the back-off).
    Paused,
    /// Every place at the origin is taken by requests in flight (the concurrency limit).
    InFlight,
    /// Its robots.txt is being fetched for another request.
    RobotsPending,
}

impl NotReadyReason {
    /// A short stable name: `spacing`, `paused`, `in_flight`, `robots_pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            NotReadyReason::Spacing => "spacing",
            NotReadyReason::Paused => "paused",
            NotReadyReason::InFlight => "in_flight",
            NotReadyReason::RobotsPending => "robots_pending",
        }
    }
}

impl fmt::Display for NotReadyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotReadyReason::Spacing => "the interval since the previous request has not passed",
            NotReadyReason::Paused => "paused after a 429/503",
            NotReadyReason::InFlight => "every place is taken by requests in flight",
            NotReadyReason::RobotsPending => "its robots.txt is being fetched",
        })
    }
}

struct ReadyIn(Option<Duration>);

impl fmt::Display for ReadyIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(wait) => write!(f, "; ready in {}", robots_fetch::HumanDuration(wait)),
            None => f.write_str("; ready when the request in flight ends"),
        }
    }
}

/// A rule that decided a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecidingRule {
    /// Line in robots.txt.
    pub line: u32,
    /// Allow or disallow.
    pub kind: robots_core::RuleKind,
    /// The pattern as written; read it with `as_bytes`, `to_str_lossy` or `Display`. For a
    /// request let through it shares the cached rules' bytes (no copy per request), which it
    /// keeps alive: to keep one long, keep `RulePattern::from(pattern.as_bytes())`. A refusal's
    /// rule holds its own copy.
    pub pattern: RulePattern,
}

impl DecidingRule {
    /// The rule that let a request through, its pattern shared with `entry` (no allocation on
    /// the request path; the response's `RobotsInfo` holds the entry anyway).
    pub(crate) fn of(rule: &robots_core::MatchedRule<'_>, entry: &CachedRobots) -> DecidingRule {
        DecidingRule {
            line: rule.line,
            kind: rule.kind,
            pattern: entry.pattern_of(rule),
        }
    }

    /// The rule that refused a request, its pattern copied: an error may be kept long after
    /// the entry leaves the cache, and must not hold the whole compiled file past the cache's
    /// byte budget.
    pub(crate) fn copied(rule: &robots_core::MatchedRule<'_>) -> DecidingRule {
        DecidingRule {
            line: rule.line,
            kind: rule.kind,
            pattern: RulePattern::from(rule.pattern),
        }
    }
}

struct DisallowedBy<'a>(Option<&'a DecidingRule>);

struct ResolvedTo<'a>(Option<&'a str>);

impl fmt::Display for ResolvedTo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, ", which a server resolves to {path}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for DisallowedBy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(rule) => write!(f, " (line {}: Disallow: {})", rule.line, rule.pattern),
            None => f.write_str(" (everything is disallowed)"),
        }
    }
}

#[cfg(all(test, feature = "reqwest"))]
mod tests {
    use super::*;

    /// A middleware around ours may add context to our error (anyhow's `.context`), or wrap it
    /// in an error of its own that names it as its cause: it is found either way.
    #[test]
    fn a_refusal_is_found_through_the_wrapping_of_other_middleware() {
        let refusal = || RobotsError::RelativeUri { uri: "/x".into() };
        let plain = reqwest_middleware::Error::Middleware(anyhow::Error::new(refusal()));
        assert_eq!(RobotsError::from_middleware_error(&plain), Some(&refusal()));
        let in_context = reqwest_middleware::Error::Middleware(
            anyhow::Error::new(refusal())
                .context("retrying")
                .context("after 3 attempts"),
        );
        assert_eq!(
            RobotsError::from_middleware_error(&in_context),
            Some(&refusal())
        );
        #[derive(Debug, thiserror::Error)]
        #[error("gave up")]
        struct GaveUp(#[source] RobotsError);
        let caused = reqwest_middleware::Error::Middleware(anyhow::Error::new(GaveUp(refusal())));
        assert_eq!(
            RobotsError::from_middleware_error(&caused),
            Some(&refusal())
        );
        let other = reqwest_middleware::Error::Middleware(anyhow::anyhow!("something else"));
        assert_eq!(RobotsError::from_middleware_error(&other), None);
    }
}
