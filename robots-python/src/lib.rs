//! The `robots_core` Python package's extension module: robots-core's parser and matcher for
//! Python, so that Python crawlers (and Scrapy, through `robots_core.scrapy.RobotParser`) get
//! Google's verdicts. The verdict logic is robots-core's alone; this crate converts arguments
//! and answers. The package's Python part (the Protego drop-in, the Scrapy parser, the type
//! stubs) is in `python/robots_core/`.

// One file may use `unsafe`: `utf8.rs`, the hot path's string read.
#![deny(unsafe_code)]

mod args;
mod fetch;
mod robots;
mod types;
mod utf8;
mod views;

use pyo3::prelude::*;

/// The product token a `user_agent` is reduced to: the crawler's name in a full User-Agent
/// (`"FooBot/2.1 (+https://…)"` and `"Mozilla/5.0 (compatible; FooBot/2.1; +https://…)"` give
/// `"FooBot"`), or the token itself. Rules are selected by it, compared case-insensitively
/// with the file's user-agent lines. Names with characters other than letters, `-` and `_` are
/// cut there (`"AB42bot"` gives `"AB"`).
///
/// >>> product_token("Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)")
/// 'FooBot'
#[pyfunction]
fn product_token(user_agent: &Bound<'_, PyAny>) -> PyResult<String> {
    let agent = args::text(user_agent, "user_agent")?;
    Ok(robots_core::user_agent_token(&agent).token.to_string())
}

/// The product token a `user_agent` is reduced to, and the crawler's name as written when the
/// token cuts it short (`None` otherwise): `"AB42bot/1.0"` gives `("AB", "AB42bot")`, and such
/// a crawler should name its token explicitly. An agent whose token is empty (`"3bot"`) is
/// matched as written, so only `*` groups apply to it.
///
/// >>> user_agent_token("AB42bot/1.0 (+https://ab.example)")
/// ('AB', 'AB42bot')
/// >>> user_agent_token("Mozilla/5.0 (X11; Linux x86_64) MyBot/2.1 (+https://mybot.example)")
/// ('MyBot', None)
#[pyfunction]
fn user_agent_token(user_agent: &Bound<'_, PyAny>) -> PyResult<(String, Option<String>)> {
    let agent = args::text(user_agent, "user_agent")?;
    let reduced = robots_core::user_agent_token(&agent);
    Ok((reduced.token.to_string(), reduced.lost.map(str::to_string)))
}

#[pymodule]
fn _robots_core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<robots::RobotsTxt>()?;
    module.add_class::<fetch::Retrieval>()?;
    module.add_class::<fetch::CachedRobots>()?;
    module.add_class::<types::Verdict>()?;
    module.add_class::<types::Rule>()?;
    module.add_class::<types::Usage>()?;
    module.add_class::<types::RequestRate>()?;
    module.add_class::<types::Diagnostic>()?;
    module.add_class::<types::Record>()?;
    module.add_function(wrap_pyfunction!(product_token, module)?)?;
    module.add_function(wrap_pyfunction!(user_agent_token, module)?)?;
    module.add_function(wrap_pyfunction!(fetch::server_pause, module)?)?;
    module.add_function(wrap_pyfunction!(fetch::backoff_pause, module)?)?;
    module.add("DISTRESS_STATUSES", robots_fetch::DISTRESS_STATUSES)?;
    module.add(
        "MOST_UNREACHABLE_TRIES",
        robots_fetch::MOST_UNREACHABLE_TRIES,
    )?;
    module.add(
        "DEFAULT_HOLD_UNREACHABLE",
        robots_fetch::DEFAULT_HOLD_UNREACHABLE.as_secs_f64(),
    )?;
    module.add_function(wrap_pyfunction!(fetch::hop_allowed, module)?)?;
    module.add_function(wrap_pyfunction!(fetch::is_internal_address, module)?)?;
    module.add_function(wrap_pyfunction!(fetch::normal_host, module)?)?;
    module.add("MAX_BODY_BYTES", robots_core::MAX_BODY_BYTES)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
