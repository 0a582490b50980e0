//! Which redirect hops may be followed: a hop limit and a rule over `(from, to)`, composable
//! with `and`/`or` the way tower-http's redirect policies compose. The robots.txt fetcher applies
//! the rule to robots.txt redirects (its limit is the spec's 5 hops); robots-tower's middleware
//! applies the whole policy to the page redirects it follows.
//!
//! One chain's hops (the URLs requested, the limit, loops, the rule on the target's addresses)
//! are decided by [`RedirectChain`], for robots.txt and pages alike.
//!
//! The default rule refuses a hop from a public host into a loopback, private, link-local or
//! otherwise internal address (an SSRF guard, as scraping frameworks have), while a crawl that
//! *starts* on such an address (a local test site, an intranet crawler) may still redirect within
//! it.

use std::fmt;
use std::sync::Arc;

use url::{Host, Url};

use crate::address::{is_internal, is_internal_ip};

mod chain;
pub use chain::RedirectChain;

/// A rule deciding whether one redirect hop, `from` → `to`, may be followed. Cheap to clone.
///
/// ```
/// use robots_fetch::HopRule;
/// let from: url::Url = "https://example.com/a".parse()?;
/// let rule = HopRule::default(); // not from a public host into an internal address
/// assert!(!rule.allows(&from, &"http://127.0.0.1/admin".parse()?));
/// assert!(!rule.allows(&from, &"http://169.254.169.254/latest/meta-data".parse()?));
/// assert!(rule.allows(&from, &"https://www.example.com/a".parse()?));
///
/// let strict = HopRule::same_origin().and(HopRule::not_into_internal_addresses());
/// assert!(!strict.allows(&from, &"https://www.example.com/a".parse()?));
///
/// let docs = HopRule::from_fn("into docs.example.com", |_, to| to.host_str() == Some("docs.example.com"));
/// let lenient = HopRule::same_origin().or(docs);
/// assert!(lenient.allows(&from, &"https://docs.example.com/x".parse()?));
/// assert_eq!(lenient.to_string(), "(same origin or into docs.example.com)");
/// # Ok::<(), url::ParseError>(())
/// ```
#[derive(Clone)]
pub struct HopRule(Arc<Kind>);

type HopFn = dyn Fn(&Url, &Url) -> bool + Send + Sync;

enum Kind {
    Any,
    SameOrigin,
    NotIntoInternal,
    Custom { name: String, allows: Box<HopFn> },
    And(HopRule, HopRule),
    Or(HopRule, HopRule),
}

impl HopRule {
    /// Every hop.
    pub fn any() -> HopRule {
        HopRule(Arc::new(Kind::Any))
    }

    /// Hops that stay on the same origin (scheme, host and port).
    pub fn same_origin() -> HopRule {
        HopRule(Arc::new(Kind::SameOrigin))
    }

    /// Refuses a hop from a public host into an internal one: loopback (`127.0.0.0/8`, `::1`,
    /// `localhost` and `*.localhost`), private (`10/8`, `172.16/12`, `192.168/16`, `fc00::/7`),
    /// link-local (`169.254/16`, `fe80::/10`, where cloud metadata services answer), shared
    /// (`100.64/10`), unspecified and broadcast addresses, IPv4-mapped and IPv4-compatible IPv6 forms included. A hop from
    /// an internal host may go anywhere. The default rule.
    ///
    /// [`HopRule::allows`] judges the URLs as written; `HopRule::allows_resolved`, which the
    /// fetcher and the middleware use, also judges the address the target's name resolves to,
    /// so a public name that resolves to an internal address (DNS rebinding) is refused too. The
    /// source is judged by its URL: a crawl of an internal network *by name* needs a rule of its
    /// own (`HopRule::any()` or [`HopRule::from_fn`]). A hop within one host is not judged by
    /// address: it reaches the server the request already reached, by the same name.
    pub fn not_into_internal_addresses() -> HopRule {
        HopRule(Arc::new(Kind::NotIntoInternal))
    }

    /// A rule of your own; `name` is how errors and logs describe it.
    pub fn from_fn(
        name: impl Into<String>,
        allows: impl Fn(&Url, &Url) -> bool + Send + Sync + 'static,
    ) -> HopRule {
        HopRule(Arc::new(Kind::Custom {
            name: name.into(),
            allows: Box::new(allows),
        }))
    }

    /// Hops both rules allow.
    pub fn and(self, other: HopRule) -> HopRule {
        HopRule(Arc::new(Kind::And(self, other)))
    }

    /// Hops either rule allows.
    pub fn or(self, other: HopRule) -> HopRule {
        HopRule(Arc::new(Kind::Or(self, other)))
    }

    /// Whether the hop `from` → `to` may be followed.
    pub fn allows(&self, from: &Url, to: &Url) -> bool {
        match &*self.0 {
            Kind::Any => true,
            Kind::SameOrigin => from.origin() == to.origin(),
            Kind::NotIntoInternal => is_internal(from) || !is_internal(to),
            Kind::Custom { allows, .. } => allows(from, to),
            Kind::And(a, b) => a.allows(from, to) && b.allows(from, to),
            Kind::Or(a, b) => a.allows(from, to) || b.allows(from, to),
        }
    }

    #[cfg(feature = "client")]
    /// [`HopRule::allows`], with the target's name resolved by `resolver` (the one the client
    /// connects with) for [`HopRule::not_into_internal_addresses`]: a public name resolving to
    /// an internal address is refused like an internal literal, and so is a name that does not
    /// resolve (a lookup that fails is never a pass: it may answer an internal address at the
    /// connection). A source the caller's word made internal-allowed
    /// ([`crate::Resolver::is_internal_allowed`]) counts as internal, and a name it hands on is
    /// allowed to connect to internal addresses from then on ([`crate::Resolver::allow_internal`]).
    ///
    /// ```
    /// use robots_fetch::{HopRule, Resolver};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let resolver = Resolver::new().with_override_text("rebound.example:80:127.0.0.1")?;
    /// let (from, to) = ("https://example.com/a".parse()?, "http://rebound.example/admin".parse()?);
    /// assert!(HopRule::default().allows(&from, &to)); // by its text, a public name
    /// assert!(!HopRule::default().allows_resolved(&from, &to, &resolver).await); // by its address
    /// let unresolved = "http://no-such-host.invalid/".parse()?;
    /// assert!(!HopRule::default().allows_resolved(&from, &unresolved, &resolver).await);
    /// # Ok(()) }
    /// ```
    pub fn allows_resolved<'a>(
        &'a self,
        from: &'a Url,
        to: &'a Url,
        resolver: &'a crate::Resolver,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        // Boxed: only redirect hops and handed URLs (rare) come here.
        Box::pin(async move {
            let trusted = match from.host() {
                Some(Host::Domain(name)) => resolver.is_internal_allowed(name),
                _ => false,
            };
            if trusted {
                // The caller's own server: what it hands on is the caller's too.
                if let Some(Host::Domain(name)) = to.host() {
                    resolver.allow_internal(name);
                }
                return self.allows_trusted(from, to);
            }
            let addresses = match (to.host(), to.port_or_known_default()) {
                (Some(Host::Domain(name)), Some(port)) if self.consults_addresses(from, to) => {
                    // Failing closed: a lookup that fails is judged as if it answered an
                    // internal address (the unspecified one).
                    resolver
                        .lookup(name, port)
                        .await
                        .unwrap_or_else(|_| Arc::from([std::net::IpAddr::from([0, 0, 0, 0])]))
                }
                _ => Arc::from([]),
            };
            self.allows_addresses(from, to, &addresses)
        })
    }

    /// [`HopRule::allows`] for a source the caller's word made internal-allowed
    /// (`Resolver::is_internal_allowed`): [`HopRule::not_into_internal_addresses`] lets
    /// it hand on anything; the other rules judge as [`HopRule::allows`] does.
    ///
    /// ```
    /// use robots_fetch::HopRule;
    /// let (from, to) = ("http://intranet.example/".parse()?, "http://10.1.2.3/".parse()?);
    /// assert!(!HopRule::default().allows(&from, &to));
    /// assert!(HopRule::default().allows_trusted(&from, &to));
    /// assert!(!HopRule::same_origin().allows_trusted(&from, &to));
    /// # Ok::<(), url::ParseError>(())
    /// ```
    pub fn allows_trusted(&self, from: &Url, to: &Url) -> bool {
        match &*self.0 {
            Kind::NotIntoInternal => true,
            Kind::And(a, b) => a.allows_trusted(from, to) && b.allows_trusted(from, to),
            Kind::Or(a, b) => a.allows_trusted(from, to) || b.allows_trusted(from, to),
            _ => self.allows(from, to),
        }
    }

    /// [`HopRule::allows`], with the addresses the target's name resolves to (as the client
    /// connects) for [`HopRule::not_into_internal_addresses`]: a public name with an internal
    /// address is refused like an internal literal. With none (a name that did not resolve), the
    /// target is judged by its text. For clients that resolve names themselves (the Python
    /// package's Scrapy middleware, through Scrapy's resolver); `HopRule::allows_resolved`
    /// (feature `client`) resolves with a `Resolver`.
    ///
    /// ```
    /// use robots_fetch::HopRule;
    /// let (from, to) = ("https://example.com/a".parse()?, "http://rebound.example/admin".parse()?);
    /// let loopback = ["127.0.0.1".parse().unwrap()];
    /// assert!(!HopRule::default().allows_addresses(&from, &to, &loopback));
    /// assert!(HopRule::default().allows_addresses(&from, &to, &["93.184.215.14".parse().unwrap()]));
    /// # Ok::<(), url::ParseError>(())
    /// ```
    pub fn allows_addresses(&self, from: &Url, to: &Url, addresses: &[std::net::IpAddr]) -> bool {
        match &*self.0 {
            Kind::NotIntoInternal => by_text(from, to)
                .unwrap_or_else(|| !addresses.iter().any(|addr| is_internal_ip(*addr))),
            Kind::And(a, b) => {
                a.allows_addresses(from, to, addresses) && b.allows_addresses(from, to, addresses)
            }
            Kind::Or(a, b) => {
                a.allows_addresses(from, to, addresses) || b.allows_addresses(from, to, addresses)
            }
            _ => self.allows(from, to),
        }
    }

    /// The rule as a refusal of a hop into `to` names it: by the address `to`'s name resolves
    /// to when its name, not its text, was judged.
    ///
    /// ```
    /// use robots_fetch::HopRule;
    /// let rule = HopRule::default();
    /// assert!(rule.described_for(&"http://rebound.example/".parse()?).ends_with("(by the address rebound.example resolves to)"));
    /// assert_eq!(rule.described_for(&"http://10.1.2.3/".parse()?), rule.to_string());
    /// # Ok::<(), url::ParseError>(())
    /// ```
    pub fn described_for(&self, to: &Url) -> String {
        match to.host() {
            Some(Host::Domain(name)) if !is_internal(to) => {
                format!("{self} (by the address {name} resolves to)")
            }
            _ => self.to_string(),
        }
    }

    /// Whether judging `from` → `to` would read the target's addresses: a
    /// [`HopRule::not_into_internal_addresses`] in the rule, from a public host to another name.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    fn consults_addresses(&self, from: &Url, to: &Url) -> bool {
        match &*self.0 {
            Kind::NotIntoInternal => by_text(from, to).is_none(),
            Kind::And(a, b) | Kind::Or(a, b) => {
                a.consults_addresses(from, to) || b.consults_addresses(from, to)
            }
            _ => false,
        }
    }
}

/// [`HopRule::not_into_internal_addresses`]'s verdict on `from` → `to` when the URLs' text
/// settles it: anything from an internal host, nothing into an internal literal, and a name the
/// same as the page's (no new address to judge). `None` when the target's addresses decide.
fn by_text(from: &Url, to: &Url) -> Option<bool> {
    if is_internal(from) {
        return Some(true);
    }
    if is_internal(to) {
        return Some(false);
    }
    let same_name = match to.host() {
        Some(Host::Domain(name)) => from
            .host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(name)),
        _ => false,
    };
    same_name.then_some(true)
}

impl Default for HopRule {
    /// [`HopRule::not_into_internal_addresses`].
    fn default() -> HopRule {
        HopRule::not_into_internal_addresses()
    }
}

impl fmt::Display for HopRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            Kind::Any => f.write_str("any hop"),
            Kind::SameOrigin => f.write_str("same origin"),
            Kind::NotIntoInternal => f.write_str("not from a public host into an internal address"),
            Kind::Custom { name, .. } => f.write_str(name),
            Kind::And(a, b) => write!(f, "({a} and {b})"),
            Kind::Or(a, b) => write!(f, "({a} or {b})"),
        }
    }
}

impl fmt::Debug for HopRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HopRule({self})")
    }
}

/// How redirects of page requests are followed: at most `max_hops` hops, each allowed by a
/// [`HopRule`]. Default: 10 hops, [`HopRule::not_into_internal_addresses`].
///
/// ```
/// use robots_fetch::{HopRule, RedirectPolicy, RedirectRefusal};
/// let policy = RedirectPolicy::limited(3).with_rule(HopRule::same_origin());
/// let from: url::Url = "https://example.com/a".parse()?;
/// assert_eq!(policy.check(0, &from, &"https://example.com/b".parse()?), Ok(()));
/// assert_eq!(policy.check(3, &from, &"https://example.com/b".parse()?), Err(RedirectRefusal::TooManyHops { limit: 3 }));
/// assert!(policy.check(0, &from, &"https://other.example/".parse()?).is_err());
/// # Ok::<(), url::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RedirectPolicy {
    max_hops: usize,
    rule: HopRule,
}

impl RedirectPolicy {
    /// Up to `max_hops` hops, each allowed by the default rule.
    pub fn limited(max_hops: usize) -> RedirectPolicy {
        RedirectPolicy {
            max_hops,
            rule: HopRule::default(),
        }
    }

    /// No hop is followed: redirects come back to the caller as they are.
    pub fn none() -> RedirectPolicy {
        RedirectPolicy::limited(0)
    }

    /// The same limit with another rule.
    pub fn with_rule(mut self, rule: HopRule) -> RedirectPolicy {
        self.rule = rule;
        self
    }

    /// The hop limit.
    pub fn max_hops(&self) -> usize {
        self.max_hops
    }

    /// The rule every hop must pass.
    pub fn rule(&self) -> &HopRule {
        &self.rule
    }

    /// Whether redirects are followed at all.
    pub fn follows(&self) -> bool {
        self.max_hops > 0
    }

    #[cfg(feature = "client")]
    /// [`RedirectPolicy::check`], judging the target by the addresses `resolver` gives too
    /// ([`HopRule::allows_resolved`]).
    pub async fn check_resolved(
        &self,
        followed: usize,
        from: &Url,
        to: &Url,
        resolver: &crate::Resolver,
    ) -> Result<(), RedirectRefusal> {
        self.check(followed, from, to)?;
        if !self.rule.allows_resolved(from, to, resolver).await {
            return Err(RedirectRefusal::Rule {
                rule: self.rule.described_for(to),
            });
        }
        Ok(())
    }

    /// Whether hop number `followed + 1`, `from` → `to`, may be followed, given `followed` hops
    /// so far, judging the URLs as written.
    pub fn check(&self, followed: usize, from: &Url, to: &Url) -> Result<(), RedirectRefusal> {
        if followed >= self.max_hops {
            return Err(RedirectRefusal::TooManyHops {
                limit: self.max_hops,
            });
        }
        if !self.rule.allows(from, to) {
            return Err(RedirectRefusal::Rule {
                rule: self.rule.to_string(),
            });
        }
        Ok(())
    }
}

impl Default for RedirectPolicy {
    fn default() -> RedirectPolicy {
        RedirectPolicy::limited(10)
    }
}

/// Why a redirect hop was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedirectRefusal {
    /// The hop limit was reached.
    #[error("more than {limit} redirects")]
    TooManyHops {
        /// The limit.
        limit: usize,
    },
    /// The hop rule refused it.
    #[error("the redirect rule refuses it ({rule})")]
    Rule {
        /// The rule, as its `Display` describes it.
        rule: String,
    },
    /// It was followed below the robots layer (a redirect-following layer inside it, seen by
    /// tower-http's `RequestUri` on the response): its hops were neither checked nor paced, and
    /// the response is refused when it came from another origin or from a path robots.txt
    /// disallows.
    #[error(
        "the redirect was followed below the robots layer, unchecked and unpaced: put FollowRedirectLayer outside RobotsLayer"
    )]
    FollowedBelow,
    /// It leads back to a URL this chain of redirects requested already (a loop), as the
    /// robots.txt fetcher detects too.
    #[error("a redirect loop: {url} was requested before in this chain")]
    Loop {
        /// The URL requested again.
        url: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_rule_refuses_only_public_to_internal() {
        let rule = HopRule::default();
        let public = url("https://example.com/go");
        let local = url("http://127.0.0.1:8080/go");
        assert!(!rule.allows(&public, &url("http://127.0.0.1:8080/admin")));
        assert!(!rule.allows(&public, &url("http://[::ffff:10.0.0.1]/")));
        assert!(rule.allows(&public, &url("https://example.org/")));
        assert!(rule.allows(&local, &url("http://127.0.0.1:8080/elsewhere")));
        assert!(rule.allows(&local, &url("https://example.com/")));
    }

    /// A name judged by the addresses it resolves to: an internal one refuses it from a public
    /// page, unless it is the page's own name, the page itself is internal, or the rule has no
    /// address part; no addresses leave it to its text.
    #[test]
    fn a_name_is_judged_by_its_addresses() {
        let rule = HopRule::default();
        let public = url("https://example.com/go");
        let rebound = url("http://rebound.example/admin");
        let ip = |s: &str| -> std::net::IpAddr { s.parse().unwrap() };
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "169.254.169.254",
            "::1",
            "::ffff:192.168.0.1",
        ] {
            assert!(
                !rule.allows_addresses(&public, &rebound, &[ip("93.184.215.14"), ip(internal)]),
                "{internal}"
            );
        }
        assert!(rule.allows_addresses(&public, &rebound, &[ip("93.184.215.14")]));
        assert!(rule.allows_addresses(&public, &rebound, &[]));
        let own = url("https://EXAMPLE.com/admin");
        assert!(rule.allows_addresses(&public, &own, &[ip("127.0.0.1")]));
        let local = url("http://intranet.local/");
        assert!(rule.allows_addresses(&url("http://127.0.0.1/"), &local, &[ip("10.0.0.1")]));
        assert!(!rule.allows_addresses(&public, &url("http://127.0.0.1/"), &[]));
        // Composed: the address part counts wherever it is in the rule.
        let composed = HopRule::any().and(HopRule::default());
        assert!(!composed.allows_addresses(&public, &rebound, &[ip("127.0.0.1")]));
        assert!(HopRule::any().allows_addresses(&public, &rebound, &[ip("127.0.0.1")]));
        assert!(composed.consults_addresses(&public, &rebound));
        assert!(!composed.consults_addresses(&public, &own));
        assert!(!HopRule::any().consults_addresses(&public, &rebound));
    }

    #[test]
    fn rules_compose() {
        let from = url("https://example.com/a");
        let same = url("https://example.com/b");
        let other = url("https://example.org/b");
        let never = HopRule::from_fn("never", |_, _| false);
        assert!(HopRule::same_origin().allows(&from, &same));
        assert!(!HopRule::same_origin().allows(&from, &other));
        assert!(!HopRule::any().and(never.clone()).allows(&from, &same));
        assert!(never.clone().or(HopRule::any()).allows(&from, &other));
        assert!(
            !HopRule::same_origin()
                .or(never.clone())
                .allows(&from, &other)
        );
        assert_eq!(
            HopRule::same_origin().and(never).to_string(),
            "(same origin and never)"
        );
    }

    #[test]
    fn the_policy_counts_hops_then_asks_the_rule() {
        let policy = RedirectPolicy::limited(2);
        let from = url("https://example.com/");
        let to = url("https://example.com/x");
        assert_eq!(policy.check(1, &from, &to), Ok(()));
        assert_eq!(
            policy.check(2, &from, &to),
            Err(RedirectRefusal::TooManyHops { limit: 2 })
        );
        assert!(!RedirectPolicy::none().follows());
        assert!(matches!(
            policy.check(0, &from, &url("http://10.1.1.1/")),
            Err(RedirectRefusal::Rule { .. })
        ));
    }
}
