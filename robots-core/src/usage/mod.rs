//! AI usage preferences (spec section 10): what a site says crawled content may be used for.
//!
//! Two vocabularies are read. Neither ever changes an allow/disallow verdict (Google's library
//! reads both as unknown keys):
//!
//! - **`Content-Usage`** (IETF AIPREF): a rule inside a group, `Content-Usage: [path] dictionary`,
//!   where the dictionary is an RFC 9651 Structured Fields Dictionary read as bytes with the keys
//!   `train-ai` and `search` and the values `y` / `n` ([`AiPreferences`]). The same dictionary
//!   comes as the `Content-Usage` HTTP response header.
//! - **`Content-Signal`** (Cloudflare's Content Signals Policy): `search=yes, ai-train=no,
//!   ai-input=yes`, read leniently ([`ContentSignal`]), inside a group or before any group (then
//!   it applies to every crawler).
//!
//! A [`crate::Matcher`] answers, for a URL, the preferences that apply to its crawler
//! ([`crate::Matcher::usage`]): the same groups as allow/disallow, the longest matching path
//! wins, rules of equal length combine per key (any `n` gives `n`, else any `y` gives `y`), and
//! nothing applies to a URL the crawler may not fetch.
//!
//! ```
//! use robots_core::{Preference, RobotsTxt};
//!
//! let robots = RobotsTxt::parse(b"User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n");
//! let bot = robots.matcher("ExampleBot");
//! assert_eq!(bot.usage("https://example.com/test").preferences.may_train_ai(), Preference::No);
//! assert_eq!(bot.usage("https://example.com/ai-ok/test").preferences.may_train_ai(), Preference::Yes);
//! let never = bot.usage("https://example.com/never/test");
//! assert!(!never.verdict.allowed); // disallowed: no preference applies
//! assert_eq!(never.preferences.may_train_ai(), Preference::Unknown);
//! ```

mod aipref;
mod preference;
mod signal;
mod table;
#[cfg(test)]
mod tests;

pub use aipref::{AiPreferences, InvalidPreferences};
pub(crate) use aipref::{Dictionary, Given};
pub use preference::{Preference, Stated};
pub use signal::ContentSignal;
pub(crate) use signal::signal_value;
pub use table::{SignalPreferences, Usage, UsagePreferences, split_path};
pub(crate) use table::{UsageKind, UsageTable, usage_kind};
