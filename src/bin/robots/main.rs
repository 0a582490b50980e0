//! `robots`: check URLs against a robots.txt, lint robots.txt files, and crawl politely.
//!
//! Exit status of `check` and `lint`: 0 when every URL is allowed (or a lint found nothing), 1
//! when any URL is disallowed (or a lint found something), 2 on a usage or input error. `crawl`:
//! 0 when every URL was fetched or disallowed, 1 when any was unreachable or failed, 2 on a
//! usage error.

mod check;
#[cfg(feature = "redis")]
mod crawl;
mod input;
mod lint;
mod output;
mod sitemaps;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "robots",
    version,
    about = "robots.txt as Google reads it: check URLs, lint files, crawl politely"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check URLs against a robots.txt for one crawler.
    Check(check::CheckArgs),
    /// Report what a robots.txt says that crawlers read differently from what was probably meant.
    Lint(lint::LintArgs),
    /// List the sitemap URLs each origin's robots.txt names (one fetch per origin).
    Sitemaps(sitemaps::SitemapsArgs),
    /// Fetch URLs politely: robots.txt checked at every hop, each origin paced; with --redis,
    /// as one process of a fleet sharing robots.txt and politeness.
    #[cfg(feature = "redis")]
    Crawl(crawl::CrawlArgs),
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// One JSON object per line.
    Json,
}

/// Errors that end a run with status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file or stdin could not be read.
    #[error("cannot read {what}: {source}")]
    Read {
        /// The file name, or "standard input".
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// The arguments do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// Standard output failed (other than a closed pipe).
    #[error("cannot write output: {0}")]
    Write(#[source] std::io::Error),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Sitemaps(args) => sitemaps::run(&args),
        #[cfg(feature = "redis")]
        Command::Crawl(args) => crawl::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(CliError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("robots: {e}");
            ExitCode::from(2)
        }
    }
}
