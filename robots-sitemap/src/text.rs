//! Text sitemaps: one URL a line (UTF-8), blank lines ignored. Fed the bytes as they come; one
//! line is held at most, capped, so a line without an end cannot make it hold the file.

use crate::entry::{Item, Limit, MAX_URL_BYTES, Page, SkipReason, Skipped, check_url};

/// A line is kept up to this many bytes; one longer is known too long.
const LINE_CAP: usize = MAX_URL_BYTES + 8;

pub(crate) struct Lines {
    line: Vec<u8>,
    /// The line went on past `LINE_CAP`.
    overflow: bool,
    kept: usize,
    max_urls: usize,
    closed: bool,
}

impl Lines {
    pub(crate) fn new(max_urls: usize) -> Lines {
        Lines {
            line: Vec::with_capacity(256),
            overflow: false,
            kept: 0,
            max_urls,
            closed: false,
        }
    }

    /// Takes bytes from `chunk` up to and including the first line end: how many it took, and
    /// what that line gave.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> (usize, Option<Item>) {
        if self.closed {
            return (chunk.len(), None);
        }
        // CR, LF and CRLF each end a line (a CRLF is a line and an empty one, ignored).
        let (part, taken, ended) = match memchr::memchr2(b'\n', b'\r', chunk) {
            Some(end) => (&chunk[..end], end + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = LINE_CAP.saturating_sub(self.line.len());
        if part.len() > room {
            self.overflow = true;
        }
        self.line.extend_from_slice(&part[..part.len().min(room)]);
        let item = if ended { self.line_done() } else { None };
        (taken, item)
    }

    /// The input ended: its last line, when it had no line end.
    pub(crate) fn finish(&mut self) -> Option<Item> {
        if self.closed {
            return None;
        }
        let item = self.line_done();
        self.closed = true;
        item
    }

    /// Whether the URL limit ended the reading.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    fn line_done(&mut self) -> Option<Item> {
        let overflow = std::mem::take(&mut self.overflow);
        let not_utf8 = std::str::from_utf8(&self.line).is_err();
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_start_matches('\u{feff}').trim();
        let item = if text.is_empty() {
            None
        } else if not_utf8 && !overflow {
            Some(Item::Skipped(Skipped {
                text: crate::entry::cut(text, MAX_URL_BYTES).into(),
                reason: SkipReason::NotUtf8,
            }))
        } else if overflow {
            Some(Item::Skipped(Skipped {
                text: crate::entry::cut(text, MAX_URL_BYTES).into(),
                reason: SkipReason::TooLong,
            }))
        } else {
            match check_url(text) {
                Err(skipped) => Some(Item::Skipped(skipped)),
                Ok(_) if self.kept >= self.max_urls => {
                    self.closed = true;
                    Some(Item::Limit(Limit::Urls(self.max_urls)))
                }
                Ok(url) => {
                    self.kept += 1;
                    Some(Item::Page(Page {
                        url,
                        lastmod: None,
                        invalid_lastmod: None,
                        changefreq: None,
                        priority: None,
                    }))
                }
            }
        };
        self.line.clear();
        item
    }
}
