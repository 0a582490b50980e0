//! `robots crawl`: fetch URLs politely through the middleware (robots.txt checked at every hop,
//! each origin paced), alone or as one process of a fleet sharing a Redis. Other tools drive
//! it, so its JSON lines are a contract:
//!
//! `{"url", "outcome": "fetched"|"disallowed"|"crawl-delay-too-long"|"unreachable"|
//! "address-refused"|"not-crawled"|"error", "status", "rule", "waited_ms", "error"}`, one per
//! URL as it ends. The crawl is the library's loop, `Frontier::run`: this is a front end.

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

use robots_tower::{OverlongCrawlDelay, PolitenessKey};

use crate::crawler::CrawlerArgs;
use crate::{CliError, Format, input, output};
use pages::{Seen, client, fetch, keep_alive, page_hash};
use queued::{BACKLOG_LINES, Backlog, Given, MAX_PAGES_LEFT, NotQueued, lock, refused_line};
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
    /// How long a site whose robots.txt cannot be had holds its URLs, in seconds from the
    /// first failure: they wait for robots.txt's next try when it comes within this, and are
    /// given up (outcome `unreachable`) when it does not. 0 gives them up at once.
    #[arg(long, value_name = "SECONDS", default_value_t = robots_tower::DEFAULT_HOLD_UNREACHABLE.as_secs_f64(), value_parser = seconds)]
    hold_unreachable: f64,
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
    /// The memory the queue of URLs waiting for their turn may take, in bytes (a URL of 60
    /// bytes takes about 100): stdin is read only as fast as room is made, and a link found
    /// when there is no room is not crawled, with its line (and exit status 1).
    #[arg(long, value_name = "BYTES", default_value_t = QUEUE_BYTES)]
    queue_bytes: usize,
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
    // URLs the user's limit left (--max-pages): their lines say so, and the summary.
    let mut cut_short = false;
    let mut input_errors = 0usize;
    // With --follow, the pages queued (the seeds, then the links), each once: the last
    // `SEEN_REMEMBERED`, by hash, so memory stays flat on a site of endless links.
    let seen = Arc::new(Mutex::new(Seen::default()));
    // Every line's result on its way to be printed, in the order the results came: those of
    // the visits, and those of URLs the frontier dropped or left (disallowed by a robots.txt
    // already known, over the budget, left by --max-pages).
    let (lines, mut lines_rx) = Backlog::channel();
    let (dropped, left) = (lines.clone(), lines.clone());
    let mut config = robots_tower::FrontierConfig::default()
        .max_bytes(args.queue_bytes)
        // The middleware retries (--retries) in place, so that a URL keeps its turn: the loop
        // takes the last answer as the URL's end.
        .distress_retries(0)
        .max_retries(0)
        .hold_unreachable(Duration::from_secs_f64(args.hold_unreachable))
        .on_disallowed(move |d| dropped.send(NotQueued::Disallowed(Box::new(d))))
        .on_not_crawled(move |not| {
            left.send(match not {
                robots_tower::NotCrawled::Stopped(url) => NotQueued::Stopped(url.as_str().into()),
                not => NotQueued::NotCrawled(Box::new(not)),
            })
        });
    if args.follow {
        config = config.max_pages(u64::try_from(args.max_pages).unwrap_or(u64::MAX));
    }
    // URLs wait in the library's frontier, a queue per politeness group, and come out when
    // their group can take a request: a slow site never holds up the others.
    let frontier = middleware.frontier_with(config);
    // Each queued line's text as given and where it came from, by the URL the frontier hands
    // out (normalised, without its fragment), in the order given: the request for a URL is
    // credited to the first line of it not yet answered.
    let given = Arc::new(Mutex::new(Given::default()));
    // Told each time a line's result is printed (the seeding may wait for it).
    let printed = Arc::new(tokio::sync::Notify::new());
    // Fed from a task of its own, as stdin is read: `push` waits for room, which handing out
    // makes, and a full frontier holds the reading up. The crawl goes on while it feeds.
    let seeding = {
        let feeding = frontier.feeding();
        let frontier = frontier.clone();
        let (given, seen, printed, lines) =
            (given.clone(), seen.clone(), printed.clone(), lines.clone());
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
                    while lines.backlog() >= BACKLOG_LINES {
                        printed.notified().await;
                    }
                    let Some(url) = seed_url(text, at, &lines) else {
                        continue;
                    };
                    lock(&given).record(url.0.as_str(), url.1, url.2);
                    if follow {
                        lock(&seen).first_time(page_hash(&url.0));
                    }
                    if let Err(error) = frontier.push(url.0).await {
                        lines.send(NotQueued::Refused(Box::new(error)));
                        if frontier.is_stopped() {
                            // --max-pages: the rest of stdin is not read.
                            break;
                        }
                    }
                }
            }
            let mut sitemaps_failed = 0;
            if let Some(sitemaps) = sitemaps {
                sitemaps_failed = sitemaps.seed(&frontier, &lines).await;
            }
            drop(feeding);
            sitemaps_failed
        })
    };
    let follow = args.follow;
    let visit = |job: robots_tower::Job| {
        let (client, given, seen, lines) = (&client, &given, &seen, &lines);
        // Idle connections bounded: one is kept only for a site with more to come soon.
        let keep_alive = keep_alive(&job, &frontier);
        async move {
            let (text, at) = lock(given).take(job.url());
            let (done, visit) = fetch(client, text, &job, follow, keep_alive).await;
            if job.will_retry(&visit) {
                // Not this URL's end (its robots.txt is tried again within the hold): its
                // line waits for the retry.
                lock(given).put_back(job.url().as_str(), done.outcome.url, at);
                return visit;
            }
            drop(job);
            lines.send(NotQueued::Done(Box::new(Done { at, ..done })));
            match visit {
                // Links not seen before, to be queued (as the page's: the loop judges them).
                robots_tower::Visit::Fetched(links) => robots_tower::Visit::Fetched(
                    links
                        .into_iter()
                        .filter(|link| lock(seen).first_time(page_hash(link)))
                        .collect(),
                ),
                other => other,
            }
        }
    };
    // Origins are paced by the middleware; this only bounds the work in flight.
    let mut run = std::pin::pin!(frontier.run(IN_FLIGHT, visit));
    let mut ran = None;
    loop {
        let line = if ran.is_some() {
            // The crawl is over: the lines still to say, then the end.
            match lines_rx.try_recv() {
                Ok(line) => line,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                biased;
                Some(line) = lines_rx.recv() => line,
                stats = &mut run => {
                    ran = Some(stats);
                    continue;
                }
            }
        };
        let Done {
            mut outcome,
            not_a_url,
            at,
            ..
        } = refused_line(line, &given, &frontier);
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
        // Left by the user's own limit: said, not a failure. Any other URL not crawled is.
        if outcome.outcome == "not-crawled" && outcome.error.as_deref() == Some(MAX_PAGES_LEFT) {
            cut_short = true;
        } else {
            failed |= matches!(outcome.outcome, "unreachable" | "error" | "not-crawled");
        }
        summary.count(&outcome);
        let mut out = stdout.lock();
        match args.format {
            Format::Json => output::json_line(&mut out, &outcome)?,
            Format::Text => writeln!(out, "{}", text_line(&outcome)).map_err(CliError::Write)?,
        }
        out.flush().map_err(CliError::Write)?;
        drop(out);
        printed.notify_one();
    }
    // A sitemap that could not be read whole left pages out: the crawl did not do all it was
    // asked (said on stderr as it happened). (With --max-pages reached, the seeding may still
    // be reading stdin or expanding: it is stopped.)
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

/// A line of stdin as the URL to queue, with its text and where it came from; `None` when it
/// is not one (its line is sent, with fetch's own words, or the origin's error).
fn seed_url(
    text: String,
    at: Option<String>,
    lines: &Backlog,
) -> Option<(url::Url, String, Option<String>)> {
    let mut url = match crate::check::url_to_fetch(&text) {
        Ok(url) => url,
        Err(error) => {
            // Not a URL to fetch: its line at once, in the words of `check` and `sitemaps`.
            let message = Some(error.to_string());
            lines.send(NotQueued::Done(Box::new(Done {
                outcome: outcome_of(text, "error", None, None, Duration::ZERO, message),
                not_a_url: true,
                at,
            })));
            return None;
        }
    };
    if let Err(error) = robots_fetch::Origin::from_url(&url) {
        // No robots.txt to pace by (mailto:, ftp://): never requested.
        let message = Some(error.to_string());
        lines.send(NotQueued::Done(Box::new(Done {
            outcome: outcome_of(text, "error", None, None, Duration::ZERO, message),
            not_a_url: false,
            at,
        })));
        return None;
    }
    url.set_fragment(None);
    Some((url, text, at))
}

/// Requests in flight at most, over every group (each group is paced by the middleware).
const IN_FLIGHT: usize = 64;

/// The bytes of queued URLs the crawl's frontier holds at most by default (the lines they were
/// given as are held beside them): stdin is read only as fast as room is made.
const QUEUE_BYTES: usize = 16 << 20;
