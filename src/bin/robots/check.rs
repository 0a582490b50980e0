//! `robots check`: verdicts for URLs, against a local robots.txt (`--robots`) or each URL's own
//! robots.txt fetched over the network (once per origin per run).

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use robots::core::{MAX_BODY_BYTES, MatchedRule, RobotsTxt, RuleKind, Verdict};
use robots_fetch::{CachedRobots, Origin, RobotsCache};
use serde::Serialize;
use url::Url;

use crate::{CliError, Format, input, output};

#[derive(Args)]
pub struct CheckArgs {
    /// The robots.txt file, or `-` for stdin. Only its first 512,000 bytes are read. Without it,
    /// each URL's robots.txt is fetched from its origin.
    #[arg(long, value_name = "FILE|-")]
    robots: Option<String>,
    /// The crawler: a product token (`FooBot`) or a full User-Agent string (also sent when
    /// fetching robots.txt).
    #[arg(long, value_name = "UA")]
    agent: String,
    /// When fetching: seconds a robots.txt fetch may take, redirects and body included.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout)]
    timeout: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URLs to check; read from stdin, one per line, when none are given.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
}

fn parse_timeout(text: &str) -> Result<f64, String> {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    robots: Option<RobotsJson>,
}

/// Where the rules came from, in network mode.
#[derive(Serialize)]
struct RobotsJson {
    outcome: &'static str,
    status: Option<u16>,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, CliError> {
    if args.robots.as_deref() == Some("-") && args.urls.is_empty() {
        return Err(CliError::Usage(
            "the robots.txt comes from stdin (--robots -), so give the URLs as arguments".into(),
        ));
    }
    let body = args
        .robots
        .as_deref()
        .map(|source| input::read_capped(source, MAX_BODY_BYTES))
        .transpose()?;
    let urls = if args.urls.is_empty() {
        input::urls_from_stdin()?
    } else {
        args.urls.clone()
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_disallowed = false;
    let mut emit =
        |url: &str, verdict: &Verdict<'_>, robots: Option<&CachedRobots>| -> Result<(), CliError> {
            any_disallowed |= !verdict.allowed;
            let robots = robots.map(|entry| RobotsJson {
                outcome: entry.source().outcome(),
                status: entry.source().status(),
            });
            match args.format {
                Format::Json => output::json_line(
                    &mut out,
                    &JsonVerdict {
                        url,
                        allowed: verdict.allowed,
                        rule: verdict.rule,
                        robots,
                    },
                ),
                Format::Text => writeln!(out, "{}", text_line(url, verdict, robots.as_ref()))
                    .map_err(CliError::Write),
            }
        };
    match body {
        Some(body) => {
            let robots = RobotsTxt::parse(&body);
            let matcher = robots.matcher(&args.agent);
            for url in &urls {
                emit(url, &matcher.check_url(url), None)?;
            }
        }
        None => {
            let entries = fetch_all(args, &urls)?;
            for (url, parsed) in urls.iter().zip(&entries) {
                let (parsed_url, entry) = parsed;
                emit(url, &entry.check(parsed_url), Some(entry))?;
            }
        }
    }
    out.flush().map_err(CliError::Write)?;
    Ok(if any_disallowed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Fetches every origin's robots.txt once, all origins at once, and pairs each URL with its entry.
fn fetch_all(args: &CheckArgs, urls: &[String]) -> Result<Vec<(Url, Arc<CachedRobots>)>, CliError> {
    let mut parsed = Vec::with_capacity(urls.len());
    for url in urls {
        let url_parsed = Url::parse(url)
            .map_err(|e| CliError::Usage(format!("`{url}` is not an absolute URL: {e}")))?;
        let origin = Origin::of(&url_parsed).map_err(|e| CliError::Usage(e.to_string()))?;
        parsed.push((url_parsed, origin));
    }
    let cache = RobotsCache::builder(&args.agent)
        .timeout(Duration::from_secs_f64(args.timeout))
        .build();
    let client = robots_fetch::reqwest_client(cache.fetch_config())
        .map_err(|e| CliError::Usage(format!("cannot set up HTTP: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))?;
    let mut origins: Vec<Origin> = parsed.iter().map(|(_, o)| o.clone()).collect();
    origins.sort();
    origins.dedup();
    let fetched: HashMap<Origin, Arc<CachedRobots>> = runtime.block_on(async {
        let lookups = origins
            .iter()
            .map(|origin| async { (origin.clone(), cache.get(&client, origin).await) });
        futures_util::future::join_all(lookups)
            .await
            .into_iter()
            .collect()
    });
    Ok(parsed
        .into_iter()
        .filter_map(|(url, origin)| fetched.get(&origin).map(|entry| (url, entry.clone())))
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
        Some(RobotsJson {
            outcome,
            status: Some(status),
        }) => format!(" [robots.txt {outcome}, HTTP {status}]"),
        Some(RobotsJson {
            outcome,
            status: None,
        }) => format!(" [robots.txt {outcome}]"),
        None => String::new(),
    };
    format!("{word:<10}  {url}  ({why}){source}")
}
