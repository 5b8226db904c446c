//! `wirebench show ID`: a stored run's report as `run` printed it (a single result's table
//! and its thresholds; for sweeps, comparisons, peak searches and studies, a line per run), or
//! with `--json` the stored document.

use super::keep;
use crate::cli::ShowArgs;
use crate::store::{Kind, Row};
use crate::summary::threshold::Checked;
use crate::summary::Summary;
use serde::Deserialize;
use std::io::Write;
use std::process::ExitCode;

/// `wirebench show`.
pub fn main(a: &ShowArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let store = keep::open_for_reading(a.db.db.as_deref())?;
    let (row, text) = store.get(&a.id).map_err(keep::usage_of)?;
    if a.json {
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    header(&row, out)?;
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    super::report::checked(&format!("stored document {}", a.id), &doc)?;
    let kind = Kind::of_name(&row.kind).unwrap_or(Kind::Result);
    if kind == Kind::Result {
        crate::report::table::write(&summary(text)?, out)?;
    } else {
        crate::report::export::markdown(kind, &doc, out)?;
    }
    let checks = Checks::deserialize(&doc).unwrap_or_default().thresholds;
    keep::write_checks(&checks, out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What any document holds after its figures: how it fared against `--fail-if` (none when
/// it was not given, or the document is older than the checks).
#[derive(Default, Deserialize)]
struct Checks {
    /// Each condition and how it fared.
    #[serde(default)]
    thresholds: Vec<Checked>,
}

/// A stored result document read back into the summary the table renders.
pub(crate) fn summary(text: String) -> anyhow::Result<Summary> {
    serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("the stored result does not read back: {e}"))
}

/// Which run this is, when, where, and how it was made.
fn header(r: &Row, out: &mut dyn Write) -> std::io::Result<()> {
    let stored = crate::sys::host::utc(r.stored_unix_ms.max(0) as u64 / 1000);
    writeln!(
        out,
        "{} {} ({}), stored {stored} on {}, wirebench {}",
        r.kind,
        crate::store::short(&r.id),
        r.status,
        r.host,
        r.version
    )?;
    writeln!(out, "  command: {}", r.command)?;
    if !r.tags.is_empty() {
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(out, "  tags: {}", tags.join(" "))?;
    }
    writeln!(out)
}
