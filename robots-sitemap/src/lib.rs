#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// The reader (async, the sync one driving it) feeds the XML machine or the text lines, through a
// source capped in bytes.
mod async_reader;
mod capped;
mod entry;
mod flow;
mod lastmod;
mod reader;
mod text;
mod xml;

pub use async_reader::AsyncSitemapReader;
pub use entry::{
    Format, Item, Limit, Limits, MAX_URL_BYTES, Page, SitemapError, SitemapRef, SkipReason, Skipped,
};
pub use lastmod::LastMod;
pub use reader::{SitemapReader, parse};
