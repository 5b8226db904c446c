//! `wirebench compare`: the targets run side by side in interleaved rounds (as `run --runs`),
//! then each target's difference from the baseline per metric with its 95% CI and a verdict
//! (Welch's t-test, `summary::compare`), and the Flash study's latency-shape table.

use super::keep::Keep;
use crate::cli::CompareArgs;
use crate::error::UsageError;
use crate::store::Kind;
use crate::summary::compare::{self, Comparison, METHOD, SCHEMA};
use std::io::Write;
use std::process::ExitCode;

/// Runs per target unless `--runs` says otherwise: enough for Welch's test to see a few
/// percent on a quiet machine, few enough to stay short.
pub const DEFAULT_RUNS: usize = 5;

/// `wirebench compare`.
pub fn main(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let mut run = args.run.clone();
    run.runs = Some(run.runs.unwrap_or(DEFAULT_RUNS));
    let study = super::sweep::Study::of(&run)?;
    if study.targets.len() < 2 {
        return Err(UsageError::new(
            "compare needs two targets or more: wirebench compare a=tcp://HOST:PORT b=tcp://HOST:PORT",
        )
        .into());
    }
    if study.rounds - study.discard < 2 {
        return Err(UsageError::new(format!(
            "compare needs 2 kept runs per target or more for Welch's t-test, not {}: give e.g. --runs {}",
            study.rounds - study.discard,
            study.discard + DEFAULT_RUNS
        ))
        .into());
    }
    let names: Vec<&str> = study.targets.iter().map(|t| t.name.as_str()).collect();
    let baseline = match &args.baseline {
        None => 0,
        Some(b) => names.iter().position(|n| n == b).ok_or_else(|| {
            UsageError::new(format!(
                "--baseline {b} names no target: give one of {}",
                names.join(", ")
            ))
        })?,
    };
    let mut keep = Keep::prepare(&run.keep, Kind::Compare, run.quiet)?;
    let sweep = super::sweep::collect(&run, study)?;
    let points = labelled_points(&sweep);
    let comparison = Comparison {
        schema: SCHEMA,
        method: METHOD,
        baseline: sweep.targets[baseline].name.clone(),
        verdicts: compare::verdicts(&sweep, baseline, &points),
        shapes: compare::shapes(&sweep, &points),
        sweep,
    };
    let render = |out: &mut dyn Write| {
        crate::report::sweep::write(&comparison.sweep, out)?;
        crate::report::compare::write(&comparison, out)
    };
    let runs = super::sweep::kept(&comparison.sweep);
    let base = super::sweep::exit_code(&comparison.sweep);
    keep.finish(&comparison, &runs, base, run.json, &render)
}

/// Every point of the sweep with its values in words (`--size 1024`; empty without a sweep).
fn labelled_points(sweep: &crate::summary::sweep::Sweep) -> Vec<(Vec<usize>, String)> {
    let lens: Vec<usize> = sweep.axes.iter().map(|a| a.values.len()).collect();
    crate::load::sweep::matrix(&lens)
        .into_iter()
        .map(|at| {
            let words: Vec<String> = sweep
                .axes
                .iter()
                .zip(&at)
                .map(|(a, &i)| format!("{} {}", a.flag, a.values[i]))
                .collect();
            (at, words.join(", "))
        })
        .collect()
}
