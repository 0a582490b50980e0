//! One retrieval of an origin's robots.txt without I/O (spec section 7): which URL to request,
//! and what each answer means — follow a redirect, read the body, or the outcome. [`crate::fetch`]
//! drives it with a [`crate::FetchClient`]; a client with an event loop of its own (Scrapy's
//! downloader, through the Python package) drives the same steps, so both apply one table.

use bytes::Bytes;
use http::HeaderMap;
use url::Url;

use crate::headers::{max_age, retry_after};
use crate::origin::Origin;
use crate::outcome::{
    FetchOutcome, NetworkError, NetworkErrorKind, UnavailableReason, UnreachableCause,
};
use crate::redirect::{HopRule, RedirectChain, RedirectPolicy, RedirectRefusal};
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
/// assert!(retrieval.judge_hop_addresses(&next, &["93.184.215.14".parse()?]).is_none());
/// retrieval.follow(next); // after its addresses passed the hop rule too
///
/// let ok = http::HeaderMap::new();
/// assert!(matches!(retrieval.answer(200, &ok), Answer::ReadBody));
/// let outcome = retrieval.body(200, &ok, "User-agent: *\nDisallow: /\n".into());
/// assert!(matches!(outcome, FetchOutcome::Parsed { redirected_to: Some(_), .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Retrieval {
    /// The URLs requested, `/robots.txt` at the origin first, and the hop rule: the redirect
    /// rule page requests follow too.
    chain: RedirectChain,
    /// Whether the request carries validators (a refresh): only then is a 304 an answer.
    conditional: bool,
}

/// What an answer to [`Retrieval::url`] calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A redirect to this URL. Judge it by the hop rule (`Retrieval::judge_hop`, or
    /// [`Retrieval::judge_hop_addresses`] for a client that resolves names itself), then
    /// [`Retrieval::follow`] it. Loops, a sixth hop and unusable `Location`s are already
    /// outcomes.
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
            chain: RedirectChain::new(origin.robots_url(), RedirectPolicy::limited(MAX_REDIRECTS)),
            conditional: false,
        }
    }

    /// The same retrieval with its redirects judged by `rule` (default
    /// [`HopRule::not_into_internal_addresses`]).
    pub fn with_redirect_rule(mut self, rule: HopRule) -> Retrieval {
        let policy = RedirectPolicy::limited(MAX_REDIRECTS).with_rule(rule);
        self.chain = RedirectChain::new(self.chain.start().clone(), policy);
        self
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
        self.chain.url()
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
                // Only http(s) targets: another scheme is no robots.txt to fetch.
                let next = self
                    .chain
                    .location(headers)
                    .filter(|next| matches!(next.scheme(), "http" | "https"));
                let Some(next) = next else {
                    return unavailable(UnavailableReason::BadLocation);
                };
                // The chain's own limits here; the hop rule in `judge_hop`.
                match self.chain.check(&next) {
                    Ok(()) => Answer::Redirect(next),
                    Err(RedirectRefusal::Loop { .. }) => {
                        unavailable(UnavailableReason::RedirectLoop)
                    }
                    Err(RedirectRefusal::TooManyHops { .. }) => {
                        unavailable(UnavailableReason::TooManyRedirects)
                    }
                    Err(refusal) => Answer::Done(self.refusal(&next, &refusal, "")),
                }
            }
            200..=299 => Answer::ReadBody,
            400..=499 if status != 429 => unavailable(UnavailableReason::Status),
            _ => Answer::Done(FetchOutcome::Unreachable(UnreachableCause::Status {
                status,
                retry_after: retry_after(headers),
            })),
        }
    }

    #[cfg(feature = "client")]
    /// Judges the redirect [`Retrieval::answer`] returned by the addresses its target's name
    /// resolves to through `resolver` (the one the request will connect with): `None` when it
    /// may be followed, else the outcome of its refusal (unreachable). A lookup that fails is
    /// refused.
    pub async fn judge_hop(&self, next: &Url, resolver: &crate::Resolver) -> Option<FetchOutcome> {
        self.judge_hop_as(next, resolver, "").await
    }

    #[cfg(feature = "client")]
    /// [`Retrieval::judge_hop`], its refusal saying `how` the hop was made.
    pub(crate) async fn judge_hop_as(
        &self,
        next: &Url,
        resolver: &crate::Resolver,
        how: &str,
    ) -> Option<FetchOutcome> {
        let refusal = self.chain.check_resolved(next, resolver).await.err()?;
        Some(self.refusal(next, &refusal, how))
    }

    /// `Retrieval::judge_hop` (feature `client`) for a client that resolves names itself: `addresses` are the
    /// ones the target's name resolved to (`0.0.0.0` for a lookup that failed).
    pub fn judge_hop_addresses(
        &self,
        next: &Url,
        addresses: &[std::net::IpAddr],
    ) -> Option<FetchOutcome> {
        let refusal = self.chain.check_addresses(next, addresses).err()?;
        Some(self.refusal(next, &refusal, " (by its address)"))
    }

    /// The rule this retrieval's redirects pass.
    pub fn redirect_rule(&self) -> &HopRule {
        self.chain.policy().rule()
    }

    /// Records a hop that passed: `next` is requested now.
    pub fn follow(&mut self, next: Url) {
        self.chain.follow(next);
    }

    /// A refused hop's outcome.
    fn refusal(&self, to: &Url, refusal: &RedirectRefusal, how: &str) -> FetchOutcome {
        let rule = match refusal {
            RedirectRefusal::Rule { rule } => rule.clone(),
            other => other.to_string(),
        };
        FetchOutcome::Unreachable(UnreachableCause::Network(NetworkError {
            kind: NetworkErrorKind::RedirectRefused,
            message: format!(
                "robots.txt redirect from {} to {to}{how} refused: {rule}",
                self.url()
            ),
        }))
    }

    /// The outcome of a hop to `to` that `rule` refused (`how` says more, or is empty):
    /// unreachable, so nothing is allowed meanwhile.
    pub fn refused(&self, to: &Url, rule: &HopRule, how: &str) -> FetchOutcome {
        let refusal = RedirectRefusal::Rule {
            rule: rule.to_string(),
        };
        self.refusal(to, &refusal, how)
    }

    /// The outcome of a 2xx whose body was read (already capped and decoded).
    pub fn body(&self, status: u16, headers: &HeaderMap, body: Bytes) -> FetchOutcome {
        FetchOutcome::Parsed {
            status,
            body,
            max_age: max_age(headers),
            redirected_to: (self.chain.hops() > 0).then(|| self.url().clone()),
            validators: Validators::from_headers(headers),
        }
    }
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
