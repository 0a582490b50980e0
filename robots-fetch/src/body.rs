//! Reading a robots.txt body: streamed, decoded (gzip, deflate, brotli) and capped after
//! decoding, so neither a huge file nor a compression bomb can take more than the cap in memory.

use bytes::Bytes;
use futures_util::TryStreamExt;
use http_body::Body;
use http_body_util::BodyStream;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::io::StreamReader;

use crate::client::BoxError;
use crate::outcome::{NetworkError, NetworkErrorKind};

/// Content codings we can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
}

impl Coding {
    /// The coding named by `Content-Encoding`, or an error for one we cannot decode.
    pub(crate) fn of(headers: &http::HeaderMap) -> Result<Coding, NetworkError> {
        let Some(value) = headers.get(http::header::CONTENT_ENCODING) else {
            return Ok(Coding::Identity);
        };
        let name = value.to_str().unwrap_or("").trim().to_ascii_lowercase();
        match name.as_str() {
            "" | "identity" => Ok(Coding::Identity),
            "gzip" | "x-gzip" => Ok(Coding::Gzip),
            "deflate" => Ok(Coding::Deflate),
            "br" => Ok(Coding::Brotli),
            _ => Err(NetworkError {
                kind: NetworkErrorKind::Decode,
                message: format!(
                    "unsupported Content-Encoding `{}`",
                    String::from_utf8_lossy(value.as_bytes())
                ),
            }),
        }
    }
}

/// Reads at most `limit` decoded bytes of `body`; the rest is never read.
pub(crate) async fn read_capped<B>(
    body: B,
    coding: Coding,
    limit: usize,
) -> Result<Bytes, NetworkError>
where
    B: Body<Data = Bytes> + Send,
    B::Error: Into<BoxError>,
{
    let frames = BodyStream::new(Box::pin(body))
        .try_filter_map(|frame| std::future::ready(Ok(frame.into_data().ok())))
        .map_err(|e| std::io::Error::other(e.into()));
    let raw = StreamReader::new(frames);
    let mut out = Vec::new();
    let read = match coding {
        Coding::Identity => read_to(raw, limit, &mut out).await,
        Coding::Gzip => {
            read_to(
                async_compression::tokio::bufread::GzipDecoder::new(raw),
                limit,
                &mut out,
            )
            .await
        }
        Coding::Deflate => {
            read_to(
                async_compression::tokio::bufread::ZlibDecoder::new(raw),
                limit,
                &mut out,
            )
            .await
        }
        Coding::Brotli => {
            read_to(
                async_compression::tokio::bufread::BrotliDecoder::new(raw),
                limit,
                &mut out,
            )
            .await
        }
    };
    match read {
        Ok(()) => Ok(out.into()),
        Err(e) => {
            let mut error = NetworkError::classify(&e);
            if coding != Coding::Identity && error.kind == NetworkErrorKind::Other {
                error.kind = NetworkErrorKind::Decode;
            }
            if error.kind == NetworkErrorKind::Other {
                error.kind = NetworkErrorKind::Body;
            }
            Err(error)
        }
    }
}

/// A response body read as it comes, its `Content-Encoding` undone (gzip, deflate, brotli): for
/// bodies read by a streaming parser (a sitemap), which caps them itself.
pub type BodyReader = std::pin::Pin<Box<dyn tokio::io::AsyncBufRead + Send>>;

/// `body` as a [`BodyReader`], decoded by the coding `headers` name; an error for a coding it
/// cannot undo.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), robots_fetch::NetworkError> {
/// use tokio::io::AsyncReadExt;
/// let body = http_body_util::Full::new(bytes::Bytes::from_static(b"https://example.com/\n"));
/// let mut reader = robots_fetch::body_reader(body, &http::HeaderMap::new())?;
/// let mut text = String::new();
/// reader.read_to_string(&mut text).await.unwrap();
/// assert_eq!(text, "https://example.com/\n");
/// # Ok(()) }
/// ```
pub fn body_reader<B>(body: B, headers: &http::HeaderMap) -> Result<BodyReader, NetworkError>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send,
{
    let coding = Coding::of(headers)?;
    let frames = BodyStream::new(Box::pin(body))
        .map_err(|e| body_error(e.into()))
        .try_filter_map(|frame| std::future::ready(Ok(frame.into_data().ok())));
    let raw = StreamReader::new(frames);
    Ok(match coding {
        Coding::Identity => Box::pin(raw),
        Coding::Gzip => Box::pin(tokio::io::BufReader::new(
            async_compression::tokio::bufread::GzipDecoder::new(raw),
        )),
        Coding::Deflate => Box::pin(tokio::io::BufReader::new(
            async_compression::tokio::bufread::ZlibDecoder::new(raw),
        )),
        Coding::Brotli => Box::pin(tokio::io::BufReader::new(
            async_compression::tokio::bufread::BrotliDecoder::new(raw),
        )),
    })
}

async fn read_to<R: AsyncRead + Unpin>(
    reader: R,
    limit: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    reader.take(limit as u64).read_to_end(out).await.map(|_| ())
}

/// A body's error as an I/O error whose message says the cause, down its chain (reqwest says
/// only "request or response body error" at the top; the timeout is below it).
fn body_error(error: BoxError) -> std::io::Error {
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(&*error);
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    let timed_out = message.contains("timed out") || message.contains("timeout");
    let kind = if timed_out {
        std::io::ErrorKind::TimedOut
    } else {
        std::io::ErrorKind::Other
    };
    std::io::Error::new(kind, message)
}
