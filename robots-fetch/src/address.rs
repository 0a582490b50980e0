//! Which addresses are internal (loopback, private, link-local, shared, unspecified): the one
//! classification the address rule judges by, at the door by a URL's text and where the
//! connection is made by the addresses a name resolves to; and the one form of a name that
//! every comparison of names uses.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Whether a URL's host is loopback, private, link-local or otherwise not on the public
/// internet, judged from the URL alone (no DNS).
pub fn is_internal(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(v4)) => is_internal_v4(v4),
        Some(Host::Ipv6(v6)) => is_internal_v6(v6),
        Some(Host::Domain(name)) => is_internal_name(name),
        None => true,
    }
}

/// Whether a name is internal by its text alone: `localhost` and `*.localhost` (RFC 6761), any
/// case, with or without a trailing dot.
pub(crate) fn is_internal_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name
            .get(name.len().saturating_sub(".localhost".len())..)
            .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
}

/// Whether an address is loopback, private, link-local or otherwise not on the public internet.
pub fn is_internal_ip(addr: std::net::IpAddr) -> bool {
    match addr {
        std::net::IpAddr::V4(v4) => is_internal_v4(v4),
        std::net::IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || a == 0
        // Shared address space (carrier-grade NAT), RFC 6598.
        || (a == 100 && (64..128).contains(&b))
}

fn is_internal_v6(v6: Ipv6Addr) -> bool {
    let first = v6.segments()[0];
    v6.is_loopback()
        || v6.is_unspecified()
        || (first & 0xfe00) == 0xfc00 // unique local, fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local, fe80::/10
        // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) forms alike.
        || v6.to_ipv4().is_some_and(is_internal_v4)
}

/// A name in the one form every comparison uses: IDNA (punycode), lowercase, without a trailing
/// dot. Borrowed when it is in that form already (a name from a parsed URL, bar the dot).
pub fn normal_name(host: &str) -> Cow<'_, str> {
    let trimmed = host.strip_suffix('.').unwrap_or(host);
    // (A lowercase ASCII name, punycode labels included, is what IDNA would give back: the
    // names of parsed URLs take this branch, without allocating, on every request.)
    let plain = trimmed
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    if plain {
        return Cow::Borrowed(trimmed);
    }
    match url::Host::parse(trimmed) {
        Ok(url::Host::Domain(domain)) => Cow::Owned(domain),
        // An address literal, or a name IDNA refuses: compared as given, lowercase.
        _ => Cow::Owned(trimmed.to_ascii_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_has_one_form_borrowed_when_it_is_in_it() {
        assert_eq!(normal_name("Example.COM."), "example.com");
        assert_eq!(normal_name("A.BÜCHER.DE."), "a.xn--bcher-kva.de");
        assert!(matches!(normal_name("example.com"), Cow::Borrowed(_)));
        assert!(matches!(
            normal_name("a.xn--bcher-kva.de."),
            Cow::Borrowed(_)
        ));
    }

    fn url(s: &str) -> Url {
        s.parse().unwrap()
    }

    #[test]
    fn internal_addresses_are_recognised() {
        for internal in [
            "http://127.0.0.1/",
            "http://127.1.2.3:8080/",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::127.0.0.1]/",
            "http://[::10.1.2.3]/",
            "http://localhost:3000/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://2130706433/", // 127.0.0.1 written as a number; the URL parser normalises it
            "http://0x7f.1/",
        ] {
            assert!(is_internal(&url(internal)), "{internal}");
        }
        for public in [
            "https://example.com/",
            "http://8.8.8.8/",
            "http://172.32.0.1/",
            "http://100.128.0.1/",
            "http://[2001:db8::1]/",
            "http://localhost.example.com/",
            "http://notlocalhost/",
        ] {
            assert!(!is_internal(&url(public)), "{public}");
        }
    }
}
