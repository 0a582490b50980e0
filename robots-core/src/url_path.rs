//! URL to the path that is matched (spec section 5), as Google's `GetPathParamsQuery`.

use std::borrow::Cow;

/// The path checked for a URL: path + `;params` + `?query`, without the `#fragment`, always
/// starting with `/`. Nothing is decoded or normalised. Borrows unless a `/` has to be added in
/// front (a URL with a query or params but no path).
///
/// ```
/// use robots_core::path_of;
/// assert_eq!(path_of("https://example.com/a/b?q=1#top"), "/a/b?q=1");
/// assert_eq!(path_of("http://h"), "/");
/// assert_eq!(path_of("http://h?a"), "/?a");
/// assert_eq!(path_of("//h/p"), "/p");
/// ```
pub fn path_of(url: &str) -> Cow<'_, str> {
    let bytes = url.as_bytes();
    let is_path_start = |b: u8| matches!(b, b'/' | b'?' | b';');
    // Two leading slashes start a scheme-relative URL: skip them.
    let search_start = if bytes.starts_with(b"//") { 2 } else { 0 };
    // "://" ends a scheme only if no path, params or query starts before it. The schemes a
    // crawler has, written in lowercase, are recognised without the byte loop (a check from a
    // URL runs this every time).
    let after_scheme = if bytes.starts_with(b"https://") {
        8
    } else if bytes.starts_with(b"http://") {
        7
    } else {
        let mut after_scheme = search_start;
        for (i, &b) in bytes.iter().enumerate().skip(search_start) {
            if is_path_start(b) {
                break;
            }
            if b == b':' && bytes[i + 1..].starts_with(b"//") {
                after_scheme = i + 3;
                break;
            }
        }
        // A fragment that starts before the path leaves nothing but "/".
        if bytes[search_start..after_scheme].contains(&b'#') {
            return Cow::Borrowed("/");
        }
        after_scheme
    };
    // The authority ends where the path, params or query starts; a fragment that starts before
    // that leaves nothing but "/". Authorities are short: eight bytes at a time in a word find
    // the end sooner than four searches set up.
    let authority_end = authority_len(&bytes[after_scheme..]).map(|i| i + after_scheme);
    let path_start = match authority_end {
        Some(at) if bytes[at] != b'#' => at,
        _ => return Cow::Borrowed("/"),
    };
    let path_end = fragment_start(&bytes[path_start..]).map_or(bytes.len(), |i| i + path_start);
    let path = &url[path_start..path_end];
    if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

/// Where the first `#` of a path is. Hand-written, sixteen bytes a step (two words, one
/// branch), the last word overlapping the one before: a check from a URL runs it every time,
/// and the path's length, which decides when a loop ends, is the one thing a branch
/// predictor cannot know.
#[inline]
fn fragment_start(path: &[u8]) -> Option<usize> {
    use crate::words::{splat, zero_bytes};
    let hash = |word: &[u8; 8]| zero_bytes(u64::from_le_bytes(*word) ^ splat(b'#'));
    let at = |base: usize, flags: u64| base + (flags.trailing_zeros() / 8) as usize;
    let (pairs, _) = path.as_chunks::<16>();
    for (i, pair) in pairs.iter().enumerate() {
        let (low, high) = pair.split_at(8);
        let (low, high) = (
            hash(low.try_into().unwrap_or(&[0; 8])),
            hash(high.try_into().unwrap_or(&[0; 8])),
        );
        if low | high != 0 {
            return Some(if low != 0 {
                at(16 * i, low)
            } else {
                at(16 * i + 8, high)
            });
        }
    }
    // At most 15 bytes left: a word, then the last eight bytes (overlapping what was read,
    // which held no `#`), or byte by byte when the path is shorter than a word.
    let mut rest = pairs.len() * 16;
    if let Some(word) = path
        .get(rest..rest + 8)
        .and_then(|w| <&[u8; 8]>::try_from(w).ok())
    {
        let flags = hash(word);
        if flags != 0 {
            return Some(at(rest, flags));
        }
        rest += 8;
    }
    if rest >= path.len() {
        return None;
    }
    match path.len().checked_sub(8) {
        Some(last) => {
            let word = path
                .get(last..)
                .and_then(|w| <&[u8; 8]>::try_from(w).ok())?;
            let flags = hash(word);
            (flags != 0).then(|| at(last, flags))
        }
        None => path.iter().position(|&b| b == b'#'),
    }
}

/// Where the first `/`, `?`, `;` or `#` of `bytes` is (the end of an authority). Hand-written,
/// eight bytes a step: a check from a URL runs it every time.
#[inline]
fn authority_len(bytes: &[u8]) -> Option<usize> {
    use crate::words::{first_in_words, splat, zero_bytes};
    // The lowest flag is exact: any wrong flag lies above a true match of its own byte.
    first_in_words(bytes, |x| {
        zero_bytes(x ^ splat(b'/'))
            | zero_bytes(x ^ splat(b'?'))
            | zero_bytes(x ^ splat(b';'))
            | zero_bytes(x ^ splat(b'#'))
    })
}

/// The other paths a web server may serve for `path` (path, params and query, as
/// [`path_of`] gives it): distinct from `path` and from each other, in no particular order, and
/// empty — without allocating — when `path` is already in normal form.
///
/// The core matches the path as given (spec section 5), which is Google's verdict. But servers
/// resolve what they receive: `/public/../private/x` and `/public/%2e%2e/private/x` reach
/// `/private/x`, and nginx merges slashes, so `/a/..//private` reaches `/private`. A polite
/// client therefore refuses a URL when the path as given *or* any path returned here is
/// disallowed. Each is built from the path part (the query is kept as it is) by:
///
/// - decoding percent-encoded unreserved characters (`%2e` → `.`, `%41` → `A`; RFC 3986
///   §6.2.2.2 makes them equivalent), so encoded dot segments are dot segments;
/// - removing dot segments (RFC 3986 §5.2.4) and merging runs of `/`, in both orders (servers
///   differ: `/a//../b` is `/b` when slashes are merged first, `/a/b` otherwise).
///
/// ```
/// use robots_core::url_path::served_paths;
/// assert_eq!(served_paths("/public/../private/x"), ["/private/x"]);
/// assert_eq!(served_paths("/public/%2E%2e/private/x?q=/../"), ["/private/x?q=/../"]);
/// assert_eq!(served_paths("/a/..//private"), ["/private"]);
/// assert!(served_paths("/plain/path.html?x=1").is_empty());
/// ```
pub fn served_paths(path: &str) -> Vec<String> {
    // Fast exit for the usual path (this runs on every request through the layer): nothing
    // that resolution could change without a `%`, a `//` or a `/.`. First one branch-free pass
    // over the whole path (vectorised); only a path that has one is split at its query and
    // looked at again, as its query does not count.
    if !path.starts_with('/') || !may_resolve(path.as_bytes()) {
        return Vec::new();
    }
    let (part, query) = path.split_at(memchr::memchr(b'?', path.as_bytes()).unwrap_or(path.len()));
    let bytes = part.as_bytes();
    if !may_resolve(bytes) {
        return Vec::new();
    }
    resolve(bytes, query)
}

/// Whether `bytes` has a `%`, a `//` or a `/.`, without which resolution changes nothing. A
/// fold with no early exit, so that it compiles to vector compares: the usual path has none,
/// and looking at every byte of it this way is faster than stopping at the first.
fn may_resolve(bytes: &[u8]) -> bool {
    let next = bytes.get(1..).unwrap_or_default();
    bytes.iter().zip(next).fold(false, |found, (&b, &after)| {
        found | (b == b'%') | ((b == b'/') & ((after == b'/') | (after == b'.')))
    })
}

/// [`served_paths`] without the fast exit: every way `part` may resolve that differs from it,
/// each followed by `query`.
fn resolve(bytes: &[u8], query: &str) -> Vec<String> {
    let decoded = decode_unreserved(bytes);
    let mut found: Vec<String> = Vec::new();
    for resolved in [
        merge_slashes(&remove_dot_segments(&decoded)),
        remove_dot_segments(&merge_slashes(&decoded)),
    ] {
        if resolved != bytes
            && !found
                .iter()
                .any(|f| f.as_bytes()[..f.len() - query.len()] == resolved[..])
        {
            // Only unreserved (ASCII) bytes were decoded, so the result is still UTF-8.
            let mut text = String::from_utf8_lossy(&resolved).into_owned();
            text.push_str(query);
            found.push(text);
        }
    }
    found
}

/// `bytes` with its escapes normalised as a server reads them (spec section 5): `%XX` decoded
/// where it encodes an unreserved character (`A-Z a-z 0-9 - . _ ~`), any other escape's hex in
/// uppercase. Borrowed when there is no `%`.
///
/// ```
/// use robots_core::url_path::normalise_escapes;
/// assert_eq!(&*normalise_escapes(b"/enc/%62%61%7a%2f%e2%82%ac"), b"/enc/baz%2F%E2%82%AC");
/// assert_eq!(&*normalise_escapes(b"/plain"), b"/plain");
/// ```
pub fn normalise_escapes(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memchr(b'%', bytes).is_none() {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = decode_unreserved(bytes);
    let mut i = 0;
    while i + 2 < out.len() {
        if out[i] == b'%' && out[i + 1].is_ascii_hexdigit() && out[i + 2].is_ascii_hexdigit() {
            out[i + 1].make_ascii_uppercase();
            out[i + 2].make_ascii_uppercase();
            i += 3;
        } else {
            i += 1;
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `%XX` decoded where it encodes an unreserved character (`A-Z a-z 0-9 - . _ ~`).
fn decode_unreserved(path: &[u8]) -> Vec<u8> {
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(path.len());
    let mut i = 0;
    while i < path.len() {
        if path[i] == b'%'
            && let (Some(h), Some(l)) = (
                path.get(i + 1).and_then(|&b| hex(b)),
                path.get(i + 2).and_then(|&b| hex(b)),
            )
        {
            let byte = (h * 16 + l) as u8;
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(path[i]);
        i += 1;
    }
    out
}

/// RFC 3986 §5.2.4 for an absolute path: `.` segments dropped, `..` drops the one before
/// (never above the root), a trailing dot segment leaves a trailing `/`.
fn remove_dot_segments(path: &[u8]) -> Vec<u8> {
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut parts = path
        .strip_prefix(b"/")
        .unwrap_or(path)
        .split(|&b| b == b'/')
        .peekable();
    while let Some(segment) = parts.next() {
        let last = parts.peek().is_none();
        match segment {
            b"." => {}
            b".." => {
                segments.pop();
            }
            other => {
                segments.push(other);
                continue;
            }
        }
        if last {
            segments.push(b"");
        }
    }
    let mut out = Vec::with_capacity(path.len());
    for segment in segments {
        out.push(b'/');
        out.extend_from_slice(segment);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// Runs of `/` merged into one, as nginx does by default (`merge_slashes on`).
fn merge_slashes(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        if !(b == b'/' && out.last() == Some(&b'/')) {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `http://` / `https://` fast path against Google's extraction: fragments before and
    /// after the path, params and queries without a path, uppercase and other schemes (the
    /// general loop).
    #[test]
    fn path_of_agrees_with_google_on_http_urls() {
        for url in [
            "https://example.com/a/b?q=1#top",
            "https://example.com",
            "https://example.com#x/y",
            "https://example.com?q#f",
            "https://example.com;p/x",
            "http://h?a",
            "http://h#frag",
            "http://user@h:8080/p#f",
            "http://",
            "https:///x",
            "HTTPS://example.com/Up",
            "ftp://h/p",
            "http:/h/p",
            "a#b://h/p",
        ] {
            assert_eq!(
                path_of(url),
                crate::reference::google_path_params_query(url),
                "{url}"
            );
        }
    }

    #[test]
    fn served_paths_resolve_dot_segments_and_merged_slashes() {
        for (path, expected) in [
            ("/public/../private/x", &["/private/x"][..]),
            ("/public/%2e%2e/private/x", &["/private/x"]),
            ("/public/%2E%2E/private/x", &["/private/x"]),
            ("/./private/x", &["/private/x"]),
            ("/public/.%2e/private/x", &["/private/x"]),
            ("/public/%2e./private/x", &["/private/x"]),
            ("/a/..//private", &["/private"]),
            ("//private", &["/private"]),
            ("/a/b/..", &["/a/"]),
            ("/a/.", &["/a/"]),
            ("/..", &["/"]),
            ("/../../x", &["/x"]),
            ("/%70rivate", &["/private"]),
            ("/a/../b?q=/../c#", &["/b?q=/../c#"]),
            ("/a//../b", &["/a/b", "/b"]),
        ] {
            let mut got = served_paths(path);
            got.sort();
            let mut want: Vec<&str> = expected.to_vec();
            want.sort();
            assert_eq!(got, want, "{path}");
        }
        for normal in [
            "/",
            "/a/b/",
            "/index.html",
            "/a.b/c..d/...",
            "/.well-known/x",
            "/a/.hidden",
            "/%2F..x",
            "/%C3%A9",
            "/q?a=//b/../c",
            "",
            "*",
        ] {
            assert!(
                served_paths(normal).is_empty(),
                "{normal}: {:?}",
                served_paths(normal)
            );
        }
    }

    proptest::proptest! {
        /// The word-at-a-time authority search, at every length and position of its ends,
        /// extracts what Google's function does.
        #[test]
        fn path_of_agrees_with_google_on_any_authority(
            scheme in "(https?://|//|[a-z]{1,5}://|)",
            authority in "[a-z.:@0-9]{0,20}",
            rest in "[/?;#a-z.]{0,20}",
        ) {
            let url = format!("{scheme}{authority}{rest}");
            proptest::prop_assert_eq!(path_of(&url), crate::reference::google_path_params_query(&url));
        }

        /// The fragment search, sixteen bytes a step with an overlapping last word, finds the
        /// first `#` at every length and position, and the path is Google's.
        #[test]
        fn the_fragment_is_found_at_any_length(
            path in "/[a-z/?;]{0,70}",
            fragment in proptest::option::of("#[a-z#/]{0,8}"),
            cut in 0usize..80,
        ) {
            let mut url_path = path.clone();
            if let Some(fragment) = &fragment {
                url_path.insert_str(cut.min(url_path.len()).max(1), fragment);
            }
            let first = url_path.bytes().position(|b| b == b'#');
            proptest::prop_assert_eq!(fragment_start(url_path.as_bytes()), first);
            let url = format!("https://e.com{url_path}");
            proptest::prop_assert_eq!(path_of(&url), crate::reference::google_path_params_query(&url));
        }

        /// The fast exit skips only paths that resolution leaves as they are.
        #[test]
        fn the_fast_exit_skips_only_unchanged_paths(path in "/[/.%2eEa?]{0,12}") {
            let query_at = path.find('?').unwrap_or(path.len());
            let (part, query) = path.split_at(query_at);
            proptest::prop_assert_eq!(served_paths(&path), resolve(part.as_bytes(), query));
        }
    }

    #[test]
    fn google_examples() {
        for (url, path) in [
            ("", "/"),
            ("http://www.example.com", "/"),
            ("http://www.example.com/", "/"),
            ("http://www.example.com/a", "/a"),
            ("http://www.example.com/a/", "/a/"),
            (
                "http://www.example.com/a/b?c=http://d.e/",
                "/a/b?c=http://d.e/",
            ),
            (
                "http://www.example.com/a/b?c=d&e=f#fragment",
                "/a/b?c=d&e=f",
            ),
            ("example.com", "/"),
            ("example.com/", "/"),
            ("example.com/a", "/a"),
            ("example.com/a/", "/a/"),
            ("example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"),
            ("a", "/"),
            ("a/", "/"),
            ("/a", "/a"),
            ("a/b", "/b"),
            ("example.com?a", "/?a"),
            ("example.com/a;b#c", "/a;b"),
            ("//a/b/c", "/b/c"),
            ("http://h;p", "/;p"),
            ("http://h#/x", "/"),
            ("http://h?a", "/?a"),
            ("//h/p", "/p"),
            ("http://h/%2Fa/../b", "/%2Fa/../b"),
            ("a:b://c/d", "/d"),
            ("a:b/c://d/e", "/c://d/e"),
            ("http:/x/y", "/x/y"),
            ("h#x/y", "/"),
            ("//h#/p", "/"),
            ("https://h/p#a#b", "/p"),
            ("https://user:pw@h:8080/p?q", "/p?q"),
        ] {
            assert_eq!(path_of(url), path, "{url}");
        }
    }
}
