//! What the reader does with what it reads, whichever way it reads: gzip and the format told
//! from the first bytes, an XML event's outcome turned into the next step, a text file's end.

use crate::capped::{MAX_HELD, Progress};
use crate::entry::{Item, Limit, SitemapError};
use crate::text::Lines;
use crate::xml::{Step, XmlMachine};

/// The two bytes every gzip stream starts with.
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `first` (the first bytes after a BOM and whitespace) start XML; `None` until a byte
/// other than those is seen.
pub(crate) fn sniff(first: &[u8], at_start: bool) -> (usize, Option<bool>) {
    let mut skip = 0;
    if at_start && first.starts_with(b"\xEF\xBB\xBF") {
        skip = 3;
    }
    match first[skip..].iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) => (skip + i, Some(first[skip + i] == b'<')),
        None => (first.len(), None),
    }
}

/// Whether a file starts as UTF-16 does: a UTF-16 byte-order mark, or a `<` or an ASCII
/// character beside a NUL. Sitemaps are UTF-8; read as UTF-8, UTF-16 gives nothing, silently.
pub(crate) fn is_utf16(first: &[u8]) -> bool {
    match first {
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => true,
        [0, b, ..] | [b, 0, ..] => b.is_ascii_graphic() || b.is_ascii_whitespace(),
        _ => false,
    }
}

/// What the reader does next, after an XML event.
pub(crate) enum Flow {
    /// Read on.
    Continue,
    /// Give this, then read on.
    Give(Item),
    /// Give this (if anything), then stop.
    End(Option<Result<Item, SitemapError>>),
}

/// The outcome of reading one XML event, as the next step; `at` is the reader's position.
pub(crate) fn xml_flow(
    machine: &mut XmlMachine,
    progress: &Progress,
    event: Result<quick_xml::events::Event<'_>, quick_xml::Error>,
    at: u64,
    error_at: u64,
) -> Flow {
    // Whatever breaks once the byte limit cut the file (an element, a comment left open) was
    // cut, not broken.
    let cut = || Flow::End(Some(Ok(Item::Limit(Limit::Bytes(progress.read())))));
    let event = match event {
        Ok(event) => event,
        Err(_) if progress.over_limit() => return cut(),
        Err(error) => return Flow::End(Some(Err(read_error(progress, error, error_at)))),
    };
    let step = machine.feed(event, at);
    progress.mark(at);
    match step {
        Err(_) if progress.over_limit() => cut(),
        Err(error) => Flow::End(Some(Err(error))),
        Ok(Step::Nothing) => Flow::Continue,
        Ok(Step::Item(item @ Item::Limit(_))) => Flow::End(Some(Ok(item))),
        Ok(Step::Item(item)) => Flow::Give(item),
        Ok(Step::Done) => Flow::End(None),
    }
}

/// An XML reader's error, as ours.
fn read_error(progress: &Progress, error: quick_xml::Error, at: u64) -> SitemapError {
    match error {
        // Where the element (or text) that grew too large began: the end of the last one.
        quick_xml::Error::Io(_) if progress.too_large() => SitemapError::ElementTooLarge {
            at: progress.marked(),
            max: MAX_HELD,
        },
        quick_xml::Error::Io(io) => SitemapError::Read {
            at: progress.read(),
            source: std::io::Error::new(io.kind(), io.to_string()),
        },
        other => SitemapError::Xml {
            at,
            message: other.to_string(),
        },
    }
}

/// The end of a text sitemap's input: its last line, and the byte limit when it cut it.
pub(crate) fn text_end(
    lines: &mut Lines,
    progress: &Progress,
) -> Option<Result<Item, SitemapError>> {
    // A line the limit cut is not a URL to keep (its end is missing).
    if progress.over_limit() {
        return Some(Ok(Item::Limit(Limit::Bytes(progress.read()))));
    }
    lines.finish().map(Ok)
}

/// An XML reader set up for sitemaps: no text trimmed (URLs are trimmed whole), end names
/// checked (a broken file is reported, not guessed at).
pub(crate) fn xml_reader<R>(source: R) -> quick_xml::Reader<R> {
    let mut reader = quick_xml::Reader::from_reader(source);
    let config = reader.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    reader
}
