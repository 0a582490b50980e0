//! `robots crawl`: fetch URLs politely through the middleware (robots.txt checked at every hop,
//! each origin paced), alone or as one process of a fleet sharing a Redis. Other tools drive
//! it, so its JSON lines are a contract:
//!
//! `{"url", "outcome": "fetched"|"disallowed"|"crawl-delay-too-long"|"unreachable"|"error",
//! "status", "rule", "waited_ms", "error"}`, one per URL as it finishes.

mod pages;
mod queued;
mod report;
mod seeds;

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use std::str::FromStr;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use robots_tower::{OverlongCrawlDelay, PolitenessKey};

use crate::crawler::CrawlerArgs;
use crate::{CliError, Format, input, output};
use pages::{Seen, client, fetch, page_hash};
use queued::{BACKLOG_LINES, Backlog, Given, NotQueued, lock, refused_line};
use report::{Done, Summary, outcome_of, text_line};
use seeds::SitemapSeeds;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("crawler").required(true).multiple(true).args(["agents", "user_agent"])))]
pub struct CrawlArgs {
    /// The crawler: its User-Agent, sent with every request, and the product tokens the rules
    /// are selected by.
    #[command(flatten)]
    crawler: CrawlerArgs,
    /// Share robots.txt and every origin's politeness with the other processes using this Redis
    /// (`redis://host:port/db`), or this Redis Cluster (`redis+cluster://host:port,host:port/`).
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// How many processes share the Redis: while it is unreachable, each paces alone with the
    /// interval multiplied by this.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    fleet_size: u32,
    /// How long requests wait for an unreachable Redis (a failover under way) before pacing
    /// falls back to this process alone, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = seconds)]
    fleet_outage_grace: f64,
    /// What shares one politeness budget: `host` (every origin of a host), `origin` (scheme,
    /// host and port), `domain` (the registrable domain, by the Public Suffix List) or `ip` (the
    /// address connected to).
    #[arg(long, value_name = "KEY", default_value = "host", value_parser = PolitenessKey::from_str)]
    politeness_key: PolitenessKey,
    /// Connect to ADDR for HOST:PORT instead of asking DNS (curl's syntax; ADDR may be a
    /// comma-separated list). Applies to robots.txt, pages, redirect checks and the ip key.
    /// Repeatable.
    #[arg(long = "resolve", value_name = "HOST:PORT:ADDR")]
    resolve: Vec<String>,
    /// How long a name's addresses are kept before it is looked up again, in seconds. Every
    /// new connection is judged by the address rule on the addresses it uses, however long
    /// they are kept.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = seconds)]
    dns_cache: f64,
    /// Let connections to HOST reach internal addresses (loopback, private, link-local…): a
    /// name of your own network, crawled by name. Without it, a name that resolves to an
    /// internal address is refused where it connects (address literals and `localhost` you
    /// give, and `--resolve` entries, need no such word). Repeatable; `*` for every name.
    #[arg(long = "allow-internal", value_name = "HOST")]
    allow_internal: Vec<String>,
    /// Seconds between requests to one group, at least.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = seconds, allow_negative_numbers = true)]
    min_delay: f64,
    /// Crawl-delay and Request-rate raise the interval up to this many seconds; a site asking
    /// for more is handled by --overlong-crawl-delay.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = seconds, allow_negative_numbers = true)]
    max_delay: f64,
    /// A Crawl-delay above --max-delay: `refuse` its origin's URLs (outcome
    /// `crawl-delay-too-long`), `honor` it (wait the whole delay), or `clamp` it to --max-delay
    /// (crawl faster than the site asked).
    #[arg(long, value_name = "POLICY", default_value = "refuse", value_parser = OverlongCrawlDelay::from_str)]
    overlong_crawl_delay: OverlongCrawlDelay,
    /// Seconds of the first pause after a 429, 500, 502, 503, 504 or network error without
    /// Retry-After; doubled per consecutive one.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, value_parser = seconds, allow_negative_numbers = true)]
    backoff_base: f64,
    /// The longest such pause, in seconds (jitter included).
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = seconds, allow_negative_numbers = true)]
    backoff_max: f64,
    /// The longest pause a Retry-After or rate-limit reset may impose, in seconds (longer ones
    /// are clamped, and said once per group).
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0, value_parser = seconds, allow_negative_numbers = true)]
    max_retry_after: f64,
    /// Send a URL again, at most N times, after a 429, 500, 502, 503 or 504 or a network
    /// error; each retry waits for the pause the failure set and for its turn.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retries: u32,
    /// After a response, wait at least this many times as long as the server took to answer
    /// (0 turns it off).
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = factor, allow_negative_numbers = true)]
    delay_factor: f64,
    /// Requests in flight per group.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// The shortest life of a robots.txt copy, in seconds: a `Cache-Control: max-age` below it
    /// is raised to it (the longest is a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = positive_seconds, allow_negative_numbers = true)]
    robots_min_ttl: f64,
    /// Seconds a request (and a robots.txt fetch) may take. With --redis, the place a request
    /// holds in the fleet is freed this long (plus 2 s) after it started, should its process die.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = positive_seconds, allow_negative_numbers = true)]
    timeout: f64,
    /// Sign every request (robots.txt, pages, each redirect hop and retry) with this Ed25519 key
    /// (PKCS#8 PEM or JWK; `robots key generate` makes one): Web Bot Auth, HTTP Message
    /// Signatures with tag="web-bot-auth".
    #[arg(long, value_name = "FILE")]
    signing_key: Option<std::path::PathBuf>,
    /// With --signing-key: the origin serving the crawler's key directory
    /// (/.well-known/http-message-signatures-directory), sent as Signature-Agent and signed.
    #[arg(long, value_name = "URL", requires = "signing_key", value_parser = https_url)]
    signature_agent: Option<url::Url>,
    /// With --signing-key: how long each signature is valid, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = positive_seconds, requires = "signing_key")]
    signature_validity: f64,
    /// Queue the same-origin links of fetched HTML pages, breadth-first.
    #[arg(long)]
    follow: bool,
    /// With --follow: stop once this many pages were fetched.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_pages: usize,
    /// Seed the crawl with the pages the sitemaps of this site list (its robots.txt's
    /// `Sitemap:` lines, indexes followed, each sitemap fetched as a page is): the allowed ones,
    /// at most --max-pages. Repeatable.
    #[arg(long = "sitemaps", value_name = "SITE_URL")]
    sitemaps: Vec<String>,
    /// With --sitemaps: only the pages whose `lastmod` is this W3C date or later (`2024-05-01`,
    /// or a date and time with its zone); pages without one are left out.
    #[arg(long, value_name = "DATE", requires = "sitemaps", value_parser = since)]
    since: Option<robots_tower::robots_sitemap::LastMod>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URLs to fetch; read from stdin, one per line, when none are given (and no --sitemaps).
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..=86_400.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0 to 86400"
        )),
    }
}

fn since(text: &str) -> Result<robots_tower::robots_sitemap::LastMod, String> {
    robots_tower::robots_sitemap::LastMod::parse(text).ok_or_else(|| {
        format!("`{text}` is not a W3C date (`2024-05-01`, or `2024-05-01T10:00:00Z`)")
    })
}

fn https_url(text: &str) -> Result<url::Url, String> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "https" | "http") && url.host().is_some() => Ok(url),
        _ => Err(format!("`{text}` is not an http(s) URL with a host")),
    }
}

fn factor(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.0..=1000.0).contains(&f) => Ok(f),
        _ => Err(format!("`{text}` is not a factor from 0 to 1000")),
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    seconds(text).and_then(|s| {
        if s > 0.0 {
            Ok(s)
        } else {
            Err("the timeout must be more than 0 seconds".into())
        }
    })
}

pub fn run(args: &CrawlArgs) -> Result<ExitCode, CliError> {
    if args.max_delay < args.min_delay {
        return Err(CliError::Usage(
            "--max-delay must be at least --min-delay".into(),
        ));
    }
    if args.backoff_max < args.backoff_base {
        return Err(CliError::Usage(
            "--backoff-max must be at least --backoff-base".into(),
        ));
    }
    // With --sitemaps alone, the seeds come from the sitemaps, not stdin. Otherwise they are
    // read as the crawl goes (a bounded channel: a full frontier holds stdin up).
    let source = if args.urls.is_empty() && !args.sitemaps.is_empty() {
        None
    } else {
        let (sink, source) = tokio::sync::mpsc::channel(1024);
        input::stream_urls(&args.urls, sink)?;
        Some(source)
    };
    let mut sitemap_sites = Vec::new();
    for text in &args.sitemaps {
        let url = crate::check::url_to_fetch(text)
            .map_err(|e| CliError::Usage(format!("--sitemaps: {e}")))?;
        let origin = robots_fetch::Origin::from_url(&url)
            .map_err(|e| CliError::Usage(format!("--sitemaps: {url}: {e}")))?;
        sitemap_sites.push(origin);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(crawl(args, source, sitemap_sites))
}

async fn crawl(
    args: &CrawlArgs,
    source: Option<tokio::sync::mpsc::Receiver<input::Numbered>>,
    sitemap_sites: Vec<robots_fetch::Origin>,
) -> Result<ExitCode, CliError> {
    let (client, middleware) = client(args)?;
    let stdout = std::io::stdout();
    let mut failed = false;
    let mut summary = Summary::default();
    // Links --max-pages left unqueued.
    let mut cut_short = false;
    let mut input_errors = 0usize;
    let mut fetched = 0usize;
    // With --follow, the pages queued (the seeds, then the links), each once: the last
    // `SEEN_REMEMBERED`, by hash, so memory stays flat on a site of endless links.
    let seen = Arc::new(Mutex::new(Seen::default()));
    // URLs wait in the library's frontier, a queue per politeness group, and come out when
    // their group can take a request: a slow site never holds up the others. What it drops
    // (disallowed by a robots.txt already known) still gets its line.
    let (not_queued, mut not_queued_rx) = Backlog::channel();
    let dropped = not_queued.clone();
    let frontier = middleware.frontier_with(
        robots_tower::FrontierConfig::default()
            .max_bytes(QUEUE_BYTES)
            .on_disallowed(move |d| {
                dropped.send(NotQueued::Disallowed(d));
            }),
    );
    // Each queued line's text as given and where it came from, by the URL the frontier hands
    // out (normalised, without its fragment), in the order given: the request for a URL is
    // credited to the first line of it not yet answered.
    let given = Arc::new(Mutex::new(Given::default()));
    // Told each time a line's result is printed (the seeding may wait for it).
    let printed = Arc::new(tokio::sync::Notify::new());
    // Polled on this task, first in the order they were added (not spawned onto threads that
    // race): an origin's requests reach the middleware, and its queue, in the order given.
    let mut running = FuturesUnordered::new();
    // Fed from a task of its own, as stdin is read: `push` waits for room, which handing out
    // makes, and a full frontier holds the reading up.
    let seeding = {
        let (frontier, client) = (frontier.clone(), client.clone());
        let (given, seen, printed) = (given.clone(), seen.clone(), printed.clone());
        let follow = args.follow;
        let sitemaps = (!sitemap_sites.is_empty()).then(|| SitemapSeeds {
            hooks: middleware.hooks(),
            sites: sitemap_sites,
            since: args.since.clone(),
            max: args.max_pages,
        });
        tokio::spawn(async move {
            if let Some(mut source) = source {
                while let Some((at, text)) = source.recv().await {
                    // No further ahead of the printing than BACKLOG_LINES.
                    while not_queued.backlog() >= BACKLOG_LINES {
                        printed.notified().await;
                    }
                    let Ok(mut url) = crate::check::url_to_fetch(&text) else {
                        // Not a URL to fetch: its line at once, with fetch's own words.
                        let done = fetch(&client, text, None, false, at).await;
                        not_queued.send(NotQueued::Done(done));
                        continue;
                    };
                    if let Err(error) = robots_fetch::Origin::from_url(&url) {
                        // No robots.txt to pace by (mailto:, ftp://): never requested.
                        let message = Some(error.to_string());
                        not_queued.send(NotQueued::Done(Done {
                            outcome: outcome_of(text, "error", None, None, Duration::ZERO, message),
                            links: Vec::new(),
                            not_a_url: false,
                            at,
                        }));
                        continue;
                    }
                    url.set_fragment(None);
                    lock(&given).record(url.as_str(), text, at);
                    if follow {
                        lock(&seen).first_time(page_hash(&url));
                    }
                    if let Err(error) = frontier.push(url).await {
                        not_queued.send(NotQueued::Refused(error));
                    }
                }
            }
            let mut sitemaps_failed = 0;
            if let Some(sitemaps) = sitemaps {
                sitemaps_failed = sitemaps.seed(&frontier, &not_queued).await;
            }
            if !follow {
                frontier.close();
            }
            sitemaps_failed
        })
    };
    // Origins are paced by the middleware; this only bounds the work in flight.
    let in_flight = 64;
    let mut frontier_done = false;
    // The frontier's `next`, kept across turns of the loop rather than made anew each time a
    // page finishes: an ask of the pacing under way (a Redis round trip) is not cut short.
    let mut next_job = None;
    loop {
        // With --follow, nothing more can come once the seeds are in, nothing is queued and
        // nothing runs.
        if args.follow && seeding.is_finished() && frontier.is_empty() && running.is_empty() {
            frontier.close();
        }
        // With --follow, pages being fetched count toward --max-pages until they are done.
        let room = !args.follow || fetched + running.len() < args.max_pages;
        let take = !frontier_done && room && running.len() < in_flight;
        if take && next_job.is_none() {
            next_job = Some(Box::pin(frontier.next()));
        }
        let done = if running.is_empty() && (frontier_done || !room) {
            // Nothing runs and nothing more is taken: the lines still to say, then the end.
            match not_queued_rx.try_recv() {
                Ok(refused) => refused_line(refused, &given),
                Err(_) => break,
            }
        } else {
            tokio::select! {
                biased;
                Some(refused) = not_queued_rx.recv() => refused_line(refused, &given),
                Some(done) = running.next(), if !running.is_empty() => done,
                Some(job) = futures_util::future::OptionFuture::from(next_job.as_mut()), if take => {
                    next_job = None;
                    match job {
                        Some(job) => {
                            let (text, at) = lock(&given).take(job.url());
                            running.push(fetch(&client, text, Some(job), args.follow, at));
                        }
                        None => frontier_done = true,
                    }
                    continue;
                }
            }
        };
        let Done {
            mut outcome,
            links,
            not_a_url,
            at,
        } = done;
        // A string that is not a URL to fetch is an input error (exit 2 at the end), said with
        // its stdin line when it came from stdin.
        if not_a_url {
            input_errors += 1;
        }
        // An error about a line of stdin (not a URL, a scheme with no robots.txt such as
        // `mailto:` or `javascript:`, a failed request) names its line.
        if outcome.outcome == "error"
            && let (Some(error), Some(at)) = (outcome.error.as_mut(), at)
            && !error.starts_with(at.as_str())
        {
            *error = format!("{at}: {error}");
        }
        failed |= matches!(outcome.outcome, "unreachable" | "error");
        summary.count(&outcome);
        if outcome.outcome == "fetched" {
            fetched += 1;
        }
        let mut out = stdout.lock();
        match args.format {
            Format::Json => output::json_line(&mut out, &outcome)?,
            Format::Text => writeln!(out, "{}", text_line(&outcome)).map_err(CliError::Write)?,
        }
        out.flush().map_err(CliError::Write)?;
        drop(out);
        printed.notify_one();
        if args.follow {
            for link in links {
                let hash = page_hash(&link);
                if fetched >= args.max_pages {
                    cut_short |= !lock(&seen).contains(hash);
                } else if lock(&seen).first_time(hash) {
                    // (Over the frontier's budget: left, as --max-pages leaves links.)
                    cut_short |= frontier.try_push(link).is_err();
                }
            }
        }
    }
    // A sitemap that could not be read whole left pages out: the crawl did not do all it was
    // asked (said on stderr as it happened).
    // (Without --follow the seeding closed the frontier as it ended; with --follow and
    // --max-pages reached it may still be expanding: it is stopped.)
    let mut seeding = seeding;
    let sitemaps_failed = match tokio::time::timeout(Duration::from_secs(1), &mut seeding).await {
        Ok(ended) => ended.unwrap_or(1),
        Err(_) => {
            seeding.abort();
            0
        }
    };
    if sitemaps_failed > 0 {
        crate::say(format_args!(
            "{sitemaps_failed} sitemap(s) could not be read whole: their pages may be missing"
        ));
        failed = true;
    }
    // URLs still queued when --max-pages was reached count as links left too.
    cut_short |= args.follow && !frontier.is_empty();
    summary.ended = if cut_short { "max-pages" } else { "done" };
    let mut out = stdout.lock();
    match args.format {
        Format::Json => output::json_line(&mut out, &serde_json::json!({ "summary": summary }))?,
        // On stderr: text output is for pipes, its lines the URLs' results.
        Format::Text => crate::say(summary.text()),
    }
    out.flush().map_err(CliError::Write)?;
    drop(out);
    // A fleet's last leases are released before the process goes (their responses ended), so
    // that the other processes need not wait for them to expire.
    middleware.settle(Duration::from_secs(2)).await;
    Ok(if input_errors > 0 {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The bytes of queued URLs the crawl's frontier holds at most (the lines they were given as
/// are held beside them): stdin is read only as fast as room is made.
const QUEUE_BYTES: usize = 16 << 20;
