//! robots-core's integration tests, in one binary (one link instead of four).

mod corpus;
#[path = "../../../tests/support/corpus.rs"]
mod corpus_support;
mod properties;
mod spec;
mod usage;
