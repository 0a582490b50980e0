//! `robots check`: verdicts for URLs, against a local robots.txt (`--robots`) or each URL's own
//! robots.txt fetched over the network (once per origin per run).

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Args};
use robots_core::url_path::served_paths;
use robots_core::{
    MAX_BODY_BYTES, MatchedRule, Preference, RobotsTxt, RuleKind, Stated, UsagePreferences,
    Verdict, path_of,
};
use robots_fetch::{CacheConfig, CachedRobots, Origin, OriginError, Source, UnreachableCause};
use serde::Serialize;
use url::Url;

use crate::crawler::{Crawler, CrawlerArgs};
use crate::{CliError, Format, input, output};

#[derive(Args)]
#[command(group(ArgGroup::new("crawler").required(true).multiple(true).args(["agents", "user_agent"])))]
pub struct CheckArgs {
    /// The robots.txt file, or `-` for stdin. Only its first 512,000 bytes are read. Without it,
    /// each URL's robots.txt is fetched from its origin.
    #[arg(long, value_name = "FILE|-")]
    robots: Option<String>,
    #[command(flatten)]
    crawler: CrawlerArgs,
    /// When fetching: seconds a robots.txt fetch may take, redirects and body included.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout, conflicts_with = "robots")]
    timeout: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URLs to check; read from stdin, one per line, when none are given.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

pub fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!(
            "`{text}` is not a number of seconds between 0 and 86400"
        )),
    }
}

/// One line of `--format json`.
#[derive(Serialize)]
struct JsonVerdict<'a> {
    url: &'a str,
    allowed: bool,
    rule: Option<MatchedRule<'a>>,
    usage: UsageJson,
    resolved_path: Option<&'a ResolvedPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    robots: Option<RobotsJson>,
}

/// The AI usage preferences robots.txt states for the URL, in each vocabulary's own words
/// (`null`: unknown or not stated). All `null` for a disallowed URL: nothing applies to it.
#[derive(Serialize)]
struct UsageJson {
    #[serde(rename = "train-ai")]
    train_ai: Option<&'static str>,
    search: Option<&'static str>,
    #[serde(rename = "content-signal")]
    content_signal: Option<SignalJson>,
}

#[derive(Serialize)]
struct SignalJson {
    search: Option<&'static str>,
    #[serde(rename = "ai-input")]
    ai_input: Option<&'static str>,
    #[serde(rename = "ai-train")]
    ai_train: Option<&'static str>,
}

impl UsageJson {
    fn of(p: &UsagePreferences) -> UsageJson {
        UsageJson {
            train_ai: p.train_ai.preference.as_aipref(),
            search: p.search.preference.as_aipref(),
            content_signal: p.content_signal.map(|s| SignalJson {
                search: s.search.preference.as_signal(),
                ai_input: s.ai_input.preference.as_signal(),
                ai_train: s.ai_train.preference.as_signal(),
            }),
        }
    }
}

/// For text output: `usage: train-ai=n (line 3), search=y (line 4); content-signal:
/// ai-train=no (line 5)`, when robots.txt states anything for the URL.
fn usage_note(p: &UsagePreferences) -> Option<String> {
    if !p.is_stated() {
        return None;
    }
    let said = |name: &str, stated: &Stated, word: fn(Preference) -> Option<&'static str>| {
        word(stated.preference).map(|value| match stated.line {
            Some(line) => format!("{name}={value} (line {line})"),
            None => format!("{name}={value}"),
        })
    };
    let mut parts = Vec::new();
    let usage: Vec<String> = [("train-ai", &p.train_ai), ("search", &p.search)]
        .into_iter()
        .filter_map(|(name, stated)| said(name, stated, Preference::as_aipref))
        .collect();
    match (usage.is_empty(), p.train_ai.line) {
        (false, _) => parts.push(usage.join(", ")),
        (true, Some(line)) => parts.push(format!("content-usage unknown (line {line})")),
        (true, None) => {}
    }
    if let Some(signal) = &p.content_signal {
        let said: Vec<String> = [
            ("search", &signal.search),
            ("ai-input", &signal.ai_input),
            ("ai-train", &signal.ai_train),
        ]
        .into_iter()
        .filter_map(|(name, stated)| said(name, stated, Preference::as_signal))
        .collect();
        let said = if said.is_empty() {
            "unknown".to_string()
        } else {
            said.join(", ")
        };
        parts.push(format!("content-signal: {said}"));
    }
    Some(format!("usage: {}", parts.join("; ")))
}

/// Where the rules came from, in network mode. `outcome` and `status` are always there; the
/// others say why robots.txt could not be used, when it could not.
#[derive(Serialize)]
struct RobotsJson {
    outcome: &'static str,
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    final_url: Option<String>,
}

impl RobotsJson {
    /// A URL whose robots.txt was not fetched: it is not http(s), so it has none.
    fn not_fetched(error: &OriginError) -> RobotsJson {
        let reason = match error {
            OriginError::UnsupportedScheme { .. } => "unsupported_scheme",
            _ => "invalid_url",
        };
        RobotsJson {
            outcome: "unreachable",
            status: None,
            reason: Some(reason),
            message: Some(error.to_string()),
            retry_after: None,
            final_url: None,
        }
    }

    fn of(source: &Source) -> RobotsJson {
        let (reason, message, retry_after) = match source {
            Source::Unavailable { reason, .. } => (Some(reason.as_str()), None, None),
            Source::Unreachable { cause, .. } | Source::Stale { cause, .. } => match cause {
                // As the cache applies it: capped at the longest it honours.
                UnreachableCause::Status { retry_after, .. } => (
                    Some("status"),
                    None,
                    retry_after.map(|r| r.min(CacheConfig::default().retry_after_max).as_secs()),
                ),
                UnreachableCause::Network(e) => {
                    (Some(e.kind.as_str()), Some(e.message.clone()), None)
                }
            },
            _ => (None, None, None),
        };
        let final_url = match source {
            Source::Parsed {
                redirected_to: Some(url),
                ..
            } => Some(url.to_string()),
            _ => None,
        };
        RobotsJson {
            outcome: source.outcome(),
            status: source.status(),
            reason,
            message,
            retry_after,
            final_url,
        }
    }
}

/// A path a server would resolve the URL's path to, decided differently from the URL as given
/// (`/public/../private/x` is `/private/x`). The verdict itself stays Google's.
#[derive(Serialize)]
struct ResolvedPath {
    path: String,
    allowed: bool,
    /// The deciding line, `null` when no rule decided.
    line: Option<u32>,
}

impl ResolvedPath {
    /// The first served path decided otherwise than `verdict`, if any.
    fn of<'a>(
        url: &str,
        verdict: &Verdict<'_>,
        check: impl Fn(&[u8]) -> Verdict<'a>,
    ) -> Option<ResolvedPath> {
        served_paths(&path_of(url)).into_iter().find_map(|path| {
            let resolved = check(path.as_bytes());
            (resolved.allowed != verdict.allowed).then(|| ResolvedPath {
                allowed: resolved.allowed,
                line: resolved.rule.map(|r| r.line),
                path,
            })
        })
    }

    /// For text output: the `note:` line.
    fn note(&self) -> String {
        let word = if self.allowed {
            "allowed"
        } else {
            "disallowed"
        };
        let by = self
            .line
            .map(|line| format!(" by line {line}"))
            .unwrap_or_default();
        format!(
            "a server resolves the path to {}, which is {word}{by}; polite clients decide by both",
            self.path
        )
    }
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, CliError> {
    if args.robots.as_deref() == Some("-") && args.urls.is_empty() {
        return Err(CliError::Usage(
            "the robots.txt comes from stdin (--robots -), so give the URLs as arguments".into(),
        ));
    }
    let crawler = args.crawler.crawler(None)?;
    // One byte past the limit tells whether the file was cut, as a crawler would cut it.
    let body = args
        .robots
        .as_deref()
        .map(|source| input::read_capped(source, MAX_BODY_BYTES + 1))
        .transpose()?
        .map(|mut body| {
            if body.len() > MAX_BODY_BYTES {
                body.truncate(MAX_BODY_BYTES);
                crate::say(format_args!("note: the robots.txt is over {MAX_BODY_BYTES} bytes; only the first {MAX_BODY_BYTES} are read, as crawlers do"
                ));
            }
            body
        });
    // A string that cannot be checked is said with where it was given, and the others are
    // still checked: the exit status is 2 at the end.
    let (urls, input_errors) = input::usable_urls(&args.urls, |url| {
        // Local mode is the conformance tool: every string is checked as Google's library
        // checks it (the path from the first `/`, `?` or `;` after the authority, `/` when there
        // is none), as robots_main does: Google answers every string (`xyz/foo.js` is
        // `/foo.js`), so none is refused. A URL parser would refuse some that Google's library
        // reads (`https://example.com:8443;folder`).
        if body.is_some() {
            None
        } else {
            // `check` alone can also read the rules from a file.
            url_to_fetch(url).err().map(|e| {
                if is_path(url) {
                    format!("{e}, or check paths against a file with --robots")
                } else {
                    e.to_string()
                }
            })
        }
    })?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_disallowed = false;
    // A closed pipe (`| head -1`) ends the output, not the verdicts: the exit status still
    // counts every URL.
    let mut closed = false;
    let mut emit = |url: &str,
                    verdict: &Verdict<'_>,
                    usage: &UsagePreferences,
                    robots: Result<Option<&CachedRobots>, &OriginError>,
                    resolved: Option<ResolvedPath>|
     -> Result<(), CliError> {
        any_disallowed |= !verdict.allowed;
        if closed {
            return Ok(());
        }
        let robots = match robots {
            Ok(entry) => entry.map(|entry| RobotsJson::of(entry.source())),
            Err(error) => Some(RobotsJson::not_fetched(error)),
        };
        let written = match args.format {
            Format::Json => output::json_line(
                &mut out,
                &JsonVerdict {
                    url,
                    allowed: verdict.allowed,
                    rule: verdict.rule,
                    usage: UsageJson::of(usage),
                    resolved_path: resolved.as_ref(),
                    robots,
                },
            ),
            Format::Text => {
                let mut text = text_line(url, verdict, robots.as_ref());
                for extra in usage_note(usage)
                    .into_iter()
                    .chain(resolved.map(|r| format!("note: {}", r.note())))
                {
                    text.push_str("\n            ");
                    text.push_str(&extra);
                }
                writeln!(out, "{text}").map_err(CliError::Write)
            }
        };
        match written {
            Err(CliError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                closed = true;
                Ok(())
            }
            other => other,
        }
    };
    match body {
        Some(body) => {
            let robots = RobotsTxt::parse(&body);
            let matcher = robots.matcher_for(&crawler.tokens);
            for url in &urls {
                let usage = matcher.usage(url);
                let resolved =
                    ResolvedPath::of(url, &usage.verdict, |p| matcher.check_served_path(p));
                emit(url, &usage.verdict, &usage.preferences, Ok(None), resolved)?;
            }
        }
        None => {
            let entries = fetch_all(args, &crawler, &urls)?;
            let now = tokio::time::Instant::now();
            for (url, parsed) in urls.iter().zip(&entries) {
                let (parsed_url, entry) = parsed;
                let entry = match entry {
                    Ok(entry) => entry,
                    // No robots.txt to read: nothing may be fetched (the polite answer).
                    Err(error) => {
                        let refused = Verdict {
                            allowed: false,
                            rule: None,
                        };
                        emit(
                            url,
                            &refused,
                            &UsagePreferences::default(),
                            Err(error),
                            None,
                        )?;
                        continue;
                    }
                };
                let path = robots_fetch::path_of_url(parsed_url);
                let usage = entry.usage_at(path.as_bytes(), now);
                let resolved = ResolvedPath::of(parsed_url.as_str(), &usage.verdict, |p| {
                    entry
                        .served_verdict_at(None, p, now)
                        .unwrap_or_else(|| entry.verdict_at(p, now))
                });
                emit(
                    url,
                    &usage.verdict,
                    &usage.preferences,
                    Ok(Some(entry)),
                    resolved,
                )?;
            }
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(CliError::Write(e)),
        _ => {}
    }
    Ok(if input_errors > 0 {
        ExitCode::from(2)
    } else if any_disallowed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Fetches every origin's robots.txt once, all origins at once, and pairs each URL with its entry.
fn fetch_all(
    args: &CheckArgs,
    crawler: &Crawler,
    urls: &[String],
) -> Result<Vec<Fetched>, CliError> {
    fetch_robots(&crawler.user_agent, &crawler.tokens, args.timeout, urls)
}

/// The one message for a string that is neither a URL nor a path, in every mode and command.
pub fn not_a_url(text: &str) -> String {
    format!(
        "`{text}` is neither a URL (it has no `://`), nor a host and path (`example.com/search`), nor a path starting with `/`"
    )
}

/// Whether `text` is a URL without its scheme, as people type them: a host name (with a `.`,
/// or `localhost`), an IPv4 or a bracketed IPv6 address, an optional port, then optionally the
/// path (`example.com/search`, `localhost:8080/x?q`). Google's library reads such a string as
/// host, then path; a word alone (`help`) or `mailto:a@b.c` is not one.
pub fn is_scheme_less(text: &str) -> bool {
    if text.contains("://") || text.starts_with('/') {
        return false;
    }
    let authority = &text[..text.find(['/', '?', ';', '#']).unwrap_or(text.len())];
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !host.starts_with('[') || host.ends_with(']') => {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            host
        }
        _ => authority,
    };
    if let Some(address) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return address.parse::<std::net::Ipv6Addr>().is_ok();
    }
    let name_chars = host
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '_'));
    name_chars
        && !host.starts_with(['.', '-'])
        && (host.contains('.') || host.eq_ignore_ascii_case("localhost"))
}

/// A path alone (`/x`), not a network-path reference (`//host/x`).
fn is_path(text: &str) -> bool {
    text.starts_with('/') && !text.starts_with("//")
}

/// The URL a string names, for the commands that fetch: one message per cause, whatever the
/// command (a path is not enough to know where robots.txt is; a URL the parser refuses says
/// why).
pub fn url_to_fetch(text: &str) -> Result<Url, CliError> {
    if is_path(text) {
        return Err(CliError::Usage(format!(
            "`{text}` is a path: give a full URL (`https://example.com{text}`) so that its robots.txt can be fetched"
        )));
    }
    if is_scheme_less(text) {
        static ASSUMED: std::sync::Once = std::sync::Once::new();
        ASSUMED.call_once(|| {
            crate::say(format_args!(
                "note: `{text}` has no scheme; URLs without one are fetched over https:// (give http:// to fetch over http)"
            ))
        });
        return Url::parse(&format!("https://{text}"))
            .map_err(|e| CliError::Usage(format!("`{text}` is not a valid URL: {e}")));
    }
    match Url::parse(text) {
        Ok(url) => Ok(url),
        // (`mailto:a@b.c` parses: its own line says it has no robots.txt.)
        Err(_) if !text.contains("://") => Err(CliError::Usage(not_a_url(text))),
        Err(e) => Err(CliError::Usage(format!("`{text}` is not a valid URL: {e}"))),
    }
}

/// A URL with its origin's robots.txt, or why it has none to fetch (not http or https).
pub type Fetched = (Url, Result<Arc<CachedRobots>, OriginError>);

/// Each URL with its origin's robots.txt, fetched once per origin, all origins at once, each
/// within `timeout` seconds. A string that is not a URL is a usage error; a URL that is not
/// http(s) has no robots.txt, which its own line reports.
pub fn fetch_robots(
    user_agent: &str,
    tokens: &[String],
    timeout: f64,
    urls: &[String],
) -> Result<Vec<Fetched>, CliError> {
    let mut parsed = Vec::with_capacity(urls.len());
    for url in urls {
        let url_parsed = url_to_fetch(url)?;
        let origin = Origin::from_url(&url_parsed);
        parsed.push((url_parsed, origin));
    }
    // Through the gate, as `crawl` fetches it: every robots.txt request (each redirect hop too)
    // takes its place in its server's budget, and connects through the guarded resolver.
    let hooks = robots_tower::RobotsHooks::builder(user_agent)
        .tokens(tokens.iter().cloned())
        .fetch_timeout(Duration::from_secs_f64(timeout))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))?;
    let mut origins: Vec<&Origin> = parsed.iter().filter_map(|(_, o)| o.as_ref().ok()).collect();
    origins.sort();
    origins.dedup();
    let fetched: HashMap<Origin, Arc<CachedRobots>> = runtime.block_on(async {
        let lookups = origins
            .iter()
            .map(|&origin| async { (origin.clone(), hooks.robots(origin).await) });
        futures_util::future::join_all(lookups)
            .await
            .into_iter()
            // (Only a front end in schedule mode is refused a copy; these wait.)
            .filter_map(|(origin, robots)| Some((origin, robots.ok()?)))
            .collect()
    });
    Ok(parsed
        .into_iter()
        .filter_map(|(url, origin)| match origin {
            Ok(origin) => fetched.get(&origin).map(|entry| (url, Ok(entry.clone()))),
            Err(error) => Some((url, Err(error))),
        })
        .collect())
}

/// `allowed     <url>  (line 3: Allow: /a)`: the verdict first, readable at a glance.
fn text_line(url: &str, verdict: &Verdict<'_>, robots: Option<&RobotsJson>) -> String {
    let word = if verdict.allowed {
        "allowed"
    } else {
        "DISALLOWED"
    };
    let why = match (&verdict.rule, robots) {
        (Some(rule), _) => {
            let key = if rule.kind == RuleKind::Allow {
                "Allow"
            } else {
                "Disallow"
            };
            format!("line {}: {key}: {}", rule.line, rule.pattern_lossy())
        }
        (
            None,
            Some(RobotsJson {
                outcome: "unreachable",
                ..
            }),
        ) => "robots.txt unreachable: disallow all for now".into(),
        (
            None,
            Some(RobotsJson {
                outcome: "unavailable",
                ..
            }),
        ) => "no robots.txt: allow all".into(),
        (None, _) => "no rule matched".into(),
    };
    let source = match robots {
        Some(robots) => {
            let mut parts = vec![format!("robots.txt {}", robots.outcome)];
            if let Some(reason) = robots.reason.filter(|r| *r != "status") {
                parts.push(reason.replace('_', " "));
            }
            if let Some(status) = robots.status {
                parts.push(format!("HTTP {status}"));
            }
            if let Some(seconds) = robots.retry_after {
                parts.push(format!("Retry-After {seconds} s"));
            }
            if let Some(message) = &robots.message {
                parts.push(message.clone());
            }
            if let Some(url) = &robots.final_url {
                parts.push(format!("redirected to {url}"));
            }
            format!(" [{}]", parts.join(", "))
        }
        None => String::new(),
    };
    format!("{word:<10}  {url}  ({why}){source}")
}
