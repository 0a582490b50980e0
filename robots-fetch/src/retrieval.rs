//! One retrieval of an origin's robots.txt without I/O (spec section 7): which URL to request,
//! and what each answer means — follow a redirect, read the body, or the outcome. [`crate::fetch`]
//! drives it with a [`crate::FetchClient`]; a client with an event loop of its own (Scrapy's
//! downloader, through the Python package) drives the same steps, so both apply one table.

use bytes::Bytes;
use http::{HeaderMap, header};
use url::Url;

use crate::headers::{max_age, retry_after};
use crate::origin::Origin;
use crate::outcome::{
    FetchOutcome, NetworkError, NetworkErrorKind, UnavailableReason, UnreachableCause,
};
use crate::redirect::HopRule;
use crate::validators::Validators;

/// How many redirects a retrieval follows (Google's five hops); a sixth is treated as 404.
pub const MAX_REDIRECTS: usize = 5;

/// The state of one retrieval: the URLs requested so far, the last one first to answer.
///
/// ```
/// use robots_fetch::{Answer, FetchOutcome, Origin, Retrieval};
/// let origin = Origin::parse("https://example.com")?;
/// let mut retrieval = Retrieval::new(&origin);
/// assert_eq!(retrieval.url().as_str(), "https://example.com/robots.txt");
///
/// let mut moved = http::HeaderMap::new();
/// moved.insert("location", "https://www.example.com/robots.txt".parse()?);
/// let Answer::Redirect(next) = retrieval.answer(301, &moved) else { panic!() };
/// retrieval.follow(next); // after the caller's hop rule allowed it
///
/// let ok = http::HeaderMap::new();
/// assert!(matches!(retrieval.answer(200, &ok), Answer::ReadBody));
/// let outcome = retrieval.body(200, &ok, "User-agent: *\nDisallow: /\n".into());
/// assert!(matches!(outcome, FetchOutcome::Parsed { redirected_to: Some(_), .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Retrieval {
    /// Every URL requested, `/robots.txt` at the origin first; the last is the one asked now.
    visited: Vec<Url>,
    /// Whether the request carries validators (a refresh): only then is a 304 an answer.
    conditional: bool,
}

/// What an answer to [`Retrieval::url`] calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A redirect to this URL. Check it against the hop rule ([`Retrieval::refused`] when it
    /// fails), then [`Retrieval::follow`] it. Loops, a sixth hop and unusable `Location`s are
    /// already outcomes.
    Redirect(Url),
    /// A 2xx: read the body (at most [`robots_core::MAX_BODY_BYTES`] after content decoding)
    /// and give it to [`Retrieval::body`].
    ReadBody,
    /// The retrieval is over.
    Done(FetchOutcome),
}

impl Retrieval {
    /// A first retrieval (no validators sent).
    pub fn new(origin: &Origin) -> Retrieval {
        Retrieval {
            visited: vec![origin.robots_url()],
            conditional: false,
        }
    }

    /// A refresh that sends `validators` ([`Validators::apply_to`]); a `304 Not Modified` is
    /// then an answer. Empty validators make it a first retrieval.
    pub fn revalidating(origin: &Origin, validators: &Validators) -> Retrieval {
        Retrieval {
            conditional: !validators.is_empty(),
            ..Retrieval::new(origin)
        }
    }

    /// The URL to request now.
    pub fn url(&self) -> &Url {
        // Never empty: `new` puts the origin's robots.txt first and nothing removes it.
        &self.visited[self.visited.len() - 1]
    }

    /// Whether this retrieval sends validators.
    pub fn is_conditional(&self) -> bool {
        self.conditional
    }

    /// The answer to [`Retrieval::url`], by its status and headers (spec section 7's table).
    pub fn answer(&self, status: u16, headers: &HeaderMap) -> Answer {
        let unavailable = |reason| Answer::Done(FetchOutcome::Unavailable { status, reason });
        match status {
            304 if self.conditional => Answer::Done(FetchOutcome::NotModified {
                max_age: max_age(headers),
                validators: Validators::from_headers(headers),
            }),
            // A 304 to a request that asked for none is a malformed answer.
            304 => Answer::Done(FetchOutcome::Unreachable(UnreachableCause::Status {
                status,
                retry_after: None,
            })),
            300..=399 => {
                let Some(next) = location(self.url(), headers) else {
                    return unavailable(UnavailableReason::BadLocation);
                };
                if self.visited.contains(&next) {
                    return unavailable(UnavailableReason::RedirectLoop);
                }
                if self.visited.len() > MAX_REDIRECTS {
                    return unavailable(UnavailableReason::TooManyRedirects);
                }
                Answer::Redirect(next)
            }
            200..=299 => Answer::ReadBody,
            400..=499 if status != 429 => unavailable(UnavailableReason::Status),
            _ => Answer::Done(FetchOutcome::Unreachable(UnreachableCause::Status {
                status,
                retry_after: retry_after(headers),
            })),
        }
    }

    /// Records a hop the caller's rule allowed: `next` is requested now.
    pub fn follow(&mut self, next: Url) {
        self.visited.push(next);
    }

    /// The outcome of a hop to `to` that `rule` refused (`how` says more, or is empty):
    /// unreachable, so nothing is allowed meanwhile.
    pub fn refused(&self, to: &Url, rule: &HopRule, how: &str) -> FetchOutcome {
        FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError {
            kind: NetworkErrorKind::RedirectRefused,
            message: format!(
                "robots.txt redirect from {} to {to}{how} refused: {rule}",
                self.url()
            ),
        }))
    }

    /// The outcome of a 2xx whose body was read (already capped and decoded).
    pub fn body(&self, status: u16, headers: &HeaderMap, body: Bytes) -> FetchOutcome {
        FetchOutcome::Parsed {
            status,
            body,
            max_age: max_age(headers),
            redirected_to: (self.visited.len() > 1).then(|| self.url().clone()),
            validators: Validators::from_headers(headers),
        }
    }
}

/// The `Location` a redirect points to, resolved against `current`; only http(s) targets.
fn location(current: &Url, headers: &HeaderMap) -> Option<Url> {
    let value = headers.get(header::LOCATION)?.to_str().ok()?;
    let next = current.join(value.trim()).ok()?;
    matches!(next.scheme(), "http" | "https").then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    fn origin() -> Origin {
        Origin::parse("https://example.com").unwrap()
    }

    #[test]
    fn a_chain_of_five_redirects_is_followed_and_a_sixth_is_404() {
        let mut retrieval = Retrieval::new(&origin());
        for hop in 1..=5 {
            let to = format!("/hop{hop}");
            match retrieval.answer(302, &headers(&[("location", &to)])) {
                Answer::Redirect(next) => retrieval.follow(next),
                other => panic!("hop {hop}: {other:?}"),
            }
        }
        assert_eq!(retrieval.url().path(), "/hop5");
        assert_eq!(
            retrieval.answer(302, &headers(&[("location", "/hop6")])),
            Answer::Done(FetchOutcome::Unavailable {
                status: 302,
                reason: UnavailableReason::TooManyRedirects
            })
        );
    }

    #[test]
    fn a_loop_a_missing_location_and_a_non_http_target_are_404() {
        let retrieval = Retrieval::new(&origin());
        let reason = |answer| match answer {
            Answer::Done(FetchOutcome::Unavailable { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        let back = headers(&[("location", "/robots.txt")]);
        assert_eq!(
            reason(retrieval.answer(301, &back)),
            UnavailableReason::RedirectLoop
        );
        assert_eq!(
            reason(retrieval.answer(301, &HeaderMap::new())),
            UnavailableReason::BadLocation
        );
        let ftp = headers(&[("location", "ftp://example.com/robots.txt")]);
        assert_eq!(
            reason(retrieval.answer(301, &ftp)),
            UnavailableReason::BadLocation
        );
    }

    #[test]
    fn a_304_is_an_answer_only_to_a_conditional_request() {
        let first = Retrieval::new(&origin());
        assert!(matches!(
            first.answer(304, &HeaderMap::new()),
            Answer::Done(FetchOutcome::Unreachable(_))
        ));
        let validators = Validators::from_headers(&headers(&[("etag", "\"v1\"")]));
        let refresh = Retrieval::revalidating(&origin(), &validators);
        assert!(matches!(
            refresh.answer(304, &headers(&[("cache-control", "max-age=60")])),
            Answer::Done(FetchOutcome::NotModified { max_age: Some(d), .. }) if d.as_secs() == 60
        ));
    }
}
