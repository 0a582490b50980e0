//! `robots crawl`: fetch URLs politely through the middleware (robots.txt checked at every hop,
//! each origin paced), alone or as one process of a fleet sharing a Redis. Other tools drive
//! it, so its JSON lines are a contract:
//!
//! `{"url", "outcome": "fetched"|"disallowed"|"crawl-delay-too-long"|"unreachable"|"error",
//! "status", "rule", "waited_ms", "error"}`, one per URL as it finishes.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use std::str::FromStr;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use robots_tower::{
    DecidingRule, OverlongCrawlDelay, PolitenessKey, Resolver, RobotsError, RobotsInfo,
    RobotsMiddleware,
};
use serde::Serialize;
use url::Url;

use crate::crawler::CrawlerArgs;
use crate::{CliError, Format, input, output};

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

/// One line of `--format json`.
#[derive(Serialize)]
struct Outcome {
    url: String,
    outcome: &'static str,
    status: Option<u16>,
    rule: Option<RuleJson>,
    waited_ms: u64,
    error: Option<String>,
}

/// How the crawl ended: what became of every URL, and whether `--max-pages` cut it short. The
/// final line in text, and the final JSON object (`{"summary": …}`).
#[derive(Default, Serialize)]
struct Summary {
    /// Pages the server answered, whatever their status.
    fetched: usize,
    /// The fetched pages by status class (`2xx`, `3xx`, `4xx`, `5xx`).
    statuses: std::collections::BTreeMap<String, usize>,
    /// Refused by robots.txt.
    disallowed: usize,
    /// Refused because the site asks for a longer Crawl-delay than `--max-delay`.
    crawl_delay_too_long: usize,
    /// Not fetched: robots.txt could not be had (or the fleet's Redis, failing closed).
    unreachable: usize,
    /// Not fetched: a server handed the URL on (a sitemap, a redirect), and it leads into an
    /// internal address.
    address_refused: usize,
    /// Not fetched: the request failed, or the string was not a URL.
    failed: usize,
    /// `max-pages` when `--max-pages` stopped the crawl with links left; otherwise `done`.
    ended: &'static str,
}

impl Summary {
    fn count(&mut self, outcome: &Outcome) {
        match outcome.outcome {
            "fetched" => {
                self.fetched += 1;
                let class = outcome
                    .status
                    .map_or_else(|| "other".to_string(), |s| format!("{}xx", s / 100));
                *self.statuses.entry(class).or_default() += 1;
            }
            "disallowed" => self.disallowed += 1,
            "crawl-delay-too-long" => self.crawl_delay_too_long += 1,
            "unreachable" => self.unreachable += 1,
            "address-refused" => self.address_refused += 1,
            _ => self.failed += 1,
        }
    }

    fn text(&self) -> String {
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(class, n)| format!("{n} {class}"))
            .collect();
        let statuses = if statuses.is_empty() {
            String::new()
        } else {
            format!(" ({})", statuses.join(", "))
        };
        let ended = match self.ended {
            "max-pages" => "stopped by --max-pages with links left",
            _ => "done",
        };
        let address = if self.address_refused > 0 {
            format!(
                ", {} refused by the address rule (handed on into an internal address)",
                self.address_refused
            )
        } else {
            String::new()
        };
        format!(
            "summary: {} fetched{statuses}, {} disallowed, {} refused for their Crawl-delay, {} unreachable{address}, {} failed; {ended}",
            self.fetched, self.disallowed, self.crawl_delay_too_long, self.unreachable, self.failed
        )
    }
}

#[derive(Serialize)]
struct RuleJson {
    line: u32,
    kind: &'static str,
    pattern: robots_core::RulePattern,
}

impl RuleJson {
    fn of(rule: &DecidingRule) -> RuleJson {
        RuleJson {
            line: rule.line,
            kind: rule.kind.as_str(),
            pattern: rule.pattern.clone(),
        }
    }
}

/// What one URL gave: its outcome, and links to follow.
struct Done {
    outcome: Outcome,
    links: Vec<Url>,
    /// The string given was not a URL to fetch (an input error: exit 2 at the end).
    not_a_url: bool,
    /// Where its line came from (`stdin line N`), for an error about it.
    at: Option<String>,
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

/// The lines of URLs not queued, on their way to be printed, and how many there are.
#[derive(Clone)]
struct Backlog {
    sender: tokio::sync::mpsc::UnboundedSender<NotQueued>,
    waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl Backlog {
    fn channel() -> (Backlog, BacklogReceiver) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let waiting = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let backlog = Backlog {
            sender,
            waiting: waiting.clone(),
        };
        (backlog, BacklogReceiver { receiver, waiting })
    }

    /// (Sync: the frontier's `on_disallowed` sends from inside a push.)
    fn send(&self, line: NotQueued) {
        // Counted before it can be received, so the count never goes below what waits.
        self.waiting
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.sender.send(line).is_err() {
            self.waiting
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn backlog(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::Relaxed)
    }
}

struct BacklogReceiver {
    receiver: tokio::sync::mpsc::UnboundedReceiver<NotQueued>,
    waiting: Arc<std::sync::atomic::AtomicUsize>,
}

impl BacklogReceiver {
    /// The next line, counted out (it is printed before the next is asked for).
    async fn recv(&mut self) -> Option<NotQueued> {
        let line = self.receiver.recv().await;
        self.taken(line.is_some());
        line
    }

    fn try_recv(&mut self) -> Result<NotQueued, tokio::sync::mpsc::error::TryRecvError> {
        let line = self.receiver.try_recv();
        self.taken(line.is_ok());
        line
    }

    fn taken(&self, one: bool) {
        if one {
            self.waiting
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A URL the frontier did not queue, or dropped: said on its own line.
enum NotQueued {
    /// Its robots.txt, cached, disallows it.
    Disallowed(robots_tower::Dropped),
    /// Refused (the frontier's budget, or closed).
    Refused(robots_tower::PushError),
    /// Handed on by a server into an internal address (a sitemap's page): never queued.
    Address(Url, RobotsError),
    /// A line that was not queued and already has its result (not a URL to fetch, a scheme
    /// with no robots.txt).
    Done(Done),
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
        Format::Text => writeln!(out, "{}", summary.text()).map_err(CliError::Write)?,
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

/// `--sitemaps`: the allowed pages the sites' sitemaps list, as seeds.
struct SitemapSeeds {
    hooks: robots_tower::RobotsHooks<reqwest::Client>,
    sites: Vec<robots_fetch::Origin>,
    since: Option<robots_tower::robots_sitemap::LastMod>,
    max: usize,
}

impl SitemapSeeds {
    /// Expands the sitemaps into the frontier, at most `max` pages; what cannot be expanded is
    /// said on stderr (the crawl's lines are its pages'), and counted: how many sitemaps failed.
    /// A page the address rule refuses gets its line.
    async fn seed(self, frontier: &robots_tower::Frontier, not_queued: &Backlog) -> usize {
        let mut failed = 0;
        use robots_tower::SitemapEvent;
        let options = robots_tower::SitemapOptions::default().max_urls(usize::MAX);
        let mut expansion = self.hooks.sitemaps_of(self.sites, options);
        let mut seeded = 0;
        // Each page once, however often and in whatever spelling it is listed: its URL is
        // normalised (scheme and host in lower case, default port and dot segments gone) when
        // parsed, and its fragment is dropped; kept as a 64-bit hash, the last
        // `SEEN_REMEMBERED` of them (bounded however much a hostile site lists).
        let mut listed = Seen::default();
        while seeded < self.max
            && let Some(event) = expansion.next().await
        {
            match event {
                SitemapEvent::Page(page) => {
                    let recent = match (&self.since, &page.lastmod) {
                        (None, _) => true,
                        (Some(since), Some(lastmod)) => {
                            lastmod.unix_seconds() >= since.unix_seconds()
                        }
                        (Some(_), None) => false,
                    };
                    if let Err(error @ RobotsError::AddressRefused { .. }) = page.verdict {
                        // Never fetched, and said: a server tried to lead the crawl inside.
                        not_queued.send(NotQueued::Address(page.url, error));
                        continue;
                    }
                    // A disallowed page is never queued: the sitemap listed it, robots.txt
                    // forbids it.
                    if !recent || !page.allowed() {
                        continue;
                    }
                    let mut url = page.url;
                    url.set_fragment(None);
                    if !listed.first_time(page_hash(&url)) {
                        continue;
                    }
                    seeded += 1;
                    if let Err(error) = frontier.push(url).await {
                        not_queued.send(NotQueued::Refused(error));
                    }
                }
                SitemapEvent::Failed { sitemap, error } => {
                    // A sitemap robots.txt forbids was not to be read: the crawler did its
                    // part. Any other failure left pages out.
                    let forbidden = matches!(
                        &error,
                        robots_tower::SitemapFailure::Refused(
                            RobotsError::Disallowed { .. } | RobotsError::DisallowedFor { .. }
                        )
                    );
                    if !forbidden {
                        failed += 1;
                    }
                    crate::say(format_args!("sitemap {sitemap}: {error}"));
                }
                SitemapEvent::Limit { sitemap, limit } => {
                    crate::say(format_args!("sitemap {sitemap}: {limit}"));
                }
                SitemapEvent::NotAbsolute { origin, value } => crate::say(format_args!(
                    "the robots.txt of {origin} names `{value}`, not an absolute URL: not fetched"
                )),
                _ => {}
            }
        }
        failed
    }
}

/// How many results of lines not queued (dropped as disallowed, refused, not URLs) may wait
/// to be printed: stdin is read no faster than they are, so memory stays bounded whatever the
/// input (a million lines one robots.txt drops at once included). Queued lines are bounded by
/// the frontier's budget.
const BACKLOG_LINES: usize = 4_096;

/// Each queued line's text and where it came from (`stdin line N`), by the normalised URL
/// queued for it, first given first: only lines waiting for their result are held.
#[derive(Default)]
struct Given {
    texts: HashMap<String, std::collections::VecDeque<(String, Option<String>)>>,
}

impl Given {
    fn record(&mut self, url: &str, text: String, at: Option<String>) {
        self.texts
            .entry(url.to_string())
            .or_default()
            .push_back((text, at));
    }

    /// The text a URL handed out (or dropped) was given as, and where; the URL itself for one
    /// no line gave (a sitemap's page, a link).
    fn take(&mut self, url: &Url) -> (String, Option<String>) {
        let Some(texts) = self.texts.get_mut(url.as_str()) else {
            return (url.to_string(), None);
        };
        let Some(taken) = texts.pop_front() else {
            return (url.to_string(), None);
        };
        if texts.is_empty() {
            self.texts.remove(url.as_str());
        }
        taken
    }
}

/// The data behind a lock, whoever panicked while holding it (nothing here is left half done).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The line of a URL the frontier dropped or refused.
fn refused_line(refused: NotQueued, given: &Mutex<Given>) -> Done {
    let (url, error) = match refused {
        NotQueued::Done(done) => return done,
        NotQueued::Disallowed(dropped) => (dropped.url, dropped.error),
        NotQueued::Address(url, error) => (url, error),
        NotQueued::Refused(error) => {
            let message = error.to_string();
            let url = error.into_url();
            let (text, at) = lock(given).take(&url);
            return Done {
                outcome: outcome_of(text, "error", None, None, Duration::ZERO, Some(message)),
                links: Vec::new(),
                not_a_url: false,
                at,
            };
        }
    };
    let (text, at) = lock(given).take(&url);
    Done {
        outcome: refusal(text, &error, error.to_string()),
        links: Vec::new(),
        not_a_url: false,
        at,
    }
}

fn client(
    args: &CrawlArgs,
) -> Result<(reqwest_middleware::ClientWithMiddleware, RobotsMiddleware), CliError> {
    let seconds = Duration::from_secs_f64;
    let mut resolver = Resolver::new();
    for text in &args.resolve {
        resolver = resolver
            .with_override_text(text)
            .map_err(|e| CliError::Usage(format!("--resolve: {e}")))?;
    }
    let crawler = args.crawler.crawler(None)?;
    let mut config = RobotsMiddleware::builder(&crawler.user_agent)
        .politeness_key(args.politeness_key)
        .resolver(resolver.clone())
        .min_delay(seconds(args.min_delay))
        .max_delay(seconds(args.max_delay))
        .overlong_crawl_delay(args.overlong_crawl_delay)
        .backoff(seconds(args.backoff_base), seconds(args.backoff_max))
        .max_retry_after(seconds(args.max_retry_after))
        .retries(args.retries)
        .delay_factor(args.delay_factor)
        .concurrency(args.concurrency as usize)
        .fetch_timeout(seconds(args.timeout))
        .cache_config(robots_fetch::CacheConfig {
            min_ttl: seconds(args.robots_min_ttl),
            ..robots_fetch::CacheConfig::default()
        });
    config = config.tokens(crawler.tokens);
    if let Some(path) = &args.signing_key {
        // (The key's own message names the file and says why, never the key.)
        let key = robots_fetch::SigningKey::from_file(path)
            .map_err(|e| CliError::Usage(format!("--signing-key: {e}")))?;
        let mut signer =
            robots_fetch::RequestSigner::new(key).validity(seconds(args.signature_validity));
        if let Some(agent) = &args.signature_agent {
            signer = signer
                .signature_agent(agent.clone())
                .map_err(|e| CliError::Usage(format!("--signature-agent: {e}")))?;
        }
        config = config.signer(signer);
    }
    if let Some(url) = &args.redis {
        let fleet =
            robots_tower::RedisFleet::new(url).map_err(|e| CliError::Usage(e.to_string()))?;
        config = config
            .fleet(&fleet)
            .fleet_size(args.fleet_size)
            .fleet_outage_grace(seconds(args.fleet_outage_grace))
            // A request cannot outlive --timeout, so a place held longer belongs to a process
            // that died: it is freed then.
            .fleet_lease(seconds(args.timeout) + Duration::from_secs(2));
    }
    let middleware = config
        .build()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    // Pages connect through the resolver the middleware groups and judges hops by.
    let inner = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(seconds(args.timeout))
        .dns_resolver(std::sync::Arc::new(resolver))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    Ok((
        reqwest_middleware::ClientBuilder::new(inner)
            .with(middleware.clone())
            .build(),
        middleware,
    ))
}

fn outcome_of(
    url: String,
    outcome: &'static str,
    status: Option<u16>,
    rule: Option<&DecidingRule>,
    waited: Duration,
    error: Option<String>,
) -> Outcome {
    Outcome {
        url,
        outcome,
        status,
        rule: rule.map(RuleJson::of),
        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        error,
    }
}

/// The outcome of a URL the library refused, with the tool's words; `message` is the error's
/// own, for refusals said as it says them.
fn refusal(url: String, robots: &RobotsError, message: String) -> Outcome {
    let outcome = |kind, rule, error| outcome_of(url, kind, None, rule, Duration::ZERO, error);
    match robots {
        RobotsError::Disallowed { rule, .. } | RobotsError::DisallowedFor { rule, .. } => {
            outcome("disallowed", rule.as_ref(), None)
        }
        // What happened, without the cache's "retry in": this process exits when done.
        RobotsError::RobotsUnreachable { origin, cause, .. } => outcome(
            "unreachable",
            None,
            Some(format!("robots.txt of {origin} unreachable: {cause}")),
        ),
        RobotsError::FleetUnavailable { .. } => outcome("unreachable", None, Some(message)),
        RobotsError::AddressRefused { .. } => outcome("address-refused", None, Some(message)),
        RobotsError::RedirectRefused {
            reason: robots_fetch::RedirectRefusal::Rule { .. },
            ..
        } => outcome("address-refused", None, Some(message)),
        // Said with the tool's flag, not the library's setting.
        RobotsError::CrawlDelayTooLong {
            origin, asked, max, ..
        } => outcome(
            "crawl-delay-too-long",
            None,
            Some(format!(
                "{origin} asks for a Crawl-delay of {}, above --max-delay {}: its pages are not fetched (`--overlong-crawl-delay honor` waits it out, `clamp` crawls faster than asked)",
                robots_fetch::HumanDuration(*asked),
                robots_fetch::HumanDuration(*max)
            )),
        ),
        _ => outcome("error", None, Some(message)),
    }
}

/// Fetches `url` (the text given), holding its frontier `job`, when it has one, until the
/// response's body is done: its group's next URL comes out then.
async fn fetch(
    client: &reqwest_middleware::ClientWithMiddleware,
    url: String,
    job: Option<robots_tower::Job>,
    follow: bool,
    at: Option<String>,
) -> Done {
    let outcome = |outcome, status, rule: Option<&DecidingRule>, waited: Duration, error| {
        outcome_of(url.clone(), outcome, status, rule, waited, error)
    };
    // The same words as `check` and `sitemaps` for the same cause; here one line's error.
    let parsed = match job.as_ref() {
        Some(job) => job.url().clone(),
        None => match crate::check::url_to_fetch(&url) {
            Ok(parsed) => parsed,
            Err(e) => {
                return Done {
                    outcome: outcome("error", None, None, Duration::ZERO, Some(e.to_string())),
                    links: Vec::new(),
                    not_a_url: true,
                    at,
                };
            }
        },
    };
    let group_wait = job
        .as_ref()
        .map_or(Duration::ZERO, robots_tower::Job::waited);
    let done = match client.get(parsed).send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let info = response.extensions().get::<RobotsInfo>().cloned();
            let final_url = response.url().clone();
            let html = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
            let nofollow = info.as_ref().is_some_and(|i| i.directives().nofollow);
            let links = if follow && html && !nofollow && (200..300).contains(&status) {
                // Bodies are read only to find links, and only up to 2 MB.
                let body = read_limited(response, 2 * 1024 * 1024).await;
                same_origin_links(&final_url, &body)
            } else {
                Vec::new()
            };
            Done {
                outcome: outcome(
                    "fetched",
                    Some(status),
                    info.as_ref().and_then(|i| i.rule()),
                    // Its turn in the frontier (how long its group kept it), then any wait
                    // the middleware added.
                    group_wait + info.as_ref().map_or(Duration::ZERO, |i| i.waited()),
                    None,
                ),
                links,
                not_a_url: false,
                at: None,
            }
        }
        Err(error) => {
            let robots = match &error {
                reqwest_middleware::Error::Middleware(e) => e.downcast_ref::<RobotsError>(),
                reqwest_middleware::Error::Reqwest(_) => None,
            };
            let outcome = match robots {
                Some(robots) => refusal(url.clone(), robots, error.to_string()),
                None => outcome("error", None, None, Duration::ZERO, Some(error.to_string())),
            };
            Done {
                outcome,
                links: Vec::new(),
                not_a_url: false,
                at: None,
            }
        }
    };
    // The body is done (read, or dropped with its response): the job ends now.
    drop(job);
    Done { at, ..done }
}

/// How many pages `crawl` remembers to queue each once (sitemap pages; with --follow, the
/// seeds and links): a hash in a set and in a queue, about 40 MB at most.
const SEEN_REMEMBERED: usize = 1 << 20;

/// The bytes of queued URLs the crawl's frontier holds at most (the lines they were given as
/// are held beside them): stdin is read only as fast as room is made.
const QUEUE_BYTES: usize = 16 << 20;

/// Pages seen, by hash, the last `SEEN_REMEMBERED` of them.
#[derive(Default)]
struct Seen {
    seen: HashSet<u64>,
    order: std::collections::VecDeque<u64>,
}

impl Seen {
    /// Whether `hash` is among the pages remembered.
    fn contains(&self, hash: u64) -> bool {
        self.seen.contains(&hash)
    }

    /// Whether `hash` was not among the pages remembered (it is from now on).
    fn first_time(&mut self, hash: u64) -> bool {
        if !self.seen.insert(hash) {
            return false;
        }
        self.order.push_back(hash);
        if self.order.len() > SEEN_REMEMBERED
            && let Some(oldest) = self.order.pop_front()
        {
            self.seen.remove(&oldest);
        }
        true
    }
}

/// A page URL's 64-bit hash, for de-duplication (collisions: one in about 2^64 per pair).
fn page_hash(url: &Url) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // Fixed keys: the same URL hashes the same for the whole run.
    let mut hasher =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    hasher.write(url.as_str().as_bytes());
    hasher.finish()
}

async fn read_limited(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(limit);
    body
}

/// Same-origin `href` targets of an HTML page (attribute names in any case, quoted or not),
/// resolved against the page, without fragments.
fn same_origin_links(page: &Url, html: &[u8]) -> Vec<Url> {
    let lower = html.to_ascii_lowercase();
    let mut links = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr::memmem::find(&lower[at..], b"href") {
        let mut i = at + found + 4;
        at = i;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if lower.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        let (start, end) = match html.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let end = memchr::memchr(q, &html[i + 1..]).map_or(html.len(), |e| i + 1 + e);
                (i + 1, end)
            }
            Some(_) => {
                let end = html[i..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b'>')
                    .map_or(html.len(), |e| i + e);
                (i, end)
            }
            None => break,
        };
        let Ok(target) = std::str::from_utf8(&html[start..end]) else {
            continue;
        };
        if let Ok(mut link) = page.join(target.trim()) {
            link.set_fragment(None);
            if link.origin() == page.origin() {
                links.push(link);
            }
        }
    }
    links
}

/// `fetched     200  <url>  (waited 1200 ms)` and the like: the outcome first.
fn text_line(outcome: &Outcome) -> String {
    let rule = |r: &RuleJson| {
        let key = if r.kind == "allow" {
            "Allow"
        } else {
            "Disallow"
        };
        format!("line {}: {key}: {}", r.line, r.pattern)
    };
    match outcome.outcome {
        "fetched" => format!(
            "fetched      {}  {}  (waited {} ms)",
            outcome.status.unwrap_or(0),
            outcome.url,
            outcome.waited_ms
        ),
        "disallowed" => format!(
            "DISALLOWED   {}  ({})",
            outcome.url,
            outcome
                .rule
                .as_ref()
                .map_or("everything disallowed".into(), rule)
        ),
        kind => format!(
            "{:<12} {}  ({})",
            kind.to_ascii_uppercase(),
            outcome.url,
            outcome.error.as_deref().unwrap_or("")
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_are_remembered_up_to_the_bound() {
        let mut listed = super::Seen::default();
        assert!(listed.first_time(1));
        assert!(!listed.first_time(1));
        for hash in 2..=super::SEEN_REMEMBERED as u64 + 1 {
            assert!(listed.first_time(hash));
        }
        // The oldest was forgotten; the set holds the bound, no more.
        assert_eq!(listed.seen.len(), super::SEEN_REMEMBERED);
        assert!(listed.first_time(1));
    }

    use super::*;

    #[test]
    fn links_of_a_page() {
        let page = Url::parse("http://h.example/dir/page.html").unwrap();
        let html = br#"<a href="/a">a</a> <A HREF='b#frag'>b</A> <a href=c.html>c</a>
            <a href="http://other.example/x">x</a> <a href = "/d" >d</a> <a href="mailto:x@y">m</a>"#;
        let links: Vec<String> = same_origin_links(&page, html)
            .iter()
            .map(|u| u.path().to_string())
            .collect();
        assert_eq!(links, ["/a", "/dir/b", "/dir/c.html", "/d"]);
    }
}
