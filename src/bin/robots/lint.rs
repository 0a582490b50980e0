//! `robots lint`: diagnostics with line numbers.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use robots::core::{MAX_BODY_BYTES, lint};

use crate::{CliError, Format, input, output};

#[derive(Args)]
pub struct LintArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The robots.txt file, or `-` for stdin.
    #[arg(value_name = "FILE|-")]
    file: String,
}

pub fn run(args: &LintArgs) -> Result<ExitCode, CliError> {
    // One byte past the limit is enough to know the body is too large.
    let body = input::read_capped(&args.file, MAX_BODY_BYTES + 1)?;
    let diagnostics = lint(&body);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for d in &diagnostics {
        let written = match args.format {
            Format::Json => output::json_line(&mut out, d),
            Format::Text => writeln!(out, "{}:{}: {}: {}", args.file, d.line, d.kind, d.message)
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
    Ok(if diagnostics.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
