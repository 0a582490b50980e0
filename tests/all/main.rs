//! The facade's integration tests: the examples as a user runs them, and the workspace's layout.

mod examples;
mod layout;
mod readme;
use robots_test_support::site;
