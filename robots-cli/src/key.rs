//! `robots key`: the crawler's Web Bot Auth keys. `generate` writes a new Ed25519 private key
//! (PKCS#8 PEM, mode 0600) and prints its keyid; `directory` prints the key directory of keys'
//! public halves; `verify` checks the signature of a captured request against a directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use robots_fetch::{KeyDirectory, SigningKey, verify_request};

use crate::{CliError, Format, output};

#[derive(Args)]
pub struct KeyArgs {
    #[command(subcommand)]
    command: KeyCommand,
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Write a new Ed25519 private key (PKCS#8 PEM, readable by its owner only) and print its
    /// keyid. An existing file is not overwritten.
    Generate {
        /// Where to write the key.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Print the key directory (JSON) of these keys' public halves, to be served at
    /// /.well-known/http-message-signatures-directory. Several keys: the current one and those
    /// being rotated in or out.
    Directory {
        /// Private key files (PKCS#8 PEM or JWK).
        #[arg(value_name = "FILE", required = true)]
        keys: Vec<PathBuf>,
    },
    /// Check the Web Bot Auth signature of a captured request (its head as sent: the request
    /// line and the headers) against a key directory.
    Verify {
        /// The key directory (JSON, as `robots key directory` prints it).
        #[arg(long, value_name = "FILE")]
        directory: PathBuf,
        /// The scheme the request was sent with, when its request line names a path only.
        #[arg(long, value_name = "SCHEME", default_value = "https", value_parser = ["http", "https"])]
        scheme: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The captured request; standard input when absent or `-`.
        #[arg(value_name = "REQUEST")]
        request: Option<PathBuf>,
    },
}

pub fn run(args: &KeyArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        KeyCommand::Generate { out } => generate(out),
        KeyCommand::Directory { keys } => directory(keys),
        KeyCommand::Verify {
            directory,
            scheme,
            format,
            request,
        } => verify(directory, scheme, *format, request.as_deref()),
    }
}

fn generate(out: &Path) -> Result<ExitCode, CliError> {
    let key = SigningKey::generate().map_err(|e| CliError::Usage(e.to_string()))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(out)
        .and_then(|mut file| file.write_all(key.to_pkcs8_pem().as_bytes()));
    if let Err(source) = written {
        return Err(CliError::Usage(format!(
            "cannot write the key to {}: {source}",
            out.display()
        )));
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", key.keyid()).map_err(CliError::Write)?;
    Ok(ExitCode::SUCCESS)
}

fn read_key(path: &Path) -> Result<SigningKey, CliError> {
    SigningKey::from_file(path).map_err(|e| CliError::Usage(e.to_string()))
}

fn directory(paths: &[PathBuf]) -> Result<ExitCode, CliError> {
    let keys = paths
        .iter()
        .map(|path| read_key(path))
        .collect::<Result<Vec<_>, _>>()?;
    let directory = KeyDirectory::of(keys.iter().map(SigningKey::public_key));
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", directory.to_json()).map_err(CliError::Write)?;
    Ok(ExitCode::SUCCESS)
}

fn verify(
    directory: &Path,
    scheme: &str,
    format: Format,
    request: Option<&Path>,
) -> Result<ExitCode, CliError> {
    let text = std::fs::read_to_string(directory).map_err(|source| CliError::Read {
        what: directory.display().to_string(),
        source,
    })?;
    let keys = KeyDirectory::from_json(&text)
        .map_err(|e| CliError::Usage(format!("{}: {e}", directory.display())))?;
    let (what, head) = match request {
        None => ("standard input".to_string(), read_stdin()?),
        Some(path) if path == Path::new("-") => ("standard input".to_string(), read_stdin()?),
        Some(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|source| CliError::Read {
                what: path.display().to_string(),
                source,
            })?,
        ),
    };
    let (method, uri, headers) =
        captured(&head, scheme).map_err(|e| CliError::Usage(format!("{what}: {e}")))?;
    let result = verify_request(&method, &uri, &headers, &keys, std::time::SystemTime::now());
    let mut stdout = std::io::stdout().lock();
    match format {
        Format::Json => {
            let value = match &result {
                Ok(v) => serde_json::json!({
                    "valid": true,
                    "keyid": v.keyid,
                    "signature_agent": v.signature_agent,
                    "components": v.components,
                    "created": v.created,
                    "expires": v.expires,
                }),
                Err(e) => serde_json::json!({"valid": false, "error": e.to_string()}),
            };
            output::json_line(&mut stdout, &value)?;
        }
        Format::Text => {
            let line = match &result {
                Ok(v) => format!(
                    "valid: key {}{}, covering {}",
                    v.keyid,
                    v.signature_agent
                        .as_deref()
                        .map(|a| format!(" of {a}"))
                        .unwrap_or_default(),
                    v.components.join(" ")
                ),
                Err(e) => format!("invalid: {e}"),
            };
            writeln!(stdout, "{line}").map_err(CliError::Write)?;
        }
    }
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn read_stdin() -> Result<String, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|source| CliError::Read {
            what: "standard input".into(),
            source,
        })?;
    Ok(text)
}

/// A request head as captured: `GET /path HTTP/1.1`, then `Name: value` lines up to a blank
/// line (a body after it is ignored).
fn captured(
    head: &str,
    scheme: &str,
) -> Result<(http::Method, http::Uri, http::HeaderMap), String> {
    let mut lines = head.lines();
    let request_line = lines.next().ok_or("empty: no request line")?;
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(format!("line 1: `{request_line}` is not a request line"));
    };
    let method = http::Method::from_bytes(method.as_bytes())
        .map_err(|_| format!("line 1: `{method}` is not a method"))?;
    let mut headers = http::HeaderMap::new();
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("line {}: `{line}` is not a header", n + 2))?;
        let name = http::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("line {}: `{name}` is not a header name", n + 2))?;
        let value = http::HeaderValue::from_str(value.trim())
            .map_err(|_| format!("line {}: the value of {name} is not a header value", n + 2))?;
        headers.append(name, value);
    }
    let uri = if target.starts_with('/') {
        let host = headers
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .ok_or("the request names a path and no Host header")?;
        format!("{scheme}://{host}{target}")
    } else {
        target.to_string()
    };
    let uri = uri
        .parse::<http::Uri>()
        .map_err(|e| format!("`{uri}` is not a request URI: {e}"))?;
    Ok((method, uri, headers))
}
