//! `robots lint`: diagnostics with line numbers and severities.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use robots_core::{Diagnostic, DiagnosticKind, MAX_BODY_BYTES, Severity, lint};
use serde::Serialize;

use crate::{CliError, Format, input, output};

#[derive(Args)]
pub struct LintArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Exit 1 on any finding, warnings and infos too (by default only errors fail).
    #[arg(long)]
    strict: bool,
    /// Do not report this kind (`non_google_key`…); repeatable.
    #[arg(long = "allow", value_name = "KIND", value_parser = kind)]
    allow: Vec<DiagnosticKind>,
    /// The robots.txt file, or `-` for stdin.
    #[arg(value_name = "FILE|-")]
    file: String,
}

fn kind(name: &str) -> Result<DiagnosticKind, String> {
    DiagnosticKind::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = DiagnosticKind::ALL.iter().map(|k| k.as_str()).collect();
        format!(
            "`{name}` is not a lint kind; the kinds are {}",
            names.join(", ")
        )
    })
}

/// One line of `--format json`.
#[derive(Serialize)]
struct Finding<'a> {
    line: u32,
    severity: Severity,
    kind: DiagnosticKind,
    message: &'a str,
    fix: &'static str,
}

pub fn run(args: &LintArgs) -> Result<ExitCode, CliError> {
    // One byte past the limit is enough to know the body is too large.
    let body = input::read_capped(&args.file, MAX_BODY_BYTES + 1)?;
    let diagnostics: Vec<Diagnostic> = lint(&body)
        .into_iter()
        .filter(|d| !args.allow.contains(&d.kind))
        .collect();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for d in &diagnostics {
        let written = match args.format {
            Format::Json => output::json_line(
                &mut out,
                &Finding {
                    line: d.line,
                    severity: d.severity(),
                    kind: d.kind,
                    message: &d.message,
                    fix: d.kind.fix(),
                },
            ),
            Format::Text => writeln!(
                out,
                "{}:{}: {}: {}: {} (fix: {})",
                args.file,
                d.line,
                d.severity(),
                d.kind,
                d.message,
                d.kind.fix()
            )
            .map_err(CliError::Write),
        };
        match written {
            // A closed pipe ends the output, not the verdict: the exit status stands.
            Err(CliError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => break,
            other => other?,
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(CliError::Write(e)),
        _ => {}
    }
    let fails = |d: &Diagnostic| args.strict || d.severity() == Severity::Error;
    Ok(if diagnostics.iter().any(fails) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
