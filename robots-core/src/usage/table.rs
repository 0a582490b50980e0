//! The usage rules of a crawler's view, compiled, and what they answer for a URL.

use super::aipref::AiPreferences;
use super::preference::{Preference, Stated};
use super::signal::{ContentSignal, trim_ws};
use crate::directive::escape_pattern;
use crate::pattern::{Pattern, Subject};
use crate::verdict::Verdict;

/// Splits a `Content-Usage` or `Content-Signal` value into its optional path and its
/// preference: a value starting with `/` or `*` has a path up to the first space or tab, and
/// the preference is what follows the whitespace; any other value is all preference.
///
/// ```
/// use robots_core::usage::split_path;
/// assert_eq!(split_path(b"/ai-ok/ train-ai=y"), (Some(&b"/ai-ok/"[..]), &b"train-ai=y"[..]));
/// assert_eq!(split_path(b"train-ai=n"), (None, &b"train-ai=n"[..]));
/// ```
pub fn split_path(value: &[u8]) -> (Option<&[u8]>, &[u8]) {
    if !matches!(value.first(), Some(b'/' | b'*')) {
        return (None, value);
    }
    let end = value
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(value.len());
    (Some(&value[..end]), trim_ws(&value[end..]))
}

/// Whether a record key is `Content-Usage` / `Content-Signal` (ASCII case-insensitive).
pub(crate) fn usage_kind(key: &[u8]) -> Option<UsageKind> {
    if key.eq_ignore_ascii_case(b"content-usage") {
        Some(UsageKind::ContentUsage)
    } else if key.eq_ignore_ascii_case(b"content-signal") {
        Some(UsageKind::ContentSignal)
    } else {
        None
    }
}

/// Which vocabulary a line uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UsageKind {
    ContentUsage,
    ContentSignal,
}

/// The preferences robots.txt states for one URL, for the crawler a view was compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct UsagePreferences {
    /// `Content-Usage`'s `train-ai`.
    pub train_ai: Stated,
    /// `Content-Usage`'s `search`.
    pub search: Stated,
    /// `Content-Signal`, when a `Content-Signal` line applies to the URL.
    pub content_signal: Option<SignalPreferences>,
}

/// The `Content-Signal` preferences for one URL, each with its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct SignalPreferences {
    /// `search`.
    pub search: Stated,
    /// `ai-input`.
    pub ai_input: Stated,
    /// `ai-train`.
    pub ai_train: Stated,
}

impl UsagePreferences {
    /// Whether robots.txt says anything about the URL's use (some rule applied).
    pub fn is_stated(&self) -> bool {
        self.train_ai.line.is_some() || self.search.line.is_some() || self.content_signal.is_some()
    }

    /// May the content be used to train AI models? `Content-Usage`'s `train-ai` and
    /// `Content-Signal`'s `ai-train` combined (any no gives no, else any yes gives yes).
    pub fn may_train_ai(&self) -> Preference {
        let signal = self.content_signal.map(|s| s.ai_train.preference);
        self.train_ai.preference.combine(signal.unwrap_or_default())
    }

    /// May the content be used for search? `Content-Usage`'s and `Content-Signal`'s `search`
    /// combined.
    pub fn may_search(&self) -> Preference {
        let signal = self.content_signal.map(|s| s.search.preference);
        self.search.preference.combine(signal.unwrap_or_default())
    }

    /// May the content be given to AI models as input (`Content-Signal`'s `ai-input`)?
    pub fn may_use_as_ai_input(&self) -> Preference {
        self.content_signal
            .map(|s| s.ai_input.preference)
            .unwrap_or_default()
    }
}

/// The answer to "what may I do with this URL": the crawl verdict and, when the URL may be
/// fetched, the usage preferences robots.txt states for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage<'a> {
    /// Whether the crawler may fetch the URL, and the rule that decided.
    pub verdict: Verdict<'a>,
    /// The preferences; all unknown when the URL may not be fetched (no preference applies to
    /// what cannot be crawled).
    pub preferences: UsagePreferences,
}

/// One compiled rule: its path pattern (none: every path, priority 0) and what it states.
#[derive(Debug)]
struct Compiled<P> {
    line: u32,
    priority: u32,
    pattern: Option<Pattern>,
    stated: P,
}

impl<P> Compiled<P> {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.pattern.as_ref().map_or(0, |p| p.heap_bytes())
    }
}

/// The usage rules of one view, by priority (descending), then line.
#[derive(Debug, Default)]
pub(crate) struct UsageTable {
    content_usage: Box<[Compiled<AiPreferences>]>,
    content_signal: Box<[Compiled<ContentSignal>]>,
}

impl UsageTable {
    /// Compiles the lines `(line, kind, value as written)` that apply to a view; `None` when
    /// there are none, so that a view without usage rules pays nothing.
    pub(crate) fn build<'a>(
        lines: impl IntoIterator<Item = (u32, UsageKind, &'a [u8])>,
    ) -> Option<UsageTable> {
        let mut usage = Vec::new();
        let mut signal = Vec::new();
        for (line, kind, value) in lines {
            let (path, preference) = split_path(value);
            let pattern = path.map(|p| escape_pattern(p));
            let priority = pattern
                .as_ref()
                .map_or(0, |p| u32::try_from(p.len()).unwrap_or(u32::MAX));
            let pattern = pattern.map(|p| Pattern::new(&p));
            match kind {
                UsageKind::ContentUsage => usage.push(Compiled {
                    line,
                    priority,
                    pattern,
                    stated: AiPreferences::parse_lenient(preference),
                }),
                UsageKind::ContentSignal => signal.push(Compiled {
                    line,
                    priority,
                    pattern,
                    stated: ContentSignal::parse(preference),
                }),
            }
        }
        if usage.is_empty() && signal.is_empty() {
            return None;
        }
        // Stable: file order is kept among equal priorities.
        usage.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.line));
        signal.sort_by_key(|r| (std::cmp::Reverse(r.priority), r.line));
        Some(UsageTable {
            content_usage: usage.into(),
            content_signal: signal.into(),
        })
    }

    /// The preferences for a path (starting with `/`). Allocates nothing.
    pub(crate) fn preferences(&self, path: &[u8]) -> UsagePreferences {
        let mut subject = Subject::new(path);
        let usage = resolve(&self.content_usage, &mut subject, |p| {
            [p.train_ai, p.search]
        });
        let signal = resolve(&self.content_signal, &mut subject, |s| {
            [s.search, s.ai_input, s.ai_train]
        });
        let [train_ai, search] = usage.unwrap_or_default();
        UsagePreferences {
            train_ai,
            search,
            content_signal: signal.map(|[search, ai_input, ai_train]| SignalPreferences {
                search,
                ai_input,
                ai_train,
            }),
        }
    }

    /// What one vocabulary states for a path, as (training, search): `Content-Usage`'s
    /// `train-ai` and `search` (unknown when no line applies), or `Content-Signal`'s `ai-train`
    /// and `search` (`None` when no line applies). Only that vocabulary's rules are looked at:
    /// lint asks each line what the *other* vocabulary says, and a file of one vocabulary then
    /// costs nothing per line.
    pub(crate) fn stated_by(&self, kind: UsageKind, path: &[u8]) -> Option<(Stated, Stated)> {
        let mut subject = Subject::new(path);
        match kind {
            UsageKind::ContentUsage => {
                let [train, search] = resolve(&self.content_usage, &mut subject, |p| {
                    [p.train_ai, p.search]
                })
                .unwrap_or_default();
                Some((train, search))
            }
            UsageKind::ContentSignal => {
                if self.content_signal.is_empty() {
                    return None;
                }
                resolve(&self.content_signal, &mut subject, |s| {
                    [s.ai_train, s.search]
                })
                .map(|[train, search]| (train, search))
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.content_usage
            .iter()
            .map(Compiled::heap_bytes)
            .sum::<usize>()
            + self
                .content_signal
                .iter()
                .map(Compiled::heap_bytes)
                .sum::<usize>()
    }
}

/// The longest matching rules decide; rules of that length combine per key (any no gives no,
/// else any yes gives yes). `None` when no rule matches.
fn resolve<P, const N: usize>(
    rules: &[Compiled<P>],
    subject: &mut Subject<'_>,
    keys: impl Fn(&P) -> [Preference; N],
) -> Option<[Stated; N]> {
    let mut top: Option<u32> = None;
    let mut out = [Stated::default(); N];
    for rule in rules {
        if top.is_some_and(|p| rule.priority < p) {
            break;
        }
        if !rule
            .pattern
            .as_ref()
            .is_none_or(|p| p.matches_subject(subject))
        {
            continue;
        }
        if top.is_none() {
            top = Some(rule.priority);
            out = [Stated {
                preference: Preference::Unknown,
                line: Some(rule.line),
            }; N];
        }
        for (slot, said) in out.iter_mut().zip(keys(&rule.stated)) {
            let combined = slot.preference.combine(said);
            if combined != slot.preference {
                // Rules come in line order: this is the first line that said it.
                *slot = Stated {
                    preference: combined,
                    line: Some(rule.line),
                };
            }
        }
    }
    top.map(|_| out)
}
