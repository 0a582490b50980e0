//! What a response (or a failure) teaches: the group's pacing learns from it, and the caller
//! gets a `RobotsInfo`.

use std::sync::Arc;
use std::time::Duration;

use robots_core::AiPreferences;
use robots_fetch::{CachedRobots, Origin};

use super::{Admission, CONTENT_USAGE, ErrorRef, Gate, failure};
use crate::engine::info::{RobotsInfo, page_tags};
use crate::engine::packed::PackedUsage;
use crate::error::DecidingRule;
use crate::pacing::Permit;
use crate::pacing::observed::Observed;

/// A response head as a front end holds it (tower's `http::Response`, reqwest's `Response`):
/// what the gate reads from it and writes to it.
pub(crate) trait ResponseHead {
    fn status_code(&self) -> u16;
    fn head_headers(&self) -> &http::HeaderMap;
    fn head_headers_mut(&mut self) -> &mut http::HeaderMap;
    fn head_extensions_mut(&mut self) -> &mut http::Extensions;
}

impl<B> ResponseHead for http::Response<B> {
    #[inline(always)]
    fn status_code(&self) -> u16 {
        self.status().as_u16()
    }
    #[inline(always)]
    fn head_headers(&self) -> &http::HeaderMap {
        self.headers()
    }
    #[inline(always)]
    fn head_headers_mut(&mut self) -> &mut http::HeaderMap {
        self.headers_mut()
    }
    #[inline(always)]
    fn head_extensions_mut(&mut self) -> &mut http::Extensions {
        self.extensions_mut()
    }
}

#[cfg(feature = "reqwest")]
impl ResponseHead for reqwest::Response {
    fn status_code(&self) -> u16 {
        self.status().as_u16()
    }
    fn head_headers(&self) -> &http::HeaderMap {
        self.headers()
    }
    fn head_headers_mut(&mut self) -> &mut http::HeaderMap {
        self.headers_mut()
    }
    fn head_extensions_mut(&mut self) -> &mut http::Extensions {
        self.extensions_mut()
    }
}

impl Gate {
    /// The end of every front end's request: learns from its response head (distress and
    /// exhausted rate limits pause the group), puts what the gate knew on the response (its
    /// extensions, and its headers when mirroring), and hands back the request's place, to be
    /// held by the response's body until it has been read to the end or dropped.
    pub(crate) async fn answer(
        &self,
        admission: Admission,
        response: &mut impl ResponseHead,
    ) -> Permit {
        let (info, permit) = self
            .observe_head(admission, response.status_code(), response.head_headers())
            .await;
        self.attach(info, response);
        permit
    }

    /// [`Gate::answer`] without waiting, for a request admitted by [`Gate::admit_now`] (whose
    /// place is in this process): the layer's fast path.
    #[inline(always)]
    pub(crate) fn answer_now(
        &self,
        admission: Admission,
        response: &mut impl ResponseHead,
    ) -> Permit {
        let (info, permit) =
            self.observe_head_now(admission, response.status_code(), response.head_headers());
        self.attach(info, response);
        permit
    }

    /// Puts `info` on a response: its extensions, and its headers when mirroring.
    #[inline(always)]
    fn attach(&self, info: RobotsInfo, response: &mut impl ResponseHead) {
        self.mirror(&info, response.head_headers_mut());
        response.head_extensions_mut().insert(info);
    }

    /// Writes what the gate knew into a response's headers when mirroring is on (callers put
    /// `info` in the response's extensions after).
    fn mirror(&self, info: &RobotsInfo, headers: &mut http::HeaderMap) {
        if self.mirror_info {
            crate::engine::mirror::mirror_info(info, headers);
        }
    }

    /// Learns from a response (distress and exhausted rate limits pause the group), ends the
    /// request's place, and builds the info for its extensions.
    pub(crate) async fn observe(
        &self,
        admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        self.note(&admission, status);
        let (permit, mut info, clamped_from) = self.observed(admission, headers);
        let pause = self
            .pacing
            .finish(
                permit,
                Observed::response(status, headers, self.pacing.config()),
            )
            .await;
        info.set_rare(clamped_from, pause);
        info
    }

    /// Learns from a response no admission covered (a hook after the fact): a distress status
    /// or exhausted rate-limit headers pause the origin's group, any other response ends the
    /// back-off streak.
    pub(crate) fn observe_unadmitted(
        &self,
        origin: &Origin,
        status: u16,
        headers: &http::HeaderMap,
    ) {
        let Some(group) = self.groups.key_now(origin) else {
            // (The address key, with the host never resolved here: nothing was sent to it.)
            return;
        };
        self.pacing.observe(
            group.as_str(),
            Observed::response(status, headers, self.pacing.config()),
        );
    }

    /// Ends the place of a request that failed before its response head: a connect error, reset
    /// or timeout pauses the group (when configured); any other failure teaches nothing.
    pub(crate) fn observe_failure(
        &self,
        admission: Admission,
        error: &ErrorRef,
    ) -> impl Future<Output = ()> + Send + '_ {
        // Judged before the future: the error (often not `Sync`) is not held across a wait.
        let observed = failure(&admission, error);
        self.finish_failed(admission, observed)
    }

    pub(super) async fn finish_failed(&self, admission: Admission, observed: Observed) {
        self.pacing.finish(admission.permit, observed).await;
    }

    /// [`Gate::observe_failure`] without waiting (a fleet lease is given back unreleased).
    pub(crate) fn observe_failure_now(&self, admission: Admission, error: &ErrorRef) {
        let observed = failure(&admission, error);
        drop(self.pacing.finish_now(admission.permit, observed));
    }

    /// Learns from a response head (distress and exhausted rate limits pause the group) and
    /// builds the info for its extensions; the request's place is handed back, to be held by
    /// the response's body ([`crate::PacedBody`]) until it has been read to the end or dropped.
    pub(crate) async fn observe_head(
        &self,
        mut admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> (RobotsInfo, Permit) {
        // (Off the layer's fast path, which has `observe_head_now`: the copies are cheap.)
        let info = self
            .observe_head_in_place(&mut admission, status, headers)
            .await;
        (info, admission.permit)
    }

    /// [`Gate::observe_head`] keeping the admission (the hooks' ticket holds it): the place
    /// stays in it, and the info is a copy.
    pub(crate) async fn observe_head_in_place(
        &self,
        admission: &mut Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        self.note(admission, status);
        let mut info = self.info(
            admission.entry.clone(),
            admission.rule.clone(),
            (admission.waited, admission.interval, admission.usage),
            headers,
        );
        let pause = self
            .pacing
            .observe_head(
                &mut admission.permit,
                Observed::response(status, headers, self.pacing.config()),
            )
            .await;
        info.set_rare(admission.clamped_from, pause);
        info
    }

    /// [`Gate::observe_head`] without waiting, for a request admitted by [`Gate::admit_now`]
    /// (whose place is in this process).
    #[inline(always)]
    pub(crate) fn observe_head_now(
        &self,
        admission: Admission,
        status: u16,
        headers: &http::HeaderMap,
    ) -> (RobotsInfo, Permit) {
        self.note(&admission, status);
        let (mut permit, mut info, clamped_from) = self.observed(admission, headers);
        let pause = self.pacing.observe_head_now(
            &mut permit,
            Observed::response(status, headers, self.pacing.config()),
        );
        info.set_rare(clamped_from, pause);
        (info, permit)
    }

    /// Tells a crawl loop watching the request's URL whether it was answered with a distress
    /// status (the pacing's back-off statuses), to be retried.
    #[inline(always)]
    fn note(&self, admission: &Admission, status: u16) {
        if let Some(watch) = &admission.watch {
            watch.answered(
                status,
                self.pacing.config().backoff_statuses.contains(status),
            );
        }
    }

    /// The request's place, and the info for its response's extensions.
    #[inline(always)]
    pub(super) fn observed(
        &self,
        admission: Admission,
        headers: &http::HeaderMap,
    ) -> (Permit, RobotsInfo, Option<Duration>) {
        let numbers = (admission.waited, admission.interval, admission.usage);
        let info = self.info(admission.entry, admission.rule, numbers, headers);
        (admission.permit, info, admission.clamped_from)
    }

    /// What a response's extensions get: the admission's entry, rule and numbers (waited,
    /// interval, usage), and what the response's headers say of the page.
    #[inline(always)]
    pub(super) fn info(
        &self,
        robots: Arc<CachedRobots>,
        rule: Option<DecidingRule>,
        (waited, interval, usage): (Duration, Duration, PackedUsage),
        headers: &http::HeaderMap,
    ) -> RobotsInfo {
        RobotsInfo {
            robots,
            rule,
            waited,
            interval,
            usage,
            content_usage: AiPreferences::from_header_lines(
                headers.get_all(&CONTENT_USAGE).iter().map(|v| v.as_bytes()),
            ),
            tags: page_tags(headers, &self.agent),
            rare: None,
        }
    }
}
