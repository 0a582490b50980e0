//! The engine: the gate that admits, identifies and observes every request whatever the front
//! end, what it tells the caller (`RobotsInfo`, and as headers), per-request overrides, and the packed
//! usage preferences.

pub(crate) mod gate;
pub(crate) mod info;
pub(crate) mod mirror;
pub(crate) mod overrides;
pub(crate) mod packed;
pub(crate) mod watch;
