//! The compiled rule: 16 bytes, what every other part of the matcher reads (a leaf: it uses
//! nothing else of the matcher).

use crate::verdict::RuleKind;

/// A rule ready to match, 16 bytes: views of big files hold tens of thousands of these, and a
/// cached view must cost little more than the file itself. Its bytes live in `Inner::arena`;
/// the `*` analysis of the few rules that have one lives in `Inner::globs`.
#[derive(Debug, Clone, Copy)]
pub(super) struct CompiledRule {
    /// Start of the escaped pattern without its trailing `$` (what is matched) in the arena.
    /// The pattern as written (what is reported) starts here too, `written_len` long, unless
    /// the rule is listed in `Inner::written`.
    pub(super) start: u32,
    /// The body's length (low 24 bits: a body is one line's pattern, at most three times
    /// `MAX_LINE_BYTES` once escaped) and, above it, the rule's key: the body's second byte
    /// when the body is `/` and a literal byte, 0 when any path may match. A path whose second
    /// byte differs from a rule's key cannot match it, which a check sees without reading the
    /// body (it is the body's bytes, elsewhere in memory, that a check waits for).
    pub(super) len_key: u32,
    pub(super) line: u32,
    /// `FLAG_*` bits, and above them the index into `Inner::globs` (when `FLAG_GLOB`).
    pub(super) meta: u32,
}

// The size the docs state: a view of a big file holds tens of thousands of these.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<CompiledRule>() == 16);

pub(super) const FLAG_ALLOW: u32 = 1;

pub(super) const FLAG_ANCHORED: u32 = 1 << 1;

pub(super) const FLAG_GLOB: u32 = 1 << 2;

/// The written form is not at `start` (escaping changed it, or an index.html retry).
pub(super) const FLAG_WRITTEN_ELSEWHERE: u32 = 1 << 3;

pub(super) const META_SHIFT: u32 = 4;

/// The bits of `CompiledRule::len_key` that hold the length.
pub(super) const LEN_MASK: u32 = (1 << 24) - 1;

impl CompiledRule {
    pub(super) fn kind(&self) -> RuleKind {
        if self.meta & FLAG_ALLOW != 0 {
            RuleKind::Allow
        } else {
            RuleKind::Disallow
        }
    }

    pub(super) fn body(&self) -> (u32, u32) {
        (self.start, self.start + self.len())
    }

    pub(super) fn len(&self) -> u32 {
        self.len_key & LEN_MASK
    }

    /// See `len_key`.
    #[inline(always)]
    pub(super) fn key(&self) -> u8 {
        (self.len_key >> 24) as u8
    }

    /// Its place in decision order, highest first: priority (the escaped pattern's length,
    /// `$` counted), then allow before disallow.
    #[inline]
    pub(super) fn rank(&self) -> u32 {
        let priority = self.len() + u32::from(self.meta & FLAG_ANCHORED != 0);
        priority * 2 + u32::from(self.meta & FLAG_ALLOW != 0)
    }
}
