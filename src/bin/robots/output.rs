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
