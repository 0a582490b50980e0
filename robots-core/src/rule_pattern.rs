//! A deciding rule's pattern that outlives the check: [`RulePattern`]. A crawler that keeps the
//! rule behind a verdict (in an error, a log record, a response's extensions) would otherwise
//! copy the pattern into a `String` for every request a rule decides; sharing the compiled
//! view's bytes makes keeping it an `Arc` clone instead.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::matcher::{MatchedRule, Matcher};

/// A rule's pattern as written in robots.txt, owned: it shares the bytes of the view that
/// matched it (no copy), or holds its own when made from text.
///
/// Made by [`Matcher::pattern_of`] or from text; compared, hashed and ordered by its bytes, whichever way it
/// was made, and shown as text (invalid UTF-8 replaced).
///
/// ```
/// use robots_core::{RobotsTxt, RulePattern};
/// let bot = RobotsTxt::parse(b"User-agent: *\nAllow: /public/*.html$\n").matcher("FooBot");
/// let verdict = bot.check_url("https://example.com/public/a.html");
/// let pattern = verdict.rule.and_then(|r| bot.pattern_of(&r)).unwrap_or_default();
/// drop(bot); // the pattern keeps the bytes it shares alive
/// assert_eq!(pattern, "/public/*.html$");
/// assert_eq!(pattern.to_string(), "/public/*.html$");
/// assert_eq!(pattern, RulePattern::from("/public/*.html$"));
/// ```
#[derive(Clone)]
pub struct RulePattern(Repr);

#[derive(Clone)]
enum Repr {
    /// `view`'s arena bytes `start..end`.
    Shared {
        view: Matcher,
        start: u32,
        end: u32,
    },
    Owned(Arc<[u8]>),
}

impl RulePattern {
    /// The pattern's bytes as written (not escaped).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Shared { view, start, end } => view
                .arena()
                .get(*start as usize..*end as usize)
                .unwrap_or_default(),
            Repr::Owned(bytes) => bytes,
        }
    }

    /// The pattern as text, invalid UTF-8 replaced (borrowed when it is valid UTF-8).
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }

    /// The pattern as text, when it is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }
}

impl Matcher {
    /// The pattern of a rule this view matched, owned without copying it: the pattern shares
    /// the view's bytes (an `Arc` clone). `None` when the rule is not one of this view's
    /// (`RulePattern::from(rule.pattern)` copies it).
    ///
    /// ```
    /// use robots_core::Matcher;
    /// let bot = Matcher::from_body(b"User-agent: *\nDisallow: /tmp/\n", ["FooBot"]);
    /// let rule = bot.check_url("https://example.com/tmp/x").rule;
    /// let pattern = rule.and_then(|r| bot.pattern_of(&r));
    /// assert_eq!(pattern.as_deref(), Some(&b"/tmp/"[..]));
    /// ```
    pub fn pattern_of(&self, rule: &MatchedRule<'_>) -> Option<RulePattern> {
        let arena = self.arena();
        let (start, end) = span_within(
            (arena.as_ptr().addr(), arena.len()),
            (rule.pattern.as_ptr().addr(), rule.pattern.len()),
        )?;
        Some(RulePattern(Repr::Shared {
            view: self.clone(),
            start,
            end,
        }))
    }
}

/// Where the bytes at address `inner` lie within those at `outer` (each an address and a
/// length), as offsets; `None` when they do not, wherever in memory they are (a slice that ends
/// where the arena starts included: no arithmetic here wraps or overflows).
fn span_within(
    (outer, outer_len): (usize, usize),
    (inner, inner_len): (usize, usize),
) -> Option<(u32, u32)> {
    let start = inner.checked_sub(outer)?;
    let end = start.checked_add(inner_len)?;
    if end > outer_len {
        return None;
    }
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

impl Default for RulePattern {
    /// The empty pattern.
    fn default() -> RulePattern {
        RulePattern::from(&b""[..])
    }
}

impl std::ops::Deref for RulePattern {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for RulePattern {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&[u8]> for RulePattern {
    fn from(bytes: &[u8]) -> RulePattern {
        RulePattern(Repr::Owned(bytes.into()))
    }
}

impl From<&str> for RulePattern {
    fn from(text: &str) -> RulePattern {
        RulePattern::from(text.as_bytes())
    }
}

impl From<String> for RulePattern {
    fn from(text: String) -> RulePattern {
        RulePattern(Repr::Owned(text.into_bytes().into()))
    }
}

impl fmt::Display for RulePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

impl fmt::Debug for RulePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_str_lossy(), f)
    }
}

impl PartialEq for RulePattern {
    fn eq(&self, other: &RulePattern) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for RulePattern {}

impl PartialEq<str> for RulePattern {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for RulePattern {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for RulePattern {
    fn partial_cmp(&self, other: &RulePattern) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RulePattern {
    fn cmp(&self, other: &RulePattern) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for RulePattern {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for RulePattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_str_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RobotsTxt;

    fn shares(pattern: &RulePattern) -> bool {
        matches!(pattern.0, Repr::Shared { .. })
    }

    #[test]
    fn a_matched_rule_shares_the_view_and_reads_as_written() {
        let body =
            b"User-agent: *\nDisallow: /a%2f*\xC3\xA9$\nAllow: /a/index.html\nDisallow: /b\n";
        let bot = RobotsTxt::parse(body).matcher("FooBot");
        for (path, written) in [
            ("/a%2Fx%C3%A9", &b"/a%2f*\xC3\xA9$"[..]),
            // Decided through the index.html retry: still shown as written.
            ("/a/", b"/a/index.html"),
            ("/b/c", b"/b"),
        ] {
            let rule = bot.check_url(path).rule.expect("a rule decides");
            let pattern = bot.pattern_of(&rule).expect("the view's own rule");
            assert!(shares(&pattern), "{path}");
            assert_eq!(pattern.as_bytes(), written, "{path}");
            assert_eq!(pattern.as_bytes(), rule.pattern);
            assert_eq!(pattern.to_str_lossy(), rule.pattern_lossy());
        }
    }

    #[test]
    fn a_rule_of_another_view_or_made_by_hand_is_not_shared() {
        let one = Matcher::from_body(b"User-agent: *\nDisallow: /one\n", ["FooBot"]);
        let other = Matcher::from_body(b"User-agent: *\nDisallow: /other\n", ["FooBot"]);
        let rule = other.check_url("/other/x").rule.expect("a rule decides");
        assert!(one.pattern_of(&rule).is_none());
        assert!(other.pattern_of(&rule).is_some_and(|p| p == "/other"));
        let by_hand = MatchedRule {
            line: 1,
            kind: crate::RuleKind::Disallow,
            pattern: b"/x",
        };
        assert!(one.pattern_of(&by_hand).is_none());
        assert!(!shares(&RulePattern::from(by_hand.pattern)));
    }

    #[test]
    fn a_span_is_found_only_within_the_arena() {
        let arena = (1000, 100);
        assert_eq!(span_within(arena, (1000, 0)), Some((0, 0)));
        assert_eq!(span_within(arena, (1010, 20)), Some((10, 30)));
        assert_eq!(span_within(arena, (1090, 10)), Some((90, 100)));
        // Past the end, crossing it, before the start, and ending where the arena starts.
        assert_eq!(span_within(arena, (1090, 11)), None);
        assert_eq!(span_within(arena, (1200, 1)), None);
        assert_eq!(span_within(arena, (990, 5)), None);
        assert_eq!(span_within(arena, (990, 10)), None);
        // Addresses at the ends of memory neither wrap nor overflow.
        assert_eq!(span_within(arena, (usize::MAX, 1)), None);
        assert_eq!(span_within((0, usize::MAX), (usize::MAX - 1, 1)), None);
        assert_eq!(
            span_within((usize::MAX - 10, 10), (usize::MAX - 5, usize::MAX)),
            None
        );
    }

    #[test]
    fn equal_hash_and_text_follow_the_bytes() {
        use std::collections::hash_map::DefaultHasher;
        let bot = Matcher::from_body(b"User-agent: *\nDisallow: /p\xFF\n", ["FooBot"]);
        let rule = bot.check_url("/p%FF").rule.expect("a rule decides");
        let shared = bot.pattern_of(&rule).expect("the view's own rule");
        let owned = RulePattern::from(&b"/p\xFF"[..]);
        assert_eq!(shared, owned);
        let hash = |p: &RulePattern| {
            let mut h = DefaultHasher::new();
            p.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&shared), hash(&owned));
        assert_eq!(shared.to_string(), "/p\u{FFFD}");
        assert_eq!(format!("{shared:?}"), "\"/p\u{FFFD}\"");
        assert_eq!(shared.as_str(), None);
        let (a, b) = (RulePattern::from("/a"), RulePattern::from("/b"));
        assert!(a < b);
        assert!(RulePattern::default().is_empty());
    }
}
