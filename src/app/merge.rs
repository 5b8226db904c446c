//! `wirebench merge ID|FILE.json …`: result documents, stored or in files, added into one
//! `wirebench.result/1` document ([`crate::summary::merge`]), printed as JSON. Shards of one
//! load (`run --shard`) are checked to be every rank once, of one plan
//! ([`crate::summary::shard`]), and the merge gets a `shards` section.

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
    let sharded = parts.iter().any(|p| p.shard.is_some());
    let merged = match sharded {
        true if a.sequential => {
            return Err(UsageError::new(
                "shards of one load ran at the same time: drop --sequential",
            )
            .into())
        }
        true => crate::summary::shard::merge(&parts, &a.inputs).map_err(UsageError::new)?,
        false => crate::summary::merge::merge(&parts, a.sequential).map_err(UsageError::new)?,
    };
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
    // The seconds' histograms are checked as merge adds them (one pass, not two).
    crate::summary::check::document_adding_seconds(&doc).map_err(|e| {
        UsageError::new(format!(
            "{input} is damaged: {e}; give a document as wirebench wrote it"
        ))
    })?;
    crate::app::show::summary(text).map_err(|e| {
        UsageError::new(format!(
            "{input}: {e}; give a result written by this wirebench"
        ))
    })
}
