//! `wirebench history`: the stored runs, newest first, as a table or JSON
//! (`wirebench.history/1`); read from the columns only, never the documents.

use super::keep;
use crate::cli::HistoryArgs;
use crate::error::UsageError;
use crate::store::{self, Filter, Row};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// The schema identifier of `wirebench history --json`.
pub const SCHEMA: &str = "wirebench.history/1";

/// `wirebench history --json`.
#[derive(Serialize)]
struct Listing<'a> {
    schema: &'static str,
    database: String,
    runs: &'a [Row],
}

/// `wirebench history`.
pub fn main(a: &HistoryArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let tags = keep::parse_tags(&a.tags)?;
    let since_unix_ms = match &a.since {
        None => None,
        Some(t) => Some(
            store::now_ms()
                .saturating_sub(i64::try_from(since(t)?.as_millis()).unwrap_or(i64::MAX)),
        ),
    };
    // No history file yet (the default one; a --db must exist): an empty list, no file made.
    let store = match a.db.db {
        Some(_) => Some(keep::open_for_reading(a.db.db.as_deref())?),
        None => keep::open_existing(None)?,
    };
    let filter = Filter {
        target: a.target.clone(),
        tags,
        since_unix_ms,
        limit: a.limit,
    };
    let rows = match &store {
        Some(s) => s.list(&filter).map_err(keep::usage_of)?,
        None => Vec::new(),
    };
    if a.json {
        let database = match &store {
            Some(s) => s.path().display().to_string(),
            None => keep::db_path(None)?.display().to_string(),
        };
        let listing = Listing {
            schema: SCHEMA,
            database,
            runs: &rows,
        };
        serde_json::to_writer_pretty(&mut *out, &listing)?;
        writeln!(out)?;
    } else {
        crate::report::history::write(&rows, out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `7d`, `12h`, `30m`: a duration with days too.
fn since(text: &str) -> Result<std::time::Duration, UsageError> {
    let t = text.trim();
    let parsed = match t.strip_suffix('d') {
        Some(days) => days
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|d| d.is_finite() && *d >= 0.0)
            .ok_or_else(|| String::from("not a number of days"))
            .and_then(|d| {
                // Any span longer than the clock's past reaches back to before the first run.
                std::time::Duration::try_from_secs_f64(d * 86_400.0)
                    .map_err(|_| String::from("more days than a clock holds"))
            }),
        None => crate::units::parse_duration(t).map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| {
        UsageError::new(format!(
            "--since '{text}': {e}; give how far back, e.g. --since 7d, 12h or 30m"
        ))
    })
}
