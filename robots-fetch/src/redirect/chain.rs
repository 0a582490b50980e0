//! One chain of redirects, as every client of the workspace follows one: the URLs requested so
//! far, the hop limit, loops, and the hop rule judged on the target's addresses. robots.txt
//! retrievals ([`crate::Retrieval`]) and page requests (robots-tower's gate) both decide their
//! hops here, so the two cannot drift apart.

use http::HeaderMap;
use url::Url;

use super::{RedirectPolicy, RedirectRefusal};

/// The redirects of one request so far, and the policy its next hop must pass.
///
/// ```
/// use robots_fetch::{HopRule, RedirectChain, RedirectPolicy, RedirectRefusal};
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let resolver = robots_fetch::Resolver::new();
/// let policy = RedirectPolicy::limited(2).with_rule(HopRule::default());
/// let mut chain = RedirectChain::new("https://example.com/a".parse()?, policy);
///
/// let mut moved = http::HeaderMap::new();
/// moved.insert("location", "/b".parse()?);
/// let next = chain.location(&moved).expect("a Location");
/// chain.check_resolved(&next, &resolver).await?; // same name: no lookup needed
/// chain.follow(next);
/// assert_eq!((chain.url().as_str(), chain.hops()), ("https://example.com/b", 1));
///
/// // Back to where it began: a loop. Into an internal address: the rule refuses it.
/// let back = "https://example.com/a".parse()?;
/// assert!(matches!(chain.check(&back), Err(RedirectRefusal::Loop { .. })));
/// let inside = "http://169.254.169.254/latest/meta-data/".parse()?;
/// assert!(matches!(chain.check_resolved(&inside, &resolver).await, Err(RedirectRefusal::Rule { .. })));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RedirectChain {
    /// Every URL requested, the first one first; the last is the one asked now.
    visited: Vec<Url>,
    policy: RedirectPolicy,
}

impl RedirectChain {
    /// A chain that starts at `start`, following hops as `policy` allows.
    pub fn new(start: Url, policy: RedirectPolicy) -> RedirectChain {
        RedirectChain {
            visited: vec![start],
            policy,
        }
    }

    /// The URL requested now (the start, or the last hop followed).
    pub fn url(&self) -> &Url {
        // Never empty: `new` puts the start first and nothing removes it.
        &self.visited[self.visited.len() - 1]
    }

    /// The URL the chain started at.
    pub fn start(&self) -> &Url {
        &self.visited[0]
    }

    /// How many hops were followed.
    pub fn hops(&self) -> usize {
        self.visited.len() - 1
    }

    /// The policy its hops pass.
    pub fn policy(&self) -> &RedirectPolicy {
        &self.policy
    }

    /// Where an answer to [`RedirectChain::url`] with these headers points: its `Location`,
    /// resolved against the URL requested. `None` without a usable one. Any scheme: what a
    /// client does with another than http(s) is the client's to say.
    pub fn location(&self, headers: &HeaderMap) -> Option<Url> {
        let value = headers.get(http::header::LOCATION)?.to_str().ok()?;
        self.url().join(value.trim()).ok()
    }

    /// Whether the hop to `to` may be followed, by the chain alone: not back to a URL this
    /// chain requested (a loop), and not past the policy's hop limit. The hop rule is
    /// `RedirectChain::check_resolved`'s (feature `client`), or
    /// [`RedirectChain::check_addresses`]'s.
    pub fn check(&self, to: &Url) -> Result<(), RedirectRefusal> {
        if self.visited.contains(to) {
            return Err(RedirectRefusal::Loop {
                url: to.to_string(),
            });
        }
        if self.hops() >= self.policy.max_hops() {
            return Err(RedirectRefusal::TooManyHops {
                limit: self.policy.max_hops(),
            });
        }
        Ok(())
    }

    #[cfg(feature = "client")]
    /// [`RedirectChain::check`], then the policy's hop rule, judged on the addresses the
    /// target's name resolves to through `resolver` (the one the client connects with;
    /// [`super::HopRule::allows_resolved`]): a lookup that fails is refused, and a source the
    /// caller made internal-allowed may hand on internal addresses.
    pub async fn check_resolved(
        &self,
        to: &Url,
        resolver: &crate::Resolver,
    ) -> Result<(), RedirectRefusal> {
        self.check(to)?;
        let rule = self.policy.rule();
        if rule.allows_resolved(self.url(), to, resolver).await {
            return Ok(());
        }
        Err(self.refused_by(to))
    }

    /// [`RedirectChain::check`], then the policy's hop rule judged on `addresses`, the ones the
    /// target's name resolved to (for a client that resolves names itself, as Scrapy does;
    /// [`super::HopRule::allows_addresses`]). A lookup that failed is best given as
    /// `0.0.0.0`, which the rule refuses.
    pub fn check_addresses(
        &self,
        to: &Url,
        addresses: &[std::net::IpAddr],
    ) -> Result<(), RedirectRefusal> {
        self.check(to)?;
        if self
            .policy
            .rule()
            .allows_addresses(self.url(), to, addresses)
        {
            return Ok(());
        }
        Err(self.refused_by(to))
    }

    /// The rule's refusal of the hop to `to`: said to be by its address when its text passed.
    fn refused_by(&self, to: &Url) -> RedirectRefusal {
        let rule = self.policy.rule();
        let rule = if rule.allows(self.url(), to) {
            rule.described_for(to)
        } else {
            rule.to_string()
        };
        RedirectRefusal::Rule { rule }
    }

    /// Records a hop that passed: `to` is requested now.
    pub fn follow(&mut self, to: Url) {
        self.visited.push(to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "client")]
    use crate::HopRule;

    fn url(s: &str) -> Url {
        s.parse().unwrap()
    }

    #[test]
    fn the_limit_counts_hops_followed() {
        let mut chain =
            RedirectChain::new(url("https://example.com/0"), RedirectPolicy::limited(2));
        for hop in 1..=2 {
            let next = url(&format!("https://example.com/{hop}"));
            assert_eq!(chain.check(&next), Ok(()));
            chain.follow(next);
        }
        assert_eq!(chain.hops(), 2);
        assert_eq!(
            chain.check(&url("https://example.com/3")),
            Err(RedirectRefusal::TooManyHops { limit: 2 })
        );
        // A loop is said as a loop, even at the limit.
        assert!(matches!(
            chain.check(&url("https://example.com/0")),
            Err(RedirectRefusal::Loop { .. })
        ));
        assert_eq!(chain.start().as_str(), "https://example.com/0");
    }

    #[test]
    fn a_location_is_resolved_against_the_url_requested() {
        let mut chain =
            RedirectChain::new(url("https://example.com/a/b"), RedirectPolicy::default());
        let mut headers = HeaderMap::new();
        assert_eq!(chain.location(&headers), None);
        headers.insert("location", " ../c ".parse().unwrap());
        assert_eq!(chain.location(&headers), Some(url("https://example.com/c")));
        chain.follow(url("https://other.example/x/y"));
        assert_eq!(
            chain.location(&headers),
            Some(url("https://other.example/c"))
        );
        headers.insert("location", "file:///etc/passwd".parse().unwrap());
        assert_eq!(chain.location(&headers), Some(url("file:///etc/passwd")));
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn the_rule_is_judged_on_the_targets_addresses() {
        let resolver = crate::Resolver::new()
            .with_override_text("rebound.example:80:10.9.9.9")
            .unwrap();
        let chain = RedirectChain::new(url("https://example.com/"), RedirectPolicy::default());
        let rebound = url("http://rebound.example/");
        match chain.check_resolved(&rebound, &resolver).await {
            Err(RedirectRefusal::Rule { rule }) => {
                assert!(
                    rule.contains("by the address rebound.example resolves to"),
                    "{rule}"
                );
            }
            other => panic!("{other:?}"),
        }
        let addresses = ["10.9.9.9".parse().unwrap()];
        assert!(chain.check_addresses(&rebound, &addresses).is_err());
        let public = ["93.184.215.14".parse().unwrap()];
        assert_eq!(chain.check_addresses(&rebound, &public), Ok(()));
        // A rule without the address part never looks.
        let any = RedirectChain::new(
            url("https://example.com/"),
            RedirectPolicy::default().with_rule(HopRule::any()),
        );
        assert_eq!(any.check_resolved(&rebound, &resolver).await, Ok(()));
    }

    #[cfg(feature = "client")]
    /// A source the caller made internal-allowed redirects into internal literals: by its
    /// word, not refused by the URL's text.
    #[tokio::test]
    async fn an_internal_allowed_source_may_redirect_inside() {
        let resolver = crate::Resolver::new().with_internal_allowed("intranet.example");
        let chain = RedirectChain::new(url("http://intranet.example/"), RedirectPolicy::default());
        assert_eq!(
            chain
                .check_resolved(&url("http://10.1.2.3/"), &resolver)
                .await,
            Ok(())
        );
        let public = RedirectChain::new(url("http://example.com/"), RedirectPolicy::default());
        assert!(
            public
                .check_resolved(&url("http://10.1.2.3/"), &resolver)
                .await
                .is_err()
        );
    }
}
