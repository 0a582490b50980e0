//! Pattern matching (spec section 4): `*` matches any run of bytes, a trailing `$` anchors the
//! end, everything else is a literal byte. Matches are anchored at the path start and match a
//! prefix of the path.
//!
//! [`reference_matches`] is the spec's candidate-set algorithm, kept as the oracle.
//! [`Pattern`] is what checks use: literal segments placed greedily leftmost, which finds a match
//! exactly when one exists (each `*` may absorb anything, so the earliest placement of a segment
//! never rules out a later one). It never allocates and costs at most O(|path| × |pattern|).

use memchr::memmem;

/// The spec's reference algorithm: a sorted set of candidate path positions, widened to every
/// later position by `*`. O(|path| × |pattern|). Slow but obviously right; used as the oracle.
///
/// ```
/// use robots_core::pattern::reference_matches;
/// assert!(reference_matches(b"/fish*.php", b"/fish/salmon.php?x"));
/// assert!(!reference_matches(b"/*.php$", b"/index.php?x"));
/// ```
pub fn reference_matches(pattern: &[u8], path: &[u8]) -> bool {
    let mut positions: Vec<usize> = vec![0];
    for (i, &p) in pattern.iter().enumerate() {
        if p == b'$' && i + 1 == pattern.len() {
            return positions.last() == Some(&path.len());
        }
        if p == b'*' {
            let first = positions[0];
            positions = (first..=path.len()).collect();
        } else {
            positions.retain(|&at| at < path.len() && path[at] == p);
            for at in &mut positions {
                *at += 1;
            }
            if positions.is_empty() {
                return false;
            }
        }
    }
    true
}

/// A pattern compiled for matching. Build one with [`Pattern::new`] from an escaped pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// Pattern bytes without a trailing `$`; `*`s kept in place.
    body: Box<[u8]>,
    /// A trailing `$` was present: the match must end at the path's end.
    anchored: bool,
    shape: Shape,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// No `*`: the body is one literal.
    Literal,
    /// `*`s present. `first_star` ends the literal prefix, `last_star` starts the literal suffix;
    /// what lies between is split on `*` at match time.
    Glob {
        first_star: usize,
        last_star: usize,
        min_len: usize,
    },
}

impl Pattern {
    /// Compiles an escaped pattern (as stored by the parser).
    ///
    /// ```
    /// use robots_core::pattern::Pattern;
    /// let p = Pattern::new(b"/a*b$");
    /// assert!(p.matches(b"/axxb") && !p.matches(b"/axxbc"));
    /// ```
    pub fn new(pattern: &[u8]) -> Pattern {
        let (body, anchored) = match pattern {
            [rest @ .., b'$'] => (rest, true),
            _ => (pattern, false),
        };
        let first = memchr::memchr(b'*', body);
        let shape = match (first, memchr::memrchr(b'*', body)) {
            (Some(first_star), Some(last_star)) => Shape::Glob {
                first_star,
                last_star,
                min_len: body.iter().filter(|&&b| b != b'*').count(),
            },
            _ => Shape::Literal,
        };
        Pattern {
            body: body.into(),
            anchored,
            shape,
        }
    }

    /// Whether the pattern matches (a prefix of) `path`.
    #[inline]
    pub fn matches(&self, path: &[u8]) -> bool {
        let body = &self.body[..];
        match self.shape {
            Shape::Literal if self.anchored => path == body,
            Shape::Literal => path.starts_with(body),
            Shape::Glob {
                first_star,
                last_star,
                min_len,
            } => {
                if path.len() < min_len || !path.starts_with(&body[..first_star]) {
                    return false;
                }
                let suffix = &body[last_star + 1..];
                // With `$` the last literal must sit at the very end; it bounds the middle.
                let end = if self.anchored {
                    if !path.ends_with(suffix) {
                        return false;
                    }
                    path.len() - suffix.len()
                } else {
                    path.len()
                };
                let mut at = first_star;
                if first_star < last_star {
                    for segment in body[first_star + 1..last_star].split(|&b| b == b'*') {
                        match find(&path[at.min(end)..end], segment) {
                            Some(found) => at += found + segment.len(),
                            None => return false,
                        }
                    }
                }
                if self.anchored {
                    at <= end
                } else {
                    at <= end && find(&path[at..], suffix).is_some()
                }
            }
        }
    }

    /// Whether the pattern has a `*` or a trailing `$`.
    pub fn has_wildcards(&self) -> bool {
        self.anchored || matches!(self.shape, Shape::Glob { .. })
    }

    /// The literal bytes every match starts with.
    pub fn literal_prefix(&self) -> &[u8] {
        match self.shape {
            Shape::Literal => &self.body,
            Shape::Glob { first_star, .. } => &self.body[..first_star],
        }
    }

    /// Heap bytes held by this pattern.
    pub fn heap_bytes(&self) -> usize {
        self.body.len()
    }
}

#[inline]
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle {
        [] => Some(0),
        [b] => memchr::memchr(*b, haystack),
        _ => memmem::find(haystack, needle),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn both(pattern: &str, path: &str) -> bool {
        let reference = reference_matches(pattern.as_bytes(), path.as_bytes());
        let compiled = Pattern::new(pattern.as_bytes()).matches(path.as_bytes());
        assert_eq!(reference, compiled, "pattern {pattern:?} path {path:?}");
        compiled
    }

    #[test]
    fn spec_examples() {
        assert!(both("/fish", "/fish.html"));
        assert!(both("/fish", "/fish/salmon.html"));
        assert!(!both("/fish", "/Fish.asp"));
        assert!(both("/fish*", "/fishheads"));
        assert!(both("/*.php", "/folder/filename.php?parameters"));
        assert!(both("/*.php$", "/filename.php"));
        assert!(!both("/*.php$", "/filename.php?parameters"));
        assert!(!both("/*.php$", "/filename.php5"));
        assert!(both("/fish*.php", "/fish/salmon.php"));
        assert!(!both("/fish*.php", "/Fish.PHP"));
        // `$` is literal except as the last byte.
        assert!(both("/a$b", "/a$b"));
        assert!(!both("/a$b", "/ab"));
        assert!(both("/a$$", "/a$"));
        assert!(both("/", "/anything"));
        assert!(both("*", "/anything"));
        assert!(both("", "/anything"));
        assert!(!both("$", "/"));
        assert!(both("/*$", "/x"));
        assert!(both("/**a**", "/ba"));
        assert!(!both("foo", "/foo"));
        assert!(both("/a*b*c$", "/abcbc"));
        assert!(!both("/a*bc*bc$", "/abc"));
        assert!(both("/a*a$", "/aa"));
        assert!(!both("/a*a$", "/a"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn compiled_agrees_with_reference(
            pattern in "[/ab*$]{0,10}",
            path in "/[/ab$*]{0,14}",
        ) {
            let reference = reference_matches(pattern.as_bytes(), path.as_bytes());
            let compiled = Pattern::new(pattern.as_bytes()).matches(path.as_bytes());
            prop_assert_eq!(reference, compiled);
        }
    }
}
