//! robots-core's integration tests, in one binary (one link instead of three).

mod corpus;
use robots_test_support::corpus as corpus_support;
mod spec;
mod usage;
