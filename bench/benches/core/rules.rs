//! The second workload (issue 57): the shape of work of a crawler that meets the long patterns.
//!
//! - **URLs from each file's own rules**, spread over the whole file (not its first rules): the
//!   `*`s expanded into segments, `$` ends met exactly and overshot, bytes percent-encoded (upper
//!   and lower case hex) and non-ASCII characters in the path, and queries.
//! - **Several crawlers with groups in the file**: up to [`CRAWLERS_MAX`] of the product tokens
//!   the file names (Googlebot first when it is one of them), so that the view compiled is a
//!   real named group, merged across its repeats. A file that names none is read by Googlebot,
//!   which gets the `*` groups.
//! - **Weighted by file**: a file gets URLs in proportion to its rules (2 a rule, at least
//!   [`URLS_MIN`], at most [`URLS_MAX`]), so a file with thousands of rules counts as much as
//!   its checks do.

use robots_core::{RobotsTxt, path_of};

use super::{Rng, named_tokens};

/// Crawlers per file at most.
pub const CRAWLERS_MAX: usize = 4;
/// URLs per file: 2 a rule, within these bounds.
pub const URLS_MIN: usize = 8;
pub const URLS_MAX: usize = 600;

/// One file of the workload.
pub struct RulesFile {
    pub crawlers: Vec<String>,
    pub urls: Vec<String>,
    /// The URLs' paths as robots-core extracts them (what robotxt is given).
    pub paths: Vec<String>,
}

impl RulesFile {
    pub fn new(robots: &RobotsTxt, seed: u64) -> RulesFile {
        let crawlers = crawlers_of(robots);
        let patterns: Vec<Vec<u8>> = robots
            .groups()
            .flat_map(|g| g.rules().map(|r| r.written.to_vec()).collect::<Vec<_>>())
            .filter(|p| !p.is_empty())
            .collect();
        let wanted = (patterns.len() * 2).clamp(URLS_MIN, URLS_MAX);
        let mut rng = Rng(seed | 1);
        let mut urls = Vec::with_capacity(wanted);
        // Every pattern in turn when there are few; an even spread over the file when many.
        let step = (patterns.len() as f64 / wanted as f64).max(0.5);
        let mut at = 0.0f64;
        while urls.len() < wanted {
            let pattern = patterns.get(at as usize % patterns.len().max(1));
            let path = match pattern {
                Some(p) => url_path_from(p, &mut rng),
                None => generic_path(&mut rng),
            };
            urls.push(format!("https://www.example.com{path}"));
            at += step;
        }
        let paths = urls.iter().map(|u| path_of(u).into_owned()).collect();
        RulesFile {
            crawlers,
            urls,
            paths,
        }
    }
}

/// The product tokens the file's groups name, Googlebot first when named, at most
/// [`CRAWLERS_MAX`]; `Googlebot` alone when none is.
fn crawlers_of(robots: &RobotsTxt) -> Vec<String> {
    let mut named = named_tokens(robots);
    if let Some(google) = named
        .iter()
        .position(|n| n.eq_ignore_ascii_case("googlebot"))
    {
        let google = named.remove(google);
        named.insert(0, google);
    }
    named.truncate(CRAWLERS_MAX);
    if named.is_empty() {
        named.push("Googlebot".into());
    }
    named
}

const SEGMENTS: [&str; 6] = ["a", "x9", "page/2", "2024/05/item-17", "b.c", "_q"];
const ESCAPED: [&str; 6] = ["%C3%A9t%C3%A9", "%e2%82%ac", "%20", "%7Euser", "%2F", "%41"];
const NON_ASCII: [&str; 4] = ["é", "日本語", "ü/ß", "€"];
const QUERIES: [&str; 4] = [
    "utm_source=feed&utm_medium=rss",
    "id=42",
    "q=caf%C3%A9&page=3",
    "sessionid=9f86d081884c7d65&sort=desc",
];

/// A path made from a pattern as written: its `*`s expanded, its `$` met or overshot, then one
/// of the crawler's usual variations (an escape, a non-ASCII character, a query, cut short).
fn url_path_from(pattern: &[u8], rng: &mut Rng) -> String {
    let written = String::from_utf8_lossy(pattern);
    let (body, anchored) = match written.strip_suffix('$') {
        Some(body) => (body, true),
        None => (&*written, false),
    };
    let mut path = String::with_capacity(body.len() + 16);
    if !body.starts_with('/') {
        path.push('/');
    }
    for c in body.chars() {
        match c {
            '*' => path.push_str(SEGMENTS[rng.below(SEGMENTS.len())]),
            // A `$` inside a pattern is a literal byte to Google.
            c if c.is_whitespace() || c == '#' => path.push_str("%20"),
            c => path.push(c),
        }
    }
    match rng.below(8) {
        // The `$` met exactly, or a plain prefix matched as is.
        0 | 1 => {}
        // Overshoot: a `$` rule missed, a prefix matched.
        2 => path.push_str(SEGMENTS[rng.below(SEGMENTS.len())]),
        // A byte percent-encoded where the path continues.
        3 => {
            if !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(ESCAPED[rng.below(ESCAPED.len())]);
        }
        // A non-ASCII character, as links carry them.
        4 => path.push_str(NON_ASCII[rng.below(NON_ASCII.len())]),
        // Cut short (on a character boundary).
        5 => {
            let mut cut = path.len() / 2;
            while !path.is_char_boundary(cut) {
                cut -= 1;
            }
            path.truncate(cut.max(1));
        }
        // A query (after any the pattern has).
        _ => {
            path.push(if path.contains('?') { '&' } else { '?' });
            path.push_str(QUERIES[rng.below(QUERIES.len())]);
        }
    }
    if anchored && rng.below(4) == 0 {
        path.push_str("?x=1");
    }
    path
}

/// A path for a file with no rules.
fn generic_path(rng: &mut Rng) -> String {
    format!(
        "/{}/{}?{}",
        SEGMENTS[rng.below(SEGMENTS.len())],
        NON_ASCII[rng.below(NON_ASCII.len())],
        QUERIES[rng.below(QUERIES.len())]
    )
}
