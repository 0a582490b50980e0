//! The XML formats as a machine fed quick-xml's events, one at a time, by a reader that pulls
//! them (sync or async): `<urlset>`, `<sitemapindex>`, RSS 2.0 and Atom 1.0, told apart by the
//! root element. It holds one entry's fields at most, each capped, so its memory does not grow
//! with the file. Elements of other namespaces (image, video, news, `xhtml:link`) are skipped
//! with everything inside them; a DTD is never read, and an entity other than XML's own five
//! and character references is never expanded (the URL that uses one is skipped).

use quick_xml::events::{BytesStart, Event};

use crate::entry::{
    Format, Item, Limit, MAX_URL_BYTES, Page, SitemapError, SitemapRef, SkipReason, Skipped,
    check_url,
};
use crate::lastmod::LastMod;

/// The fields of an entry, each kept up to this many bytes (a URL one longer is known too long).
const FIELD_CAP: usize = MAX_URL_BYTES + 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    LastMod,
    ChangeFreq,
    Priority,
}

#[derive(Default)]
struct Fields {
    loc: String,
    lastmod: String,
    changefreq: String,
    priority: String,
    /// The location used an entity that is not expanded.
    entity: bool,
    /// The location had bytes that are not UTF-8.
    not_utf8: bool,
    /// An Atom entry's link was taken already.
    linked: bool,
}

impl Fields {
    fn slot(&mut self, field: Field) -> &mut String {
        match field {
            Field::Loc => &mut self.loc,
            Field::LastMod => &mut self.lastmod,
            Field::ChangeFreq => &mut self.changefreq,
            Field::Priority => &mut self.priority,
        }
    }
}

pub(crate) struct XmlMachine {
    format: Option<Format>,
    /// The root's prefix (`sm` of `<sm:urlset>`), whose elements are ours too.
    prefix: Option<Box<[u8]>>,
    depth: usize,
    /// The depth of the entry being read (`<url>`, `<sitemap>`, `<item>`, `<entry>`).
    entry: Option<usize>,
    fields: Fields,
    field: Option<Field>,
    /// Inside an element of another namespace, from this depth.
    skipping: Option<usize>,
    kept: usize,
    max_urls: usize,
    /// The root element closed: whatever follows is not read.
    closed: bool,
    open: Vec<u8>,
}

/// What one event gave.
pub(crate) enum Step {
    Nothing,
    Item(Item),
    /// The root closed (the file is read).
    Done,
}

impl XmlMachine {
    pub(crate) fn new(max_urls: usize) -> XmlMachine {
        XmlMachine {
            format: None,
            prefix: None,
            depth: 0,
            entry: None,
            fields: Fields::default(),
            field: None,
            skipping: None,
            kept: 0,
            max_urls,
            closed: false,
            open: Vec::new(),
        }
    }

    pub(crate) fn format(&self) -> Option<Format> {
        self.format
    }

    /// The local name of an element of ours, or `None` for another namespace's.
    fn ours<'a>(&self, name: &'a [u8]) -> Option<&'a [u8]> {
        match memchr::memchr(b':', name) {
            None => Some(name),
            Some(colon) => {
                let (prefix, local) = (&name[..colon], &name[colon + 1..]);
                (self.prefix.as_deref() == Some(prefix)).then_some(local)
            }
        }
    }

    /// The next event; `at` is where the reader is (for errors).
    pub(crate) fn feed(&mut self, event: Event<'_>, at: u64) -> Result<Step, SitemapError> {
        if self.closed {
            return Ok(Step::Done);
        }
        match event {
            Event::Start(start) => self.start(&start),
            Event::Empty(start) => match self.start(&start)? {
                Step::Nothing => self.end(),
                step => Ok(step),
            },
            Event::End(_) => self.end(),
            Event::Text(text) => {
                self.take_text(&text);
                Ok(Step::Nothing)
            }
            Event::CData(data) => {
                self.take_text(&data);
                Ok(Step::Nothing)
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    Ok(None) => std::str::from_utf8(&reference)
                        .ok()
                        .and_then(quick_xml::escape::resolve_xml_entity)
                        .map(String::from),
                    Err(_) => None,
                };
                let field = self.field;
                if let Some(slot) = self.slot() {
                    match resolved {
                        Some(text) => push_capped(slot, &text),
                        None if field == Some(Field::Loc) => self.fields.entity = true,
                        None => {}
                    }
                }
                Ok(Step::Nothing)
            }
            Event::Eof => {
                if self.depth > 0 {
                    return Err(SitemapError::Truncated {
                        at,
                        open: String::from_utf8_lossy(&self.open).into_owned(),
                    });
                }
                Ok(Step::Done)
            }
            // The declaration, comments, processing instructions, and the DTD (never read).
            _ => Ok(Step::Nothing),
        }
    }

    /// The field being read, when there is one and no other namespace is being skipped.
    fn slot(&mut self) -> Option<&mut String> {
        let field = self.field?;
        if self.skipping.is_some() {
            return None;
        }
        Some(self.fields.slot(field))
    }

    fn start(&mut self, start: &BytesStart<'_>) -> Result<Step, SitemapError> {
        self.depth += 1;
        if self.skipping.is_some() {
            return Ok(Step::Nothing);
        }
        let name = start.name();
        let name = name.as_ref();
        if self.depth == 1 {
            let local = match memchr::memchr(b':', name) {
                Some(colon) => {
                    self.prefix = Some(name[..colon].into());
                    &name[colon + 1..]
                }
                None => name,
            };
            self.format = Some(match local {
                b"urlset" => Format::UrlSet,
                b"sitemapindex" => Format::Index,
                b"rss" => Format::Rss,
                b"feed" => Format::Atom,
                _ => {
                    return Err(SitemapError::NotASitemap {
                        root: String::from_utf8_lossy(name).into_owned(),
                    });
                }
            });
            self.open = name.to_vec();
            return Ok(Step::Nothing);
        }
        let Some(local) = self.ours(name) else {
            self.skipping = Some(self.depth);
            return Ok(Step::Nothing);
        };
        let format = self.format;
        match self.entry {
            None => {
                let entry = matches!(
                    (format, local),
                    (Some(Format::UrlSet), b"url")
                        | (Some(Format::Index), b"sitemap")
                        | (Some(Format::Rss), b"item")
                        | (Some(Format::Atom), b"entry")
                );
                if entry {
                    self.entry = Some(self.depth);
                    self.fields = Fields::default();
                }
            }
            Some(entry) if self.depth == entry + 1 => {
                self.field = match (format, local) {
                    (Some(Format::UrlSet | Format::Index), b"loc") => Some(Field::Loc),
                    (Some(Format::UrlSet | Format::Index), b"lastmod") => Some(Field::LastMod),
                    (Some(Format::UrlSet), b"changefreq") => Some(Field::ChangeFreq),
                    (Some(Format::UrlSet), b"priority") => Some(Field::Priority),
                    (Some(Format::Rss), b"link") => Some(Field::Loc),
                    (Some(Format::Rss), b"pubDate") => Some(Field::LastMod),
                    (Some(Format::Atom), b"updated") => Some(Field::LastMod),
                    (Some(Format::Atom), b"link") => {
                        self.atom_link(start);
                        None
                    }
                    _ => None,
                };
                // A field given twice: the first one stands.
                if let Some(field) = self.field
                    && !self.fields.slot(field).is_empty()
                {
                    self.field = None;
                }
            }
            Some(_) => {}
        }
        Ok(Step::Nothing)
    }

    /// An Atom `<link href>`: the entry's page is its first link that is `alternate` (or has no
    /// `rel`).
    fn atom_link(&mut self, start: &BytesStart<'_>) {
        if self.fields.linked {
            return;
        }
        let mut href = None;
        let mut alternate = true;
        for attribute in start.attributes().flatten() {
            match attribute.key.as_ref() {
                b"href" => href = Some(attribute),
                b"rel" => alternate = attribute.value.as_ref() == b"alternate",
                _ => {}
            }
        }
        let (Some(href), true) = (href, alternate) else {
            return;
        };
        self.fields.linked = true;
        match href.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
            Ok(value) => push_capped(&mut self.fields.loc, &value),
            Err(_) => self.fields.entity = true,
        }
    }

    fn end(&mut self) -> Result<Step, SitemapError> {
        let depth = self.depth;
        self.depth = self.depth.saturating_sub(1);
        if let Some(from) = self.skipping {
            if depth == from {
                self.skipping = None;
            }
            return Ok(Step::Nothing);
        }
        if depth == 1 {
            self.closed = true;
            return Ok(Step::Done);
        }
        match self.entry {
            Some(entry) if depth == entry + 1 => {
                self.field = None;
                Ok(Step::Nothing)
            }
            Some(entry) if depth == entry => {
                self.entry = None;
                self.field = None;
                Ok(self.finish())
            }
            _ => Ok(Step::Nothing),
        }
    }

    /// Text of the field being read; bytes that are not UTF-8 are kept lossily for the report,
    /// and a location with any is skipped (its URL is not what the file says).
    fn take_text(&mut self, bytes: &[u8]) {
        let not_utf8 = std::str::from_utf8(bytes).is_err();
        let is_loc = self.field == Some(Field::Loc);
        if let Some(slot) = self.slot() {
            push_capped(slot, &String::from_utf8_lossy(bytes));
            if not_utf8 && is_loc {
                self.fields.not_utf8 = true;
            }
        }
    }

    /// The entry read: a page, a sitemap, or what was skipped; the URL limit past it.
    fn finish(&mut self) -> Step {
        let fields = std::mem::take(&mut self.fields);
        if fields.not_utf8 {
            return Step::Item(Item::Skipped(Skipped {
                text: crate::entry::cut(fields.loc.trim(), MAX_URL_BYTES).into(),
                reason: SkipReason::NotUtf8,
            }));
        }
        if fields.entity {
            return Step::Item(Item::Skipped(Skipped {
                text: crate::entry::cut(fields.loc.trim(), MAX_URL_BYTES).into(),
                reason: SkipReason::Entity,
            }));
        }
        let url = match check_url(&fields.loc) {
            Ok(url) => url,
            Err(skipped) => return Step::Item(Item::Skipped(skipped)),
        };
        if self.kept >= self.max_urls {
            self.closed = true;
            return Step::Item(Item::Limit(Limit::Urls(self.max_urls)));
        }
        self.kept += 1;
        let lastmod_text = fields.lastmod.trim();
        let lastmod = match self.format {
            // RSS's `<pubDate>` is an RFC 822 date (spec section 13).
            Some(Format::Rss) => LastMod::parse_feed_date(lastmod_text),
            _ => LastMod::parse(lastmod_text),
        };
        if self.format == Some(Format::Index) {
            return Step::Item(Item::Sitemap(SitemapRef { url, lastmod }));
        }
        let invalid_lastmod =
            (lastmod.is_none() && !lastmod_text.is_empty()).then(|| lastmod_text.into());
        let changefreq = Some(fields.changefreq.trim())
            .filter(|c| !c.is_empty())
            .map(Box::from);
        let priority = fields
            .priority
            .trim()
            .parse::<f32>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p));
        Step::Item(Item::Page(Page {
            url,
            lastmod,
            invalid_lastmod,
            changefreq,
            priority,
        }))
    }
}

/// Appends `text` to a field, up to [`FIELD_CAP`] bytes (cut at a character).
fn push_capped(slot: &mut String, text: &str) {
    let room = FIELD_CAP.saturating_sub(slot.len());
    slot.push_str(crate::entry::cut(text, room));
}
