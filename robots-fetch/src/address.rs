//! Which addresses are internal (loopback, private, link-local, shared, unspecified): the one
//! classification the address rule judges by, at the door by a URL's text and where the
//! connection is made by the addresses a name resolves to.

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

#[cfg(test)]
mod tests {
    use super::*;

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
