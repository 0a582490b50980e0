//! The front ends: how a request comes in (a tower layer, a reqwest middleware, hooks for
//! frameworks that send requests themselves), how refusals go out, and the builder that makes them.
//! Each calls the engine for the decisions.

pub(crate) mod config;
pub(crate) mod hooks;
pub(crate) mod layer;
#[cfg(feature = "reqwest")]
pub(crate) mod middleware;
pub(crate) mod retry;
pub mod status;
