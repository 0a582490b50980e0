//! Helpers shared by this package's tests.

pub mod walk;
