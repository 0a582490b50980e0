//! [`SitemapReader`]: a sitemap read from any `BufRead` (bytes in memory, a file), an item at a
//! time, by the async reader driven in place (a `BufRead` never makes it wait).

use std::future::Future;
use std::io::BufRead;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::async_reader::AsyncSitemapReader;
use crate::entry::{Format, Item, Limits, SitemapError};

/// A `BufRead` as tokio's `AsyncBufRead`: every call is answered at once (it may block, as a
/// `BufRead` does).
struct Blocking<R>(R);

impl<R: BufRead + Unpin> tokio::io::AsyncRead for Blocking<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let available = match this.0.fill_buf() {
            Ok(available) => available,
            Err(error) => return Poll::Ready(Err(error)),
        };
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        this.0.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl<R: BufRead + Unpin> tokio::io::AsyncBufRead for Blocking<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        Poll::Ready(self.get_mut().0.fill_buf())
    }

    fn consume(self: Pin<&mut Self>, amount: usize) {
        self.get_mut().0.consume(amount);
    }
}

/// A sitemap read from a `BufRead`, an [`Item`] at a time, in file order: the format told by the
/// content, gzip decoded when the bytes are gzip (a `.gz` file, or a body left
/// `Content-Encoding: gzip`), the [`Limits`] applied, and no more than about a megabyte held
/// whatever the file's size. The last item is an error or a [`crate::Limit`] when one ended the
/// reading early; every item before it stands. (Over an async body, use
/// [`crate::AsyncSitemapReader`].)
///
/// ```
/// use robots_sitemap::{Item, SitemapReader};
/// let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
/// <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
///   <url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod></url>
///   <url><loc> https://example.com/a?x=1&amp;y=2 </loc></url>
///   <url><loc>/relative</loc></url>
/// </urlset>"#;
/// let mut pages = Vec::new();
/// for item in SitemapReader::new(&xml[..]) {
///     match item? {
///         Item::Page(page) => pages.push(page.url.to_string()),
///         Item::Skipped(skipped) => println!("skipped {}: {}", skipped.text, skipped.reason),
///         other => println!("{other:?}"),
///     }
/// }
/// assert_eq!(pages, ["https://example.com/", "https://example.com/a?x=1&y=2"]);
/// # Ok::<(), robots_sitemap::SitemapError>(())
/// ```
pub struct SitemapReader<R: BufRead + Unpin> {
    inner: AsyncSitemapReader<Blocking<R>>,
}

impl<R: BufRead + Unpin> std::fmt::Debug for SitemapReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SitemapReader")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<R: BufRead + Unpin> SitemapReader<R> {
    /// A reader with sitemaps.org's limits (50,000 URLs, 50 MiB uncompressed).
    pub fn new(input: R) -> SitemapReader<R> {
        SitemapReader::with_limits(input, Limits::default())
    }

    /// A reader with these limits.
    pub fn with_limits(input: R, limits: Limits) -> SitemapReader<R> {
        SitemapReader {
            inner: AsyncSitemapReader::with_limits(Blocking(input), limits),
        }
    }

    /// The format, once the first item has been asked for.
    pub fn format(&self) -> Option<Format> {
        self.inner.format()
    }

    /// Whether the bytes were gzip.
    pub fn is_gzip(&self) -> bool {
        self.inner.is_gzip()
    }

    /// Bytes read so far, uncompressed.
    pub fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }
}

impl<R: BufRead + Unpin> Iterator for SitemapReader<R> {
    type Item = Result<Item, SitemapError>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.inner.bytes_read();
        let next = std::pin::pin!(self.inner.next());
        // Every read is answered at once: the future is ready on its first poll.
        match next.poll(&mut Context::from_waker(std::task::Waker::noop())) {
            Poll::Ready(item) => item,
            Poll::Pending => Some(Err(SitemapError::Read {
                at,
                source: std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    "the reader asked to wait",
                ),
            })),
        }
    }
}

/// Reads a whole sitemap held in memory (see [`SitemapReader`]).
///
/// ```
/// let items: Vec<_> = robots_sitemap::parse(b"https://example.com/a\nhttps://example.com/b\n")
///     .collect::<Result<_, _>>()?;
/// assert_eq!(items.len(), 2);
/// # Ok::<(), robots_sitemap::SitemapError>(())
/// ```
pub fn parse(bytes: &[u8]) -> SitemapReader<&[u8]> {
    SitemapReader::new(bytes)
}
