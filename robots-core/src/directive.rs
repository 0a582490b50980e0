//! A line to key and value (spec section 2): comments, trimming, the separator, key kinds,
//! and the escaping of values.

use std::borrow::Cow;

use crate::escape::escape_pattern_scanned;
pub(crate) use crate::escape::starts_lowercase_escape;
use crate::words::{first_in_words, splat, zero_bytes};

/// What a key means, decided by ASCII case-insensitive prefix match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum KeyKind {
    /// `user-agent` (typos `useragent`, `user agent`).
    UserAgent,
    /// `allow`.
    Allow,
    /// `disallow` (typos `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`).
    Disallow,
    /// `sitemap` (typo `site-map`).
    Sitemap,
    /// Anything else: Crawl-delay, Host, unknown keys.
    Other,
}

/// One directive found on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directive<'a> {
    /// The key's meaning.
    pub kind: KeyKind,
    /// The key as written, trimmed.
    pub key: &'a [u8],
    /// The value as written, trimmed; may be empty. Not escaped.
    pub value: &'a [u8],
    /// The key and value were separated by whitespace instead of a colon.
    pub missing_colon: bool,
    /// The key was one of the accepted typos.
    pub typo: bool,
    /// What the value may contain, learnt while the line was scanned.
    pub hints: ValueHints,
}

/// What in a value may need work (an escape with a lowercase hex digit such as `%2f`, which
/// escaping rewrites; `*`; bytes ≥ 0x80), found by the one scan of its line, so that escaping
/// and pattern analysis can skip their own scans. A set flag means "may contain"; a clear one,
/// "does not".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueHints(u8);

/// The class of `%`; as a flag of [`ValueHints`] and [`Scanned::seen`], set only for a `%`
/// that starts an escape with a lowercase hex digit (see [`starts_lowercase_escape`]).
const PERCENT: u8 = 1;
const STAR: u8 = 2;
const HIGH: u8 = 4;
const HASH: u8 = 8;
const COLON: u8 = 16;

/// The class of every byte for the line scan; 0 for the bytes that need nothing.
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0x80;
    while b < 256 {
        table[b] = HIGH;
        b += 1;
    }
    table[b'%' as usize] = PERCENT;
    table[b'*' as usize] = STAR;
    table[b'#' as usize] = HASH;
    table[b':' as usize] = COLON;
    table
};

impl ValueHints {
    /// Nothing known: every flag set.
    pub const UNKNOWN: ValueHints = ValueHints(PERCENT | STAR | HIGH);

    /// Whether escaping may change the value.
    pub fn may_need_escaping(self) -> bool {
        self.0 & (PERCENT | HIGH) != 0
    }

    /// Whether the value may hold a `*`.
    pub fn may_have_star(self) -> bool {
        self.0 & STAR != 0
    }
}

/// What a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineContent<'a> {
    /// Nothing but whitespace.
    Empty,
    /// Only a comment.
    Comment,
    /// A key and a value.
    Directive(Directive<'a>),
    /// Text that is not a directive (no separator, more than two words without a colon, or an
    /// empty key). Google ignores such lines.
    Invalid,
}

/// The first `needle` in `haystack`. Values, keys and URL paths are short, where eight bytes
/// at a time in a word beat memchr's set-up (hand-written: a check from a URL runs this on
/// every path); long ones go to memchr.
#[inline]
pub(crate) fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() >= 64 {
        return memchr::memchr(needle, haystack);
    }
    first_in_words(haystack, |word| zero_bytes(word ^ splat(needle)))
}

/// The last `needle` in `haystack`, as [`find_byte`].
#[inline]
pub(crate) fn rfind_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() < 64 {
        haystack.iter().rposition(|&b| b == needle)
    } else {
        memchr::memrchr(needle, haystack)
    }
}

/// Whitespace as Google's parser trims it (space, TAB, VT, FF; CR and LF never reach here).
pub(crate) fn is_trim_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0B | 0x0C)
}

/// Whitespace that may stand in for a missing colon.
fn is_separator_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t')
}

pub(crate) fn trim(s: &[u8]) -> &[u8] {
    trim_end(trim_start(s))
}

/// `s` without its leading whitespace.
pub(crate) fn trim_start(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s
        && is_trim_space(*first)
    {
        s = rest;
    }
    s
}

/// `s` without its trailing whitespace.
fn trim_end(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., last] = s
        && is_trim_space(*last)
    {
        s = rest;
    }
    s
}

/// Splits a line's content (see [`crate::lines::Line::content`]) into key and value.
pub fn parse_line(content: &[u8]) -> LineContent<'_> {
    // One scan finds the comment, the first colon, and what the value may need.
    let (mut comment, mut colon, mut seen) = (None, None, 0u8);
    for (i, &b) in content.iter().enumerate() {
        let class = CLASS[usize::from(b)];
        if class == 0 {
            continue;
        }
        if class == HASH {
            comment = Some(i);
            break;
        }
        if class == COLON && colon.is_none() {
            colon = Some(i);
        }
        if class == PERCENT && !starts_lowercase_escape(content, i) {
            continue;
        }
        seen |= class;
    }
    parse_scanned(
        content,
        Scanned {
            comment,
            colon,
            seen,
        },
    )
}

/// What the scan of a line's content found, offsets into the content: the first `#`, the first
/// `:` before it, and the classes (`*`, high bytes, `%` starting a lowercase escape) of the
/// bytes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Scanned {
    pub(crate) comment: Option<usize>,
    pub(crate) colon: Option<usize>,
    pub(crate) seen: u8,
}

impl Scanned {
    /// Takes in one byte of the content at `offset` that is not a line break or NUL; `false`
    /// once the comment is found (nothing after it matters). Of a `%`, only whether it starts
    /// a lowercase escape counts: see [`Scanned::take_lowercase_escape`].
    #[inline]
    pub(crate) fn take(&mut self, offset: usize, b: u8) -> bool {
        let class = CLASS[usize::from(b)];
        if class == HASH {
            self.comment = Some(offset);
            return false;
        }
        if class == COLON && self.colon.is_none() {
            self.colon = Some(offset);
        }
        self.seen |= class & !PERCENT;
        true
    }

    /// Takes in a `%` of the content that starts an escape with a lowercase hex digit.
    #[inline]
    pub(crate) fn take_lowercase_escape(&mut self) {
        self.seen |= PERCENT;
    }

    /// Which bytes could still change this scan, before its comment: a `:` until the first,
    /// a `%` until one starts a lowercase escape, and each of `*` and bytes ≥ 0x80 until its
    /// first. (A `#`, a line break and a NUL always could.)
    #[inline]
    pub(crate) fn still_wanted(&self) -> Wanted {
        Wanted {
            colon: self.colon.is_none(),
            percent: self.seen & PERCENT == 0,
            star: self.seen & STAR == 0,
            high: self.seen & HIGH == 0,
        }
    }
}

/// See [`Scanned::still_wanted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) colon: bool,
    pub(crate) percent: bool,
    pub(crate) star: bool,
    pub(crate) high: bool,
}

/// [`parse_line`] after the scan of the content (inlined into the parsers' loop).
#[inline(always)]
pub(crate) fn parse_scanned(content: &[u8], scanned: Scanned) -> LineContent<'_> {
    let Scanned {
        comment,
        colon,
        seen,
    } = scanned;
    let before_comment = &content[..comment.unwrap_or(content.len())];
    let text = trim(before_comment);
    if text.is_empty() {
        return if comment.is_some() {
            LineContent::Comment
        } else {
            LineContent::Empty
        };
    }
    // `text` is a subslice of `content`; the colon, not being whitespace, lies inside it.
    let offset = text.as_ptr() as usize - content.as_ptr() as usize;
    let (key, value, missing_colon) = match colon {
        // `text` is trimmed: the key starts it and the value ends it.
        Some(at) => (
            trim_end(&text[..at - offset]),
            trim_start(&text[at - offset + 1..]),
            false,
        ),
        None => {
            // Google accepts whitespace for a forgotten colon, but only between exactly two words.
            let Some(at) = text.iter().position(|&b| is_separator_space(b)) else {
                return LineContent::Invalid;
            };
            let value_start = text[at..]
                .iter()
                .position(|&b| !is_separator_space(b))
                .map_or(text.len(), |n| at + n);
            let value = &text[value_start..];
            if value.iter().any(|&b| is_separator_space(b)) {
                return LineContent::Invalid;
            }
            (trim(&text[..at]), trim(value), true)
        }
    };
    if key.is_empty() {
        return LineContent::Invalid;
    }
    let (kind, typo) = classify_key(key);
    LineContent::Directive(Directive {
        kind,
        key,
        value,
        missing_colon,
        typo,
        hints: ValueHints(seen & (PERCENT | STAR | HIGH)),
    })
}

/// A key name folded for comparison eight bytes at a time: its first eight bytes (zero-padded)
/// in lowercase, the bits that case may flip in them (letters only), the bytes that count, and
/// the rest of the name. Every line's key is classified, so this is on the parse's hot path.
#[derive(Debug)]
struct Name {
    head: u64,
    case: u64,
    used: u64,
    len: usize,
    tail: &'static [u8],
}

impl Name {
    const fn new(name: &'static str) -> Name {
        let bytes = name.as_bytes();
        let (mut head, mut case, mut used) = ([0u8; 8], [0u8; 8], [0u8; 8]);
        let mut i = 0;
        while i < bytes.len() && i < 8 {
            head[i] = bytes[i].to_ascii_lowercase();
            case[i] = if bytes[i].is_ascii_alphabetic() {
                0x20
            } else {
                0
            };
            used[i] = 0xFF;
            i += 1;
        }
        let tail = match bytes.split_at_checked(i) {
            Some((_, tail)) => tail,
            None => &[],
        };
        Name {
            head: u64::from_le_bytes(head),
            case: u64::from_le_bytes(case),
            used: u64::from_le_bytes(used),
            len: bytes.len(),
            tail,
        }
    }

    /// Whether `key` (whose first eight bytes are `head`) starts with this name, ignoring
    /// ASCII case.
    #[inline(always)]
    fn starts(&self, key: &[u8], head: u64) -> bool {
        // A key shorter than the name would compare the name's bytes with the padding.
        key.len() >= self.len
            && (head | self.case) & self.used == self.head
            && (self.tail.is_empty()
                || key
                    .get(8..8 + self.tail.len())
                    .is_some_and(|rest| rest.eq_ignore_ascii_case(self.tail)))
    }
}

/// A key's first eight bytes, zero-padded. A zero byte in a key is compared like any other, and
/// a name's unused bytes are masked out, so the padding never makes a match.
///
/// Every line's key goes through here: a copy of variable length would be a call to `memcpy`
/// per line, so a long key is read as one word and a short one byte by byte.
#[inline]
fn head_of(key: &[u8]) -> u64 {
    if let Some(head) = key.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    key.iter()
        .rev()
        .fold(0u64, |head, &b| (head << 8) | u64::from(b))
}

const USER_AGENT: Name = Name::new("user-agent");
const USERAGENT: Name = Name::new("useragent");
const USER_SPACE_AGENT: Name = Name::new("user agent");
const ALLOW: Name = Name::new("allow");
const DISALLOW: Name = Name::new("disallow");
static DISALLOW_TYPOS: [Name; 5] = [
    Name::new("dissallow"),
    Name::new("dissalow"),
    Name::new("disalow"),
    Name::new("diasllow"),
    Name::new("disallaw"),
];

/// The first two letters of every spelling [`classify_key`] takes for a user-agent, allow or
/// disallow key: a line whose text starts otherwise is none of them, so it cannot start or end
/// a group, nor hold a rule.
pub(crate) const GROUP_KEY_HEADS: [[u8; 2]; 3] = [*b"us", *b"al", *b"di"];

/// Decides a key's kind by prefix, first hit wins; the flag says it was an accepted typo.
#[inline]
pub fn classify_key(key: &[u8]) -> (KeyKind, bool) {
    const SITEMAP: Name = Name::new("sitemap");
    const SITE_MAP: Name = Name::new("site-map");
    let head = head_of(key);
    let is = |name: &Name| name.starts(key, head);
    // The usual keys first, by how often files have them: tests in this order cost fewer
    // mispredicted branches than a jump on the first letter.
    if is(&DISALLOW) {
        return (KeyKind::Disallow, false);
    }
    if is(&ALLOW) {
        return (KeyKind::Allow, false);
    }
    if is(&USER_AGENT) {
        return (KeyKind::UserAgent, false);
    }
    // The rest, typos and sitemaps (the names start with distinct letters): dispatch on the
    // first one.
    match key.first().map(u8::to_ascii_lowercase) {
        Some(b'u') if is(&USERAGENT) || is(&USER_SPACE_AGENT) => (KeyKind::UserAgent, true),
        Some(b'd') if DISALLOW_TYPOS.iter().any(is) => (KeyKind::Disallow, true),
        Some(b's') if is(&SITEMAP) => (KeyKind::Sitemap, false),
        Some(b's') if is(&SITE_MAP) => (KeyKind::Sitemap, true),
        _ => (KeyKind::Other, false),
    }
}

/// Whether values of this kind are escaped before use (all but user-agent and sitemap).
pub fn is_escaped_kind(kind: KeyKind) -> bool {
    !matches!(kind, KeyKind::UserAgent | KeyKind::Sitemap)
}

/// Escapes a value as Google does: `%` + two hex digits gets its digits uppercased, every byte
/// ≥ 0x80 becomes `%XX`, everything else is kept. Borrows when nothing changes.
pub fn escape_pattern(value: &[u8]) -> Cow<'_, [u8]> {
    escape_pattern_hinted(value, ValueHints::UNKNOWN)
}

/// [`escape_pattern`] for a value whose [`ValueHints`] are known.
#[inline]
pub fn escape_pattern_hinted(value: &[u8], hints: ValueHints) -> Cow<'_, [u8]> {
    // Inline for the usual value, which the hints clear: a parse calls this for every rule.
    if !hints.may_need_escaping() {
        return Cow::Borrowed(value);
    }
    escape_pattern_scanned(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The word-at-a-time search finds what a byte loop finds, at every length and offset.
        #[test]
        fn find_byte_is_the_first_position(
            haystack in proptest::collection::vec(prop_oneof![Just(b'#'), Just(0u8), Just(0x80u8), Just(0xA3u8), any::<u8>()], 0..80),
            needle in prop_oneof![Just(b'#'), Just(0u8), Just(0x80u8), any::<u8>()],
        ) {
            prop_assert_eq!(find_byte(needle, &haystack), haystack.iter().position(|&b| b == needle));
        }
    }

    #[test]
    fn a_head_is_the_first_eight_bytes_zero_padded() {
        let key = b"\x01\x80Disallow-x";
        for n in 0..=key.len() {
            let mut padded = [0u8; 8];
            let kept = n.min(8);
            padded[..kept].copy_from_slice(&key[..kept]);
            assert_eq!(head_of(&key[..n]), u64::from_le_bytes(padded), "{n}");
        }
    }

    /// Key classification as the spec words it, byte by byte: the oracle for the folded one.
    fn classify_key_plainly(key: &[u8]) -> (KeyKind, bool) {
        let is = |name: &str| {
            key.len() >= name.len() && key[..name.len()].eq_ignore_ascii_case(name.as_bytes())
        };
        let disallow_typos = ["dissallow", "dissalow", "disalow", "diasllow", "disallaw"];
        if is("user-agent") {
            (KeyKind::UserAgent, false)
        } else if is("useragent") || is("user agent") {
            (KeyKind::UserAgent, true)
        } else if is("allow") {
            (KeyKind::Allow, false)
        } else if is("disallow") {
            (KeyKind::Disallow, false)
        } else if disallow_typos.into_iter().any(is) {
            (KeyKind::Disallow, true)
        } else if is("sitemap") {
            (KeyKind::Sitemap, false)
        } else if is("site-map") {
            (KeyKind::Sitemap, true)
        } else {
            (KeyKind::Other, false)
        }
    }

    proptest! {
        #[test]
        fn keys_are_classified_as_the_spec_words_it(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"user"[..]), Just(&b"USER"[..]), Just(&b"-"[..]), Just(&b"\r"[..]),
                    Just(&b" "[..]), Just(&b"\0"[..]), Just(&b"agent"[..]), Just(&b"AgEnT"[..]),
                    Just(&b"dis"[..]), Just(&b"Dis"[..]), Just(&b"allow"[..]), Just(&b"aLLow"[..]),
                    Just(&b"s"[..]), Just(&b"a"[..]), Just(&b"l"[..]), Just(&b"w"[..]),
                    Just(&b"site"[..]), Just(&b"MAP"[..]), Just(&b"\xC1"[..]), Just(&b"\x81"[..]),
                    Just(&b"ALLOW"[..]), Just(&b"disalow"[..]), Just(&b"DIASLLOW"[..]),
                ],
                0..6,
            ),
            noise in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let key = parts.concat();
            prop_assert_eq!(classify_key(&key), classify_key_plainly(&key));
            prop_assert_eq!(classify_key(&noise), classify_key_plainly(&noise));
        }
    }

    fn directive(line: &[u8]) -> Directive<'_> {
        match parse_line(line) {
            LineContent::Directive(d) => d,
            other => panic!(
                "{:?} is not a directive: {other:?}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    #[test]
    fn group_keys_start_with_their_heads() {
        let names = [
            &USER_AGENT,
            &USERAGENT,
            &USER_SPACE_AGENT,
            &ALLOW,
            &DISALLOW,
        ];
        for name in names.into_iter().chain(&DISALLOW_TYPOS) {
            let [first, second, ..] = name.head.to_le_bytes();
            assert!(GROUP_KEY_HEADS.contains(&[first, second]), "{name:?}");
        }
    }

    #[test]
    fn comments_and_whitespace() {
        assert_eq!(parse_line(b""), LineContent::Empty);
        assert_eq!(parse_line(b" \t\x0B\x0C "), LineContent::Empty);
        assert_eq!(parse_line(b"  # hello"), LineContent::Comment);
        let d = directive(b"\x0B Disallow :\t/a b \x0C# comment");
        assert_eq!((d.key, d.value), (&b"Disallow"[..], &b"/a b"[..]));
        // No value can contain '#'.
        assert_eq!(directive(b"Disallow: /a#b").value, b"/a");
    }

    #[test]
    fn first_colon_separates() {
        let d = directive(b"Disallow /foo:bar");
        assert_eq!(
            (d.kind, d.key, d.value),
            (KeyKind::Disallow, &b"Disallow /foo"[..], &b"bar"[..])
        );
        let d = directive(b"Sitemap: https://x/s.xml");
        assert_eq!(d.value, b"https://x/s.xml");
        assert_eq!(directive(b"Disallow:").value, b"");
        assert_eq!(parse_line(b": /x"), LineContent::Invalid);
        assert_eq!(parse_line(b"  :"), LineContent::Invalid);
    }

    #[test]
    fn missing_colon_only_between_two_words() {
        let d = directive(b"Disallow /x");
        assert!(d.missing_colon);
        assert_eq!((d.kind, d.value), (KeyKind::Disallow, &b"/x"[..]));
        let d = directive(b"User-agent \t Foo");
        assert_eq!(d.value, b"Foo");
        assert_eq!(parse_line(b"Disallow /x /y"), LineContent::Invalid);
        assert_eq!(parse_line(b"Disallow"), LineContent::Invalid);
        // VT and FF are trimmed but never separate.
        assert_eq!(parse_line(b"Disallow\x0B/x"), LineContent::Invalid);
    }

    #[test]
    fn key_kinds_are_prefixes_with_typos() {
        let kind = |k: &[u8]| classify_key(k);
        assert_eq!(kind(b"user-agent"), (KeyKind::UserAgent, false));
        assert_eq!(kind(b"USER-AGENTS"), (KeyKind::UserAgent, false));
        assert_eq!(kind(b"useragent"), (KeyKind::UserAgent, true));
        assert_eq!(kind(b"User Agent"), (KeyKind::UserAgent, true));
        assert_eq!(kind(b"Allow"), (KeyKind::Allow, false));
        assert_eq!(kind(b"allowed"), (KeyKind::Allow, false));
        assert_eq!(kind(b"Disallowed"), (KeyKind::Disallow, false));
        for typo in [
            "dissallow",
            "dissalow",
            "disalow",
            "diasllow",
            "disallaw",
            "DISALOW",
        ] {
            assert_eq!(kind(typo.as_bytes()), (KeyKind::Disallow, true), "{typo}");
        }
        assert_eq!(kind(b"Sitemaps"), (KeyKind::Sitemap, false));
        assert_eq!(kind(b"site-map"), (KeyKind::Sitemap, true));
        assert_eq!(kind(b"crawl-delay"), (KeyKind::Other, false));
        assert_eq!(kind(b"dis-allow"), (KeyKind::Other, false));
        assert_eq!(kind(b"user_agent"), (KeyKind::Other, false));
    }

    #[test]
    fn escaping() {
        assert_eq!(&*escape_pattern(b"/a%aa%Bc"), b"/a%AA%BC");
        assert_eq!(&*escape_pattern(b"/%zz%a"), b"/%zz%a");
        assert_eq!(&*escape_pattern(b"/\xFF\x80"), b"/%FF%80");
        assert_eq!(
            &*escape_pattern(b"/%e2%82%ac\xE2\x82\xAC"),
            b"/%E2%82%AC%E2%82%AC"
        );
        assert_eq!(&*escape_pattern(b"/*$ ~"), b"/*$ ~");
        assert!(is_escaped_kind(KeyKind::Allow) && is_escaped_kind(KeyKind::Other));
        assert!(!is_escaped_kind(KeyKind::UserAgent) && !is_escaped_kind(KeyKind::Sitemap));
    }

    #[test]
    fn parse_line_splits_at_the_first_colon() {
        let LineContent::Directive(d) = parse_line(b"Disallow /foo:bar") else {
            panic!()
        };
        // The first colon is the separator, even inside what looks like a path.
        assert_eq!(
            (d.kind, d.key, d.value),
            (KeyKind::Disallow, &b"Disallow /foo"[..], &b"bar"[..])
        );
    }
}
