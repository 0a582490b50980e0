//! robots-core's integration tests, in one binary (one link instead of three).

mod corpus;
#[path = "../../../tests/support/corpus.rs"]
mod corpus_support;
mod spec;
mod usage;
