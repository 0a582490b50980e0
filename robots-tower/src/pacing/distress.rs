//! Which request failures are the server's distress (spec section 8): connect errors, resets
//! and timeouts pause the group like a 503; other failures (a bad certificate, a body the
//! caller dropped, a name that did not resolve: nothing reached the server) teach nothing about
//! the server's load.

use std::error::Error;
use std::io::ErrorKind;

use crate::pacing::rules::Outcome;

/// How a failed request ended, found by walking the error's causes: the front ends see the
/// errors of any inner service, so the known ones are looked for wherever they are wrapped.
pub(crate) fn failure_outcome(error: &(dyn Error + 'static)) -> Outcome {
    if is_resolution_failure(error) {
        return Outcome::Cancelled;
    }
    let mut cause = Some(error);
    while let Some(error) = cause {
        if is_network_error(error) {
            return Outcome::NetworkError;
        }
        cause = error.source();
    }
    Outcome::Cancelled
}

/// Whether the request failed because its host's name did not resolve (our resolver's error, or
/// hyper-util's "dns error" around another resolver's), wherever it is wrapped.
fn is_resolution_failure(error: &(dyn Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<robots_fetch::NameNotResolved>() || error.to_string() == "dns error" {
            return true;
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io
                .get_ref()
                .is_some_and(|inner| inner.is::<robots_fetch::NameNotResolved>())
        {
            return true;
        }
        cause = error.source();
    }
    false
}

fn is_network_error(error: &(dyn Error + 'static)) -> bool {
    if let Some(io) = error.downcast_ref::<std::io::Error>() {
        return matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::TimedOut
                | ErrorKind::BrokenPipe
                | ErrorKind::UnexpectedEof
                | ErrorKind::NotConnected
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
        );
    }
    if let Some(hyper) = error.downcast_ref::<hyper::Error>() {
        // The server closed the connection before answering: a reset by another name.
        return hyper.is_incomplete_message() || hyper.is_timeout() || hyper.is_closed();
    }
    #[cfg(feature = "reqwest")]
    if let Some(reqwest) = error.downcast_ref::<reqwest::Error>()
        && (reqwest.is_connect() || reqwest.is_timeout())
    {
        return true;
    }
    error.is::<tokio::time::error::Elapsed>() || error.is::<tower::timeout::error::Elapsed>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("wrapped")]
    struct Wrapped(#[source] std::io::Error);

    #[test]
    fn network_errors_are_found_wherever_they_are_wrapped() {
        let reset = std::io::Error::from(ErrorKind::ConnectionReset);
        assert_eq!(failure_outcome(&reset), Outcome::NetworkError);
        let wrapped = Wrapped(std::io::Error::from(ErrorKind::ConnectionRefused));
        assert_eq!(failure_outcome(&wrapped), Outcome::NetworkError);
        let boxed: Box<dyn Error + Send + Sync> = Box::new(tower::timeout::error::Elapsed::new());
        assert_eq!(failure_outcome(&*boxed), Outcome::NetworkError);
        let other = Wrapped(std::io::Error::from(ErrorKind::InvalidData));
        assert_eq!(failure_outcome(&other), Outcome::Cancelled);
        let text: Box<dyn Error + Send + Sync> = "a certificate problem".into();
        assert_eq!(failure_outcome(&*text), Outcome::Cancelled);
        // A name that did not resolve reached no server: no distress, however it is wrapped.
        let unresolved = Wrapped(std::io::Error::new(
            ErrorKind::NotFound,
            robots_fetch::NameNotResolved {
                name: "a.example".into(),
                message: "no address".into(),
            },
        ));
        assert_eq!(failure_outcome(&unresolved), Outcome::Cancelled);
    }
}
