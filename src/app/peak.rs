//! `wirebench peak`: the highest rate a target sustains within its objectives. Each step is the
//! user's run with `--rate` set by [`crate::load::search`] (the parsed arguments cloned, the
//! rate changed, validated into a plan and measured like `wirebench run`); a step passes when
//! every `--slo` holds and the target kept up with the offered rate.

use super::keep::Keep;
use crate::cli::PeakArgs;
use crate::error::{usage, usage_of, UsageError};
use crate::load::search::Search;
use crate::plan::{duration_flag, Plan};
use crate::store::Kind;
use crate::study::peak::{step_args, Bounds, FLOOR, TOLERANCE};
use crate::study::{Design, Document};
use crate::summary::peak::PeakSearch;
use crate::summary::slo::Slo;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// `wirebench peak`. The steps are saved after each one (a partial search until the end);
/// a target that could not be reached ends the search with its step recorded.
pub fn main(args: &PeakArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    super::shard::refuse(&args.run.shard, "peak")?;
    let bounds = setup(args)?;
    let show = !args.run.quiet && !args.run.json;
    let mut keep = Keep::prepare(&args.run.keep, Kind::Peak, args.run.quiet)?;
    crate::app::signals::stop_on_ctrl_c()?;
    let done = {
        let mut save = |d: &Document| keep.progress(d);
        let mut live = super::watch::Live::new(None, show, &mut save);
        let design = Design::Peak(Box::new(bounds));
        crate::study::execute(&design, crate::app::signals::process(), &mut live)
    };
    let (study, failed) = match super::sweep::measured(done)? {
        (Document::Peak(p), failed) => (*p, failed),
        _ => anyhow::bail!(
            "a peak search's study ended in another document: a bug, please report it"
        ),
    };
    keep.mark_partial(study.stopped.is_some() && !crate::app::signals::requested());
    let runs = at_peak(&study);
    let render = |out: &mut dyn Write| crate::report::peak::write(&study, out);
    let code = keep.finish(
        &study,
        &runs,
        exit_code(&study),
        args.run.json,
        &render,
        out,
    )?;
    match failed {
        Some(e) => Err(e.context(format!(
            "the peak search stopped after {} step(s) (those are reported above and saved)",
            study.steps.len()
        ))),
        None => {
            if code == ExitCode::from(super::EXIT_FAILED) && !crate::app::signals::requested() {
                super::run::say_failure(failure(&study));
            }
            Ok(code)
        }
    }
}

/// Why [`exit_code`] is 1: the search's conclusion, which says why no peak was confirmed.
pub fn failure(study: &PeakSearch) -> Option<String> {
    match study.peak.as_ref().is_some_and(|p| p.confirmed) {
        true => None,
        false => Some(format!("no peak confirmed: {}", study.conclusion)),
    }
}

/// What thresholds read of a search: the measurements at the peak, its passed confirmation
/// runs.
pub fn at_peak(study: &PeakSearch) -> Vec<&crate::summary::Summary> {
    study
        .steps
        .iter()
        .filter(|s| s.confirmation && s.passed)
        .map(|s| &s.result)
        .collect()
}

/// 0 when a peak was found and confirmed, else 1.
pub fn exit_code(study: &PeakSearch) -> ExitCode {
    match study.peak.as_ref().is_some_and(|p| p.confirmed) {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(super::EXIT_FAILED),
    }
}

/// Checks the peak flags and the run they repeat: the search's design.
pub fn setup(args: &PeakArgs) -> Result<Bounds, UsageError> {
    let r = &args.run;
    if r.urls.len() != 1 {
        return usage(
            "peak searches one target: give one URL (compare targets with `wirebench compare`)",
        );
    }
    if r.load.rate.is_some() || r.load.stages.is_some() || r.load.bandwidth.is_some() {
        return usage_of(&["--rate", "--stages", "--bandwidth", "--start-rate"], "peak sets the rate of each step itself: leave out --rate, --stages and --bandwidth (use --start-rate)");
    }
    if r.think.is_some() {
        // Open-loop steps send on a timetable: a pause after each reply would change nothing
        // but the number of connections needed, so it is refused rather than ignored.
        return usage_of(&["--think"], "peak offers open-loop rates, where --think has no effect: leave it out, or find the knee of a thinking client population with a sweep, e.g. wirebench run URL -c 1,2,4..64 --think 10ms");
    }
    if r.duration.is_some() || r.requests.is_some() {
        return usage_of(
            &["--step"],
            "each peak step lasts --step: leave out -d and -n, e.g. --step 5s",
        );
    }
    let slos = args
        .slo
        .iter()
        .map(|t| Slo::parse(t).map_err(|e| UsageError::flag("--slo", e)))
        .collect::<Result<Vec<_>, _>>()?;
    let step = duration_flag("--step", &args.step)?;
    if step < Duration::from_millis(100) {
        return usage_of(
            &["--step"],
            "--step is shorter than 100ms: give each step time to show a queue, e.g. --step 5s",
        );
    }
    let rest = duration_flag("--rest", &args.rest)?;
    let (start, ceiling) = (
        rate("--start-rate", &args.start_rate)?,
        rate("--ceiling", &args.ceiling)?,
    );
    // The first step's plan: every other flag is checked here, before anything is sent.
    Plan::try_from(&step_args(r, start, step))?;
    let sharded = (args.run.fleet.shards)
        .map(|n| super::peak_shards::fleet(args, n))
        .transpose()?;
    Ok(Bounds {
        run: args.run.clone(),
        slos,
        step,
        rest,
        search: Search {
            start,
            tolerance: TOLERANCE,
            ceiling,
            floor: FLOOR,
        },
        sharded,
    })
}

/// A rate flag (`--start-rate`, `--ceiling`): requests per second, at least [`FLOOR`].
fn rate(flag: &'static str, t: &str) -> Result<f64, UsageError> {
    match t.trim().trim_end_matches("/s").parse::<f64>() {
        Ok(v) if v >= FLOOR && v.is_finite() => Ok(v),
        _ => usage_of(
            &[flag],
            format!("{flag} '{t}': give requests per second, at least 1, e.g. {flag} 1000"),
        ),
    }
}
