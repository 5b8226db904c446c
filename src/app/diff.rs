//! `wirebench diff OLD NEW`: two stored results, metric by metric ([`crate::summary::diff`]);
//! exit 3 when one regressed beyond `--max-regression`.

use super::keep;
use crate::cli::DiffArgs;
use crate::error::UsageError;
use crate::store::Store;
use crate::summary::diff::{self, Diff, METHOD, SCHEMA};
use crate::summary::Summary;
use crate::units::format_us;
use std::io::Write;
use std::process::ExitCode;

/// `wirebench diff`.
pub fn main(a: &DiffArgs) -> anyhow::Result<ExitCode> {
    let bound = percent(&a.max_regression)?;
    let store = keep::open_for_reading(a.db.db.as_deref())?;
    let (old_id, old) = result(&store, &a.old)?;
    let (new_id, new) = result(&store, &a.new)?;
    let changes = diff::changes(&old, &new, bound);
    let d = Diff {
        schema: SCHEMA,
        method: METHOD,
        regressed: changes.iter().any(|c| c.regressed),
        old: old_id,
        new: new_id,
        max_regression_percent: bound,
        changes,
    };
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &d)?;
        writeln!(out)?;
    } else {
        write(&d, &mut out)?;
    }
    out.flush()?;
    Ok(match d.regressed {
        true => ExitCode::from(keep::EXIT_THRESHOLD),
        false => ExitCode::SUCCESS,
    })
}

/// `5%` or `5`: a percentage.
fn percent(text: &str) -> Result<f64, UsageError> {
    match text.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(UsageError::new(format!(
            "--max-regression '{text}' is not a percentage: give e.g. --max-regression 5%"
        ))),
    }
}

/// The stored result `reference` names, read back; another kind of document is bad input.
fn result(store: &Store, reference: &str) -> anyhow::Result<(String, Summary)> {
    let (row, text) = store.get(reference).map_err(keep::usage_of)?;
    if row.kind != "result" {
        return Err(UsageError::new(format!(
            "{reference} is a stored {} ({}): diff compares two single results (wirebench.result/1); export its runs with `wirebench export {} --format csv`",
            row.kind,
            row.schema,
            crate::store::short(&row.id)
        ))
        .into());
    }
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| UsageError::new(format!("stored result {reference} is not JSON ({e})")))?;
    super::report::checked(&format!("stored result {reference}"), &doc)?;
    let summary = crate::app::show::summary(text)?;
    Ok((crate::store::short(&row.id).to_string(), summary))
}

/// The diff as a table: metric, old, new, change, verdict.
fn write(d: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "wirebench diff {} → {} (regression bound {}%)",
        d.old, d.new, d.max_regression_percent
    )?;
    writeln!(out, "  method: {}\n", d.method)?;
    writeln!(
        out,
        "  {:<10} {:>12} {:>12} {:>9}  verdict",
        "metric", "old", "new", "change"
    )?;
    for c in &d.changes {
        let show = |v: f64| match c.metric {
            "ops_per_s" => format!("{v:.0}/s"),
            _ => format_us(v),
        };
        let mark = if c.regressed { "REGRESSED: " } else { "" };
        writeln!(
            out,
            "  {:<10} {:>12} {:>12} {:>+8.1}%  {mark}{}",
            c.metric,
            show(c.old),
            show(c.new),
            c.change_percent,
            c.text
        )?;
    }
    let verdict = if d.regressed {
        "regressed"
    } else {
        "no regression beyond the bound"
    };
    writeln!(out, "\n  {verdict}")
}
