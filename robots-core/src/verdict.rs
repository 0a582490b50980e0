//! What a check answers, shared by every module that decides or reports: the kind of a rule,
//! the verdict with its deciding rule, and which groups were selected for a crawler. A leaf:
//! it names nothing else of the crate, so the parser, the matcher and the usage preferences
//! can all use it without depending on each other.

/// Allow or disallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum RuleKind {
    /// An `Allow` line.
    Allow,
    /// A `Disallow` line (or one of its accepted typos).
    Disallow,
}

impl RuleKind {
    /// `"allow"` or `"disallow"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Disallow => "disallow",
        }
    }
}

/// Which groups of the file apply to the crawler.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "kebab-case", tag = "kind", content = "token")
)]
pub enum Selection {
    /// Groups naming this token (the first of the given tokens that has any group).
    Agent(Box<str>),
    /// No group names the crawler; the `*` groups apply.
    Global,
    /// No group applies: everything is allowed.
    None,
}

impl Selection {
    /// The token whose groups apply, when some group names it.
    pub fn token(&self) -> Option<&str> {
        match self {
            Selection::Agent(token) => Some(token),
            Selection::Global | Selection::None => None,
        }
    }
}

/// The answer to a check, with the rule that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict<'a> {
    /// Whether the crawler may fetch the URL.
    pub allowed: bool,
    /// The deciding rule, or `None` when no rule with a non-empty pattern matched.
    pub rule: Option<MatchedRule<'a>>,
}

/// The rule that decided a [`Verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchedRule<'a> {
    /// Line number in the file.
    pub line: u32,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The pattern as written in the file (not escaped; an `index.html` rule that decided through
    /// its `/$` retry still shows as written).
    pub pattern: &'a [u8],
}

impl MatchedRule<'_> {
    /// The pattern as text (invalid UTF-8 replaced).
    pub fn pattern_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.pattern)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for MatchedRule<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("MatchedRule", 3)?;
        s.serialize_field("line", &self.line)?;
        s.serialize_field("kind", &self.kind)?;
        s.serialize_field("pattern", &self.pattern_lossy())?;
        s.end()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Verdict<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Verdict", 2)?;
        s.serialize_field("allowed", &self.allowed)?;
        s.serialize_field("rule", &self.rule)?;
        s.end()
    }
}
