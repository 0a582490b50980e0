//! A direct port of Google's `RobotsMatcher`: it re-parses the whole file for every check and
//! keeps Google's per-crawler flags. Slow by design; it is the oracle that [`crate::Matcher`] is
//! tested against, and a baseline in the benchmarks.

use crate::agent::{is_global_agent, product_token_bytes};
use crate::directive::{KeyKind, LineContent, escape_pattern, is_escaped_kind, parse_line};
use crate::lines::lines;
use crate::pattern::reference_matches;
use std::borrow::Cow;

#[derive(Default, Clone, Copy)]
struct Best {
    priority: i64,
    line: u32,
}

impl Best {
    const NONE: Best = Best {
        priority: -1,
        line: 0,
    };
    fn offer(&mut self, priority: i64, line: u32) {
        if self.priority < priority {
            *self = Best { priority, line };
        }
    }
}

/// The verdict Google's library gives for `url`, for a crawler that answers to any of `agents`
/// (tokens compared as given, as the library does), plus the deciding line (0 for none).
///
/// ```
/// use robots_core::reference::google_verdict;
/// let (allowed, line) = google_verdict(b"User-agent: *\nDisallow: /a\n", &["bot"], "http://h/a");
/// assert_eq!((allowed, line), (false, 2));
/// ```
pub fn google_verdict(body: &[u8], agents: &[&str], url: &str) -> (bool, u32) {
    let path = google_path_params_query(url);
    let path = path.as_bytes();
    let (mut seen_global, mut seen_specific, mut ever_specific, mut seen_separator) =
        (false, false, false, false);
    let [
        mut allow_specific,
        mut allow_global,
        mut disallow_specific,
        mut disallow_global,
    ] = [Best::NONE; 4];
    for line in lines(body) {
        let LineContent::Directive(d) = parse_line(line.content) else {
            continue;
        };
        let value = if is_escaped_kind(d.kind) {
            escape_pattern(d.value)
        } else {
            d.value.into()
        };
        match d.kind {
            KeyKind::UserAgent => {
                if seen_separator {
                    (seen_specific, seen_global, seen_separator) = (false, false, false);
                }
                if is_global_agent(&value) {
                    seen_global = true;
                } else {
                    let token = product_token_bytes(&value);
                    if agents
                        .iter()
                        .any(|a| a.as_bytes().eq_ignore_ascii_case(token))
                    {
                        (ever_specific, seen_specific) = (true, true);
                    }
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                if !(seen_global || seen_specific) {
                    continue;
                }
                seen_separator = true;
                let allow = d.kind == KeyKind::Allow;
                let mut offer = |pattern: &[u8]| -> bool {
                    if !reference_matches(pattern, path) {
                        return false;
                    }
                    let best = match (allow, seen_specific) {
                        (true, true) => &mut allow_specific,
                        (true, false) => &mut allow_global,
                        (false, true) => &mut disallow_specific,
                        (false, false) => &mut disallow_global,
                    };
                    best.offer(pattern.len() as i64, line.number);
                    true
                };
                if !offer(&value)
                    && allow
                    && let Some(slash) = value.iter().rposition(|&b| b == b'/')
                    && value[slash..].starts_with(b"/index.htm")
                {
                    let mut retry = value[..=slash].to_vec();
                    retry.push(b'$');
                    offer(&retry);
                }
            }
            KeyKind::Sitemap | KeyKind::Other => {}
        }
    }
    let decide = |allow: Best, disallow: Best| -> Option<(bool, u32)> {
        if allow.priority > 0 || disallow.priority > 0 {
            let disallowed = disallow.priority > allow.priority;
            Some((
                !disallowed,
                if disallowed {
                    disallow.line
                } else {
                    allow.line
                },
            ))
        } else {
            None
        }
    };
    if let Some(verdict) = decide(allow_specific, disallow_specific) {
        return verdict;
    }
    if ever_specific {
        return (true, 0);
    }
    decide(allow_global, disallow_global).unwrap_or((true, 0))
}

/// A literal port of Google's `GetPathParamsQuery`, the oracle for [`crate::path_of`].
///
/// ```
/// use robots_core::reference::google_path_params_query;
/// assert_eq!(google_path_params_query("http://h?a"), "/?a");
/// ```
pub fn google_path_params_query(url: &str) -> Cow<'_, str> {
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
