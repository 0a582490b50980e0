//! A `tracing` writer that keeps what was written, for tests that check what is logged.
//! Shared by the tests of every package.
//!
//! One global subscriber (installed once) hands each event to the buffer of the thread that
//! emitted it, when that thread is capturing at the event's level. A thread-local subscriber per
//! test was flaky: with tests on parallel threads, callsite interest and the global maximum level
//! are computed across threads, and an event could be filtered out for a thread that captured.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once};

#[derive(Clone, Default)]
pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

thread_local! {
    /// This thread's capture: where its events go, and from which level.
    static CAPTURE: RefCell<Option<(Captured, tracing::Level)>> = const { RefCell::new(None) };
}

/// Writes an event to the emitting thread's capture, or nowhere.
struct ToThread;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for ToThread {
    type Writer = Box<dyn std::io::Write + 'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Box::new(std::io::sink())
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        CAPTURE.with(|capture| match &*capture.borrow() {
            Some((captured, level)) if meta.level() <= level => {
                Box::new(captured.clone()) as Self::Writer
            }
            _ => Box::new(std::io::sink()),
        })
    }
}

/// Stops this thread's capture when dropped.
pub struct CaptureGuard;

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CAPTURE.with(|capture| *capture.borrow_mut() = None);
    }
}

/// Captures this thread's `tracing` events at `level` and above until the guard is dropped.
pub fn capture_logs(level: tracing::Level) -> (Captured, CaptureGuard) {
    static GLOBAL: Once = Once::new();
    GLOBAL.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(ToThread)
            .finish();
        // A test binary may have set one already: then that one is used, as before.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
    let captured = Captured::default();
    CAPTURE.with(|capture| *capture.borrow_mut() = Some((captured.clone(), level)));
    (captured, CaptureGuard)
}

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}
