//! `robots sitemaps`: the sitemap URLs each origin's robots.txt lists (one fetch per origin), or,
//! with `--expand`, the pages they list: every sitemap fetched as a page is (robots.txt checked,
//! paced per server), indexes followed, each page with the crawler's verdict.

use std::io::Write;
use std::process::ExitCode;

use std::str::FromStr;

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
    /// Fetch the sitemaps and print the pages they list, one per line (indexes followed; each
    /// sitemap fetched once, checked against robots.txt and paced as a page is).
    #[arg(long)]
    expand: bool,
    /// With --expand: stop after this many pages.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1_000_000,
        requires = "expand"
    )]
    max_urls: usize,
    /// With --expand: follow indexes this deep (a sitemap an index lists is depth 1).
    #[arg(long, value_name = "D", default_value_t = 5, requires = "expand")]
    max_depth: usize,
    /// With --expand: fetch at most this many sitemaps.
    #[arg(long, value_name = "N", default_value_t = 1_000, requires = "expand")]
    max_sitemaps: usize,
    /// With --expand: which URLs a sitemap may list: `strict` (its folder on its origin, or the
    /// whole origin of the robots.txt naming it) or `host` (anything on its origin).
    #[arg(long, value_name = "SCOPE", default_value = "strict", value_parser = robots_tower::SitemapScope::from_str, requires = "expand")]
    scope: robots_tower::SitemapScope,
    /// With --expand: seconds between two requests to one server, at least.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = crate::crawl::seconds, requires = "expand")]
    min_delay: f64,
    /// With --expand: connect to ADDR for HOST:PORT instead of asking DNS (curl's syntax; ADDR
    /// may be a comma-separated list). Applies to robots.txt, sitemaps and the address rule.
    /// Repeatable.
    #[arg(long = "resolve", value_name = "HOST:PORT:ADDR", requires = "expand")]
    resolve: Vec<String>,
    /// With --expand: how long a name's addresses are kept before it is looked up again, in
    /// seconds. Every new connection is judged by the address rule on the addresses it uses.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = crate::crawl::seconds, requires = "expand")]
    dns_cache: f64,
    /// With --expand: let connections to HOST reach internal addresses (loopback, private,
    /// link-local…): a name of your own network. Without it, a name that resolves to an
    /// internal address is refused where it connects (address literals and `localhost` you
    /// give, and `--resolve` entries, need no such word). Repeatable; `*` for every name.
    #[arg(long = "allow-internal", value_name = "HOST", requires = "expand")]
    allow_internal: Vec<String>,
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
    if args.expand {
        return expand(args, &crawler, &urls, input_errors);
    }
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
            // Stdout holds the sitemaps alone, a line each (for pipes); what is said about them
            // goes to stderr.
            Format::Text => {
                if sitemaps.is_empty() {
                    crate::say(format_args!(
                        "{origin}: no sitemaps ({})",
                        crate::output::once(source)
                    ));
                }
                for sitemap in sitemaps {
                    writeln!(out, "{origin}  {sitemap}").map_err(CliError::Write)?;
                }
                for ignored in ignored {
                    let resolved = ignored
                        .resolved
                        .map(|url| format!(" (it would be {url} if resolved; crawlers do not)"))
                        .unwrap_or_default();
                    crate::say(format_args!(
                        "{origin}: ignored by crawlers: `Sitemap: {}` is not an absolute http(s) URL{resolved}",
                        ignored.value
                    ));
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

/// One page of `--expand --format json`.
#[derive(Serialize)]
struct PageLine<'a> {
    url: &'a str,
    lastmod: Option<&'a str>,
    sitemap: &'a str,
    allowed: bool,
    /// Why it may not be fetched (robots.txt's rule, the address rule…), when it may not.
    refused: Option<String>,
}

/// A sitemap that failed, or a limit reached, in `--expand --format json`.
#[derive(Serialize)]
struct SitemapLine<'a> {
    sitemap: &'a str,
    error: String,
}

/// The last line of `--expand --format json`.
#[derive(Serialize)]
struct ExpandSummary {
    sitemaps_fetched: usize,
    sitemaps_failed: usize,
    urls: usize,
    out_of_scope: usize,
    over_limit: usize,
    disallowed: usize,
    skipped: usize,
    claimed_elsewhere: usize,
}

/// `--expand`: every page the origins' sitemaps list, as the expansion gives them.
fn expand(
    args: &SitemapsArgs,
    crawler: &crate::crawler::Crawler,
    urls: &[String],
    input_errors: usize,
) -> Result<ExitCode, CliError> {
    let origins: Vec<robots_fetch::Origin> = urls
        .iter()
        .filter_map(|text| url_to_fetch(text).ok())
        .filter_map(|url| robots_fetch::Origin::from_url(&url).ok())
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))?;
    let seconds = std::time::Duration::from_secs_f64;
    let resolver =
        crate::resolver::from_flags(args.dns_cache, &args.resolve, &args.allow_internal)?;
    let hooks = robots_tower::RobotsHooks::builder(&crawler.user_agent)
        .resolver(resolver)
        .tokens(crawler.tokens.clone())
        .min_delay(seconds(args.min_delay))
        .max_delay(seconds(args.min_delay.max(30.0)))
        .fetch_timeout(seconds(args.timeout))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    let options = robots_tower::SitemapOptions::default()
        .scope(args.scope)
        .max_urls(args.max_urls)
        .max_depth(args.max_depth)
        .max_sitemaps(args.max_sitemaps);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let summary = runtime.block_on(async {
        let mut expansion = hooks.sitemaps_of(origins, options);
        while let Some(event) = expansion.next().await {
            say_event(&mut out, args.format, &event)?;
        }
        Ok::<_, CliError>(expansion.summary())
    })?;
    let summary = ExpandSummary {
        sitemaps_fetched: summary.sitemaps_fetched,
        sitemaps_failed: summary.sitemaps_failed,
        urls: summary.urls_kept,
        out_of_scope: summary.out_of_scope,
        over_limit: summary.over_limit,
        disallowed: summary.disallowed,
        skipped: summary.skipped,
        claimed_elsewhere: summary.claimed_elsewhere,
    };
    match args.format {
        Format::Json => {
            output::json_line(&mut out, &serde_json::json!({ "summary": summary }))?;
        }
        // On stderr: text output is for pipes, its lines the pages.
        Format::Text => crate::say(format_args!(
            "summary: {} sitemaps fetched, {} failed; {} pages ({} disallowed), {} out of scope, {} skipped, {} limits reached",
            summary.sitemaps_fetched,
            summary.sitemaps_failed,
            summary.urls,
            summary.disallowed,
            summary.out_of_scope,
            summary.skipped,
            summary.over_limit
        )),
    }
    out.flush().map_err(CliError::Write)?;
    Ok(if input_errors > 0 {
        ExitCode::from(2)
    } else if summary.sitemaps_failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One event's line: a page (text: its URL on stdout; a refused one on stderr, with why), a
/// sitemap that failed, a limit, a `Sitemap:` line crawlers ignore (text: on stderr).
fn say_event(
    out: &mut impl Write,
    format: Format,
    event: &robots_tower::SitemapEvent,
) -> Result<(), CliError> {
    use robots_tower::SitemapEvent;
    let (sitemap, error) = match event {
        SitemapEvent::Page(page) => {
            return match format {
                Format::Json => output::json_line(
                    out,
                    &PageLine {
                        url: page.url.as_str(),
                        lastmod: page.lastmod.as_ref().map(|l| l.as_str()),
                        sitemap: page.sitemap.as_str(),
                        allowed: page.allowed(),
                        refused: page.verdict.as_ref().err().map(ToString::to_string),
                    },
                ),
                // Text is for pipes: stdout has the pages to fetch, one a line; the others are
                // said on stderr.
                Format::Text => match &page.verdict {
                    Ok(_) => writeln!(out, "{}", page.url).map_err(CliError::Write),
                    Err(refused) => {
                        crate::say(format_args!("{}: {refused}", page.url));
                        Ok(())
                    }
                },
            };
        }
        SitemapEvent::Failed { sitemap, error } => (sitemap.to_string(), error.to_string()),
        SitemapEvent::Limit { sitemap, limit } => (sitemap.to_string(), limit.to_string()),
        SitemapEvent::NotAbsolute { origin, value } => (
            value.clone(),
            format!(
                "named by the robots.txt of {origin}, but not an absolute http(s) URL: not fetched"
            ),
        ),
        _ => return Ok(()),
    };
    match format {
        Format::Json => output::json_line(
            out,
            &SitemapLine {
                sitemap: &sitemap,
                error,
            },
        ),
        Format::Text => {
            crate::say(format_args!("{sitemap}: {error}"));
            Ok(())
        }
    }
}
