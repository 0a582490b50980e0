//! `Content-Signal` (Cloudflare's Content Signals Policy), read leniently.

use super::preference::Preference;

/// A `Content-Signal` value (Cloudflare's Content Signals Policy): `search`, `ai-input` and
/// `ai-train`, each `yes` or `no`. There is no formal grammar, so it is read leniently:
/// comma-separated `key=value` pairs, spaces ignored, keys and values ASCII case-insensitive,
/// anything else unknown, the last of a repeated key wins. Unknown keys are kept in the value
/// ([`ContentSignal::entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct ContentSignal {
    /// `search`: building a search index and showing links and excerpts.
    pub search: Preference,
    /// `ai-input`: input to AI models answering a query (retrieval, grounding).
    pub ai_input: Preference,
    /// `ai-train`: training or fine-tuning AI models.
    pub ai_train: Preference,
}

impl ContentSignal {
    /// Parses a `Content-Signal` value (without a path).
    ///
    /// ```
    /// use robots_core::{ContentSignal, Preference};
    /// let signal = ContentSignal::parse(b"search=yes, ai-train=no, ai-input=maybe");
    /// assert_eq!(signal.search, Preference::Yes);
    /// assert_eq!(signal.ai_train, Preference::No);
    /// assert_eq!(signal.ai_input, Preference::Unknown);
    /// ```
    pub fn parse(bytes: &[u8]) -> ContentSignal {
        let mut signal = ContentSignal::default();
        for (key, value) in ContentSignal::entries(bytes) {
            let slot = if key.eq_ignore_ascii_case(b"search") {
                &mut signal.search
            } else if key.eq_ignore_ascii_case(b"ai-input") {
                &mut signal.ai_input
            } else if key.eq_ignore_ascii_case(b"ai-train") {
                &mut signal.ai_train
            } else {
                continue;
            };
            *slot = signal_value(value);
        }
        signal
    }

    /// The `key=value` pairs of a value, as written (trimmed), known or not; a pair without
    /// `=` has an empty value.
    ///
    /// ```
    /// use robots_core::ContentSignal;
    /// let pairs: Vec<_> = ContentSignal::entries(b"search=yes, ai-agent=no").collect();
    /// assert_eq!(pairs, [(&b"search"[..], &b"yes"[..]), (b"ai-agent", b"no")]);
    /// ```
    pub fn entries(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        bytes.split(|&b| b == b',').filter_map(|pair| {
            let (key, value) = match pair.iter().position(|&b| b == b'=') {
                Some(eq) => (&pair[..eq], &pair[eq + 1..]),
                None => (pair, &b""[..]),
            };
            let key = trim_ws(key);
            (!key.is_empty()).then(|| (key, trim_ws(value)))
        })
    }
}

/// `yes` / `no` in any case; anything else unknown.
pub(crate) fn signal_value(value: &[u8]) -> Preference {
    if value.eq_ignore_ascii_case(b"yes") {
        Preference::Yes
    } else if value.eq_ignore_ascii_case(b"no") {
        Preference::No
    } else {
        Preference::Unknown
    }
}

pub(super) fn trim_ws(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}
