//! The origin of a request URI written without the URL parser and without allocating: the
//! layer's per-request cost. Hosts the URL parser would rewrite are left to it (the key must be
//! the canonical origin's, or a request would miss the cache under a key nothing is stored at);
//! a property test holds every key written here to [`super::Origin::parse`].

/// Longest `scheme://host:port` written here; longer ones are parsed as URLs.
pub(super) const KEY_MAX: usize = 320;

/// The origin of an absolute URI as `scheme://host[:port]`, lowercase, default port dropped, a
/// trailing dot on the host removed, written into `buf`. `None` when the URL parser must
/// decide: a host it rewrites, an invalid port, an empty host, or a key over [`KEY_MAX`].
pub(super) fn write_key<'b>(
    scheme: &str,
    authority: &str,
    buf: &'b mut [u8; KEY_MAX],
) -> Option<&'b str> {
    let len = match bare_host_key(scheme, authority.as_bytes(), buf) {
        Some(len) => len,
        None => split_key(scheme, authority, buf)?,
    };
    std::str::from_utf8(&buf[..len]).ok()
}

/// The key of an authority that is a bare host (the usual one), written into `buf` in one
/// pass that lowercases it and looks for what needs [`split_key`]: userinfo, a port, an IPv6
/// literal. Its length, or `None` when the authority is not a bare host.
fn bare_host_key(scheme: &str, host: &[u8], buf: &mut [u8; KEY_MAX]) -> Option<usize> {
    let start = scheme.len() + 3;
    let dest = buf.get_mut(..start + host.len())?;
    let mut split = host.is_empty();
    for (to, &from) in dest[start..].iter_mut().zip(host) {
        split |= matches!(from, b'@' | b':') || is_rewritten_byte(from);
        *to = from.to_ascii_lowercase();
    }
    let host = without_trailing_dot(host);
    if split || is_rewritten_ipv4(host) {
        return None;
    }
    copy_lowercase(&mut dest[..scheme.len()], scheme.as_bytes());
    dest[scheme.len()..start].copy_from_slice(b"://");
    Some(start + host.len())
}

/// Whether the URL parser keeps `host` (without its trailing dot) as written, but for case, so
/// that a key written from it is the canonical origin's and a cache hit finds it. Not so for an
/// IPv6 literal (written in its shortest form), a percent-escape (decoded), or an IPv4 address
/// not in its canonical form ([`is_rewritten_ipv4`]). Those hosts are left to the URL parser.
fn is_kept_as_written(host: &[u8]) -> bool {
    !host.iter().copied().any(is_rewritten_byte) && !is_rewritten_ipv4(host)
}

/// A byte that makes the URL parser rewrite a host: the brackets of an IPv6 literal, the `%` of
/// an escape.
#[inline]
fn is_rewritten_byte(b: u8) -> bool {
    matches!(b, b'[' | b']' | b'%')
}

/// Whether `host` (without its trailing dot) ends in a number, which the URL standard reads as
/// an IPv4 address in any of its forms (`127.1`, `0x7f.0.0.1`, `2130706433`, `010.0.0.1`), and
/// is not already four decimal numbers up to 255 without leading zeros.
fn is_rewritten_ipv4(host: &[u8]) -> bool {
    // A number ends in a hex digit (or is a bare `0x`); a name's last label (`.com`, `.org`)
    // seldom does.
    if !host
        .last()
        .is_some_and(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b'X'))
    {
        return false;
    }
    let last = host.rsplit(|&b| b == b'.').next().unwrap_or_default();
    let hex = |digits: &[u8]| digits.iter().all(u8::is_ascii_hexdigit);
    let is_number = match last {
        [] => false,
        [b'0', b'x' | b'X', digits @ ..] => hex(digits),
        digits => digits.iter().all(u8::is_ascii_digit),
    };
    if !is_number {
        return false;
    }
    let canonical_octet = |label: &[u8]| {
        matches!(label.len(), 1..=3)
            && label.iter().all(u8::is_ascii_digit)
            && (label.len() == 1 || label[0] != b'0')
            && label
                .iter()
                .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'))
                <= 255
    };
    let mut labels = 0;
    let canonical = host.split(|&b| b == b'.').all(|label| {
        labels += 1;
        canonical_octet(label)
    });
    !(canonical && labels == 4)
}

/// One trailing dot names the same host (not a lone dot, not two): the host without it.
fn without_trailing_dot(host: &[u8]) -> &[u8] {
    match host.strip_suffix(b".") {
        Some(stripped) if !stripped.is_empty() && !stripped.ends_with(b".") => stripped,
        _ => host,
    }
}

/// `from` into `to`, lowercased as copied (a plain loop: no call to `memcpy` for a few bytes).
fn copy_lowercase(to: &mut [u8], from: &[u8]) {
    for (to, from) in to.iter_mut().zip(from) {
        *to = from.to_ascii_lowercase();
    }
}

/// [`write_key`] for any authority: split by hand from the authority `http` has validated, in
/// one pass from the end (`Uri::host` and `Uri::port_u16` would each search it). The key's
/// length in `buf`.
fn split_key(scheme: &str, authority: &str, buf: &mut [u8; KEY_MAX]) -> Option<usize> {
    let bytes = authority.as_bytes();
    let (mut host_start, mut port_colon, mut in_brackets) = (0, None, false);
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b'@' => {
                host_start = i + 1;
                break;
            }
            // Colons before it are inside an IPv6 literal.
            b']' => in_brackets = true,
            b':' if !in_brackets && port_colon.is_none() => port_colon = Some(i),
            _ => {}
        }
    }
    let host_end = port_colon.unwrap_or(bytes.len());
    let host = bytes.get(host_start..host_end)?;
    let port = port_colon.map_or("", |colon| &authority[colon + 1..]);
    let host = without_trailing_dot(host);
    if host.is_empty() || !is_kept_as_written(host) {
        return None;
    }
    let default_port = match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    let port = match port {
        "" => None,
        // A port that is not a number of 16 bits has no origin.
        // (`u16::from_str` takes a leading `+`, the URL standard does not.)
        digits if !digits.bytes().all(|b| b.is_ascii_digit()) => return None,
        digits => Some(digits.parse::<u16>().ok()?).filter(|p| Some(*p) != default_port),
    };
    let mut len = 0;
    let mut push = |bytes: &[u8]| -> Option<()> {
        let end = len + bytes.len();
        copy_lowercase(buf.get_mut(len..end)?, bytes);
        len = end;
        Some(())
    };
    push(scheme.as_bytes())?;
    push(b"://")?;
    push(host)?;
    if let Some(port) = port {
        push(b":")?;
        push(super::itoa_u16(port, &mut [0; 5]).as_bytes())?;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key written for a URI, when it is written here.
    fn key_of(uri: &str) -> Option<String> {
        let parsed: http::Uri = uri.parse().ok()?;
        let mut buf = [0u8; KEY_MAX];
        write_key(parsed.scheme_str()?, parsed.authority()?.as_str(), &mut buf).map(str::to_string)
    }

    #[test]
    fn origin_keys_match_the_canonical_origin() {
        for uri in [
            "https://example.com/a?b",
            "HTTPS://Example.COM:443/a",
            "http://example.com:80/",
            "http://example.com:8080/x",
            "http://127.0.0.1:3000/x",
            "https://user:pw@example.com/x",
            "http://example.com./x",
            "http://Example.com.:8080/x",
            "http://Example.com.:/x",
            "http://u:p@h.example:08080/x",
            "http://EXAMPLE.org../x",
            "http://a./x",
            "https://xn--bcher-kva.example/x",
            "http://h-1.example:/x",
            "http://10.0.0.255:8080/x",
            "http://1.2.3.4./x",
            "http://0.0.0.0/x",
            "http://a.1x/x",
            "http://a.0xg/x",
        ] {
            assert_eq!(
                key_of(uri).as_deref(),
                Some(crate::Origin::parse(uri).unwrap().as_str()),
                "{uri}"
            );
        }
        // Hosts the URL parser rewrites are left to it (the key must be the canonical origin's,
        // or the request would miss the cache under a key nothing is stored at).
        for uri in [
            "http://[::1]:8080/x",
            "https://u@[::1]:443/x",
            "https://[2001:DB8:0::1]/x",
            "http://u:p@[::1]:8080/x",
            "http://[::ffff:1.2.3.4]/x",
            "http://127.1/x",
            "http://0x7f.0.0.1:8080/x",
            "http://0X7F.0.0.1/x",
            "http://2130706433/x",
            "http://010.0.0.1/x",
            "http://1.2.3.256/x",
            "http://a.b.c.d.1/x",
            "http://u@1.2.3.04/x",
            "http://ex%41mple.com/x",
        ] {
            if uri.parse::<http::Uri>().is_ok() {
                assert_eq!(key_of(uri), None, "{uri}");
            }
        }
        // A port out of range is left to the URL parser (which refuses it).
        if "http://example.com:99999/".parse::<http::Uri>().is_ok() {
            assert_eq!(key_of("http://example.com:99999/"), None);
        }
    }

    proptest::proptest! {
        /// Whatever the host, a key written without the URL parser is the canonical origin's.
        #[test]
        fn a_written_key_is_the_canonical_origin(
            host in "[0-9a-fA-FxXzZ.%\\[\\]:@_~!$&'()*+,;=-]{1,20}",
            port in proptest::option::of(0u32..70_000),
        ) {
            let port = port.map_or(String::new(), |p| format!(":{p}"));
            let uri = format!("http://{host}{port}/x");
            if let Some(key) = key_of(&uri) {
                let canonical = crate::Origin::parse(&uri).map(|o| o.as_str().to_string());
                proptest::prop_assert_eq!(Some(key), canonical.ok(), "{}", uri);
            }
        }
    }
}
