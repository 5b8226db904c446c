//! `wirebench merge ID|FILE.json …`: result documents, stored or in files, added into one
//! `wirebench.result/1` document ([`crate::summary::merge`]), printed as JSON.

use super::keep;
use crate::cli::MergeArgs;
use crate::error::UsageError;
use crate::store::Store;
use crate::summary::{Summary, SCHEMA};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `wirebench merge`.
pub fn main(a: &MergeArgs) -> anyhow::Result<ExitCode> {
    let mut store: Option<Store> = None;
    let mut parts = Vec::with_capacity(a.inputs.len());
    for input in &a.inputs {
        let text = if Path::new(input).is_file() {
            crate::sys::file::read_text(input, crate::sys::file::DOCUMENT_LIMIT).map_err(|e| {
                UsageError::new(format!("{input}: {e}; give a result file or a stored id"))
            })?
        } else {
            let s = match &mut store {
                Some(s) => s,
                None => store.insert(keep::open_for_reading(a.db.db.as_deref())?),
            };
            s.get(input).map_err(keep::usage_of)?.1
        };
        parts.push(result(input, text)?);
    }
    let merged = crate::summary::merge::merge(&parts, a.sequential).map_err(UsageError::new)?;
    let mut out = std::io::stdout().lock();
    crate::report::json::write(&merged, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The result document `text` (from `input`), checked to be `wirebench.result/1`.
fn result(input: &str, text: String) -> Result<Summary, UsageError> {
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        UsageError::new(format!(
            "{input} is not JSON ({e}): give a file written by `wirebench run --json`"
        ))
    })?;
    let schema = doc["schema"].as_str().unwrap_or("no schema");
    if schema != SCHEMA {
        return Err(UsageError::new(format!(
            "{input} holds '{schema}', not {SCHEMA}: merge adds single results (a run's --json, or a stored result)"
        )));
    }
    super::report::checked(input, &doc)?;
    crate::app::show::summary(text).map_err(|e| {
        UsageError::new(format!(
            "{input}: {e}; give a result written by this wirebench"
        ))
    })
}
