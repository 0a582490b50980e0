//! Politeness groups (spec section 8): which requests share one budget. robots.txt stays per
//! origin; spacing, concurrency, pauses and back-off count per group, and the group key names
//! the fleet's Redis keys.

use std::net::IpAddr;
use std::sync::Arc;

use arrayvec::ArrayString;
use publicsuffix::Psl;
use robots_fetch::{Origin, Resolver};

/// What requests share one politeness budget: spacing, concurrency, pauses and back-off are
/// counted per group, while each origin keeps its own robots.txt and Crawl-delay.
///
/// ```
/// use robots_tower::{PolitenessKey, RobotsLayer};
/// // Every subdomain of one registrable domain shares one budget.
/// let layer = RobotsLayer::builder("FooBot/1.0").politeness_key(PolitenessKey::Domain).build();
/// # let _ = layer;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PolitenessKey {
    /// The origin's host, whatever its scheme and port: `http://example.com` and
    /// `https://example.com:8443` share one budget. The default.
    #[default]
    Host,
    /// Scheme, host and port: each origin its own budget (the behaviour before groups).
    Origin,
    /// The registrable domain by the Public Suffix List (ICANN and private sections):
    /// `a.shop.co.uk` and `b.shop.co.uk` share `shop.co.uk`; `x.co.uk` and `y.co.uk` do not. An
    /// IP host is its own group. See [`crate::RobotsConfig::public_suffix_list`].
    Domain,
    /// The address the request will connect to, from the resolver the HTTP client uses
    /// ([`crate::RobotsConfig::resolver`]): many names on one server share one budget.
    Ip,
}

impl PolitenessKey {
    /// The name used on the command line and in logs: `host`, `origin`, `domain`, `ip`.
    pub fn as_str(self) -> &'static str {
        match self {
            PolitenessKey::Host => "host",
            PolitenessKey::Origin => "origin",
            PolitenessKey::Domain => "domain",
            PolitenessKey::Ip => "ip",
        }
    }
}

impl std::str::FromStr for PolitenessKey {
    type Err = String;

    /// `host`, `origin`, `domain` or `ip`.
    fn from_str(text: &str) -> Result<PolitenessKey, String> {
        match text {
            "host" => Ok(PolitenessKey::Host),
            "origin" => Ok(PolitenessKey::Origin),
            "domain" => Ok(PolitenessKey::Domain),
            "ip" => Ok(PolitenessKey::Ip),
            other => Err(format!(
                "unknown politeness key `{other}` (expected host, origin, domain or ip)"
            )),
        }
    }
}

/// The Public Suffix List that [`PolitenessKey::Domain`] groups by: the copy compiled into the
/// `psl` crate by default, or a newer list file read at run time (the format of
/// `public_suffix_list.dat`, ICANN and private sections).
///
/// ```
/// use robots_tower::PublicSuffixList;
/// let list = PublicSuffixList::builtin();
/// assert_eq!(list.registrable_domain("a.shop.co.uk"), "shop.co.uk");
/// let newer = PublicSuffixList::parse("// ===BEGIN ICANN DOMAINS===\nexample\n// ===END ICANN DOMAINS===\n")?;
/// assert_eq!(newer.registrable_domain("a.b.example"), "b.example");
/// # Ok::<(), robots_tower::PublicSuffixListError>(())
/// ```
#[derive(Clone, Default)]
pub struct PublicSuffixList(Option<Arc<publicsuffix::List>>);

/// A Public Suffix List file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublicSuffixListError {
    /// The file could not be read.
    #[error("cannot read the Public Suffix List {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a Public Suffix List.
    #[error("not a Public Suffix List: {0}")]
    Parse(String),
}

impl std::fmt::Debug for PublicSuffixList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            None => "PublicSuffixList(builtin)",
            Some(_) => "PublicSuffixList(loaded)",
        })
    }
}

impl PublicSuffixList {
    /// The list compiled into the `psl` crate.
    pub fn builtin() -> PublicSuffixList {
        PublicSuffixList(None)
    }

    /// A list from the text of a `public_suffix_list.dat` file (with its section markers).
    pub fn parse(text: &str) -> Result<PublicSuffixList, PublicSuffixListError> {
        let list: publicsuffix::List = text
            .parse()
            .map_err(|e: publicsuffix::Error| PublicSuffixListError::Parse(e.to_string()))?;
        if list.is_empty() {
            return Err(PublicSuffixListError::Parse("no rules".into()));
        }
        Ok(PublicSuffixList(Some(Arc::new(list))))
    }

    /// A list read from a file.
    pub fn load(
        path: impl AsRef<std::path::Path>,
    ) -> Result<PublicSuffixList, PublicSuffixListError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PublicSuffixListError::Read {
            path: path.display().to_string(),
            source,
        })?;
        PublicSuffixList::parse(&text)
    }

    /// The registrable domain of a host (a suffix of it): the host itself when it is an IP
    /// literal, a public suffix, or unknown to the list.
    pub fn registrable_domain<'a>(&self, host: &'a str) -> &'a str {
        if host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
            return host;
        }
        let name = host.as_bytes();
        let found = match &self.0 {
            None => psl::domain(name).map(|d| d.as_bytes().len()),
            Some(list) => list.domain(name).map(|d| d.as_bytes().len()),
        };
        // The domain is the host's own tail: sliced, not copied.
        found
            .and_then(|len| host.get(host.len().saturating_sub(len)..))
            .unwrap_or(host)
    }
}

/// A group's key: a part of the origin's text for `host`, `origin` and `domain` (borrowed, so
/// the usual request builds nothing), an address for `ip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupKey<'a> {
    Text(&'a str),
    Addr(ArrayString<48>),
}

impl GroupKey<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            GroupKey::Text(text) => text,
            GroupKey::Addr(addr) => addr.as_str(),
        }
    }

    fn of_addr(addr: IpAddr) -> GroupKey<'static> {
        use std::fmt::Write;
        let mut text = ArrayString::new();
        match addr {
            // Hand-written: under the address key this runs on every request, and `Display`
            // goes through the formatting machinery (three times slower).
            IpAddr::V4(v4) => {
                for (i, octet) in v4.octets().into_iter().enumerate() {
                    if i > 0 {
                        text.push('.');
                    }
                    if octet >= 100 {
                        text.push(char::from(b'0' + octet / 100));
                    }
                    if octet >= 10 {
                        text.push(char::from(b'0' + octet / 10 % 10));
                    }
                    text.push(char::from(b'0' + octet % 10));
                }
            }
            // At most 45 characters (39 plus an embedded IPv4 tail).
            IpAddr::V6(v6) => {
                let _ = write!(text, "{v6}");
            }
        }
        GroupKey::Addr(text)
    }
}

/// How a gate names the group of an origin.
#[derive(Debug, Clone, Default)]
pub(crate) struct Groups {
    pub(crate) key: PolitenessKey,
    pub(crate) suffixes: PublicSuffixList,
    pub(crate) resolver: Resolver,
}

impl Groups {
    /// The group as a part of the origin's text (`host`, `origin`, `domain`); `None` for the
    /// address key. The request path's way: a slice, nothing built or copied.
    #[inline]
    pub(crate) fn text_key<'a>(&self, origin: &'a Origin) -> Option<&'a str> {
        match self.key {
            PolitenessKey::Host => Some(origin.host()),
            PolitenessKey::Origin => Some(origin.as_str()),
            PolitenessKey::Domain => Some(self.suffixes.registrable_domain(origin.host())),
            PolitenessKey::Ip => None,
        }
    }

    /// The group now, without waiting: `None` only for [`PolitenessKey::Ip`] when the
    /// resolver has no address cached for the origin's host.
    pub(crate) fn key_now<'a>(&self, origin: &'a Origin) -> Option<GroupKey<'a>> {
        if let Some(text) = self.text_key(origin) {
            return Some(GroupKey::Text(text));
        }
        let addr = self
            .resolver
            .cached(unbracketed(origin.host()), origin.port())?;
        Some(GroupKey::of_addr(addr))
    }

    /// The group, resolving the host when the key is the address. A host that does not resolve
    /// is its own group (the request itself will fail to connect).
    pub(crate) async fn key<'a>(&self, origin: &'a Origin) -> GroupKey<'a> {
        if let Some(key) = self.key_now(origin) {
            return key;
        }
        match self
            .resolver
            .first(unbracketed(origin.host()), origin.port())
            .await
        {
            Ok(addr) => GroupKey::of_addr(addr),
            Err(_) => GroupKey::Text(origin.host()),
        }
    }
}

/// An IPv6 literal without its brackets, as resolvers take it.
fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(text: &str) -> Origin {
        Origin::parse(text).unwrap()
    }

    fn key(groups: &Groups, text: &str) -> String {
        groups.key_now(&origin(text)).unwrap().as_str().to_string()
    }

    #[test]
    fn host_origin_and_domain_keys() {
        let mut groups = Groups::default();
        assert_eq!(key(&groups, "http://example.com"), "example.com");
        assert_eq!(key(&groups, "https://example.com:8443"), "example.com");
        assert_eq!(key(&groups, "http://[::1]:8080"), "[::1]");
        groups.key = PolitenessKey::Origin;
        assert_eq!(
            key(&groups, "https://example.com:8443"),
            "https://example.com:8443"
        );
        groups.key = PolitenessKey::Domain;
        assert_eq!(key(&groups, "https://a.shop.co.uk"), "shop.co.uk");
        assert_eq!(key(&groups, "https://b.shop.co.uk:81"), "shop.co.uk");
        assert_eq!(key(&groups, "https://x.co.uk"), "x.co.uk");
        assert_eq!(key(&groups, "https://y.co.uk"), "y.co.uk");
        // The private section: two blogs are two sites.
        assert_eq!(key(&groups, "https://a.blogspot.com"), "a.blogspot.com");
        assert_eq!(key(&groups, "https://b.blogspot.com"), "b.blogspot.com");
        assert_eq!(key(&groups, "http://127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(key(&groups, "http://[::1]"), "[::1]");
        // A public suffix alone, or a name the list does not know, is its own group.
        assert_eq!(key(&groups, "http://co.uk"), "co.uk");
        assert_eq!(key(&groups, "http://localhost:3000"), "localhost");
    }

    #[test]
    fn a_loaded_list_replaces_the_builtin_one() {
        let list = PublicSuffixList::parse("// ===BEGIN ICANN DOMAINS===\nuk\nco.uk\nshop.co.uk\n")
            .unwrap();
        // `shop.co.uk` is a suffix in this list, so each shop is its own domain.
        assert_eq!(list.registrable_domain("a.shop.co.uk"), "a.shop.co.uk");
        assert!(PublicSuffixList::parse("").is_err());
        assert!(matches!(
            PublicSuffixList::load("/nonexistent/list.dat"),
            Err(PublicSuffixListError::Read { .. })
        ));
    }

    #[test]
    fn addresses_are_written_as_display_writes_them() {
        for addr in [
            "0.0.0.0",
            "10.0.0.7",
            "192.168.100.255",
            "8.8.8.8",
            "::1",
            "2001:db8::1",
        ] {
            let ip: IpAddr = addr.parse().unwrap();
            assert_eq!(GroupKey::of_addr(ip).as_str(), ip.to_string());
        }
    }

    #[test]
    fn politeness_keys_parse_from_their_names() {
        for key in [
            PolitenessKey::Host,
            PolitenessKey::Origin,
            PolitenessKey::Domain,
            PolitenessKey::Ip,
        ] {
            assert_eq!(key.as_str().parse::<PolitenessKey>(), Ok(key));
        }
        assert!("server".parse::<PolitenessKey>().is_err());
    }
}
