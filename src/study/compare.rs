//! A comparison: the targets run side by side in rounds (a sweep with `--runs`), in a random
//! order within each round (seeded), then each target's change from the baseline per metric,
//! paired by round, with its 95% CI and a verdict ([`crate::summary::compare`],
//! [`crate::summary::paired`]), and the Flash study's latency-shape table.

use super::sweep::{self, Points};
use super::{Document, Error, Watch};
use crate::engine::stop::Stop;
use crate::summary::auto_runs;
use crate::summary::compare::{self, Comparison, Thresholds, METHOD, SCHEMA};
use crate::summary::sweep::Sweep;

/// A comparison's design: its runs, which target is the baseline, and how changes are called.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Rounds {
    /// Every run, validated, the targets shuffled within each round.
    pub points: Points,
    /// Index of the baseline target.
    pub baseline: usize,
    /// With `--runs auto`: the precision, ± % of each ratio (the rounds' budget is the
    /// points' rounds).
    pub precision: Option<f64>,
    /// The changes too small to call (`--threshold`, `--tail-threshold`).
    pub thresholds: Thresholds,
}

/// Runs every run of the comparison, showing the comparison so far after each, then judges
/// each target against the baseline.
pub fn execute(r: &Rounds, stop: &Stop, watch: &mut dyn Watch) -> Result<Comparison, Error> {
    let (baseline, precision, discard) = (r.baseline, r.precision, r.points.discard);
    let thresholds = r.thresholds;
    let judge = |s: Sweep| judge(s, baseline, thresholds);
    let max_runs = r.points.rounds;
    let mut stopped_early = None;
    let on_point = &mut |w: &mut dyn Watch, s: Sweep| {
        w.so_far(&Document::Compare(Box::new(judge(s.clone()))));
        s
    };
    let done = &mut |s: &Sweep| {
        // After each whole round: with --runs auto, enough once every interval is narrow, or
        // once every interval still wide would need more rounds than the budget has.
        let Some(precision) = precision else {
            return false;
        };
        let kept = s.points.last().map_or(0, |p| p.run.saturating_sub(discard));
        let verdicts = judge(s.clone()).verdicts;
        let budget = max_runs.saturating_sub(discard);
        if auto_runs::out_of_reach(&verdicts, kept, precision, budget) {
            stopped_early = Some(kept + discard);
            return true;
        }
        auto_runs::enough(&verdicts, kept, precision)
    };
    let sweep = sweep::measure_until(&r.points, stop, watch, on_point, done).map_err(|e| {
        // The runs before the one that could not run are judged too.
        let measured = e.measured.map(|doc| match *doc {
            Document::Run(s) => Box::new(Document::Compare(Box::new(judge(s)))),
            other => Box::new(other),
        });
        Error {
            cause: e.cause,
            measured,
        }
    })?;
    let mut comparison = judge(sweep);
    comparison.auto = precision.map(|p| {
        let rounds = comparison.sweep.runs;
        auto_runs::conclude(&comparison.verdicts, p, max_runs, rounds, stopped_early)
    });
    Ok(comparison)
}

/// Judges each target of a measured `sweep` against the target at `baseline` (the
/// percentiles' bootstrap drawn from the sweep's seed, 0 without one), calling changes beyond
/// `thresholds`.
pub fn judge(mut sweep: Sweep, baseline: usize, thresholds: Thresholds) -> Comparison {
    let points = labelled_points(&sweep);
    let seed = sweep.seed.unwrap_or(0);
    let mut verdicts = compare::verdicts(&sweep, baseline, &points, seed, thresholds);
    // A busy machine is named in one line; a target whose runs met it otherwise than the
    // baseline's gets no verdict (issue 38).
    let busy = crate::summary::busy::compare_line(&sweep, baseline);
    if let Some((_, uneven)) = &busy {
        for v in &mut verdicts {
            if let Some((_, why)) = uneven.iter().find(|(name, _)| *name == v.target) {
                compare::withhold(v, why);
            }
        }
    }
    sweep.busy = busy.map(|(line, _)| line);
    Comparison {
        schema: SCHEMA.into(),
        method: METHOD.into(),
        baseline: sweep.targets[baseline].name.clone(),
        seed: sweep.seed,
        order: compare::order(&sweep, &points),
        verdicts,
        auto: None,
        shapes: compare::shapes(&sweep, &points),
        sweep,
    }
}

/// Every point of the sweep with its values in words (`--size 1024`; empty without a sweep).
fn labelled_points(sweep: &Sweep) -> Vec<(Vec<usize>, String)> {
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
