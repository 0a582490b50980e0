#![doc = include_str!("../README.md")]
//!
//! Turn spider's own robots check off: it would fetch robots.txt a second time with its inexact
//! parser (which fails open on 5xx).
//!
//! ## Where the hook does not apply
//!
//! - **Proxy rotation** (two or more proxies): spider builds one client per proxy itself, and
//!   those clients bypass the one given here. [`polite_client`] refuses that configuration with
//!   [`SpiderError::ProxyRotation`] rather than crawl unchecked.
//! - **Chrome** (feature `chrome`), **`wreq`** (feature `wreq`), and the remote-fetcher and
//!   fetch-engine hooks (`with_remote_fetcher`, `with_fetch_engine`) fetch pages without
//!   spider's reqwest client, so robots.txt is not enforced there. Build spider without them.
//! - spider's `Cargo.toml` needs, with default features off, `features = ["cache_mem"]` (or
//!   `cache_request`) for `set_http_client` to take this client.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

use robots_tower::{ForMiddleware, HopRule, RedirectPolicy, RobotsConfig};
use spider::configuration::{ProxyIgnore, RedirectPolicy as SpiderRedirects};
use spider::website::Website;

/// Why a polite client could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpiderError {
    /// spider rotates between several proxies with clients it builds itself, which would
    /// bypass the robots check.
    #[error(
        "spider is set to rotate between {proxies} proxies with clients of its own, which bypass the robots check; use one proxy (or a rotating proxy endpoint) with polite_client"
    )]
    ProxyRotation {
        /// How many proxies are configured.
        proxies: usize,
    },
    /// A configured proxy address is not valid.
    #[error("proxy `{address}` is not valid: {source}")]
    Proxy {
        /// The address as configured.
        address: String,
        /// What reqwest said.
        source: reqwest::Error,
    },
    /// reqwest could not build the client (TLS backend, resolver…).
    #[error("the HTTP client could not be built: {0}")]
    Client(#[from] reqwest::Error),
}

/// The spider HTTP client with robots.txt enforcement and per-origin politeness inside: pass it
/// to `Website::set_http_client` before crawling. `robots` is the middleware's configuration
/// (crawler identity, politeness numbers, schedule mode…). Its redirect policy is derived from
/// spider's ([`redirect_policy`]); to choose another, use [`polite_client_with`].
pub fn polite_client(
    website: &Website,
    robots: RobotsConfig<ForMiddleware>,
) -> Result<spider::Client, SpiderError> {
    let policy = redirect_policy(website);
    polite_client_with(website, robots.redirect_policy(policy))
}

/// Like [`polite_client`], with `robots`'s own redirect policy (see
/// [`RobotsConfig::redirect_policy`]) instead of one derived from spider's.
pub fn polite_client_with(
    website: &Website,
    robots: RobotsConfig<ForMiddleware>,
) -> Result<spider::Client, SpiderError> {
    // Spider's client connects through the resolver the middleware groups and judges hops by.
    let client = network_client_resolving(website, Some(robots.resolver_in_use()))?;
    if website.configuration.respect_robots_txt {
        tracing::warn!(
            "spider's own robots.txt check is on: it fetches robots.txt again with its own parser; turn it off with with_respect_robots_txt(false), the middleware enforces robots.txt"
        );
    }
    let middleware = robots.robots_client(client.clone()).build()?;
    Ok(reqwest_middleware::ClientBuilder::new(client)
        .with(middleware)
        .build())
}

/// The reqwest client spider would crawl with (its base settings, its proxy, its request
/// timeout), with reqwest's redirect following off: the middleware follows hop by hop.
pub fn network_client(website: &Website) -> Result<reqwest::Client, SpiderError> {
    network_client_resolving(website, None)
}

/// [`network_client`], connecting through `resolver` when given.
fn network_client_resolving(
    website: &Website,
    resolver: Option<robots_tower::Resolver>,
) -> Result<reqwest::Client, SpiderError> {
    let config = &website.configuration;
    let mut builder = website
        .configure_base_client()
        .redirect(reqwest::redirect::Policy::none());
    if let Some(resolver) = resolver {
        builder = builder.dns_resolver(std::sync::Arc::new(resolver));
    }
    if let Some(timeout) = config.request_timeout {
        builder = builder.timeout(timeout);
    }
    let proxies: Vec<&str> = config
        .proxies
        .iter()
        .flatten()
        .filter(|p| p.ignore != ProxyIgnore::Http)
        .map(|p| p.addr.as_str())
        .collect();
    if proxies.len() > 1 {
        return Err(SpiderError::ProxyRotation {
            proxies: proxies.len(),
        });
    }
    for address in proxies {
        let proxy = reqwest::Proxy::all(address).map_err(|source| SpiderError::Proxy {
            address: address.to_string(),
            source,
        })?;
        builder = builder.proxy(proxy);
    }
    Ok(builder.build()?)
}

/// The middleware's redirect policy matching spider's: its redirect limit, `Strict` as same
/// origin, `None` as no following; always with the default rule against hops from a public
/// host into an internal address (spider's SSRF guard).
pub fn redirect_policy(website: &Website) -> RedirectPolicy {
    let config = &website.configuration;
    match config.redirect_policy {
        SpiderRedirects::None => RedirectPolicy::none(),
        SpiderRedirects::Strict => RedirectPolicy::limited(config.redirect_limit)
            .with_rule(HopRule::same_origin().and(HopRule::default())),
        SpiderRedirects::Loose => RedirectPolicy::limited(config.redirect_limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spiders_redirect_settings_become_the_middlewares() {
        let mut website = Website::new("https://example.com");
        website.with_redirect_limit(3);
        let policy = redirect_policy(&website);
        assert_eq!(policy.max_hops(), 3);
        assert_eq!(
            policy.rule().to_string(),
            "not from a public host into an internal address"
        );
        website.with_redirect_policy(SpiderRedirects::Strict);
        assert_eq!(
            redirect_policy(&website).rule().to_string(),
            "(same origin and not from a public host into an internal address)"
        );
        website.with_redirect_policy(SpiderRedirects::None);
        assert!(!redirect_policy(&website).follows());
    }

    #[test]
    fn proxy_rotation_is_refused_not_bypassed() {
        let mut website = Website::new("https://example.com");
        website.with_proxies(Some(vec![
            "http://proxy-a.internal:3128".into(),
            "http://proxy-b.internal:3128".into(),
        ]));
        let error = polite_client(&website, robots_tower::RobotsMiddleware::builder("FooBot"))
            .err()
            .map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("rotate between 2 proxies")),
            "{error:?}"
        );
        // One proxy is the client's own: accepted.
        website.with_proxies(Some(vec!["http://proxy-a.internal:3128".into()]));
        assert!(polite_client(&website, robots_tower::RobotsMiddleware::builder("FooBot")).is_ok());
    }
}
