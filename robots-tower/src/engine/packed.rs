//! robots.txt's usage preferences for one request in 24 bytes instead of 60: every request
//! carries them from its admission to its response's [`crate::RobotsInfo`], and both of those
//! stay within the size the compiler copies inline (128 bytes) only with them packed.

use std::num::NonZeroU32;

use robots_core::{Preference, SignalPreferences, Stated, UsagePreferences};

/// A [`UsagePreferences`], packed: each preference in two bits, each line as a `NonZeroU32`
/// (lines count from 1, so nothing is lost).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PackedUsage {
    /// `train-ai`, `search`, then `Content-Signal`'s `search`, `ai-input`, `ai-train`.
    lines: [Option<NonZeroU32>; 5],
    /// Two bits a preference, in the order of `lines`.
    preferences: u16,
    /// Whether a `Content-Signal` line applied.
    signal: bool,
}

impl PackedUsage {
    pub(crate) fn pack(usage: UsagePreferences) -> PackedUsage {
        let signal = usage.content_signal.unwrap_or_default();
        let all = [
            usage.train_ai,
            usage.search,
            signal.search,
            signal.ai_input,
            signal.ai_train,
        ];
        let mut packed = PackedUsage {
            signal: usage.content_signal.is_some(),
            ..PackedUsage::default()
        };
        for (i, stated) in all.into_iter().enumerate() {
            packed.lines[i] = stated.line.and_then(NonZeroU32::new);
            packed.preferences |= code(stated.preference) << (2 * i);
        }
        packed
    }

    pub(crate) fn unpack(self) -> UsagePreferences {
        let stated = |i: usize| Stated {
            preference: preference((self.preferences >> (2 * i)) & 0b11),
            line: self.lines[i].map(NonZeroU32::get),
        };
        UsagePreferences {
            train_ai: stated(0),
            search: stated(1),
            content_signal: self.signal.then(|| SignalPreferences {
                search: stated(2),
                ai_input: stated(3),
                ai_train: stated(4),
            }),
        }
    }
}

fn code(preference: Preference) -> u16 {
    match preference {
        Preference::Unknown => 0,
        Preference::Yes => 1,
        Preference::No => 2,
    }
}

fn preference(code: u16) -> Preference {
    match code {
        1 => Preference::Yes,
        2 => Preference::No,
        _ => Preference::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_loses_nothing() {
        let prefs = [Preference::Unknown, Preference::Yes, Preference::No];
        let lines = [None, Some(1), Some(7), Some(u32::MAX)];
        let mut seen = 0;
        for (n, &a) in prefs.iter().enumerate() {
            for &b in &prefs {
                for &line in &lines {
                    let stated = |preference| Stated { preference, line };
                    for signal in [
                        None,
                        Some(SignalPreferences {
                            search: stated(b),
                            ai_input: stated(a),
                            ai_train: Stated {
                                preference: prefs[(n + 1) % 3],
                                line: Some(3),
                            },
                        }),
                    ] {
                        let usage = UsagePreferences {
                            train_ai: stated(a),
                            search: Stated {
                                preference: b,
                                line: None,
                            },
                            content_signal: signal,
                        };
                        assert_eq!(PackedUsage::pack(usage).unpack(), usage);
                        seen += 1;
                    }
                }
            }
        }
        assert_eq!(seen, 72);
        assert_eq!(
            PackedUsage::pack(UsagePreferences::default()).unpack(),
            UsagePreferences::default()
        );
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn it_is_small() {
        assert!(std::mem::size_of::<PackedUsage>() <= 24);
    }
}
