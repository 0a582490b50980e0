//! The bytes a parser is fed, counted and capped: at most the file limit (uncompressed: a gzip
//! bomb stops there), and at most [`MAX_HELD`] past the end of the last complete element, so that
//! one endless element cannot make the parser hold the whole file.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The most bytes of one element (or one text line) held at once.
pub(crate) const MAX_HELD: usize = 1 << 20;

/// Where the reading is, shared by the parser (which marks element ends) and the source.
#[derive(Default)]
pub(crate) struct Progress {
    /// Bytes handed to the parser so far.
    read: AtomicU64,
    /// Where the last complete element ended.
    mark: AtomicU64,
    /// The file went on past the byte limit.
    over_limit: AtomicBool,
    /// One element went on past `MAX_HELD`.
    too_large: AtomicBool,
}

impl Progress {
    pub(crate) fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// A complete element (or line) ends at `at`: the next may take `MAX_HELD` from there.
    pub(crate) fn mark(&self, at: u64) {
        self.mark.store(at, Ordering::Relaxed);
    }

    /// Where the last complete element (or line) ended.
    pub(crate) fn marked(&self) -> u64 {
        self.mark.load(Ordering::Relaxed)
    }

    pub(crate) fn over_limit(&self) -> bool {
        self.over_limit.load(Ordering::Relaxed)
    }

    pub(crate) fn too_large(&self) -> bool {
        self.too_large.load(Ordering::Relaxed)
    }

    /// How many of `want` bytes may be handed over now: `Ok(0)` at the byte limit (an end),
    /// an error past the element cap.
    fn allowed(&self, want: usize, limit: u64) -> io::Result<usize> {
        let read = self.read();
        let held_until = self
            .mark
            .load(Ordering::Relaxed)
            .saturating_add(MAX_HELD as u64);
        if read >= held_until {
            self.too_large.store(true, Ordering::Relaxed);
            return Err(io::Error::other("an element too large to hold"));
        }
        let room = limit.saturating_sub(read).min(held_until - read);
        Ok(usize::try_from(room).unwrap_or(usize::MAX).min(want))
    }

    fn advance(&self, n: usize) {
        self.read.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// A source capped at `limit` bytes, reporting to its [`Progress`].
pub(crate) struct Capped<R> {
    pub(crate) inner: R,
    pub(crate) limit: u64,
    pub(crate) progress: Arc<Progress>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Capped<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        let this = &mut *self;
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let allowed = match this.progress.allowed(buf.remaining(), this.limit) {
            Ok(allowed) => allowed,
            Err(error) => return Poll::Ready(Err(error)),
        };
        if allowed == 0 {
            let mut probe = [0u8; 1];
            let mut probe = tokio::io::ReadBuf::new(&mut probe);
            return match std::pin::Pin::new(&mut this.inner).poll_read(cx, &mut probe) {
                Poll::Ready(Ok(())) => {
                    if !probe.filled().is_empty() {
                        this.progress.over_limit.store(true, Ordering::Relaxed);
                    }
                    Poll::Ready(Ok(()))
                }
                other => other,
            };
        }
        // Initialised first (zeroed once, where it was not), so that what the read fills can
        // be recorded without `unsafe`.
        buf.initialize_unfilled_to(allowed);
        let mut part = buf.take(allowed);
        match std::pin::Pin::new(&mut this.inner).poll_read(cx, &mut part) {
            Poll::Ready(Ok(())) => {
                let n = part.filled().len();
                buf.advance(n);
                this.progress.advance(n);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn capped(data: &[u8], limit: u64) -> (Capped<&[u8]>, Arc<Progress>) {
        let progress = Arc::new(Progress::default());
        (
            Capped {
                inner: data,
                limit,
                progress: progress.clone(),
            },
            progress,
        )
    }

    #[tokio::test]
    async fn stops_at_the_limit_and_says_whether_there_was_more() {
        let (mut source, progress) = capped(b"0123456789", 4);
        let mut out = Vec::new();
        source.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"0123");
        assert!(progress.over_limit());
        let (mut source, progress) = capped(b"0123", 4);
        let mut out = Vec::new();
        source.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"0123");
        assert!(!progress.over_limit());
    }

    #[tokio::test]
    async fn an_element_past_the_cap_is_an_error() {
        let data = vec![b'x'; MAX_HELD + 10];
        let (mut source, progress) = capped(&data, u64::MAX);
        let mut out = Vec::new();
        assert!(source.read_to_end(&mut out).await.is_err());
        assert!(progress.too_large());
        assert_eq!(out.len(), MAX_HELD);
    }
}
