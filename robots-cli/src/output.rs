//! JSON lines in the documented layout: `{"key": value, "key": value}` (a space after each
//! separator), one object per line.

use std::io::{self, Write};

use serde::Serialize;

use crate::CliError;

/// serde_json's compact output with `", "` and `": "` between items.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
}

/// Writes one value as a JSON line.
pub fn json_line<W: Write, T: Serialize>(out: &mut W, value: &T) -> Result<(), CliError> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Spaced);
    value
        .serialize(&mut ser)
        .map_err(|e| CliError::Write(io::Error::other(e)))?;
    out.write_all(b"\n").map_err(CliError::Write)
}

/// Where a one-shot command's rules came from, in its own words: what happened, without the
/// cache's timings ("retried in 1 min" means nothing to a process that exits now).
pub fn once(source: &robots_fetch::Source) -> String {
    use robots_fetch::Source;
    match source {
        Source::Parsed {
            status,
            redirected_to: Some(url),
            ..
        } => format!("robots.txt read, HTTP {status}, redirected to {url}"),
        Source::Parsed {
            status,
            not_modified: true,
            ..
        } => format!("robots.txt read, HTTP {status}, confirmed unchanged by a 304"),
        Source::Parsed { status, .. } => format!("robots.txt read, HTTP {status}"),
        Source::Inserted { .. } => "robots.txt given".to_string(),
        Source::Unavailable { status, .. } => format!("no robots.txt, HTTP {status}: allow all"),
        Source::Stale { cause, status, .. } => {
            format!("unreachable: {cause}; its last good copy (HTTP {status}) used")
        }
        Source::Unreachable { cause, .. } => format!("unreachable: {cause}"),
    }
}
