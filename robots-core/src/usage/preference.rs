//! One usage preference (yes, no, unknown) and a preference with the line that stated it.

use std::fmt;

/// One usage preference: yes, no, or not stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Preference {
    /// The use is allowed (`y`, `yes`).
    Yes,
    /// The use is not allowed (`n`, `no`).
    No,
    /// Nothing was said, or what was said is not understood.
    #[default]
    Unknown,
}

impl Preference {
    /// Combines two statements about one use, as the AIPREF vocabulary says: any no gives no,
    /// else any yes gives yes, else unknown.
    ///
    /// ```
    /// use robots_core::Preference::{No, Unknown, Yes};
    /// assert_eq!(Yes.combine(No), No);
    /// assert_eq!(Unknown.combine(Yes), Yes);
    /// assert_eq!(Unknown.combine(Unknown), Unknown);
    /// ```
    pub fn combine(self, other: Preference) -> Preference {
        match (self, other) {
            (Preference::No, _) | (_, Preference::No) => Preference::No,
            (Preference::Yes, _) | (_, Preference::Yes) => Preference::Yes,
            _ => Preference::Unknown,
        }
    }

    /// `"y"`, `"n"`, or `None` for unknown: the `Content-Usage` spelling.
    pub fn as_aipref(self) -> Option<&'static str> {
        match self {
            Preference::Yes => Some("y"),
            Preference::No => Some("n"),
            Preference::Unknown => None,
        }
    }

    /// `"yes"`, `"no"`, or `None` for unknown: the `Content-Signal` spelling.
    pub fn as_signal(self) -> Option<&'static str> {
        match self {
            Preference::Yes => Some("yes"),
            Preference::No => Some("no"),
            Preference::Unknown => None,
        }
    }
}

/// A preference with the robots.txt line that stated it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stated {
    /// The preference.
    pub preference: Preference,
    /// The deciding line: the first line of the winning rules that said this preference, or for
    /// an unknown preference the first winning rule (which said nothing usable about this key).
    /// `None` when no rule applied.
    pub line: Option<u32>,
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preference::Yes => "yes",
            Preference::No => "no",
            Preference::Unknown => "unknown",
        })
    }
}
