//! A body as a sequence of directives with Google's group boundaries (spec section 3). Both the
//! full parse ([`crate::RobotsTxt`]) and the one-crawler parse ([`crate::Matcher::from_body`])
//! read the file through this, so the grouping rule lives in one place: a user-agent line that
//! follows an allow/disallow line of a group starts a new group; nothing else ends one.

use crate::directive::{GROUP_KEY_HEADS, KeyKind, LineContent, ValueHints, parse_scanned};
use crate::sweep::{KeyHeads, Sweep};
use crate::verdict::RuleKind;

/// One directive, values as written (not escaped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event<'a> {
    /// A user-agent line; `starts_group` when it opens a new group.
    UserAgent { value: &'a [u8], starts_group: bool },
    /// An allow or disallow line; `in_group` is false before the first user-agent line.
    Rule {
        kind: RuleKind,
        value: &'a [u8],
        in_group: bool,
        hints: ValueHints,
    },
    /// A sitemap line.
    Sitemap { key: &'a [u8], value: &'a [u8] },
    /// Any other key.
    Other { key: &'a [u8], value: &'a [u8] },
}

pub(crate) struct Events<'a> {
    lines: Sweep<'a>,
    in_group: bool,
    rules_seen: bool,
    line_count: u32,
    /// The keys the reader wants, when it wants only some: lines without them are passed over.
    wanted: Option<&'static KeyHeads>,
    /// Whether the next line is worth that test: not after a line of a group, which is most
    /// often followed by another (a big file's thousands of rules then pay nothing for it).
    test_next: bool,
}

pub(crate) fn events(body: &[u8]) -> Events<'_> {
    Events {
        lines: Sweep::new(body),
        in_group: false,
        rules_seen: true,
        line_count: 0,
        wanted: None,
        test_next: true,
    }
}

/// The events of a reader that wants only the keys of `wanted`: lines that cannot hold one are
/// passed over, and some events of other keys are missing. `wanted` includes the keys of
/// groups ([`GROUP_KEY_HEADS`]): the groups are those of [`events`].
pub(crate) fn events_of_keys<'a>(body: &'a [u8], wanted: &'static KeyHeads) -> Events<'a> {
    debug_assert!(GROUP_KEY_HEADS.iter().all(|&[a, b]| wanted.may_start(a, b)));
    Events {
        wanted: Some(wanted),
        ..events(body)
    }
}

impl Events<'_> {
    /// Lines read so far; after the last event, the file's line count.
    pub(crate) fn line_count(&self) -> u32 {
        self.line_count
    }

    /// Passes over the rest of the current group, up to the next line that may be a user-agent
    /// line: for a reader that has seen the group's first rule (its crawlers are then final)
    /// and wants nothing of it. Events of other kinds in between are lost.
    #[inline]
    pub(crate) fn skip_group(&mut self) {
        if self.in_group && self.rules_seen {
            self.lines.skip_to_user_agent();
            self.line_count = self.lines.number();
        }
    }
}

impl<'a> Iterator for Events<'a> {
    type Item = (u32, Event<'a>);

    #[inline(always)]
    fn next(&mut self) -> Option<(u32, Event<'a>)> {
        loop {
            if self.test_next {
                self.test_next = false;
                if let Some(wanted) = self.wanted {
                    self.lines.pass_lines_without(wanted);
                }
            }
            let Some(line) = self.lines.next() else {
                // With the lines passed at the end.
                self.line_count = self.lines.number();
                return None;
            };
            self.line_count = line.number;
            let LineContent::Directive(d) = parse_scanned(line.content, line.scanned) else {
                self.test_next = true;
                continue;
            };
            let event = match d.kind {
                KeyKind::UserAgent => {
                    let starts_group = self.rules_seen;
                    (self.rules_seen, self.in_group) = (false, true);
                    Event::UserAgent {
                        value: d.value,
                        starts_group,
                    }
                }
                KeyKind::Allow | KeyKind::Disallow => {
                    // Only a rule inside a group can end it.
                    self.rules_seen |= self.in_group;
                    let kind = if d.kind == KeyKind::Allow {
                        RuleKind::Allow
                    } else {
                        RuleKind::Disallow
                    };
                    Event::Rule {
                        kind,
                        value: d.value,
                        in_group: self.in_group,
                        hints: d.hints,
                    }
                }
                KeyKind::Sitemap => {
                    self.test_next = true;
                    Event::Sitemap {
                        key: d.key,
                        value: d.value,
                    }
                }
                KeyKind::Other => {
                    self.test_next = true;
                    Event::Other {
                        key: d.key,
                        value: d.value,
                    }
                }
            };
            return Some((line.number, event));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_start_at_a_user_agent_after_a_rule() {
        let body = b"Disallow: /0\nUser-agent: a\nHost: h\nUser-agent: b\nDisallow: /1\nSitemap: s\nUser-agent: c\n";
        let starts: Vec<(u32, bool)> = events(body)
            .filter_map(|(line, e)| match e {
                Event::UserAgent { starts_group, .. } => Some((line, starts_group)),
                _ => None,
            })
            .collect();
        assert_eq!(starts, [(2, true), (4, false), (7, true)]);
        let in_group: Vec<bool> = events(body)
            .filter_map(|(_, e)| match e {
                Event::Rule { in_group, .. } => Some(in_group),
                _ => None,
            })
            .collect();
        assert_eq!(in_group, [false, true]);
    }

    #[test]
    fn a_reader_of_some_keys_misses_only_lines_of_other_keys() {
        static WANTED: KeyHeads = KeyHeads::of(&GROUP_KEY_HEADS);
        let body = b"# c\nSitemap: /a\nUser-agent: x\nDisallow: /x\nSitemap: /b\n# d\nSitemap: /c\n\nAllow: /y\n";
        let lines = |events: Events<'_>| events.map(|(line, _)| line).collect::<Vec<_>>();
        assert_eq!(lines(events(body)), [2, 3, 4, 5, 7, 9]);
        // Lines without a wanted key are passed, but for the first line after a line of a
        // group (it is read, as most such lines are lines of the group).
        assert_eq!(lines(events_of_keys(body, &WANTED)), [3, 4, 5, 9]);
        let (mut all, mut some) = (events(body), events_of_keys(body, &WANTED));
        all.by_ref().for_each(drop);
        some.by_ref().for_each(drop);
        assert_eq!(some.line_count(), all.line_count());
    }
}
