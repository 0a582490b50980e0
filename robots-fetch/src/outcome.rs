//! What fetching an origin's robots.txt found (spec section 7's outcome table).

use std::fmt;
use std::time::Duration;

use crate::validators::Validators;

/// The result of one fetch (following redirects), before caching decides anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// 2xx: the body, capped at [`robots_core::MAX_BODY_BYTES`] after content decoding.
    Parsed {
        /// The final response's status.
        status: u16,
        /// The body bytes read (at most the cap).
        body: bytes::Bytes,
        /// `Cache-Control: max-age`, when given.
        max_age: Option<Duration>,
        /// Where the file was finally found, when redirects led away from `/robots.txt` at the
        /// origin (the rules still belong to the original origin).
        redirected_to: Option<url::Url>,
        /// Its `ETag` and `Last-Modified`, for a conditional refresh.
        validators: Validators,
    },
    /// `304 Not Modified` to a conditional refresh (`revalidate`): the kept copy is
    /// still the file. A successful fetch: the copy's life starts again.
    NotModified {
        /// The 304's `Cache-Control: max-age`, when given.
        max_age: Option<Duration>,
        /// The validators the 304 came with (a new ETag or date replaces the kept one).
        validators: Validators,
    },
    /// 4xx other than 429, or a redirect chain that could not be followed: allow all
    /// (or disallow all for 401/403 when so configured).
    Unavailable {
        /// The last status seen.
        status: u16,
        /// Why.
        reason: UnavailableReason,
    },
    /// 429, 5xx or a network failure: disallow all, temporarily.
    Unreachable(UnreachableCause),
}

impl FetchOutcome {
    /// A short stable name: `parsed`, `not_modified`, `unavailable`, `unreachable`.
    pub fn name(&self) -> &'static str {
        match self {
            FetchOutcome::Parsed { .. } => "parsed",
            FetchOutcome::NotModified { .. } => "not_modified",
            FetchOutcome::Unavailable { .. } => "unavailable",
            FetchOutcome::Unreachable(_) => "unreachable",
        }
    }
}

/// Why robots.txt counts as unavailable (allow all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnavailableReason {
    /// A 4xx status (not 429).
    Status,
    /// A sixth redirect: treated as 404.
    TooManyRedirects,
    /// A redirect back to a URL already visited: treated as 404.
    RedirectLoop,
    /// A redirect without a usable `Location`: treated as 404.
    BadLocation,
}

/// Why robots.txt could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnreachableCause {
    /// The server answered 429 or 5xx, or `304 Not Modified` to a request that asked for no
    /// such answer (no validators sent): a malformed answer.
    Status {
        /// The status.
        status: u16,
        /// `Retry-After`, when given (seconds or an HTTP date), as a delay from now.
        retry_after: Option<Duration>,
    },
    /// No usable answer.
    Network(NetworkError),
}

impl UnreachableCause {
    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            UnreachableCause::Status { status, .. } => Some(*status),
            UnreachableCause::Network(_) => None,
        }
    }

    /// The server's `Retry-After`, when it gave one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            UnreachableCause::Status { retry_after, .. } => *retry_after,
            UnreachableCause::Network(_) => None,
        }
    }
}

impl fmt::Display for UnreachableCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnreachableCause::Status { status, .. } => write!(f, "the server answered {status}"),
            UnreachableCause::Network(e) => e.fmt(f),
        }
    }
}

/// A failure below HTTP, with what the client said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct NetworkError {
    /// What kind of failure.
    pub kind: NetworkErrorKind,
    /// The client's own words, with their causes.
    pub message: String,
}

/// Kinds of [`NetworkError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NetworkErrorKind {
    /// The host name did not resolve.
    Dns,
    /// No connection could be made.
    Connect,
    /// The fetch took longer than the configured timeout.
    Timeout,
    /// The connection was reset or closed early.
    Reset,
    /// The body ended early or could not be read.
    Body,
    /// The body's content encoding could not be decoded.
    Decode,
    /// The origin's scheme is not http or https, so it has no robots.txt to fetch.
    UnsupportedScheme,
    /// A robots.txt redirect went where the redirect rule does not allow (from a public host
    /// into an internal address, by default).
    RedirectRefused,
    /// The connection was refused where it is made: the name resolved to internal addresses
    /// only, and the caller's word did not make it internal-allowed (`ConnectRefused`).
    AddressRefused,
    /// Anything else the client reported.
    Other,
}

impl fmt::Display for NetworkErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NetworkErrorKind::Dns => "DNS failure",
            NetworkErrorKind::Connect => "connection failed",
            NetworkErrorKind::Timeout => "timed out",
            NetworkErrorKind::Reset => "connection reset",
            NetworkErrorKind::Body => "body could not be read",
            NetworkErrorKind::Decode => "body could not be decoded",
            NetworkErrorKind::UnsupportedScheme => "unsupported scheme",
            NetworkErrorKind::RedirectRefused => "redirect refused",
            NetworkErrorKind::AddressRefused => "connection refused by the address rule",
            NetworkErrorKind::Other => "request failed",
        })
    }
}

impl NetworkErrorKind {
    /// A short stable name: `dns`, `connect`, `timeout`, `reset`, `body`, `decode`,
    /// `unsupported_scheme`, `redirect_refused`, `address_refused`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkErrorKind::Dns => "dns",
            NetworkErrorKind::Connect => "connect",
            NetworkErrorKind::Timeout => "timeout",
            NetworkErrorKind::Reset => "reset",
            NetworkErrorKind::Body => "body",
            NetworkErrorKind::Decode => "decode",
            NetworkErrorKind::UnsupportedScheme => "unsupported_scheme",
            NetworkErrorKind::RedirectRefused => "redirect_refused",
            NetworkErrorKind::AddressRefused => "address_refused",
            NetworkErrorKind::Other => "other",
        }
    }
}

impl UnavailableReason {
    /// A short stable name: `status`, `too_many_redirects`, `redirect_loop`, `bad_location`.
    pub fn as_str(self) -> &'static str {
        match self {
            UnavailableReason::Status => "status",
            UnavailableReason::TooManyRedirects => "too_many_redirects",
            UnavailableReason::RedirectLoop => "redirect_loop",
            UnavailableReason::BadLocation => "bad_location",
        }
    }
}

impl NetworkError {
    /// Classifies a client error by walking its causes (io error kinds, and the words clients
    /// use for DNS failures and timeouts).
    pub fn classify(error: &(dyn std::error::Error + 'static)) -> NetworkError {
        let mut message = error.to_string();
        // The address rule's refusal at the connection comes as a resolver error: said as such.
        #[cfg(feature = "client")]
        let mut kind = crate::ConnectRefused::find(error).map(|_| NetworkErrorKind::AddressRefused);
        #[cfg(not(feature = "client"))]
        let mut kind = None;
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
        while let Some(e) = source {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                use std::io::ErrorKind as K;
                kind = kind.or(match io.kind() {
                    K::ConnectionRefused | K::AddrNotAvailable | K::NotConnected => {
                        Some(NetworkErrorKind::Connect)
                    }
                    K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
                        Some(NetworkErrorKind::Reset)
                    }
                    K::UnexpectedEof => Some(NetworkErrorKind::Body),
                    K::TimedOut => Some(NetworkErrorKind::Timeout),
                    K::InvalidData => Some(NetworkErrorKind::Decode),
                    _ => None,
                });
            }
            let text = e.to_string().to_ascii_lowercase();
            if text.contains("dns")
                || text.contains("failed to lookup")
                || text.contains("name or service not known")
            {
                kind = kind.or(Some(NetworkErrorKind::Dns));
            }
            if let Some(next) = e.source() {
                let next_text = next.to_string();
                if !message.contains(&next_text) {
                    message.push_str(": ");
                    message.push_str(&next_text);
                }
            }
            source = e.source();
        }
        let kind = kind.unwrap_or_else(|| {
            let text = message.to_ascii_lowercase();
            if text.contains("timed out") || text.contains("timeout") {
                NetworkErrorKind::Timeout
            } else if text.contains("connect") {
                NetworkErrorKind::Connect
            } else if text.contains("body") || text.contains("incomplete") {
                NetworkErrorKind::Body
            } else {
                NetworkErrorKind::Other
            }
        });
        NetworkError { kind, message }
    }
}
