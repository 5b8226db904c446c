//! `wirebench export ID --format json|csv|md`: a stored run written out. JSON is the stored
//! document byte for byte (what `--json` printed), so a round trip loses nothing.

use super::keep;
use crate::cli::{ExportArgs, ExportFormat};
use crate::store::Kind;
use std::io::Write;
use std::process::ExitCode;

/// `wirebench export`.
pub fn main(a: &ExportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let store = keep::open_for_reading(a.db.db.as_deref())?;
    let (row, text) = store.get(&a.id).map_err(keep::usage_of)?;
    if a.format == ExportFormat::Json {
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    super::report::checked(&format!("stored document {}", a.id), &doc)?;
    let kind = Kind::of_name(&row.kind).unwrap_or(Kind::Result);
    match a.format {
        ExportFormat::Csv => crate::report::export::csv(kind, &doc, out)?,
        _ => crate::report::export::markdown(kind, &doc, out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
