//! `wirebench compare`: the targets run side by side in rounds (as `run --runs`), in a random
//! order within each round (seeded), then each target's change from the baseline per metric,
//! paired by round, with its 95% CI and a verdict (`summary::compare`, `summary::paired`), and
//! the Flash study's latency-shape table.

use super::keep::Keep;
use super::shards;
use crate::cli::{CompareArgs, RunArgs, Runs};
use crate::error::UsageError;
use crate::store::Kind;
use crate::study::compare::Rounds;
use crate::study::{Design, Document};
use crate::summary::compare::{Comparison, Thresholds};
use std::io::Write;
use std::process::ExitCode;

/// Runs per target unless `--runs` says otherwise: enough for the paired interval to see a
/// few percent on a quiet machine, few enough to stay short.
pub const DEFAULT_RUNS: usize = 5;

/// A comparison checked and ready to run: its design, and the run flags it was made of.
pub struct Prepared {
    /// The run flags, `--runs` defaulted.
    pub run: RunArgs,
    /// Its runs, baseline and thresholds.
    pub rounds: Rounds,
}

/// `--runs auto`'s budget unless `--max-runs` says otherwise.
pub const DEFAULT_MAX_RUNS: usize = 20;

/// `--runs auto`'s precision unless `--precision` says otherwise, ± % of each ratio.
pub const DEFAULT_PRECISION: f64 = 5.0;

/// `--runs`, `--precision` and `--max-runs` checked: the rounds to run (at most), and the
/// precision with `--runs auto`.
fn rounds(args: &CompareArgs) -> Result<(usize, Option<f64>), UsageError> {
    let auto = args.run.runs == Some(Runs::Auto);
    if !auto && (args.precision.is_some() || args.max_runs.is_some()) {
        return Err(UsageError::flags(&["--precision", "--max-runs", "--runs"], 
            "--precision and --max-runs go with --runs auto: give e.g. --runs auto --precision 5% --max-runs 20",
        ));
    }
    match args.run.runs {
        None => Ok((DEFAULT_RUNS, None)),
        Some(Runs::Count(n)) => Ok((n, None)),
        Some(Runs::Auto) => {
            let text = args.precision.as_deref().unwrap_or("5%");
            let p = text.trim().trim_end_matches('%').trim().parse::<f64>();
            match p {
                Ok(p) if p > 0.0 && p.is_finite() => {
                    Ok((args.max_runs.unwrap_or(DEFAULT_MAX_RUNS), Some(p)))
                }
                _ => Err(UsageError::flags(
                    &["--precision"],
                    format!(
                        "--precision {text} is not a percentage above 0: give e.g. --precision 5%"
                    ),
                )),
            }
        }
    }
}

/// `--threshold` and `--tail-threshold` checked, defaults filled in.
fn thresholds(args: &CompareArgs) -> Result<Thresholds, UsageError> {
    let pct = |flag: &str, text: &Option<String>, default: f64| {
        match text {
        None => Ok(default),
        Some(t) => match t.trim().trim_end_matches('%').trim().parse::<f64>() {
            Ok(p) if (0.0..100.0).contains(&p) => Ok(p),
            _ => Err(UsageError::new(format!(
                "{flag} {t} is not a percentage from 0 to 100: give e.g. {flag} 3% (0 calls every change the CI shows)"
            ))),
        },
    }
    };
    let d = Thresholds::default();
    Ok(Thresholds {
        center_pct: pct("--threshold", &args.threshold, d.center_pct)?,
        tail_pct: pct("--tail-threshold", &args.tail_threshold, d.tail_pct)?,
    })
}

/// `wirebench compare`, its report written to `out`.
pub fn main(args: &CompareArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    main_as(args, "compare", out)
}

/// A comparison whose report's header names `command`, the one typed: compare, or study for
/// a plan file that stands for a comparison. Saved after each run (partial until the last);
/// when a target could not be reached, the runs so far are judged, printed and saved as
/// partial, and the command fails (exit 1).
pub fn main_as(args: &CompareArgs, command: &str, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    super::shard::refuse(&args.run.shard, command)?;
    let prepared = prepare(args)?;
    super::sweep::confirm(&prepared.rounds.points, args.run.yes)?;
    let (json, quiet) = (prepared.run.json, prepared.run.quiet);
    let mut keep = Keep::prepare(&prepared.run.keep, Kind::Compare, quiet)?;
    crate::app::signals::stop_on_ctrl_c()?;
    let total = prepared.rounds.points.runs.len();
    let done = {
        let mut save = |d: &Document| keep.progress(d);
        let mut live = super::watch::Live::new(Some(total), !quiet && !json, &mut save);
        let design = Design::Compare(prepared.rounds);
        crate::study::execute(&design, crate::app::signals::process(), &mut live)
    };
    let (comparison, failed) = match super::sweep::measured(done)? {
        (Document::Compare(c), failed) => (*c, failed),
        _ => {
            anyhow::bail!("a comparison's study ended in another document: a bug, please report it")
        }
    };
    let interrupted = crate::app::signals::requested();
    keep.mark_partial(comparison.sweep.stopped.is_some() && !interrupted);
    let render = |out: &mut dyn Write| {
        crate::report::sweep::write_as(&comparison.sweep, command, out)?;
        crate::report::compare::write(&comparison, out)
    };
    let runs = super::sweep::kept(&comparison.sweep);
    let base = super::sweep::exit_code(&comparison.sweep);
    keep.name_points(super::sweep::kept_points(&comparison.sweep));
    let code = keep.finish(&comparison, &runs, base, json, &render, out)?;
    super::sweep::ended(&comparison.sweep, total_runs(&comparison), code, failed)
}

/// How many runs the comparison was to make.
fn total_runs(c: &Comparison) -> usize {
    let points: usize = c.sweep.axes.iter().map(|a| a.values.len()).product();
    points * c.sweep.targets.len() * c.sweep.runs
}

/// Checks the comparison's flags and expands its runs; nothing is measured.
pub fn prepare(args: &CompareArgs) -> Result<Prepared, UsageError> {
    let (runs, precision) = rounds(args)?;
    let thresholds = thresholds(args)?;
    let mut run = args.run.clone();
    run.runs = Some(Runs::Count(runs));
    // One seed for the order and for every run's draws, so that each target gets the same keys.
    let seed = args.run.seed.unwrap_or_else(clock_seed);
    run.seed = Some(seed);
    let mut batch = super::sweep::batch(&run)?;
    if batch.targets.len() < 2 {
        return Err(UsageError::new(
            "compare needs two targets or more: wirebench compare a=tcp://HOST:PORT b=tcp://HOST:PORT",
        ));
    }
    if batch.rounds - batch.discard < 2 {
        return Err(UsageError::flags(&["--runs"], format!(
            "compare needs 2 kept runs per target or more for a paired interval, not {}: give e.g. --runs {}",
            batch.rounds - batch.discard,
            batch.discard + DEFAULT_RUNS
        )));
    }
    let names: Vec<&str> = batch.targets.iter().map(|t| t.name.as_str()).collect();
    let baseline = match &args.baseline {
        None => 0,
        Some(b) => names.iter().position(|n| n == b).ok_or_else(|| {
            UsageError::flags(
                &["--baseline"],
                format!(
                    "--baseline {b} names no target: give one of {}",
                    names.join(", ")
                ),
            )
        })?,
    };
    batch.shuffle(seed);
    batch.sharded = shards::sharded(&args.run.fleet, &batch, Some(seed))?;
    Ok(Prepared {
        run,
        rounds: Rounds {
            points: batch,
            baseline,
            precision,
            thresholds,
        },
    })
}

/// A seed when none is given: the clock's nanoseconds, below 2³² so that it is short to
/// type back and exact in any JSON reader.
fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0, |d| d.as_nanos() as u64 & 0xFFFF_FFFF)
}
