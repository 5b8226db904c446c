//! `wirebench merge ID|FILE.json …`: result documents, stored or in files, added into one
//! `wirebench.result/1` document ([`crate::summary::merge`]), printed as JSON. Shards of one
//! load (`run --shard`) are checked to be every rank once, of one plan
//! ([`crate::summary::shard`]), and the merge gets a `shards` section.

use super::keep;
use crate::cli::MergeArgs;
use crate::error::UsageError;
use crate::store::Store;
use crate::summary::{Summary, SCHEMA};
use serde::Deserialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `wirebench merge`.
pub fn main(a: &MergeArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let mut store: Option<Store> = None;
    let mut sources = Vec::with_capacity(a.inputs.len());
    for input in &a.inputs {
        // A path that exists is read as a file (a device or a pipe is refused there, with a
        // bound), never looked up in (and so never makes) the history.
        if Path::new(input).exists() || input.contains('/') || input.ends_with(".json") {
            sources.push(None);
            continue;
        }
        let s = match &mut store {
            Some(s) => s,
            None => store.insert(keep::open_for_reading(a.db.db.as_deref())?),
        };
        sources.push(Some(s.get(input).map_err(keep::usage_of)?.1));
    }
    let parts = read_all(&a.inputs, sources)?;
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
    crate::report::json::write(&merged, out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Every input read and checked, on every CPU (200 shard files of a minute are 50 MB of
/// JSON and 12,000 histograms): `sources[i]` is the stored text of `inputs[i]`, or `None`
/// for a file. The first input in order that fails is the error.
fn read_all(inputs: &[String], sources: Vec<Option<String>>) -> Result<Vec<Summary>, UsageError> {
    let todo: Vec<_> = inputs.iter().zip(sources).enumerate().collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let todo = std::sync::Mutex::new(todo.into_iter());
    let mut done: Vec<(usize, Result<Summary, UsageError>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(inputs.len()).max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let next = todo.lock().map(|mut t| t.next()).unwrap_or(None);
                        let Some((i, (input, stored))) = next else {
                            return mine;
                        };
                        mine.push((i, read_one(input, stored)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    if done.len() != inputs.len() {
        return Err(UsageError::new(
            "a thread reading the inputs stopped: merge them again",
        ));
    }
    done.into_iter().map(|(_, r)| r).collect()
}

/// The result `input` holds: its `stored` text, or its file's.
fn read_one(input: &str, stored: Option<String>) -> Result<Summary, UsageError> {
    let text =
        match stored {
            Some(text) => text,
            None => crate::sys::file::read_text(input, crate::sys::file::DOCUMENT_LIMIT).map_err(
                |e| UsageError::new(format!("{input}: {e}; give a result file or a stored id")),
            )?,
        };
    result(input, text)
}

/// The result document `text` (from `input`), checked to be `wirebench.result/1`.
pub(crate) fn result(input: &str, text: String) -> Result<Summary, UsageError> {
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        UsageError::new(format!(
            "{input} is not JSON ({e}): give a file written by `wirebench run --json`"
        ))
    })?;
    let head = crate::summary::study::Head::deserialize(&doc).unwrap_or_default();
    let schema = match head.schema.as_str() {
        "" => "no schema",
        s => s,
    };
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
    drop(text);
    serde_json::from_value(doc).map_err(|e| {
        UsageError::new(format!(
            "{input}: the stored result does not read back: {e}; give a result written by this wirebench"
        ))
    })
}
