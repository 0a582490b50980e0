//! `robots check`: verdicts for URLs against a local robots.txt.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use robots::core::{MAX_BODY_BYTES, MatchedRule, RobotsTxt, Verdict};
use serde::Serialize;

use crate::{CliError, Format, input, output};

#[derive(Args)]
pub struct CheckArgs {
    /// The robots.txt file, or `-` for stdin. Only its first 512,000 bytes are read.
    #[arg(long, value_name = "FILE|-")]
    robots: String,
    /// The crawler: a product token (`FooBot`) or a full User-Agent string.
    #[arg(long, value_name = "UA")]
    agent: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URLs to check; read from stdin, one per line, when none are given.
    #[arg(value_name = "URL", last = false)]
    urls: Vec<String>,
}

/// One line of `--format json`.
#[derive(Serialize)]
struct JsonVerdict<'a> {
    url: &'a str,
    allowed: bool,
    rule: Option<MatchedRule<'a>>,
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, CliError> {
    if args.robots == "-" && args.urls.is_empty() {
        return Err(CliError::Usage(
            "the robots.txt comes from stdin (--robots -), so give the URLs as arguments".into(),
        ));
    }
    let body = input::read_capped(&args.robots, MAX_BODY_BYTES)?;
    let urls = if args.urls.is_empty() {
        input::urls_from_stdin()?
    } else {
        args.urls.clone()
    };
    let robots = RobotsTxt::parse(&body);
    let matcher = robots.matcher(&args.agent);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut any_disallowed = false;
    for url in &urls {
        let verdict = matcher.check_url(url);
        any_disallowed |= !verdict.allowed;
        match args.format {
            Format::Json => output::json_line(
                &mut out,
                &JsonVerdict {
                    url,
                    allowed: verdict.allowed,
                    rule: verdict.rule,
                },
            )?,
            Format::Text => {
                writeln!(out, "{}", text_line(url, &verdict)).map_err(CliError::Write)?
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

/// `allowed     <url>  (line 3: Allow: /a)`: the verdict first, readable at a glance.
pub fn text_line(url: &str, verdict: &Verdict<'_>) -> String {
    let word = if verdict.allowed {
        "allowed"
    } else {
        "DISALLOWED"
    };
    let why = match &verdict.rule {
        Some(rule) => {
            let key = if rule.kind == robots::core::RuleKind::Allow {
                "Allow"
            } else {
                "Disallow"
            };
            format!("line {}: {key}: {}", rule.line, rule.pattern_lossy())
        }
        None => "no rule matched".into(),
    };
    format!("{word:<10}  {url}  ({why})")
}
