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
    // Two leading slashes start a scheme-relative URL: skip them.
    let search_start = if bytes.starts_with(b"//") { 2 } else { 0 };
    let find_from = |from: usize, pred: &dyn Fn(u8) -> bool| {
        bytes[from.min(bytes.len())..]
            .iter()
            .position(|&b| pred(b))
            .map(|i| i + from)
    };
    let is_path_start = |b: u8| matches!(b, b'/' | b'?' | b';');
    let early_path = find_from(search_start, &is_path_start);
    let protocol_end =
        memchr::memmem::find(&bytes[search_start..], b"://").map(|i| i + search_start);
    let after_scheme = match (protocol_end, early_path) {
        // A path, params or query starting before "://" means "://" is not the scheme's end.
        (Some(p), Some(e)) if e < p => search_start,
        (Some(p), _) => p + 3,
        (None, _) => search_start,
    };
    let Some(path_start) = find_from(after_scheme, &is_path_start) else {
        return Cow::Borrowed("/");
    };
    let hash = find_from(search_start, &|b| b == b'#');
    if hash.is_some_and(|h| h < path_start) {
        return Cow::Borrowed("/");
    }
    let path = &url[path_start..hash.unwrap_or(url.len())];
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
        ] {
            assert_eq!(path_of(url), path, "{url}");
        }
    }
}
