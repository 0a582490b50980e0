//! One resolver for the HTTP client, the politeness groups and the redirect guard: a caching
//! resolver with per-host overrides (curl's `--resolve HOST:PORT:ADDR`). Sharing it means the
//! address a request is paced by and judged by is the address it connects to.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use quick_cache::Weighter;
use tokio::time::Instant;

use crate::address::normal_name;

/// A caching DNS resolver with per-host overrides, shared by everything that needs an address:
/// the reqwest client (it implements `reqwest::dns::Resolve`, and
/// `RobotsMiddleware`'s `build_client` plugs it in), a hyper-util connector (feature
/// `hyper-util`: it is a tower service of names, for `HttpConnector::new_with_resolver`),
/// politeness by address, and the redirect guard that refuses a public name resolving to an
/// internal address.
///
/// Lookups go to the system resolver (`getaddrinfo`, off the async threads) and are kept for a
/// minute (`getaddrinfo` gives no TTL); the cache is bounded in bytes. Clones share the cache.
///
/// One rule everywhere: names are compared in their IDNA (punycode) form, lowercase, without a
/// trailing dot, in overrides and lookups alike; an override `HOST:PORT:ADDR` applies to that
/// port only (curl's rule). HTTP clients ask a resolver by name alone, so they cannot follow
/// that rule themselves: [`Resolver::connects_as_judged`] names the requests they would
/// connect differently, which the front ends refuse.
///
/// ```
/// use robots_fetch::Resolver;
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let resolver = Resolver::new().with_override("shop.example", 443, "127.0.0.1".parse()?);
/// assert_eq!(resolver.first("shop.example", 443).await?, "127.0.0.1".parse::<std::net::IpAddr>()?);
/// assert_eq!(resolver.cached("shop.example", 443), Some("127.0.0.1".parse()?));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Resolver(Arc<Inner>);

struct Inner {
    /// (host, port) → addresses, as given.
    overrides: Vec<(String, u16, Vec<IpAddr>)>,
    cache: quick_cache::sync::Cache<String, Resolved, ResolvedWeight>,
    ttl: Duration,
    /// The names whose connections may reach internal addresses (the caller's word).
    internal: Arc<InternalAllowed>,
}

impl Inner {
    /// Overrides as given, and an empty cache of lookups.
    fn new(
        overrides: Vec<(String, u16, Vec<IpAddr>)>,
        ttl: Duration,
        internal: Arc<InternalAllowed>,
    ) -> Inner {
        Inner {
            overrides,
            cache: quick_cache::sync::Cache::with_weighter(4096, CACHE_BYTES, ResolvedWeight),
            ttl,
            internal,
        }
    }
}

/// Which names may connect to internal addresses: the names the caller allowed when building
/// the resolver (or every name), and the names the gate allowed while crawling (a name handed on
/// by a server the caller's word made internal-allowed), bounded in bytes.
#[derive(Default)]
struct InternalAllowed {
    /// Every name (the caller crawls an internal network by name).
    everywhere: bool,
    /// The names the caller allowed, in their normal form.
    given: Vec<String>,
    /// The names allowed while crawling, and their bytes.
    handed: std::sync::Mutex<(std::collections::HashSet<Box<str>>, usize)>,
}

/// The bytes the names allowed while crawling may take (64 KiB: some 1,000 names). Past it a
/// name is not allowed: its connections to internal addresses are refused (failing closed).
const HANDED_BYTES: usize = 64 << 10;

impl InternalAllowed {
    fn with(&self, given: Option<String>, everywhere: bool) -> Arc<InternalAllowed> {
        let mut names = self.given.clone();
        names.extend(given);
        let handed = match self.handed.lock() {
            Ok(handed) => handed.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        Arc::new(InternalAllowed {
            everywhere: self.everywhere || everywhere,
            given: names,
            handed: std::sync::Mutex::new(handed),
        })
    }

    fn allows(&self, name: &str) -> bool {
        if self.everywhere || self.given.iter().any(|given| given == name) {
            return true;
        }
        match self.handed.lock() {
            Ok(handed) => handed.0.contains(name),
            Err(poisoned) => poisoned.into_inner().0.contains(name),
        }
    }

    fn add(&self, name: &str) -> bool {
        let mut handed = match self.handed.lock() {
            Ok(handed) => handed,
            Err(poisoned) => poisoned.into_inner(),
        };
        if handed.0.contains(name) {
            return true;
        }
        let bytes = name.len() + 48;
        if handed.1 + bytes > HANDED_BYTES {
            return false;
        }
        handed.1 += bytes;
        handed.0.insert(name.into());
        true
    }
}

#[derive(Clone)]
struct Resolved {
    addrs: Arc<[IpAddr]>,
    at: Instant,
}

/// Weighs a cached lookup by its bytes, so the cache's budget is bytes, not entries.
#[derive(Clone)]
struct ResolvedWeight;

impl Weighter<String, Resolved> for ResolvedWeight {
    fn weight(&self, host: &String, resolved: &Resolved) -> u64 {
        (host.len() + resolved.addrs.len() * size_of::<IpAddr>() + 96) as u64
    }
}

/// The bytes the lookups cache may hold (1 MiB: some 5,000 hosts).
const CACHE_BYTES: u64 = 1 << 20;

/// A `--resolve` override that is not `HOST:PORT:ADDR`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not HOST:PORT:ADDR[,ADDR…] ({problem})")]
pub struct ResolveOverrideError {
    /// The text given.
    pub given: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

impl Default for Resolver {
    fn default() -> Resolver {
        Resolver::new()
    }
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("overrides", &self.0.overrides.len())
            .field("cached", &self.0.cache.len())
            .field("internal_allowed", &self.0.internal.given)
            .finish()
    }
}

impl Resolver {
    /// The system resolver, cached for a minute.
    pub fn new() -> Resolver {
        Resolver::with_ttl(Duration::from_secs(60))
    }

    /// The system resolver, with lookups kept for `ttl`.
    pub fn with_ttl(ttl: Duration) -> Resolver {
        Resolver(Arc::new(Inner::new(Vec::new(), ttl, Arc::default())))
    }

    /// Answers `host` (on `port` only) with `addr` instead of asking DNS; repeated calls add
    /// addresses. The host is taken in its normal form (IDNA, lowercase, no trailing dot), so
    /// `Bücher.example.` and `xn--bcher-kva.example` are one name. An HTTP client asks by name
    /// alone and would use the override on every port: the front ends refuse a request to
    /// another port of the host ([`Resolver::connects_as_judged`]).
    pub fn with_override(self, host: &str, port: u16, addr: IpAddr) -> Resolver {
        let mut overrides = self.0.overrides.clone();
        let host = normal_name(host).into_owned();
        match overrides
            .iter_mut()
            .find(|(h, p, _)| *h == host && *p == port)
        {
            Some((_, _, addrs)) => addrs.push(addr),
            None => overrides.push((host, port, vec![addr])),
        }
        Resolver(Arc::new(Inner::new(
            overrides,
            self.0.ttl,
            self.0.internal.clone(),
        )))
    }

    /// Lets connections to `host` reach internal addresses (loopback, private, link-local…):
    /// the caller's word that the name is one of its own, for a crawl of an internal network by
    /// name. Every other name is refused at the connection when it resolves to an internal
    /// address ([`ConnectRefused`]), whatever path handed it on. Names internal by their text
    /// (`localhost`, `*.localhost`), address literals and overridden names need no such word.
    /// `*` allows every name (the guard is then off for names; address literals are judged by
    /// the front ends by their text).
    ///
    /// ```
    /// use robots_fetch::Resolver;
    /// let resolver = Resolver::new().with_internal_allowed("intranet.corp.example");
    /// assert!(resolver.is_internal_allowed("Intranet.Corp.Example."));
    /// assert!(!resolver.is_internal_allowed("example.com"));
    /// assert!(Resolver::new().with_internal_allowed("*").is_internal_allowed("example.com"));
    /// ```
    pub fn with_internal_allowed(self, host: &str) -> Resolver {
        let internal = if host == "*" {
            self.0.internal.with(None, true)
        } else {
            self.0
                .internal
                .with(Some(normal_name(host).into_owned()), false)
        };
        Resolver(Arc::new(Inner::new(
            self.0.overrides.clone(),
            self.0.ttl,
            internal,
        )))
    }

    /// Whether the caller's word lets `host` be internal: allowed when the resolver was built
    /// ([`Resolver::with_internal_allowed`]), or while crawling ([`Resolver::allow_internal`]),
    /// or internal by its text (`localhost`). A page of such a host may hand on URLs into
    /// internal addresses.
    pub fn is_internal_allowed(&self, host: &str) -> bool {
        let name = normal_name(host);
        crate::address::is_internal_name(&name) || self.0.internal.allows(&name)
    }

    /// Lets connections to `host` reach internal addresses from now on, in every clone of this
    /// resolver: for a name that a server the caller's word made internal-allowed handed on
    /// (the gate calls it). Bounded in bytes: `false` when the budget is spent, and the name is
    /// then not allowed (its connections to internal addresses are refused).
    pub fn allow_internal(&self, host: &str) -> bool {
        let name = normal_name(host);
        if self.0.internal.everywhere || crate::address::is_internal_name(&name) {
            return true;
        }
        self.0.internal.add(&name)
    }

    /// Whether a connection to `name` (in its normal form) may use an internal address.
    fn connects_internal(&self, name: &str) -> bool {
        crate::address::is_internal_name(name)
            || self.0.internal.allows(name)
            || self.0.overrides.iter().any(|(host, _, _)| host == name)
    }

    /// The addresses a connection to `host` may use: the address rule applied where the
    /// connection is made (spec section 8). The name is looked up (an override, a fresh cached
    /// lookup, or DNS), and a name the caller's word did not make internal-allowed
    /// ([`Resolver::with_internal_allowed`], an override, a name handed on by an allowed
    /// server) keeps only its public addresses; with none left, the connection is refused
    /// ([`ConnectRefused`]). A lookup that fails is an error, never a pass. The reqwest and
    /// hyper-util resolvers of this type answer with it, on every new connection, so a name
    /// that rebinds to an internal address is refused at its next connection.
    ///
    /// ```
    /// use robots_fetch::{ConnectRefused, Resolver};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let resolver = Resolver::new().with_override_text("shop.example:443:127.0.0.1")?;
    /// // An override is the caller's word: it connects where it says.
    /// assert_eq!(resolver.connect_addresses("shop.example", Some(443)).await?.len(), 1);
    /// let error = Resolver::new().connect_addresses("no-such-host.invalid", None).await.unwrap_err();
    /// assert!(error.get_ref().is_some_and(|e| !e.is::<ConnectRefused>())); // a failure, not a pass
    /// # Ok(()) }
    /// ```
    pub async fn connect_addresses(
        &self,
        host: &str,
        port: Option<u16>,
    ) -> std::io::Result<Vec<IpAddr>> {
        let addrs = self.lookup_on(host, port).await?;
        let name = normal_name(host);
        if host.parse::<IpAddr>().is_ok() || self.connects_internal(&name) {
            return Ok(addrs.to_vec());
        }
        let public: Vec<IpAddr> = addrs
            .iter()
            .copied()
            .filter(|addr| !crate::address::is_internal_ip(*addr))
            .collect();
        match (public.is_empty(), addrs.first()) {
            (true, Some(address)) => {
                let refused = ConnectRefused {
                    name: name.into_owned(),
                    address: *address,
                };
                tracing::info!(%refused, "connection refused by the address rule");
                Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    refused,
                ))
            }
            _ => Ok(public),
        }
    }

    /// Parses curl's `HOST:PORT:ADDR[,ADDR…]` (an IPv6 address may be in brackets) and adds it.
    ///
    /// ```
    /// let resolver = robots_fetch::Resolver::new().with_override_text("a.test:8080:127.0.0.1")?;
    /// assert_eq!(resolver.cached("a.test", 8080), Some([127, 0, 0, 1].into()));
    /// assert!(robots_fetch::Resolver::new().with_override_text("a.test:127.0.0.1").is_err());
    /// # Ok::<(), robots_fetch::ResolveOverrideError>(())
    /// ```
    pub fn with_override_text(self, text: &str) -> Result<Resolver, ResolveOverrideError> {
        let error = |problem| ResolveOverrideError {
            given: text.to_string(),
            problem,
        };
        let (host, rest) = text.split_once(':').ok_or_else(|| error("no port"))?;
        let (port, addrs) = rest.split_once(':').ok_or_else(|| error("no address"))?;
        if host.is_empty() {
            return Err(error("no host"));
        }
        let port: u16 = port.parse().map_err(|_| error("the port is not 0-65535"))?;
        let mut resolver = self;
        for addr in addrs.split(',') {
            let addr = addr.trim();
            let bare = addr
                .strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .unwrap_or(addr);
            let addr: IpAddr = bare
                .parse()
                .map_err(|_| error("the address is not an IP address"))?;
            resolver = resolver.with_override(host, port, addr);
        }
        Ok(resolver)
    }

    /// The override for `host` (in its normal form), on `port` or (`None`) on any port.
    fn overridden(&self, host: &str, port: Option<u16>) -> Option<&[IpAddr]> {
        self.0
            .overrides
            .iter()
            .find(|(h, p, _)| h == host && port.is_none_or(|port| *p == port))
            .map(|(_, _, addrs)| addrs.as_slice())
    }

    /// Whether an HTTP client connects a request to `host:port` where this resolver says: not
    /// when `host` is overridden on other ports only. The client asks its resolver by name
    /// alone and would connect to that override, where this resolver's rule (curl's: an
    /// override holds for its port only) says DNS; the front ends refuse such a request, so
    /// that what is judged and paced is what is connected to. One branch when there are no
    /// overrides (the usual case).
    ///
    /// ```
    /// let resolver = robots_fetch::Resolver::new().with_override_text("a.test:9:127.0.0.1")?;
    /// let refused = resolver.connects_as_judged("a.test", 8080).unwrap_err();
    /// assert_eq!(refused.overridden_port, 9);
    /// assert!(resolver.connects_as_judged("A.test.", 9).is_ok());
    /// assert!(resolver.connects_as_judged("b.test", 8080).is_ok());
    /// # Ok::<(), robots_fetch::ResolveOverrideError>(())
    /// ```
    pub fn connects_as_judged(&self, host: &str, port: u16) -> Result<(), OverrideOnOtherPort> {
        if self.0.overrides.is_empty() {
            return Ok(());
        }
        let host = normal_name(host);
        let mut elsewhere = None;
        for (h, p, _) in &self.0.overrides {
            if *h == *host {
                if *p == port {
                    return Ok(());
                }
                elsewhere = Some(*p);
            }
        }
        match elsewhere {
            None => Ok(()),
            Some(overridden_port) => Err(OverrideOnOtherPort {
                host: host.into_owned(),
                port,
                overridden_port,
            }),
        }
    }

    /// The first address known for `host` without asking DNS: an IP literal, an override, or
    /// a cached lookup still fresh.
    pub fn cached(&self, host: &str, port: u16) -> Option<IpAddr> {
        if let Ok(literal) = host.parse::<IpAddr>() {
            return Some(literal);
        }
        // Read in place: this runs on every request under the address key (a name from a URL
        // is normal already, bar a trailing dot: no allocation).
        let host = normal_name(host);
        if let Some(addrs) = self.overridden(&host, Some(port)) {
            return addrs.first().copied();
        }
        let resolved = self.0.cache.get(&*host)?;
        (resolved.at.elapsed() < self.0.ttl)
            .then(|| resolved.addrs.first().copied())
            .flatten()
    }

    /// The addresses of `host` (an override, a cached lookup, or the system resolver's answer).
    pub async fn lookup(&self, host: &str, port: u16) -> std::io::Result<Arc<[IpAddr]>> {
        self.lookup_on(host, Some(port)).await
    }

    /// The first address of `host`: the one a connection tries first.
    pub async fn first(&self, host: &str, port: u16) -> std::io::Result<IpAddr> {
        self.lookup(host, port)
            .await?
            .first()
            .copied()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))
    }

    async fn lookup_on(&self, host: &str, port: Option<u16>) -> std::io::Result<Arc<[IpAddr]>> {
        if let Ok(literal) = host.parse::<IpAddr>() {
            return Ok([literal].into());
        }
        let host = &*normal_name(host);
        if let Some(addrs) = self.overridden(host, port) {
            return Ok(addrs.into());
        }
        if let Some(resolved) = self.0.cache.get(host)
            && resolved.at.elapsed() < self.0.ttl
        {
            return Ok(resolved.addrs);
        }
        let found = tokio::net::lookup_host((host, port.unwrap_or(0)))
            .await
            .map_err(|error| NameNotResolved::io(host, error.to_string()))?;
        let mut addrs: Vec<IpAddr> = Vec::new();
        for addr in found {
            if !addrs.contains(&addr.ip()) {
                addrs.push(addr.ip());
            }
        }
        if addrs.is_empty() {
            return Err(NameNotResolved::io(host, "no address".into()));
        }
        let addrs: Arc<[IpAddr]> = addrs.into();
        self.0.cache.insert(
            host.to_string(),
            Resolved {
                addrs: addrs.clone(),
                at: Instant::now(),
            },
        );
        Ok(addrs)
    }
}

/// A request to a port of a host that is overridden on another port only (see
/// [`Resolver::connects_as_judged`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{host}` is overridden for port {overridden_port} only, but HTTP clients resolve by name for every port: a request to port {port} would connect to that override, so it is refused (add an override for {host}:{port})"
)]
pub struct OverrideOnOtherPort {
    /// The host, in its normal form.
    pub host: String,
    /// The port asked for.
    pub port: u16,
    /// A port the host is overridden on.
    pub overridden_port: u16,
}

/// A connection refused where it is made: `name`, which the caller's word did not make
/// internal-allowed, resolved to internal addresses only ([`Resolver::connect_addresses`]).
/// Carried inside the `std::io::Error` the connection fails with, so that the front ends report
/// it as the address rule's refusal, and no group is paused for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{name}` resolves to the internal address {address}, and no word of the caller's lets it be internal: the address rule refuses the connection (a name of your own network: `Resolver::with_internal_allowed`)"
)]
pub struct ConnectRefused {
    /// The name, in its normal form.
    pub name: String,
    /// The (first) internal address it resolved to.
    pub address: IpAddr,
}

impl ConnectRefused {
    /// The refusal inside `error` or any of its causes (a reqwest or hyper error around the
    /// resolver's `std::io::Error`).
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a ConnectRefused> {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(refused) = error.downcast_ref::<ConnectRefused>() {
                return Some(refused);
            }
            if let Some(refused) = error
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<ConnectRefused>())
            {
                return Some(refused);
            }
            cause = error.source();
        }
        None
    }
}

/// A name the resolver could not turn into an address (no such name, no address, the system
/// resolver failed). Carried inside the `std::io::Error` lookups return, so that a request that
/// failed for it is known as the crawler's own failure, not the server's distress: it pauses
/// no group.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` did not resolve: {message}")]
pub struct NameNotResolved {
    /// The name, in its normal form.
    pub name: String,
    /// What the resolver said.
    pub message: String,
}

impl NameNotResolved {
    fn io(name: &str, message: String) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            NameNotResolved {
                name: name.to_string(),
                message,
            },
        )
    }
}

#[cfg(feature = "reqwest")]
impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = self.clone();
        Box::pin(async move {
            // reqwest asks by name alone; it sets the URL's port on the addresses (port 0 here
            // means "the URL's"). The address rule is applied here, at every new connection.
            let addrs = resolver.connect_addresses(name.as_str(), None).await?;
            let addrs: Vec<std::net::SocketAddr> = addrs
                .iter()
                .map(|ip| std::net::SocketAddr::new(*ip, 0))
                .collect();
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// hyper-util's connector takes a resolver as a tower service of names: give it this one
/// (`HttpConnector::new_with_resolver(resolver)`) so that a tower stack connects to the address
/// the `ip` group and the redirect guard use.
#[cfg(feature = "hyper-util")]
impl tower_service::Service<hyper_util::client::legacy::connect::dns::Name> for Resolver {
    type Response = std::vec::IntoIter<std::net::SocketAddr>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = std::io::Result<Self::Response>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: hyper_util::client::legacy::connect::dns::Name) -> Self::Future {
        let resolver = self.clone();
        Box::pin(async move {
            // Port 0: the connector sets the URI's port. The address rule is applied here, at
            // every new connection.
            let addrs = resolver.connect_addresses(name.as_str(), None).await?;
            let addrs: Vec<std::net::SocketAddr> = addrs
                .iter()
                .map(|ip| std::net::SocketAddr::new(*ip, 0))
                .collect();
            Ok(addrs.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn overrides_literals_and_the_system_resolver() {
        let resolver = Resolver::new()
            .with_override_text("a.test:8080:127.0.0.2,[::1]")
            .unwrap();
        assert_eq!(
            &*resolver.lookup("A.test", 8080).await.unwrap(),
            &[
                "127.0.0.2".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
        // curl's rule: another port is not overridden, and is named as overridden elsewhere.
        assert_eq!(resolver.cached("a.test", 80), None);
        assert_eq!(
            resolver
                .connects_as_judged("a.test", 80)
                .map_err(|e| e.overridden_port),
            Err(8080)
        );
        assert!(resolver.connects_as_judged("a.test", 8080).is_ok());
        // One form of a name everywhere: a trailing dot, case and IDNA.
        assert_eq!(
            resolver.cached("A.TEST.", 8080),
            Some("127.0.0.2".parse().unwrap())
        );
        let idn = Resolver::new()
            .with_override_text("a.bücher.de.:443:127.0.0.3")
            .unwrap();
        for name in ["a.bücher.de", "A.BÜCHER.DE.", "a.xn--bcher-kva.de"] {
            assert_eq!(
                idn.lookup(name, 443).await.unwrap()[0],
                "127.0.0.3".parse::<IpAddr>().unwrap(),
                "{name}"
            );
        }
        // A name that does not resolve says so in a type of its own.
        let error = Resolver::new()
            .lookup("no-such-host.invalid", 80)
            .await
            .unwrap_err();
        assert!(
            error
                .get_ref()
                .is_some_and(|inner| inner.is::<NameNotResolved>()),
            "{error:?}"
        );
        assert_eq!(
            resolver.cached("10.1.2.3", 1),
            Some("10.1.2.3".parse().unwrap())
        );
        // `localhost` resolves on every machine, and is then cached.
        let local = resolver.first("localhost", 80).await.unwrap();
        assert!(local.is_loopback(), "{local}");
        assert_eq!(resolver.cached("localhost", 80), Some(local));
        for bad in [
            "a.test",
            "a.test:80",
            ":80:127.0.0.1",
            "a.test:x:127.0.0.1",
            "a.test:80:nope",
        ] {
            assert!(Resolver::new().with_override_text(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lookups_expire() {
        let resolver = Resolver::with_ttl(Duration::from_secs(5));
        resolver.first("localhost", 80).await.unwrap();
        assert!(resolver.cached("localhost", 80).is_some());
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(resolver.cached("localhost", 80), None);
    }
}
