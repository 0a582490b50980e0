//! `robots`: check URLs against a robots.txt, lint robots.txt files, and crawl politely.
//!
//! Exit status of `check` and `lint`: 0 when every URL is allowed (or a lint found no error), 1
//! when any URL is disallowed (or a lint found an error; anything with `--strict`), 2 on a usage
//! or input error. `crawl`:
//! 0 when every URL was fetched or disallowed, 1 when any was unreachable or failed, 2 on a
//! usage or input error (a string that is not a URL; the other URLs are still fetched).
//! `key`: 0 when done (`verify`: the signature is valid), 1 when `verify` finds it not valid, 2
//! on a usage or input error (a key file that is not a key).

mod check;
#[cfg(feature = "redis")]
mod crawl;
mod crawler;
#[cfg(feature = "redis")]
mod input;
mod key;
mod lint;
mod output;
mod resolver;
mod sitemaps;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "\
Exit status:
  check     0 every URL allowed, 1 any disallowed, 2 usage or input error
  lint      0 no errors found (any finding with --strict), 1 otherwise, 2 usage or input error
  sitemaps  0 every robots.txt read, 1 any unreachable, 2 usage or input error
  crawl     0 every URL fetched or disallowed, 1 any unreachable or failed, 2 usage or input error
  key       0 done (verify: the signature is valid), 1 verify: not valid, 2 usage or input error
A closed output pipe (`| head -1`) does not change the status.";

#[derive(Parser)]
#[command(
    name = "robots",
    version,
    about = "robots.txt as Google reads it: check URLs, lint files, crawl politely",
    after_help = EXIT_CODES
)]
struct Cli {
    /// Print no warnings on stderr (an outage, a reduced crawler name…); errors that stop the
    /// command are still said. `RUST_LOG` (`warn` by default) sets what is printed otherwise.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

/// Set by `--quiet`: the tool's own warnings and notes are not printed either.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints one of the tool's own warnings or notes (`robots: …`) on stderr, unless `--quiet`.
pub fn say(text: impl std::fmt::Display) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("robots: {text}");
    }
}

/// The libraries report what happens (an outage and its end, a setup to fix) as `tracing`
/// events: printed on stderr at `warn` and above, or as `RUST_LOG` says; none with `--quiet`.
fn report_events(quiet: bool) {
    if quiet {
        return;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .with_ansi(false)
        .try_init();
}

#[derive(Subcommand)]
enum Command {
    /// Check URLs against a robots.txt for one crawler.
    #[command(after_help = "\
Examples:
  robots check --robots robots.txt --agent Googlebot https://example.com/private/x
  curl -s https://example.com/robots.txt | robots check --robots - --agent FooBot -- https://example.com/a
  robots check --user-agent 'FooBot/1.0 (+https://foo.example/bot)' --format json https://example.com/a

Exit status: 0 every URL allowed, 1 any disallowed, 2 usage or input error.")]
    Check(check::CheckArgs),
    /// Report what a robots.txt says that crawlers read differently from what was probably meant.
    #[command(after_help = "\
Examples:
  robots lint robots.txt
  robots lint --strict --allow non_google_key robots.txt
  curl -s https://example.com/robots.txt | robots lint --format json -

Exit status: 0 no errors found (nor anything, with --strict), 1 otherwise, 2 usage or input error.")]
    Lint(lint::LintArgs),
    /// List the sitemap URLs each origin's robots.txt names (one fetch per origin).
    #[command(after_help = "\
Examples:
  robots sitemaps https://example.com/ https://example.org/
  robots sitemaps --format json < urls.txt

Exit status: 0 every robots.txt read, 1 any unreachable, 2 usage or input error.")]
    Sitemaps(sitemaps::SitemapsArgs),
    /// Fetch URLs politely: robots.txt checked at every hop, each origin paced; with --redis,
    /// as one process of a fleet sharing robots.txt and politeness.
    #[cfg(feature = "redis")]
    #[command(after_help = "\
Examples:
  robots crawl --user-agent 'FooBot/1.0 (+https://foo.example/bot)' https://example.com/a https://example.com/b
  robots crawl --user-agent FooBot/1.0 --follow --max-pages 50 --format json https://example.com/
  robots crawl --user-agent FooBot/1.0 --redis redis://10.0.0.5:6379/ --fleet-size 8 < urls.txt

Exit status: 0 every URL fetched or disallowed, 1 any unreachable or failed, 2 usage or input error.")]
    Crawl(Box<crawl::CrawlArgs>),
    /// The crawler's Web Bot Auth keys: make one, publish the key directory, check a signed
    /// request.
    #[command(after_help = "\
Examples:
  robots key generate --out crawler.pem
  robots key directory crawler.pem previous.pem > http-message-signatures-directory
  robots crawl --user-agent FooBot/1.0 --signing-key crawler.pem --signature-agent https://foo.example https://example.com/
  robots key verify --directory http-message-signatures-directory captured-request.txt

Exit status: 0 done (verify: valid), 1 verify: not valid, 2 usage or input error.")]
    Key(key::KeyArgs),
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A bad value is said in one line; help, versions and missing arguments as clap
        // renders them.
        Err(error)
            if matches!(
                error.kind(),
                clap::error::ErrorKind::ValueValidation | clap::error::ErrorKind::InvalidValue
            ) =>
        {
            let text = error.to_string();
            let line = text.lines().next().unwrap_or("invalid value");
            eprintln!("robots: {}", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
        Err(error) => error.exit(),
    };
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    report_events(cli.quiet);
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Sitemaps(args) => sitemaps::run(&args),
        #[cfg(feature = "redis")]
        Command::Crawl(args) => crawl::run(&args),
        Command::Key(args) => key::run(&args),
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
