//! `Content-Usage` (IETF AIPREF): a Structured Fields Dictionary read as bytes.

use std::convert::Infallible;

use sfv::visitor::{
    DictionaryVisitor, EntryVisitor, Ignored, InnerListVisitor, ItemVisitor, ParameterVisitor,
};
use sfv::{BareItemFromInput, KeyRef};

use super::preference::Preference;

/// A `Content-Usage` dictionary (IETF AIPREF vocabulary): the preferences it states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub struct AiPreferences {
    /// `train-ai`: training of AI models.
    pub train_ai: Preference,
    /// `search`: use in search applications.
    pub search: Preference,
}

/// A `Content-Usage` value that is not a Structured Fields Dictionary: every preference it
/// holds is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a Structured Fields dictionary: {reason}")]
pub struct InvalidPreferences {
    /// The value as given (invalid UTF-8 replaced).
    pub value: String,
    /// What the Structured Fields parser found wrong, and where.
    pub reason: String,
}

/// How a known key of a dictionary was given, for lint: a token, or something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Given<'a> {
    #[default]
    Absent,
    Token(&'a str),
    /// A value that is not a token (a string, a number, a boolean, an inner list).
    Other,
}

impl Given<'_> {
    pub(crate) fn preference(self) -> Preference {
        match self {
            Given::Token("y") => Preference::Yes,
            Given::Token("n") => Preference::No,
            _ => Preference::Unknown,
        }
    }
}

/// A dictionary as the vocabulary reads it: the known keys' values (last one wins) and, for
/// lint, the unknown keys.
#[derive(Debug, Default)]
pub(crate) struct Dictionary<'a> {
    pub(crate) train_ai: Given<'a>,
    pub(crate) search: Given<'a>,
    pub(crate) unknown_keys: Vec<&'a str>,
    collect_unknown: bool,
}

impl<'a> Dictionary<'a> {
    /// Parses `bytes` with `sfv`'s visitor: no map is built, and nothing is allocated unless
    /// the value holds a byte sequence or an escaped string (or unknown keys are collected).
    pub(crate) fn parse(bytes: &'a [u8], collect_unknown: bool) -> Result<Dictionary<'a>, String> {
        let visitor = Dictionary {
            collect_unknown,
            ..Dictionary::default()
        };
        sfv::Parser::new(bytes)
            .parse_dictionary_with_visitor(visitor)
            .map_err(|e| e.to_string())
    }
}

impl<'de> DictionaryVisitor<'de> for Dictionary<'de> {
    type Out = Dictionary<'de>;
    type Error = Infallible;

    fn entry(&mut self, key: &'de KeyRef) -> Result<impl EntryVisitor<'de>, Self::Error> {
        let slot = match key.as_str() {
            "train-ai" => Some(&mut self.train_ai),
            "search" => Some(&mut self.search),
            other => {
                if self.collect_unknown && !self.unknown_keys.contains(&other) {
                    self.unknown_keys.push(other);
                }
                None
            }
        };
        // A repeated key: the last one wins, whatever it is.
        Ok(slot.map(|slot| {
            *slot = Given::Other;
            Slot(slot)
        }))
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(self)
    }
}

/// Where one known key's value goes.
struct Slot<'s, 'de>(&'s mut Given<'de>);

impl<'de> EntryVisitor<'de> for Slot<'_, 'de> {
    type Error = Infallible;

    fn item(self) -> Result<impl ItemVisitor<'de>, Self::Error> {
        Ok(self)
    }

    fn inner_list(self) -> Result<impl InnerListVisitor<'de>, Self::Error> {
        // An inner list is not a token: the slot stays `Other`.
        Ok(Ignored)
    }
}

impl<'de> ItemVisitor<'de> for Slot<'_, 'de> {
    type Out = ();
    type Error = Infallible;

    fn bare_item(
        self,
        bare_item: BareItemFromInput<'de>,
    ) -> Result<impl ParameterVisitor<'de, Out = Self::Out>, Self::Error> {
        if let sfv::GenericBareItem::Token(token) = bare_item {
            *self.0 = Given::Token(token.as_str());
        }
        // Parameters carry no meaning in the vocabulary.
        Ok(Ignored)
    }
}

impl AiPreferences {
    /// Every preference unknown.
    pub const UNKNOWN: AiPreferences = AiPreferences {
        train_ai: Preference::Unknown,
        search: Preference::Unknown,
    };

    /// Parses a `Content-Usage` dictionary, as bytes: `train-ai` and `search` with the tokens
    /// `y` or `n`; any other value (`no`, `"n"`, a bare key) is unknown, unknown keys and
    /// parameters are ignored, and a repeated key takes its last value. A value that is not a
    /// dictionary (an uppercase key, bytes outside ASCII…) is an error, which the vocabulary
    /// reads as every preference unknown ([`AiPreferences::parse_lenient`]).
    ///
    /// ```
    /// use robots_core::{AiPreferences, Preference};
    /// let prefs = AiPreferences::parse(b"train-ai=n, search=y;note=\"ok\", future-use=y")?;
    /// assert_eq!((prefs.train_ai, prefs.search), (Preference::No, Preference::Yes));
    /// assert!(AiPreferences::parse(b"Train-AI=n").is_err());
    /// # Ok::<(), robots_core::InvalidPreferences>(())
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<AiPreferences, InvalidPreferences> {
        match Dictionary::parse(bytes, false) {
            Ok(d) => Ok(AiPreferences {
                train_ai: d.train_ai.preference(),
                search: d.search.preference(),
            }),
            Err(reason) => Err(InvalidPreferences {
                value: String::from_utf8_lossy(bytes).into_owned(),
                reason,
            }),
        }
    }

    /// [`AiPreferences::parse`], with a value that is not a dictionary read as every preference
    /// unknown, as the vocabulary says.
    pub fn parse_lenient(bytes: &[u8]) -> AiPreferences {
        AiPreferences::parse(bytes).unwrap_or(AiPreferences::UNKNOWN)
    }

    /// Parses the `Content-Usage` HTTP header from all its field lines, in order: they form one
    /// dictionary (joined with `", "`, as HTTP combines them). `None` without any line; every
    /// preference unknown when the combined value is not a dictionary.
    ///
    /// ```
    /// use robots_core::{AiPreferences, Preference};
    /// let prefs = AiPreferences::from_header_lines([&b"train-ai=y"[..], b"train-ai=n"]).unwrap();
    /// assert_eq!(prefs.train_ai, Preference::No); // the last one wins
    /// assert_eq!(AiPreferences::from_header_lines(std::iter::empty::<&[u8]>()), None);
    /// ```
    pub fn from_header_lines<'a, I>(lines: I) -> Option<AiPreferences>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut lines = lines.into_iter();
        let first = lines.next()?;
        let Some(second) = lines.next() else {
            return Some(AiPreferences::parse_lenient(first));
        };
        let mut joined = first.to_vec();
        for line in std::iter::once(second).chain(lines) {
            joined.extend_from_slice(b", ");
            joined.extend_from_slice(line);
        }
        Some(AiPreferences::parse_lenient(&joined))
    }
}
