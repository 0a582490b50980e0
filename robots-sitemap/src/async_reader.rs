//! [`AsyncSitemapReader`]: a sitemap read over a tokio `AsyncBufRead` (an HTTP body as it
//! comes): gzip told and decoded, the bytes capped, the format told, then the XML machine or the
//! text lines fed. The one reader: [`crate::SitemapReader`] drives it over a `BufRead`.

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

use crate::capped::{Capped, Progress};
use crate::entry::{Format, Item, Limits, SitemapError};
use crate::flow::{Flow, GZIP_MAGIC, sniff, text_end, xml_flow, xml_reader};
use crate::text::Lines;
use crate::xml::XmlMachine;

/// The bytes after any gzip decoding.
enum Decoded<R> {
    Plain(R),
    Gzip(async_compression::tokio::bufread::GzipDecoder<R>),
}

impl<R: AsyncBufRead + Unpin> tokio::io::AsyncRead for Decoded<R> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Decoded::Plain(r) => std::pin::Pin::new(r).poll_read(cx, buf),
            Decoded::Gzip(r) => std::pin::Pin::new(r).poll_read(cx, buf),
        }
    }
}

type Source<R> = BufReader<Capped<Decoded<R>>>;

enum State<R> {
    Start(R),
    Xml {
        reader: Box<quick_xml::Reader<Source<R>>>,
        machine: Box<XmlMachine>,
        buf: Vec<u8>,
        skipped: u64,
    },
    Text {
        source: Source<R>,
        lines: Lines,
    },
    Done,
}

/// A sitemap read over a tokio `AsyncBufRead`, an [`Item`] at a time: the same items, limits and
/// bounded memory as [`crate::SitemapReader`], the body read as it arrives.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), robots_sitemap::SitemapError> {
/// use robots_sitemap::{AsyncSitemapReader, Item};
/// let body: &[u8] = b"<sitemapindex><sitemap><loc>https://example.com/a.xml</loc></sitemap></sitemapindex>";
/// let mut reader = AsyncSitemapReader::new(body);
/// while let Some(item) = reader.next().await {
///     if let Item::Sitemap(sitemap) = item? {
///         assert_eq!(sitemap.url.as_str(), "https://example.com/a.xml");
///     }
/// }
/// # Ok(()) }
/// ```
pub struct AsyncSitemapReader<R> {
    state: State<R>,
    limits: Limits,
    progress: Arc<Progress>,
    format: Option<Format>,
    gzip: bool,
}

impl<R> std::fmt::Debug for AsyncSitemapReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncSitemapReader")
            .field("format", &self.format)
            .field("gzip", &self.gzip)
            .field("read", &self.progress.read())
            .finish_non_exhaustive()
    }
}

impl<R: AsyncBufRead + Unpin> AsyncSitemapReader<R> {
    /// A reader with sitemaps.org's limits (50,000 URLs, 50 MiB uncompressed).
    pub fn new(input: R) -> AsyncSitemapReader<R> {
        AsyncSitemapReader::with_limits(input, Limits::default())
    }

    /// A reader with these limits.
    pub fn with_limits(input: R, limits: Limits) -> AsyncSitemapReader<R> {
        AsyncSitemapReader {
            state: State::Start(input),
            limits,
            progress: Arc::default(),
            format: None,
            gzip: false,
        }
    }

    /// The format, once the first item has been asked for.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Whether the bytes were gzip.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Bytes read so far, uncompressed.
    pub fn bytes_read(&self) -> u64 {
        self.progress.read()
    }

    async fn begin(&mut self, mut input: R) -> Result<(), SitemapError> {
        let first = input
            .fill_buf()
            .await
            .map_err(|source| SitemapError::Read { at: 0, source })?;
        self.gzip = first.starts_with(&GZIP_MAGIC);
        let decoded = if self.gzip {
            let mut decoder = async_compression::tokio::bufread::GzipDecoder::new(input);
            decoder.multiple_members(true);
            Decoded::Gzip(decoder)
        } else {
            Decoded::Plain(input)
        };
        let mut source = BufReader::with_capacity(
            8 * 1024,
            Capped {
                inner: decoded,
                limit: self.limits.max_bytes,
                progress: self.progress.clone(),
            },
        );
        let mut skipped = 0u64;
        let xml = loop {
            let chunk = source
                .fill_buf()
                .await
                .map_err(|source| SitemapError::Read {
                    at: self.progress.read(),
                    source,
                })?;
            if chunk.is_empty() {
                break false;
            }
            if skipped == 0 && crate::flow::is_utf16(chunk) {
                return Err(SitemapError::Utf16);
            }
            let (skip, xml) = sniff(chunk, skipped == 0);
            source.consume(skip);
            skipped += skip as u64;
            self.progress.mark(skipped);
            if let Some(xml) = xml {
                break xml;
            }
        };
        if xml {
            self.state = State::Xml {
                reader: Box::new(xml_reader(source)),
                machine: Box::new(XmlMachine::new(self.limits.max_urls)),
                buf: Vec::new(),
                skipped,
            };
        } else {
            self.format = Some(Format::Text);
            self.state = State::Text {
                source,
                lines: Lines::new(self.limits.max_urls),
            };
        }
        Ok(())
    }

    /// The next item; `None` once the file is read (or an error or a limit ended it).
    pub async fn next(&mut self) -> Option<Result<Item, SitemapError>> {
        loop {
            match &mut self.state {
                State::Start(_) => {
                    let State::Start(input) = std::mem::replace(&mut self.state, State::Done)
                    else {
                        return None;
                    };
                    if let Err(error) = self.begin(input).await {
                        return Some(Err(error));
                    }
                }
                State::Xml {
                    reader,
                    machine,
                    buf,
                    skipped,
                } => {
                    buf.clear();
                    let event = reader.read_event_into_async(buf).await;
                    let at = reader.buffer_position() + *skipped;
                    let error_at = reader.error_position() + *skipped;
                    let flow = xml_flow(machine, &self.progress, event, at, error_at);
                    self.format = machine.format();
                    match flow {
                        Flow::Continue => {}
                        Flow::Give(item) => return Some(Ok(item)),
                        Flow::End(last) => {
                            self.state = State::Done;
                            return last;
                        }
                    }
                }
                State::Text { source, lines } => {
                    let chunk = match source.fill_buf().await {
                        Ok(chunk) => chunk,
                        Err(source) => {
                            let at = self.progress.read();
                            self.state = State::Done;
                            return Some(Err(SitemapError::Read { at, source }));
                        }
                    };
                    if chunk.is_empty() {
                        let last = text_end(lines, &self.progress);
                        self.state = State::Done;
                        return last;
                    }
                    let (taken, item) = lines.feed(chunk);
                    source.consume(taken);
                    self.progress.mark(self.progress.read());
                    if let Some(item) = item {
                        if lines.is_closed() {
                            self.state = State::Done;
                        }
                        return Some(Ok(item));
                    }
                }
                State::Done => return None,
            }
        }
    }
}
