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
    // "://" ends a scheme only if no path, params or query starts before it.
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
    let Some(path_start) = bytes[after_scheme..]
        .iter()
        .position(|&b| is_path_start(b))
        .map(|i| i + after_scheme)
    else {
        return Cow::Borrowed("/");
    };
    // A fragment that starts before the path leaves nothing but "/".
    if bytes[search_start..path_start].contains(&b'#') {
        return Cow::Borrowed("/");
    }
    let path_end =
        memchr::memchr(b'#', &bytes[path_start..]).map_or(bytes.len(), |i| i + path_start);
    let path = &url[path_start..path_end];
    if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
