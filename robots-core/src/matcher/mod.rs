//! The per-crawler view (spec sections 3–4): the rules that apply to one crawler, compiled and
//! ordered so that the first rule that matches a path is the deciding one.
//!
//! Google keeps the best allow and the best disallow priority and compares them. Ordering the
//! rules by (priority descending, allow before disallow, line ascending) gives the same answer
//! with an early exit: the first match has the highest priority, ties go to allow, and among
//! equals the earliest line is the one reported.
//!
//! A file per job: `select` (which groups and rules apply to the crawler), `compile` (the rules
//! packed and ordered), `index` (big views' rule index), `search` (the hot loop), and `scan`
//! (the same verdicts without a compiled view, for a few checks).

mod compile;
mod index;
mod rule;
mod scan;
mod search;
mod select;
mod served;

use index::RuleIndex;
use rule::CompiledRule;
pub use scan::{RuleScan, ScanCost};
use search::with_leading_slash;

use std::sync::Arc;
use std::time::Duration;

use crate::pattern::Glob;
use crate::records::RequestRate;
use crate::url_path::path_of;
use crate::usage::{Usage, UsagePreferences, UsageTable};
pub use crate::verdict::{MatchedRule, RuleKind, Selection, Verdict};

/// A Crawl-delay value and the line it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CrawlDelay {
    /// The delay.
    pub delay: Duration,
    /// Line of the Crawl-delay record.
    pub line: u32,
}

#[derive(Debug)]
struct Inner {
    selection: Selection,
    rules: Box<[CompiledRule]>,
    /// `*` analysis of the rules with `FLAG_GLOB`.
    globs: Box<[Glob]>,
    /// Where the written form is for rules with `FLAG_WRITTEN_ELSEWHERE`: (rule position,
    /// start, end), sorted by rule position. For the others it is `start..start + len (+1 for
    /// `$`)`.
    written: Box<[(u32, u32, u32)]>,
    /// For views with many rules: which rules can match, by the path's second byte.
    index: Option<Box<RuleIndex>>,
    /// The rules' bytes; for a view without an index, followed by every rule's key (see
    /// `CompiledRule::len_key`) in decision order, so that a check finds the rules a path may
    /// match eight at a time.
    arena: Box<[u8]>,
    /// Crawl-delay, Request-rate and usage rules, out of line: most files have none of them, and
    /// keeping them out keeps the part a check reads small.
    extras: Option<Box<Extras>>,
    /// Some rule's pattern has a `%`: a served path is then matched against the patterns
    /// normalised ([`Matcher::check_served_path`]); without one, normalising changes nothing.
    escapes: bool,
}

/// What a view keeps besides its rules.
#[derive(Debug, Default)]
struct Extras {
    crawl_delay: Option<CrawlDelay>,
    request_rate: Option<(RequestRate, u32)>,
    /// `Content-Usage` and `Content-Signal` rules.
    usage: Option<UsageTable>,
}

/// A robots.txt compiled for one crawler. Cheap to clone (one `Arc`), `Send + Sync`, and a check
/// never allocates (unless a URL has a query but no path, which needs a `/` put in front).
///
/// ```
/// use robots_core::{RobotsTxt, RuleKind};
/// let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
/// let matcher = robots.matcher("FooBot");
/// let verdict = matcher.check_url("https://example.com/private/x");
/// assert!(!verdict.allowed);
/// let rule = verdict.rule.unwrap();
/// assert_eq!((rule.line, rule.kind, rule.pattern), (2, RuleKind::Disallow, &b"/private"[..]));
/// assert!(matcher.is_allowed("https://example.com/private/ok.html"));
/// ```
#[derive(Debug, Clone)]
pub struct Matcher {
    inner: Arc<Inner>,
}

impl Matcher {
    /// The view's bytes, which every [`MatchedRule::pattern`] it gives is a slice of (see
    /// [`Matcher::pattern_of`]).
    pub(crate) fn arena(&self) -> &[u8] {
        &self.inner.arena
    }

    /// What the crawler may do with a URL: the crawl verdict and, when the URL may be fetched,
    /// the AI usage preferences robots.txt states for it (`Content-Usage`, `Content-Signal`;
    /// see [`crate::usage`]). Allocates nothing; a view without usage rules answers at the cost
    /// of [`Matcher::check_url`].
    ///
    /// ```
    /// use robots_core::{Preference, RobotsTxt};
    /// let robots = RobotsTxt::parse(b"User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\n");
    /// let bot = robots.matcher("FooBot");
    /// let usage = bot.usage("https://example.com/open/data.csv");
    /// assert!(usage.verdict.allowed);
    /// assert_eq!(usage.preferences.may_train_ai(), Preference::Yes);
    /// assert_eq!(usage.preferences.train_ai.line, Some(3));
    /// ```
    #[inline]
    pub fn usage(&self, url: &str) -> Usage<'_> {
        self.usage_path(path_of(url).as_bytes())
    }

    /// [`Matcher::usage`] for a path as produced by [`crate::path_of`].
    pub fn usage_path(&self, path: &[u8]) -> Usage<'_> {
        let verdict = self.check_path(path);
        let preferences = if verdict.allowed {
            self.preferences_path(path)
        } else {
            UsagePreferences::default()
        };
        Usage {
            verdict,
            preferences,
        }
    }

    /// The usage preferences for a path **without** the crawl check: for a caller that has
    /// just checked the path and found it allowed (preferences never apply to a disallowed
    /// URL; [`Matcher::usage_path`] does both).
    pub fn preferences_path(&self, path: &[u8]) -> UsagePreferences {
        let Some(table) = self.inner.extras.as_ref().and_then(|e| e.usage.as_ref()) else {
            return UsagePreferences::default();
        };
        if path.first() != Some(&b'/') {
            return with_leading_slash(path, |p| table.preferences(p));
        }
        table.preferences(path)
    }

    /// Whether any `Content-Usage` or `Content-Signal` line applies to this crawler.
    pub fn has_usage_rules(&self) -> bool {
        self.inner
            .extras
            .as_ref()
            .is_some_and(|e| e.usage.is_some())
    }

    /// Shorthand for `check_url(url).allowed`.
    #[inline]
    pub fn is_allowed(&self, url: &str) -> bool {
        self.check_url(url).allowed
    }

    /// Which groups apply.
    pub fn selection(&self) -> &Selection {
        &self.inner.selection
    }

    /// The first valid Crawl-delay of the applicable groups.
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.inner.extras.as_ref().and_then(|e| e.crawl_delay)
    }

    /// The first valid Request-rate of the applicable groups, with its line.
    pub fn request_rate(&self) -> Option<(RequestRate, u32)> {
        self.inner.extras.as_ref().and_then(|e| e.request_rate)
    }

    /// How many compiled rules the view holds (index.html retries count as rules; of `*` rules
    /// with the same body and anchoring, a view of 32 or more keeps only the first, as only it
    /// can decide).
    pub fn rule_count(&self) -> usize {
        self.inner.rules.len()
    }

    /// Approximate heap bytes held by this view (shared by all its clones).
    pub fn heap_bytes(&self) -> usize {
        let inner = &*self.inner;
        std::mem::size_of::<Inner>()
            + inner.rules.len() * std::mem::size_of::<CompiledRule>()
            + inner.globs.len() * std::mem::size_of::<Glob>()
            + inner.written.len() * std::mem::size_of::<(u32, u32, u32)>()
            + inner.index.as_ref().map_or(0, |i| i.heap_bytes())
            + inner.arena.len()
            + inner.extras.as_ref().map_or(0, |e| {
                std::mem::size_of::<Extras>() + e.usage.as_ref().map_or(0, |u| u.heap_bytes())
            })
            + match &inner.selection {
                Selection::Agent(token) => token.len(),
                _ => 0,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::index::{KEYED_MIN_RULES, key_candidates};
    use super::select::{KeptRule, SCRATCH, Scratch, emptied};
    use super::*;
    use crate::robots::RobotsTxt;
    use proptest::prelude::*;

    proptest! {
        /// Views without an index that scan their rules' keys (16 or more rules, more than one
        /// block of 64 for some): rules of every key kind (a literal second byte, `*` there,
        /// `/` alone) and paths of every kind (no second byte, one that no key has), same
        /// verdicts and lines as Google's.
        #[test]
        fn keyed_views_agree_with_google(
            rules in prop::collection::vec(
                ("(Allow|Disallow)", "/([ab*][ab/]{0,4}(\\*[ab])?)?\\$?"),
                16..140,
            ),
            path in "/[abc/]{0,8}",
        ) {
            let mut body = String::from("User-agent: *\n");
            for (kind, pattern) in &rules {
                body.push_str(&format!("{kind}: {pattern}\n"));
            }
            let matcher = Matcher::from_body(body.as_bytes(), ["FooBot"]);
            // Rules starting `/a`, `/b`, `/*` and `/` spread too little for an index.
            prop_assume!(matcher.inner.index.is_none());
            prop_assert!(matcher.inner.rules.len() < KEYED_MIN_RULES || !matcher.inner.keys().is_empty());
            let url = format!("https://example.com{path}");
            let ours = matcher.check_url(&url);
            let google = crate::reference::google_verdict(body.as_bytes(), &["FooBot"], &url);
            prop_assert_eq!((ours.allowed, ours.rule.map_or(0, |r| r.line)), google);
        }
    }

    /// What this thread's scratch holds between parses: (kept, pending) capacities in bytes.
    fn retained() -> (usize, usize) {
        let scratch = SCRATCH.take().unwrap_or_default();
        let held = (
            scratch.kept.capacity() * std::mem::size_of::<KeptRule>(),
            scratch.compile.pending.capacity() * std::mem::size_of::<CompiledRule>(),
        );
        let compile = &scratch.compile;
        assert!(scratch.kept.is_empty() && compile.pending.is_empty() && compile.order.is_empty());
        assert!(compile.twins.is_empty());
        SCRATCH.set(Some(scratch));
        held
    }

    /// A parse leaves its vectors empty for the next one on the thread, keeps them when small
    /// (no allocation next time), and drops them when they hold more than the budget.
    #[test]
    fn scratch_is_reused_empty_and_bounded() {
        let small = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n";
        let view = Matcher::from_body(small, ["FooBot"]);
        let (kept, pending) = retained();
        assert!(
            kept > 0 && pending > 0,
            "small vectors are kept: {kept} {pending}"
        );
        assert_eq!(view.rule_count(), 2);

        // 60,000 rules: the lists outgrow the budget and are dropped.
        let mut big = String::from("User-agent: *\n");
        for i in 0..60_000 {
            big.push_str(&format!("Disallow: /{i}\n"));
        }
        let view = Matcher::from_body(big.as_bytes(), ["FooBot"]);
        assert_eq!(view.rule_count(), 60_000);
        let (kept, pending) = retained();
        assert!(kept <= Scratch::RETAINED_BYTES && pending <= Scratch::RETAINED_BYTES);
        assert_eq!(kept, 0, "an oversized list is not kept");

        // The twin table too is emptied, and a second parse finds the same twins.
        let mut twins = String::from("User-agent: *\n");
        for i in 0..40 {
            twins.push_str(&format!("Disallow: /*{}*x\n", i % 3));
        }
        for _ in 0..2 {
            assert_eq!(
                Matcher::from_body(twins.as_bytes(), ["FooBot"]).rule_count(),
                3
            );
            retained();
        }

        // Nothing of the big parse leaks into the next view on this thread.
        let view = Matcher::from_body(small, ["FooBot"]);
        assert_eq!(view.rule_count(), 2);
        assert!(view.is_allowed("/a/b/c") && !view.is_allowed("/a/x") && view.is_allowed("/1"));
        let robots = RobotsTxt::parse(small);
        assert_eq!(robots.matcher("FooBot").rule_count(), 2);
    }

    /// Views with no rules and no records, of no group or of `*` groups, are one shared view
    /// each (no compilation); any rule, record or named group gives a view of its own.
    #[test]
    fn empty_views_are_shared() {
        let same = |a: &Matcher, b: &Matcher| Arc::ptr_eq(&a.inner, &b.inner);
        let none = [
            Matcher::from_body(b"", ["FooBot"]),
            Matcher::from_body(b"404 Not Found", ["FooBot"]),
            RobotsTxt::parse(b"# nothing\n").matcher("BarBot"),
            RobotsTxt::parse(b"User-agent: Other\nDisallow: /\n").matcher("FooBot"),
        ];
        for view in &none {
            assert!(same(view, &none[0]));
            assert_eq!(view.selection(), &Selection::None);
            assert!(view.is_allowed("https://e.com/x") && view.rule_count() == 0);
        }
        let global = [
            Matcher::from_body(b"User-agent: *\n", ["FooBot"]),
            RobotsTxt::parse(b"User-agent: *\nUser-agent: x\n# c\n").matcher("FooBot"),
        ];
        assert!(same(&global[0], &global[1]) && !same(&global[0], &none[0]));
        assert_eq!(global[0].selection(), &Selection::Global);
        for body in [
            &b"User-agent: *\nDisallow: /a\n"[..],
            b"User-agent: *\nCrawl-delay: 1\n",
            b"User-agent: FooBot\n",
        ] {
            let view = Matcher::from_body(body, ["FooBot"]);
            assert!(!same(&view, &global[0]) && !same(&view, &none[0]));
            let view = RobotsTxt::parse(body).matcher("FooBot");
            assert!(!same(&view, &global[0]) && !same(&view, &none[0]));
        }
    }

    /// `from_body` keeps the rules of the `*` groups before the crawler's own group until the
    /// end, then drops them: the view and the rules it reports (as written, for escaped ones
    /// too) are the full parse's.
    #[test]
    fn from_body_drops_the_rules_of_groups_before_the_chosen_one() {
        let body = "User-agent: *\nDisallow: /%e2%82\nDisallow: /caf\u{e9}\nAllow: /x/index.html\n\n\
                    User-agent: FooBot\nDisallow: /a%2fb\nAllow: /na\u{ef}ve\nAllow: /y/index.htm\n\n\
                    User-agent: *\nDisallow: /late\n";
        let fused = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        let full = RobotsTxt::parse(body.as_bytes()).matcher("FooBot");
        assert_eq!(fused.rule_count(), full.rule_count());
        assert_eq!(fused.selection(), &Selection::Agent("FooBot".into()));
        for (path, written) in [
            ("/a%2Fb", Some(&b"/a%2fb"[..])),
            ("/na%C3%AFve", Some("/na\u{ef}ve".as_bytes())),
            ("/y/", Some(b"/y/index.htm")),
            ("/%E2%82", None),
            ("/caf%C3%A9", None),
            ("/late", None),
        ] {
            let verdict = fused.check_path(path.as_bytes());
            assert_eq!(verdict, full.check_path(path.as_bytes()), "{path}");
            assert_eq!(verdict.rule.map(|r| r.pattern), written, "{path}");
        }
        // For a crawler without a group of its own, the `*` groups' rules, all of them.
        let global = Matcher::from_body(body.as_bytes(), ["BarBot"]);
        let full = RobotsTxt::parse(body.as_bytes()).matcher("BarBot");
        for path in ["/%E2%82", "/caf%C3%A9", "/x/", "/late", "/a%2Fb"] {
            assert_eq!(
                global.check_path(path.as_bytes()),
                full.check_path(path.as_bytes())
            );
        }
        assert_eq!(
            global.check_path(b"/caf%C3%A9").rule.map(|r| r.pattern),
            Some("/caf\u{e9}".as_bytes())
        );
    }

    /// `from_body` takes its names however many there are: none, one (no list allocated), a
    /// few, and more than its 64-bit group mask holds (the full parse then).
    #[test]
    fn from_body_takes_any_number_of_names() {
        let body = b"User-agent: ncj\nDisallow: /61\n\nUser-agent: b\nDisallow: /b\n\nUser-agent: *\nDisallow: /all\n";
        // Letters only (a token with a digit matches `*` groups only); the 62nd is `ncj`.
        let many: Vec<String> = (0..70u8)
            .map(|i| {
                format!(
                    "n{}{}",
                    char::from(b'a' + i / 26),
                    char::from(b'a' + i % 26)
                )
            })
            .collect();
        for names in [
            vec![],
            vec!["b"],
            vec!["x"],
            vec!["x", "b"],
            vec!["b", "ncj"],
            many.iter().map(String::as_str).collect(),
        ] {
            let fused = Matcher::from_body(body, &names);
            let full = RobotsTxt::parse(body).matcher_for(&names);
            assert_eq!(fused.selection(), full.selection(), "{names:?}");
            for path in ["/61", "/b", "/all"] {
                assert_eq!(
                    fused.check_path(path.as_bytes()),
                    full.check_path(path.as_bytes())
                );
            }
        }
        assert_eq!(
            Matcher::from_body(body, ["b"]).selection(),
            &Selection::Agent("b".into())
        );
        assert_eq!(
            Matcher::from_body(body, &many).selection(),
            &Selection::Agent("ncj".into())
        );
        assert!(!Matcher::from_body(body, &many).is_allowed("https://e.com/61"));
        assert_eq!(
            Matcher::from_body(body, [""; 0]).selection(),
            &Selection::Global
        );
    }

    #[test]
    fn emptied_keeps_small_vectors_and_drops_large_ones() {
        let small: Vec<u32> = Vec::with_capacity(16);
        let small = emptied(small);
        assert!(small.is_empty() && small.capacity() >= 16);
        let mut large: Vec<u8> = vec![1; Scratch::RETAINED_BYTES + 1];
        large.push(2);
        assert_eq!(emptied(large).capacity(), 0);
    }

    proptest! {
        /// Each key's flag is exact, whatever its neighbours (a zero key next to a 0x01, 0x80,
        /// 0xFF): set when the key is the path's second byte or 0, and nothing else set.
        #[test]
        fn key_candidates_flag_exactly_the_keys_that_allow_the_path(
            keys in prop::array::uniform8(prop_oneof![Just(0u8), Just(1), Just(b'a'), Just(0x80), Just(0xFF), any::<u8>()]),
            want in prop_oneof![Just(0u8), Just(b'a'), Just(0xFF), any::<u8>()],
        ) {
            let expected = keys.iter().enumerate().fold(0u64, |flags, (i, &key)| {
                flags | (u64::from(key == want || key == 0) << (8 * i + 7))
            });
            prop_assert_eq!(key_candidates(keys, want), expected);
        }
    }

    /// 40 `*` rules, only four distinct (body, anchoring): the view keeps the first of each in
    /// decision order, and that one reports — the allow of a twin pair, else the earliest line.
    #[test]
    fn twin_wildcard_rules_are_kept_once() {
        let mut body = String::from("User-agent: *\n");
        for i in 0..10 {
            body.push_str(&format!(
                "Disallow: /*.php$\nDisallow: /*x*y\nAllow: /*x*y\nDisallow: /*q*{}\n",
                i % 2
            ));
        }
        let view = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        assert_eq!(view.rule_count(), 4);
        let verdict = view.check_path(b"/a.php");
        assert_eq!(
            (verdict.allowed, verdict.rule.map(|r| r.line)),
            (false, Some(2))
        );
        let verdict = view.check_path(b"/axy");
        assert_eq!(
            (verdict.allowed, verdict.rule.map(|r| r.line)),
            (true, Some(4))
        );
        let verdict = view.check_path(b"/q1");
        assert_eq!(
            verdict.rule.map(|r| (r.line, r.pattern)),
            Some((9, &b"/*q*1"[..]))
        );
        // Below the threshold every rule is kept.
        let few = Matcher::from_body(b"User-agent: *\nDisallow: /*a\nDisallow: /*a\n", ["FooBot"]);
        assert_eq!(few.rule_count(), 2);
    }

    /// The view of `body` for FooBot splits its index on byte position `at`, and its verdicts
    /// (with their lines) for `paths` are Google's.
    fn assert_index_at(body: &str, at: u32, paths: &[&str]) {
        let view = Matcher::from_body(body.as_bytes(), ["FooBot"]);
        assert_eq!(view.inner.index.as_ref().map(|i| i.at), Some(at));
        for path in paths {
            let ours = view.check_path(path.as_bytes());
            let google = crate::reference::google_verdict(body.as_bytes(), &["FooBot"], path);
            assert_eq!(
                (ours.allowed, ours.rule.map_or(0, |r| r.line)),
                google,
                "{path}"
            );
        }
    }

    /// Every rule starts with `/private`: the index splits on the digit after it (found on all
    /// 40 rules, and on a sample of 32 of 400), and the verdicts (with their lines) stay
    /// Google's.
    #[test]
    fn the_index_splits_on_the_position_that_separates_the_rules() {
        let mut many = String::from("User-agent: *\n");
        for j in 0..200 {
            let d = j % 10;
            many.push_str(&format!(
                "Disallow: /private{d}/{j}\nAllow: /private{d}/*.html$\n"
            ));
        }
        let paths = [
            "/private3/13",
            "/private3/130.html",
            "/private4/13",
            "/privateX",
        ];
        assert_index_at(&many, 8, &paths);

        let mut body = String::from("User-agent: *\n");
        for j in 0..20 {
            body.push_str(&format!(
                "Disallow: /private{j}/\nAllow: /private{j}/*.html$\n"
            ));
        }
        let paths = [
            "/",
            "/p",
            "/private",
            "/private1",
            "/private1/",
            "/private1/a.html",
            "/private12/x",
            "/private19/a.html?x",
            "/private7/b.html",
            "/blog/1",
            "/private2x/",
        ];
        assert_index_at(&body, 8, &paths);
    }
}
