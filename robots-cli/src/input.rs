//! Reading robots.txt files and URL lists from files or stdin.

use std::io::{BufRead, IsTerminal, Read};

use crate::CliError;

/// Reads at most `limit` bytes from a file, or from stdin for `-`.
pub fn read_capped(source: &str, limit: usize) -> Result<Vec<u8>, CliError> {
    let what = || {
        if source == "-" {
            "standard input".to_string()
        } else {
            source.to_string()
        }
    };
    let reader: Box<dyn Read> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(source).map_err(|source| CliError::Read {
                what: what(),
                source,
            })?,
        )
    };
    let mut body = Vec::new();
    reader
        .take(limit as u64)
        .read_to_end(&mut body)
        .map_err(|source| CliError::Read {
            what: what(),
            source,
        })?;
    Ok(body)
}

/// The URLs to work on: the arguments, or else stdin, one per line (blank lines skipped,
/// surrounding whitespace trimmed), each with the stdin line it came from (`None` for an
/// argument, which speaks for itself), for messages about one of them. On a terminal, says that
/// it is waiting for them; no URLs at all is a usage error, not a silent success.
pub fn numbered_urls(args: &[String]) -> Result<Vec<(Option<String>, String)>, CliError> {
    if !args.is_empty() {
        return Ok(args.iter().map(|url| (None, url.clone())).collect());
    }
    if std::io::stdin().is_terminal() {
        crate::say(format_args!(
            "reading URLs from stdin (one per line; Ctrl-D to end)"
        ));
    }
    let urls = urls_from_stdin()?;
    if urls.is_empty() {
        return Err(CliError::Usage(
            "no URLs given: pass them as arguments, or one per line on stdin".into(),
        ));
    }
    Ok(urls)
}

/// [`numbered_urls`] without those `problem` refuses: each refused string is said on stderr
/// with where it was given (`stdin line 3`), and the others are kept. How many were refused
/// comes with them (a command exits 2 at the end then).
pub fn usable_urls(
    args: &[String],
    problem: impl Fn(&str) -> Option<String>,
) -> Result<(Vec<String>, usize), CliError> {
    let mut refused = 0;
    let urls = numbered_urls(args)?
        .into_iter()
        .filter_map(|(at, url)| match problem(&url) {
            Some(problem) => {
                match at {
                    Some(at) => eprintln!("robots: {at}: {problem}"),
                    None => eprintln!("robots: {problem}"),
                }
                refused += 1;
                None
            }
            None => Some(url),
        })
        .collect();
    Ok((urls, refused))
}

/// A URL given, and where: `stdin line N`, or `None` for an argument.
pub type Numbered = (Option<String>, String);

/// The URLs to work on as they come, for a command that works while it reads (`crawl`): the
/// arguments, or else stdin read line by line on a thread of its own into `sink` (bounded: a
/// slow consumer holds the reading up, so stdin is never held whole). The first URL is read
/// before this returns, so that no URLs at all is a usage error at once; the rest are sent
/// from the thread, which ends at the end of stdin, at a read error (said on stderr), or when
/// the receiver is gone.
pub fn stream_urls(
    args: &[String],
    sink: tokio::sync::mpsc::Sender<Numbered>,
) -> Result<(), CliError> {
    if !args.is_empty() {
        let args = args.to_vec();
        std::thread::spawn(move || {
            for url in args {
                if sink.blocking_send((None, url)).is_err() {
                    break;
                }
            }
        });
        return Ok(());
    }
    if std::io::stdin().is_terminal() {
        crate::say(format_args!(
            "reading URLs from stdin (one per line; Ctrl-D to end)"
        ));
    }
    let mut numbered = 0usize;
    let first = next_stdin_url(&mut numbered)?.ok_or_else(|| {
        CliError::Usage("no URLs given: pass them as arguments, or one per line on stdin".into())
    })?;
    std::thread::spawn(move || {
        let mut next = Some(first);
        while let Some(url) = next {
            if sink.blocking_send(url).is_err() {
                return;
            }
            next = match next_stdin_url(&mut numbered) {
                Ok(url) => url,
                Err(error) => {
                    crate::say(format_args!("{error}"));
                    None
                }
            };
        }
    });
    Ok(())
}

/// The next non-blank line of stdin, trimmed, with its number (`numbered` counts the lines
/// read so far); `None` at the end.
fn next_stdin_url(numbered: &mut usize) -> Result<Option<Numbered>, CliError> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = std::io::stdin()
            .lock()
            .read_until(b'\n', &mut line)
            .map_err(|source| CliError::Read {
                what: "standard input".into(),
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        *numbered += 1;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if !text.is_empty() {
            return Ok(Some((
                Some(format!("stdin line {numbered}")),
                text.to_string(),
            )));
        }
    }
}

/// URLs from stdin, one per line with its number; blank lines are skipped and surrounding
/// whitespace trimmed.
fn urls_from_stdin() -> Result<Vec<(Option<String>, String)>, CliError> {
    let mut text = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut text)
        .map_err(|source| CliError::Read {
            what: "standard input".into(),
            source,
        })?;
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .enumerate()
        .map(|(n, line)| (n, line.trim()))
        .filter(|(_, line)| !line.is_empty())
        .map(|(n, line)| (Some(format!("stdin line {}", n + 1)), line.to_string()))
        .collect())
}
