//! [`RobotsInfo`] as response headers, for stacks that keep only a status and headers; the
//! header names are also those of synthetic refusals (`crate::status`).

use std::time::Duration;

use http::{HeaderMap, HeaderValue};

use crate::engine::info::RobotsInfo;
use crate::error::DecidingRule;

/// The headers this crate writes on synthetic refusals and mirrored [`RobotsInfo`].
pub mod headers {
    /// Why a synthetic response refuses the request: `disallowed`, `disallowed-for`,
    /// `unreachable`, `not-ready`, `redirect-refused`, `unsupported-scheme`, `invalid-origin`,
    /// `crawl-delay-too-long`, `fleet-unavailable`; `not-ready` carries `; reason=spacing|paused|in_flight|robots_pending`.
    pub const REFUSAL: &str = "x-robots-refusal";
    /// The robots.txt rule that decided (`line 2: Disallow: /private`), on refusals and, when
    /// mirrored, on allowed responses.
    pub const RULE: &str = "x-robots-rule";
    /// Mirrored: milliseconds waited for the origin's turn.
    pub const WAITED_MS: &str = "x-robots-waited-ms";
    /// Mirrored: the interval applied to the origin, in milliseconds.
    pub const INTERVAL_MS: &str = "x-robots-interval-ms";
    /// Mirrored: where the rules came from (`parsed`, `unavailable`, `unreachable`, `default`).
    pub const SOURCE: &str = "x-robots-source";
    /// Mirrored: the page directives of the response's `X-Robots-Tag` that apply to this
    /// crawler (`noindex, nofollow`), when any.
    pub const DIRECTIVES: &str = "x-robots-directives";
    /// Mirrored: the AI usage preferences robots.txt states for the URL, when it states any, as
    /// a dictionary of the combined answers (`train-ai=n, search=y, ai-input=y`; unknown ones
    /// left out).
    pub const USAGE: &str = "x-robots-usage";
}

/// Writes a [`RobotsInfo`] into response headers (see [`headers`]).
pub fn mirror_info(info: &RobotsInfo, headers: &mut HeaderMap) {
    if let Some(rule) = info.rule() {
        insert(headers, headers::RULE, &describe(rule));
    }
    insert(headers, headers::WAITED_MS, &millis(info.waited()));
    insert(headers, headers::INTERVAL_MS, &millis(info.interval()));
    insert(headers, headers::SOURCE, info.source().outcome());
    let directives = directive_list(info.directives());
    if !directives.is_empty() {
        insert(headers, headers::DIRECTIVES, &directives);
    }
    let stated = info.usage();
    if stated.is_stated() {
        let usage: Vec<String> = [
            ("train-ai", stated.may_train_ai()),
            ("search", stated.may_search()),
            ("ai-input", stated.may_use_as_ai_input()),
        ]
        .into_iter()
        .filter_map(|(key, p)| p.as_aipref().map(|v| format!("{key}={v}")))
        .collect();
        if !usage.is_empty() {
            insert(headers, headers::USAGE, &usage.join(", "));
        }
    }
}

fn millis(duration: Duration) -> String {
    duration.as_millis().to_string()
}

pub(crate) fn describe(rule: &DecidingRule) -> String {
    let kind = match rule.kind {
        robots_core::RuleKind::Allow => "Allow",
        robots_core::RuleKind::Disallow => "Disallow",
    };
    format!("line {}: {kind}: {}", rule.line, rule.pattern)
}

/// Inserts a header, dropping a value a header cannot carry (a rule with control bytes).
pub(crate) fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(http::HeaderName::from_static(name), value);
    }
}

/// The directives as an `X-Robots-Tag` list.
fn directive_list(d: &robots_core::Directives) -> String {
    let mut list: Vec<String> = [
        (d.noindex, "noindex"),
        (d.nofollow, "nofollow"),
        (d.noarchive, "noarchive"),
        (d.nosnippet, "nosnippet"),
        (d.noodp, "noodp"),
        (d.notranslate, "notranslate"),
        (d.noimageindex, "noimageindex"),
    ]
    .into_iter()
    .filter(|(set, _)| *set)
    .map(|(_, name)| name.to_string())
    .collect();
    if let Some(date) = &d.unavailable_after {
        list.push(format!("unavailable_after: {date}"));
    }
    if let Some(n) = d.max_snippet {
        list.push(format!("max-snippet: {n}"));
    }
    if let Some(preview) = d.max_image_preview {
        let value = match preview {
            robots_core::ImagePreview::None => "none",
            robots_core::ImagePreview::Standard => "standard",
            robots_core::ImagePreview::Large => "large",
        };
        list.push(format!("max-image-preview: {value}"));
    }
    if let Some(n) = d.max_video_preview {
        list.push(format!("max-video-preview: {n}"));
    }
    list.join(", ")
}
