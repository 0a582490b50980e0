#![doc = include_str!("../README.md")]
//!
//! The public modules follow the spec's steps: [`robots`] (groups and records), [`matcher`]
//! (matching and the decision), [`url_path`] (URL to path), [`records`] (Crawl-delay,
//! Request-rate), [`lint`](mod@lint) (diagnostics), [`page`] (X-Robots-Tag and meta robots) and
//! [`usage`] (AI usage preferences: Content-Usage and Content-Signal). Splitting bytes into lines,
//! a line into key and value, and compiling patterns are internal steps.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

pub mod agent;
mod diagnostic;
mod directive;
mod escape;
mod events;
mod lines;
pub mod lint;
mod mask;
pub mod matcher;
pub mod page;
mod pattern;
#[cfg(test)]
mod properties;
pub mod records;
mod words;
// Google's algorithm ported line by line: the oracle the matcher is tested against, here and
// in the other crates' tests and benchmarks. Not part of the API.
#[doc(hidden)]
pub mod reference;
pub mod robots;
mod rule_pattern;
mod sweep;
pub mod url_path;
pub mod usage;
mod verdict;

pub use agent::{
    UserAgentToken, is_global_agent, is_token_byte, is_valid_token, product_token, user_agent_token,
};
pub use diagnostic::{Diagnostic, DiagnosticKind, Severity};
pub use lint::lint;
pub use matcher::{CrawlDelay, Matcher, RuleScan, ScanCost};
pub use page::{Directives, ImagePreview, PageDirectives};
pub use records::{RequestRate, parse_crawl_delay};
pub use robots::{Agent, Group, Record, RobotsTxt, Rule, Sitemap, is_absolute_sitemap};
pub use rule_pattern::RulePattern;
pub use url_path::path_of;
pub use usage::{
    AiPreferences, ContentSignal, InvalidPreferences, Preference, SignalPreferences, Stated, Usage,
    UsagePreferences,
};
pub use verdict::{MatchedRule, RuleKind, Selection, Verdict};

/// How much of a robots.txt body a crawler reads: 500 KiB (512,000 bytes). The rest is ignored.
pub const MAX_BODY_BYTES: usize = 512_000;
