//! The JSON reporter: the summary as pretty-printed JSON, schema `wirebench.result/1`.
//!
//! The shape is [`Summary`]'s, field for field; `schema/result.v1.json` documents it and the
//! `schema` test validates real output against it.

use crate::summary::Summary;
use std::io::{self, Write};

/// Writes `summary` as pretty-printed JSON followed by a newline.
pub fn write(summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, summary)?;
    writeln!(out)?;
    out.flush()
}
