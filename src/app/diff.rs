//! `wirebench diff OLD NEW`: two stored results, metric by metric, or two stored documents of
//! repeated runs (sweep, compare, study), point by point ([`crate::summary::diff`]); exit 3 when
//! one regressed beyond `--max-regression`.

use super::keep;
use crate::cli::DiffArgs;
use crate::error::UsageError;
use crate::store::headline::Typed;
use crate::store::{Kind, Store};
use crate::summary::diff::{self, Diff, RunsAt, METHOD, METHOD_RUNS, ONE_RUN, SCHEMA};
use crate::summary::sweep::Sweep;
use crate::summary::Summary;
use crate::units::format_us;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;

/// `wirebench diff`.
pub fn main(a: &DiffArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let bound = percent(&a.max_regression)?;
    let store = keep::open_for_reading(a.db.db.as_deref())?;
    let target = a.target.as_deref();
    let (old_id, old) = stored(&store, &a.old, target)?;
    let (new_id, new) = stored(&store, &a.new, target)?;
    let differs = match (&old, &new) {
        (Stored::Result(o), Stored::Result(n)) => diff::differences(o, n, true),
        (Stored::Runs(o), Stored::Runs(n)) => point_differences(o, n),
        _ => Vec::new(),
    };
    if !differs.is_empty() && !a.force {
        return Err(UsageError::new(format!(
            "{} and {} are runs of different tests ({}): diff judges one test over time; \
             pick the runs of one target with --target URL-PART (or a history of their own, \
             --db FILE), or compare anyway with --force",
            a.old,
            a.new,
            differs.join("; ")
        ))
        .into());
    }
    let d = match (old, new) {
        (Stored::Result(old), Stored::Result(new)) => {
            let changes = diff::changes(&old, &new, bound);
            Diff {
                schema: SCHEMA,
                method: METHOD,
                samples: "results",
                note: Some(ONE_RUN),
                regressed: changes.iter().any(|c| c.regressed),
                old: old_id,
                new: new_id,
                max_regression_percent: bound,
                changes,
                points: Vec::new(),
                unmatched: Vec::new(),
                differs,
            }
        }
        (Stored::Runs(old), Stored::Runs(new)) => {
            let (points, unmatched) = diff::point_changes(&old, &new, bound);
            if points.is_empty() {
                return Err(UsageError::new(format!(
                    "{} and {} share no point (target and swept values): diff compares the same targets and points; see them with `wirebench show`",
                    a.old, a.new
                ))
                .into());
            }
            Diff {
                schema: SCHEMA,
                method: METHOD_RUNS,
                samples: "runs",
                note: None,
                regressed: points.iter().flat_map(|p| &p.changes).any(|c| c.regressed),
                old: old_id,
                new: new_id,
                max_regression_percent: bound,
                changes: Vec::new(),
                points,
                unmatched,
                differs,
            }
        }
        _ => {
            return Err(UsageError::new(format!(
                "{} and {} are not alike: diff compares two results, or two documents of runs (sweep, compare, study); give two of a kind",
                a.old, a.new
            ))
            .into())
        }
    };
    if a.json {
        serde_json::to_writer_pretty(&mut *out, &d)?;
        writeln!(out)?;
    } else {
        write(&d, out)?;
    }
    out.flush()?;
    Ok(match d.regressed {
        true => {
            super::say_err(&format!("exit 3: {}", regressions(&d)));
            ExitCode::from(keep::EXIT_THRESHOLD)
        }
        false => ExitCode::SUCCESS,
    })
}

/// Why `diff` exits 3, in one line: what regressed beyond the bound, and by how much
/// (`regressed beyond 5%: p99_us +40.2%, ops_per_s -12.0%`).
fn regressions(d: &Diff) -> String {
    let one = |at: &str, c: &crate::summary::diff::Change| {
        format!("{at}{} {:+.1}%", c.metric, c.change_percent)
    };
    let mut all: Vec<String> = (d.changes.iter().filter(|c| c.regressed))
        .map(|c| one("", c))
        .collect();
    for p in &d.points {
        let at = match (p.target.is_empty(), p.at.is_empty()) {
            (_, true) => format!("{}: ", p.target),
            (true, false) => format!("{}: ", p.at),
            (false, false) => format!("{} {}: ", p.target, p.at),
        };
        all.extend(
            p.changes
                .iter()
                .filter(|c| c.regressed)
                .map(|c| one(&at, c)),
        );
    }
    let shown = all.len().min(4);
    let more = match all.len() - shown {
        0 => String::new(),
        n => format!(" and {n} more (see the table)"),
    };
    format!(
        "regressed beyond {}%: {}{more}",
        d.max_regression_percent,
        all[..shown].join(", ")
    )
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

/// A stored document as diff reads it.
enum Stored {
    /// One run.
    Result(Box<Summary>),
    /// Runs at points: a sweep, a compare, or a study holding one.
    Runs(Vec<RunsAt>),
}

/// What makes the points found in both documents another test (the target's URL aside: a
/// point is its name), `NAME at VALUES: what old vs new`.
fn point_differences(old: &[RunsAt], new: &[RunsAt]) -> Vec<String> {
    let mut out = Vec::new();
    for o in old {
        let Some(n) = new.iter().find(|n| n.target == o.target && n.at == o.at) else {
            continue;
        };
        let (Some(a), Some(b)) = (o.runs.first(), n.runs.first()) else {
            continue;
        };
        let at = match o.at.is_empty() {
            true => String::new(),
            false => format!(" at {}", o.at),
        };
        for d in diff::differences(a, b, false) {
            out.push(format!("{}{at}: {d}", o.target));
        }
    }
    out
}

/// The stored document `reference` names (`last~N` among `target`'s runs when given), read
/// back and checked; a peak is bad input.
fn stored(
    store: &Store,
    reference: &str,
    target: Option<&str>,
) -> anyhow::Result<(String, Stored)> {
    let (row, text) = store.get_of(reference, target).map_err(keep::usage_of)?;
    let id = crate::store::short(&row.id).to_string();
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| UsageError::new(format!("stored {reference} is not JSON ({e})")))?;
    super::report::checked(&format!("stored {} {reference}", row.kind), &doc)?;
    let kind = Kind::of_name(&row.kind).unwrap_or(Kind::Result);
    if kind == Kind::Result {
        return Ok((
            id,
            Stored::Result(Box::new(crate::app::show::summary(text)?)),
        ));
    }
    let sweep = match Typed::read(kind, &doc) {
        Typed::Result(r) => return Ok((id, Stored::Result(r))),
        Typed::Sweep(s) => *s,
        Typed::Compare(c) => c.sweep,
        Typed::Peak(_) => {
            return Err(UsageError::new(format!(
                "{reference} is a stored peak search: diff compares results or documents of runs; compare two peaks with `wirebench show` on each"
            ))
            .into())
        }
    };
    Ok((id, Stored::Runs(runs_at(sweep))))
}

/// The kept runs of a sweep, grouped by target and swept values, in order of first run.
fn runs_at(sweep: Sweep) -> Vec<RunsAt> {
    let mut out: Vec<RunsAt> = Vec::new();
    for p in sweep.points.into_iter().filter(|p| !p.discarded) {
        let at = (p.values.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        match out.iter_mut().find(|r| r.target == p.target && r.at == at) {
            Some(r) => r.runs.push(p.result),
            None => out.push(RunsAt {
                target: p.target,
                at,
                runs: vec![p.result],
            }),
        }
    }
    out
}

/// The diff as tables: metric, old, new, change, verdict (one table per point for runs).
fn write(d: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "wirebench diff {} → {} (regression bound {}%)",
        d.old, d.new, d.max_regression_percent
    )?;
    writeln!(out, "  method: {}", d.method)?;
    if let Some(note) = d.note {
        writeln!(out, "  note: {note}")?;
    }
    if !d.differs.is_empty() {
        writeln!(
            out,
            "  note: runs of different tests, compared anyway (--force): {}",
            d.differs.join("; ")
        )?;
    }
    if d.points.is_empty() {
        writeln!(out)?;
        table(&d.changes, out)?;
    }
    for p in &d.points {
        let at = match p.at.is_empty() {
            true => String::new(),
            false => format!(" at {}", p.at),
        };
        writeln!(
            out,
            "\n  {}{at}: {} runs old, {} new",
            p.target, p.runs[0], p.runs[1]
        )?;
        table(&p.changes, out)?;
    }
    for line in &d.unmatched {
        writeln!(out, "\n  {line} (not compared)")?;
    }
    let all = d
        .changes
        .iter()
        .chain(d.points.iter().flat_map(|p| &p.changes));
    let (mut improved, mut inconclusive) = (0, 0);
    for c in all {
        improved += usize::from(c.verdict == "improved");
        inconclusive += usize::from(c.verdict == "inconclusive");
    }
    let mut verdict = match d.regressed {
        true => "regressed".to_string(),
        false => "no regression beyond the bound".to_string(),
    };
    if improved > 0 {
        verdict += &format!("; {improved} metric(s) improved");
    }
    if inconclusive > 0 {
        verdict += &format!("; {inconclusive} inconclusive (beyond the bound, not significant)");
    }
    writeln!(out, "\n  {verdict}")
}

/// One set of metrics as a table.
fn table(changes: &[diff::Change], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "  {:<10} {:>12} {:>12} {:>9}  verdict",
        "metric", "old", "new", "change"
    )?;
    for c in changes {
        let show = |v: f64| match c.metric {
            "ops_per_s" => format!("{v:.0}/s"),
            _ => format_us(v),
        };
        let mark = if c.regressed { "REGRESSED: " } else { "" };
        let worth = match c.effective_samples {
            Some([o, n]) if c.welch.is_some() => format!(
                " ({}/{} s, worth {o:.1}/{n:.1} independent)",
                c.samples[0], c.samples[1]
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "  {:<10} {:>12} {:>12} {:>+8.1}%  {mark}{}{worth}",
            c.metric,
            show(c.old),
            show(c.new),
            c.change_percent,
            c.text
        )?;
    }
    Ok(())
}
