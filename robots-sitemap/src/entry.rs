//! What a sitemap gives: pages, other sitemaps (an index), what was skipped and why, and the
//! limit that ended the reading.

use url::Url;

use crate::lastmod::LastMod;

/// The longest page URL kept, in bytes (sitemaps.org).
pub const MAX_URL_BYTES: usize = 2048;

/// One thing read from a sitemap, in file order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Item {
    /// A page URL (`<url>` of a `<urlset>`, a line of a text sitemap, an RSS `<item>`, an Atom
    /// `<entry>`).
    Page(Page),
    /// A sitemap listed by an index (`<sitemap>` of a `<sitemapindex>`).
    Sitemap(SitemapRef),
    /// A URL that was not kept, and why; the reading goes on.
    Skipped(Skipped),
    /// A limit was reached: what lies beyond it was not read. The last item.
    Limit(Limit),
}

/// A page a sitemap lists.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page {
    /// The page's URL: absolute, `http` or `https`, at most [`MAX_URL_BYTES`].
    pub url: Url,
    /// Its `<lastmod>` (an Atom `<updated>`), when it is a W3C datetime.
    pub lastmod: Option<LastMod>,
    /// The `<lastmod>` as written, when it is not a W3C datetime (the page is kept without it).
    pub invalid_lastmod: Option<Box<str>>,
    /// Its `<changefreq>`, as written (trimmed); a hint crawlers may ignore.
    pub changefreq: Option<Box<str>>,
    /// Its `<priority>`, when it is a number from 0.0 to 1.0.
    pub priority: Option<f32>,
}

/// A sitemap an index lists.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SitemapRef {
    /// The sitemap's URL: absolute, `http` or `https`, at most [`MAX_URL_BYTES`].
    pub url: Url,
    /// Its `<lastmod>`, when it is a W3C datetime.
    pub lastmod: Option<LastMod>,
}

/// A URL that was not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The text, trimmed (at most [`MAX_URL_BYTES`] bytes of it, cut at a character).
    pub text: Box<str>,
    /// Why.
    pub reason: SkipReason,
}

/// Why a URL was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkipReason {
    /// Not an absolute URL.
    #[error("not an absolute URL")]
    NotAUrl,
    /// An absolute URL, but neither `http` nor `https`.
    #[error("not an http(s) URL")]
    NotHttp,
    /// Longer than [`MAX_URL_BYTES`].
    #[error("longer than {MAX_URL_BYTES} bytes")]
    TooLong,
    /// It names an entity of a DTD (`&foo;`), which is never expanded.
    #[error("it uses an entity of a DTD, which is never expanded")]
    Entity,
    /// A sitemap inside a `<urlset>` or a page inside a `<sitemapindex>`: not what the file is.
    #[error("an entry of the wrong kind for the file")]
    WrongKind,
    /// It has bytes that are not UTF-8 (sitemaps are UTF-8): the URL meant cannot be known.
    #[error("not UTF-8")]
    NotUtf8,
}

/// A limit that ended the reading of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Limit {
    /// The file listed more URLs (pages, or sitemaps of an index) than [`Limits::max_urls`].
    #[error("more than {0} URLs: the rest was not read")]
    Urls(usize),
    /// The file is larger than [`Limits::max_bytes`] uncompressed.
    #[error("larger than {0} bytes uncompressed: the rest was not read")]
    Bytes(u64),
}

/// What one file may hold before the rest of it is left unread. The defaults are sitemaps.org's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// URLs per file (pages, or sitemaps of an index): 50,000.
    pub max_urls: usize,
    /// Bytes per file, uncompressed: 50 MiB (52,428,800).
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_urls: 50_000,
            max_bytes: 50 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// At most `urls` URLs per file.
    pub fn max_urls(mut self, urls: usize) -> Limits {
        self.max_urls = urls;
        self
    }

    /// At most `bytes` bytes per file, uncompressed.
    pub fn max_bytes(mut self, bytes: u64) -> Limits {
        self.max_bytes = bytes;
        self
    }
}

/// What a sitemap file is, told by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// XML `<urlset>`.
    UrlSet,
    /// XML `<sitemapindex>`.
    Index,
    /// Plain text, one URL a line.
    Text,
    /// RSS 2.0 (`<rss>`).
    Rss,
    /// Atom 1.0 (`<feed>`).
    Atom,
}

impl Format {
    /// Its name: `urlset`, `sitemapindex`, `text`, `rss`, `atom`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::UrlSet => "urlset",
            Format::Index => "sitemapindex",
            Format::Text => "text",
            Format::Rss => "rss",
            Format::Atom => "atom",
        }
    }
}

/// Why a file could not be read to its end. The items before it stand.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SitemapError {
    /// Reading the bytes failed (the connection broke, the gzip stream is corrupt).
    #[error("reading failed after {at} bytes: {source}")]
    Read {
        /// Bytes read (uncompressed) when it failed.
        at: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// The XML is not well formed at `at` (bytes, uncompressed).
    #[error("the XML is broken at byte {at}: {message}")]
    Xml {
        /// Where.
        at: u64,
        /// What the XML reader said.
        message: String,
    },
    /// The XML ends before its root element does.
    #[error("the XML breaks off at byte {at}, inside <{open}>")]
    Truncated {
        /// Where it ends.
        at: u64,
        /// The element left open.
        open: String,
    },
    /// The content is XML whose root is not a sitemap, an index, RSS or Atom.
    #[error("not a sitemap: the root element is <{root}>")]
    NotASitemap {
        /// The root element's name.
        root: String,
    },
    /// The file is UTF-16 (its byte-order mark, or NULs between ASCII characters): sitemaps
    /// are UTF-8, and read as UTF-8 it would give nothing.
    #[error("the file is UTF-16; sitemaps are UTF-8: not read")]
    Utf16,
    /// One element (or the text between two) is longer than the parser holds at once: what
    /// came before it was read, the rest of the file is not.
    #[error(
        "more than {max} bytes from byte {at} without an element's end (an element or text too large to hold): the rest of the file was not read"
    )]
    ElementTooLarge {
        /// Where it started.
        at: u64,
        /// The most held at once.
        max: usize,
    },
}

/// Checks a URL's text as a sitemap lists it: trimmed, absolute, `http`/`https`, not too long.
pub(crate) fn check_url(text: &str) -> Result<Url, Skipped> {
    let text = text.trim();
    let skipped = |reason| Skipped {
        text: cut(text, MAX_URL_BYTES).into(),
        reason,
    };
    if text.len() > MAX_URL_BYTES {
        return Err(skipped(SkipReason::TooLong));
    }
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            // (The parsed form may be longer: percent-encoding.)
            if url.as_str().len() > MAX_URL_BYTES {
                return Err(skipped(SkipReason::TooLong));
            }
            Ok(url)
        }
        Ok(_) => Err(skipped(SkipReason::NotHttp)),
        Err(_) => Err(skipped(SkipReason::NotAUrl)),
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
