//! `robots sitemaps`: the sitemap URLs each origin's robots.txt lists (one fetch per origin).

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use crate::check::{fetch_robots, parse_timeout, url_to_fetch};
use crate::crawler::CrawlerArgs;
use crate::{CliError, Format, input, output};

#[derive(Args)]
pub struct SitemapsArgs {
    /// The crawler (default: the User-Agent `robots-sitemaps`). Sitemaps are the same for every
    /// crawler; the name is what the server sees, and what a robots.txt served by agent varies on.
    #[command(flatten)]
    crawler: CrawlerArgs,
    /// Seconds a robots.txt fetch may take, redirects and body included.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout)]
    timeout: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URLs whose origins to ask; read from stdin, one per line, when none are given.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

/// One line of `--format json`: an origin, where its rules came from, its sitemaps, and the
/// `Sitemap:` lines crawlers ignore.
#[derive(Serialize)]
struct OriginSitemaps<'a> {
    origin: &'a str,
    robots: Robots,
    sitemaps: Vec<&'a str>,
    ignored: Vec<Ignored<'a>>,
}

/// A `Sitemap:` value crawlers ignore (not an absolute http(s) URL), as lint reports it.
#[derive(Serialize)]
struct Ignored<'a> {
    value: &'a str,
    /// The absolute URL it would be if resolved against the origin (crawlers do not).
    resolved: Option<String>,
}

#[derive(Serialize)]
struct Robots {
    outcome: &'static str,
    status: Option<u16>,
}

pub fn run(args: &SitemapsArgs) -> Result<ExitCode, CliError> {
    // A line that is not a URL is said with its line, and the others are still looked up.
    let (urls, input_errors) = input::usable_urls(&args.urls, |url| {
        url_to_fetch(url).err().map(|e| e.to_string())
    })?;
    let crawler = args.crawler.crawler(Some("robots-sitemaps"))?;
    let entries = fetch_robots(&crawler.user_agent, &crawler.tokens, args.timeout, &urls)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut seen = std::collections::HashSet::new();
    let mut unreachable = false;
    for (url, entry) in &entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                eprintln!("robots: {url}: {error}");
                unreachable = true;
                continue;
            }
        };
        let origin = entry.origin().as_str();
        if !seen.insert(origin) {
            continue;
        }
        let source = entry.source();
        unreachable |= source.outcome() == "unreachable";
        // One rule with lint: only absolute http(s) URLs are sitemaps crawlers use.
        let (sitemaps, relative): (Vec<&str>, Vec<&str>) = entry
            .sitemaps()
            .partition(|s| robots_core::is_absolute_sitemap(s.as_bytes()));
        let ignored: Vec<Ignored> = relative
            .into_iter()
            .map(|value| Ignored {
                value,
                resolved: url::Url::parse(origin)
                    .and_then(|base| base.join(value))
                    .ok()
                    .map(String::from),
            })
            .collect();
        match args.format {
            Format::Json => output::json_line(
                &mut out,
                &OriginSitemaps {
                    origin,
                    robots: Robots {
                        outcome: source.outcome(),
                        status: source.status(),
                    },
                    sitemaps,
                    ignored,
                },
            )?,
            Format::Text => {
                if sitemaps.is_empty() {
                    writeln!(
                        out,
                        "# {origin}: no sitemaps ({})",
                        crate::output::once(source)
                    )
                    .map_err(CliError::Write)?;
                }
                for sitemap in sitemaps {
                    writeln!(out, "{origin}  {sitemap}").map_err(CliError::Write)?;
                }
                for ignored in ignored {
                    let resolved = ignored
                        .resolved
                        .map(|url| format!(" (it would be {url} if resolved; crawlers do not)"))
                        .unwrap_or_default();
                    writeln!(
                        out,
                        "# {origin}: ignored by crawlers: `Sitemap: {}` is not an absolute http(s) URL{resolved}",
                        ignored.value
                    )
                    .map_err(CliError::Write)?;
                }
            }
        }
    }
    out.flush().map_err(CliError::Write)?;
    Ok(if input_errors > 0 {
        ExitCode::from(2)
    } else if unreachable {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
