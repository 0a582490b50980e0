//! A served path's verdict (spec section 5, "served paths"): a path as a server may serve it
//! (unreserved escapes decoded, dot segments resolved: [`crate::url_path::served_paths`]) is
//! matched against the view's patterns normalised the same way, so that a file's own rules keep
//! their meaning: `Allow: /enc/%62%61%7A` allows the served `/enc/baz.html`, as RFC 9309
//! section 2.2.2 compares them.
//!
//! A view none of whose patterns has a `%` (nearly every file) checks as [`Matcher::check_path`]
//! does: normalising changes nothing. Otherwise every rule is tried (served paths are checked
//! only for URLs with an escape or a dot segment), each normalised pattern matched as a scan
//! matches one: at most a pass over the path per rule.

use std::borrow::Cow;

use super::Matcher;
use super::rule::FLAG_ALLOW;
use crate::pattern::{Shape, Subject};
use crate::url_path::normalise_escapes;
use crate::verdict::Verdict;

impl Matcher {
    /// The verdict for a path a server may serve for a URL (see
    /// [`crate::url_path::served_paths`]), against this view's patterns with their escapes
    /// normalised as the path's were: unreserved characters decoded (`%62` is `b`), any other
    /// escape's hex in uppercase. Google's priority applies (the longest normalised pattern;
    /// allow on a tie); the deciding rule is reported as written.
    ///
    /// ```
    /// use robots_core::RobotsTxt;
    /// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /enc/\nAllow: /enc/%62%61%7A\nDisallow: /~user\n");
    /// let matcher = robots.matcher("FooBot");
    /// // `/enc/%62%61%7A.html` is served as `/enc/baz.html`: the Allow, normalised, still decides.
    /// assert!(matcher.check_served_path(b"/enc/baz.html").allowed);
    /// assert!(!matcher.check_path(b"/enc/baz.html").allowed);
    /// // `/%7Euser/` is served as `/~user/`.
    /// assert!(!matcher.check_served_path(b"/~user/").allowed);
    /// ```
    pub fn check_served_path(&self, path: &[u8]) -> Verdict<'_> {
        let inner = &*self.inner;
        let path = normalise_escapes(path);
        if !inner.escapes {
            return self.check_path(&path);
        }
        if path.first() != Some(&b'/') {
            let mut slashed = Vec::with_capacity(path.len() + 1);
            slashed.push(b'/');
            slashed.extend_from_slice(&path);
            return self.served_scan(&slashed);
        }
        self.served_scan(&path)
    }

    /// Every rule, normalised, against `path`: the best by (priority, allow) in the view's
    /// order, which puts the earliest line first among equals.
    fn served_scan(&self, path: &[u8]) -> Verdict<'_> {
        let inner = &*self.inner;
        let mut subject = Subject::new(path);
        let mut best: Option<(u64, u32, usize)> = None;
        for (position, rule) in inner.rules.iter().enumerate() {
            let (start, end) = rule.body();
            let Some(body) = inner.arena.get(start as usize..end as usize) else {
                continue;
            };
            let anchored = rule.meta & super::rule::FLAG_ANCHORED != 0;
            let normal = normalise_escapes(body);
            let pattern: Cow<'_, [u8]> = if anchored {
                let mut with = normal.into_owned();
                with.push(b'$');
                Cow::Owned(with)
            } else {
                normal
            };
            let (body, shape) = Shape::of(&pattern);
            if !shape.matches(body, &mut subject) {
                continue;
            }
            let priority = pattern.len() as u64;
            let rank = priority * 2 + u64::from(rule.meta & FLAG_ALLOW != 0);
            // (Among equals the earliest line, as Google reports it.)
            if best.is_none_or(|(kept, line, _)| rank > kept || (rank == kept && rule.line < line))
            {
                best = Some((rank, rule.line, position));
            }
        }
        inner.verdict_of(best.map(|(_, _, position)| position))
    }
}
