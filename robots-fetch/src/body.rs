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

async fn read_to<R: AsyncRead + Unpin>(
    reader: R,
    limit: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    reader.take(limit as u64).read_to_end(out).await.map(|_| ())
}
