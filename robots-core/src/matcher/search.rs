//! The hot loop: a path against the compiled rules in decision order, the first match
//! deciding. Hand-written because it is what makes a check fast; it does not allocate.

use crate::pattern::{Subject, glob_matches, is_prefix};
use crate::url_path::path_of;

use super::index::{KEYED_MIN_RULES, Lists, first_hit, key_candidates};
use super::rule::{
    CompiledRule, FLAG_ALLOW, FLAG_ANCHORED, FLAG_GLOB, FLAG_WRITTEN_ELSEWHERE, META_SHIFT,
};
use super::{Inner, Matcher};
use crate::verdict::{MatchedRule, Verdict};

/// Runs `f` on `path` with a `/` put in front (a path must start with one; allocates, which
/// only a URL with a query but no path needs).
pub(super) fn with_leading_slash<R>(path: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    let mut slashed = Vec::with_capacity(path.len() + 1);
    slashed.push(b'/');
    slashed.extend_from_slice(path);
    f(&slashed)
}

impl Inner {
    /// The rules' keys, at the arena's end (views without an index, of `KEYED_MIN_RULES` or
    /// more rules).
    #[inline]
    pub(super) fn keys(&self) -> &[u8] {
        let start = self.arena.len().saturating_sub(self.rules.len());
        self.arena.get(start..).unwrap_or_default()
    }

    /// Whether `rule` matches the subject's `path`: the hot loop of every check, kept small. A
    /// rule without `*` is a length test and an inline prefix compare; the rarer `*` rules go
    /// out of line.
    #[inline(always)]
    pub(super) fn hits(&self, rule: &CompiledRule, path: &[u8], subject: &mut Subject<'_>) -> bool {
        // A rule keyed by a second byte matches only paths with that second byte.
        let key = rule.key();
        if key != 0 && Some(&key) != path.get(1) {
            return false;
        }
        let (start, len) = (rule.start as usize, rule.len() as usize);
        let Some(body) = self.arena.get(start..start + len) else {
            return false;
        };
        if rule.meta & FLAG_GLOB == 0 {
            return (rule.meta & FLAG_ANCHORED == 0 || path.len() == len) && is_prefix(body, path);
        }
        // A `*` rule's literal prefix settles most of them within a byte or two: walked here,
        // before the call to the full match.
        for (i, &b) in body.iter().enumerate() {
            if b == b'*' {
                break;
            }
            if path.get(i) != Some(&b) {
                return false;
            }
        }
        self.glob_matches(rule, body, subject)
    }

    /// Whether a `*` rule matches; out of line so that the loop over rules stays small.
    #[inline(never)]
    pub(super) fn glob_matches(
        &self,
        rule: &CompiledRule,
        body: &[u8],
        subject: &mut Subject<'_>,
    ) -> bool {
        let glob = self.globs.get((rule.meta >> META_SHIFT) as usize);
        glob.is_some() && glob_matches(rule.meta & FLAG_ANCHORED != 0, glob, body, subject)
    }

    /// Where rule `position`'s written form is in the arena.
    #[inline]
    pub(super) fn written_span(&self, position: usize, rule: &CompiledRule) -> (u32, u32) {
        if rule.meta & FLAG_WRITTEN_ELSEWHERE == 0 {
            let (start, end) = rule.body();
            return (start, end + u32::from(rule.meta & FLAG_ANCHORED != 0));
        }
        let position = position as u32;
        match self.written.binary_search_by_key(&position, |&(p, _, _)| p) {
            Ok(i) => (self.written[i].1, self.written[i].2),
            // Every rule with the flag is listed; an empty span would only hide the pattern.
            Err(_) => (rule.start, rule.start),
        }
    }
}

impl Matcher {
    /// Checks a URL (absolute, scheme-relative or a bare path; taken as given, not decoded).
    #[inline]
    pub fn check_url(&self, url: &str) -> Verdict<'_> {
        self.check_path(path_of(url).as_bytes())
    }

    /// Checks a path as produced by [`crate::path_of`] (path, params and query; starts with `/`).
    /// A path that does not start with `/` is checked as if it did.
    #[inline]
    pub fn check_path(&self, path: &[u8]) -> Verdict<'_> {
        if path.first() != Some(&b'/') {
            return with_leading_slash(path, |p| self.check_path(p));
        }
        let inner = &*self.inner;
        let mut subject = Subject::new(path);
        let mut hit = |rule: &CompiledRule| inner.hits(rule, path, &mut subject);
        let found = match &inner.index {
            None if inner.rules.len() < KEYED_MIN_RULES => {
                let mut found = None;
                for (position, rule) in inner.rules.iter().enumerate() {
                    if hit(rule) {
                        found = Some(position);
                        break;
                    }
                }
                found
            }
            None => {
                // The rules whose key allows the path, eight at a time, in decision order.
                let want = path.get(1).copied().unwrap_or(0);
                let (words, rest) = inner.keys().as_chunks::<8>();
                // The last keys padded with a key that is neither `want` nor 0.
                let mut last = [if want == 0xFF { 0xFE } else { 0xFF }; 8];
                last[..rest.len()].copy_from_slice(rest);
                let mut found = None;
                'words: for (w, &keys) in words.iter().chain([&last]).enumerate() {
                    let mut candidates = key_candidates(keys, want);
                    while candidates != 0 {
                        let position = w * 8 + (candidates.trailing_zeros() / 8) as usize;
                        if inner.rules.get(position).is_some_and(&mut hit) {
                            found = Some(position);
                            break 'words;
                        }
                        candidates &= candidates - 1;
                    }
                }
                found
            }
            Some(index) => match &index.lists {
                Lists::Narrow(start, lists) => {
                    let (a, b) = index.candidates(start, lists, path);
                    first_hit(a, b, |i| inner.rules.get(i).is_some_and(&mut hit))
                }
                Lists::Wide(start, lists) => {
                    let (a, b) = index.candidates(start, lists, path);
                    first_hit(a, b, |i| inner.rules.get(i).is_some_and(&mut hit))
                }
            },
        };
        inner.verdict_of(found)
    }
}

impl Inner {
    /// The verdict of the rule at `found` in decision order (none: allowed, no rule), its
    /// pattern as written.
    #[inline]
    pub(super) fn verdict_of(&self, found: Option<usize>) -> Verdict<'_> {
        match found.and_then(|position| Some((position, self.rules.get(position)?))) {
            Some((position, rule)) => {
                let (start, end) = self.written_span(position, rule);
                Verdict {
                    allowed: rule.meta & FLAG_ALLOW != 0,
                    rule: Some(MatchedRule {
                        line: rule.line,
                        kind: rule.kind(),
                        pattern: &self.arena[start as usize..end as usize],
                    }),
                }
            }
            None => Verdict {
                allowed: true,
                rule: None,
            },
        }
    }
}
