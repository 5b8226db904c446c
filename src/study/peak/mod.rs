//! A peak search: the highest rate a target sustains within its objectives. Each step is the
//! study's run with its rate set by [`crate::load::search`] (the run's arguments cloned, the
//! rate changed, validated into a plan and measured like `wirebench run`); a step passes when
//! every objective holds and the target kept up with the offered rate.

mod conclusion;

use super::shards::{At, Shards};
use super::{point, Document, Error, Watch};
use crate::cli::RunArgs;
use crate::engine::stop::Stop;
use crate::load::search::{Next, Search, Why};
use crate::plan::Plan;
use crate::summary::peak::{Contradiction, Peak, PeakSearch, Step, PEAK_SCHEMA};
use crate::summary::slo::Slo;
use conclusion::{busy_bound, lost_conclusion};
pub use conclusion::{busy_machine, conclusion};
use std::sync::Arc;
use std::time::Duration;

/// Stop bisecting once the bracket is this close (mutilate's --search uses a similar step).
pub const TOLERANCE: f64 = 0.02;
/// Halving below this rate gives up: nothing sustainable.
pub const FLOOR: f64 = 1.0;
/// A search never runs more steps than this (doubling from 1/s to 10M/s is 24, bisection ~6).
pub const MAX_STEPS: usize = 48;

/// A peak search's design: the run each step repeats, its objectives and its bounds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Bounds {
    /// The run of every step, without its rate and duration (one target).
    pub run: RunArgs,
    /// The objectives every step must meet, written as given (`p99<=50ms`).
    #[serde(with = "objectives")]
    pub slos: Vec<Slo>,
    /// How long each step offers its rate.
    pub step: Duration,
    /// The pause after each step.
    pub rest: Duration,
    /// Where the search starts and stops.
    pub search: Search,
    /// Each step launched as shards and merged (`--shards`), if so: how they are launched
    /// is the command layer's, not part of the document.
    #[serde(skip)]
    pub sharded: Option<Arc<dyn Shards>>,
}

/// Objectives as their texts, parsed again when read back.
mod objectives {
    use crate::summary::slo::Slo;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(slos: &[Slo], s: S) -> Result<S::Ok, S::Error> {
        let texts: Vec<&str> = slos.iter().map(|o| o.text.as_str()).collect();
        texts.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Slo>, D::Error> {
        let texts = Vec::<String>::deserialize(d)?;
        (texts.iter())
            .map(|t| Slo::parse(t).map_err(serde::de::Error::custom))
            .collect()
    }
}

/// The search so far, as saved after each step: no peak yet, marked in progress.
pub fn partial(b: &Bounds, steps: &[Step]) -> PeakSearch {
    let why = format!("in progress: {} step(s) run", steps.len());
    document(b, steps.to_vec(), None, false, why.clone(), Some(why))
}

/// The search's document.
fn document(
    b: &Bounds,
    steps: Vec<Step>,
    peak: Option<Peak>,
    limited: bool,
    conclusion: String,
    stopped: Option<String>,
) -> PeakSearch {
    PeakSearch {
        schema: PEAK_SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        target: b.run.urls[0].clone(),
        objectives: b.slos.iter().map(|s| s.text.clone()).collect(),
        step_s: b.step.as_secs_f64(),
        tolerance: TOLERANCE,
        peak,
        generator_limited: limited,
        conclusion,
        steps,
        stopped,
        contradictions: Vec::new(),
    }
}

/// The run of one step: the user's arguments at `rate` for `step`.
pub fn step_args(run: &RunArgs, rate: f64, step: Duration) -> RunArgs {
    let mut a = run.clone();
    a.load.rate = Some(format!("{rate}"));
    a.duration = Some(format!("{}us", step.as_micros()));
    a
}

/// Runs one step at `rate`, judges it, and shows the steps with it. A target that could not
/// be reached is a step too (one failed operation), and so is one that answered nothing: why
/// the search ends there is returned beside it.
fn run_step(
    b: &Bounds,
    rate: f64,
    steps: &[Step],
    why: Option<Why>,
    stop: &Stop,
    watch: &mut dyn Watch,
) -> anyhow::Result<(Step, Option<Gone>)> {
    let plan = Plan::try_from(&step_args(&b.run, rate, b.step))?;
    let confirm = why == Some(Why::Confirm);
    let what = match why {
        Some(Why::Confirm) => "confirming",
        Some(_) => "measuring again",
        None => "offering",
    };
    let what = format!("{what} {rate} requests/s");
    let (summary, mut lost) = match &b.sharded {
        Some(shards) => {
            let at = At::Step { rate, step: b.step };
            (
                super::shards::watched(&**shards, at, &what, &plan, watch)?,
                None,
            )
        }
        None => point::watched(&plan, &what, stop, watch)?,
    };
    let first = steps.first().map(|b| &b.result);
    let mut step = Step::judge(summary, &b.slos, first, calm(steps), confirm);
    step.retry = why.map(|w| w.name().into());
    let silent = lost.is_none() && step.answered_nothing();
    if lost.is_none() {
        lost = gone(&step, steps);
    }
    watch.step(&step);
    if lost.is_none() || silent || !steps.is_empty() {
        let so_far = partial(b, &[steps, std::slice::from_ref(&step)].concat());
        watch.so_far(&Document::Peak(Box::new(so_far)));
    }
    if lost.is_none() {
        std::thread::sleep(b.rest);
    }
    Ok((
        step,
        lost.map(|why| Gone {
            why,
            measured: silent,
        }),
    ))
}

/// Why the target of `step` is taken for gone, if it is: it answered before and now fails
/// every request without a timeout (it was killed as the step connected, or turned to
/// refusing), as an unreachable target is; or not one byte came back (frozen, gone, or it
/// never reads), where a lower rate will not wake it, so the search stops here rather than
/// bisecting down to the floor.
fn gone(step: &Step, before: &[Step]) -> Option<String> {
    let answered = before.iter().any(|s| s.result.ok > 0);
    if step.rejects_everything() && answered {
        return stopped_answering(step, "stopped answering");
    }
    if step.answered_nothing() {
        let did = match answered {
            true => "stopped answering",
            false => "never answered",
        };
        return stopped_answering(step, did);
    }
    None
}

/// Why a step ended the search: the target could not be reached, or answered nothing.
struct Gone {
    /// The reason, in words.
    why: String,
    /// Whether the step ran (a silent target's timeouts), so it is a result even as the
    /// first step; else the target could not be reached at all.
    measured: bool,
}

/// Of the steps that passed, the one served fastest (the lowest mean service time): how fast
/// the target answers when no queue of ours waits at it. Not the highest pass: a pass at the
/// target's capacity already holds a full queue, as slow as any step above it.
fn calm(steps: &[Step]) -> Option<&crate::summary::Summary> {
    let service = |s: &Step| {
        s.result
            .service_time
            .as_ref()
            .map_or(f64::MAX, |d| d.mean_us)
    };
    steps
        .iter()
        .filter(|s| s.passed)
        .min_by(|a, b| service(a).total_cmp(&service(b)))
        .map(|s| &s.result)
}

/// One trial of the search: the rate asked for, whether it passed, and its step's index.
pub type Trial = (f64, bool, usize);

/// What the trial loop ended with: the rate found (confirmed when the search ended by
/// itself), and whether the generator was the limit.
struct Found {
    rate: Option<f64>,
    confirmed: bool,
    limited: bool,
}

/// Runs the trials [`Search::next`] asks for (new rates, and rates measured again) until the
/// search is done, its step budget is spent, or a step ends it early.
fn bracket(
    b: &Bounds,
    stop: &Stop,
    watch: &mut dyn Watch,
    steps: &mut Vec<Step>,
    tried: &mut Vec<Trial>,
    lost: &mut Option<String>,
) -> anyhow::Result<Found> {
    let found = |rate, confirmed, limited| Found {
        rate,
        confirmed,
        limited,
    };
    loop {
        let outcomes: Vec<(f64, bool)> = tried.iter().map(|t| (t.0, t.1)).collect();
        let (rate, why) = match b.search.next(&outcomes) {
            Next::Done(rate) => return Ok(found(rate, rate.is_some(), false)),
            Next::Try(r) => ((r * 100.0).round() / 100.0, None),
            Next::Retry(r, why) => (r, Some(why)),
        };
        let repeated = why.is_none() && tried.iter().any(|t| t.0 == rate);
        if repeated || steps.len() >= MAX_STEPS {
            // Rates closer than a hundredth, or the budget spent: the best so far, unconfirmed.
            return Ok(found(best_pass(&outcomes), false, false));
        }
        let (mut step, mut gone) = run_step(b, rate, steps, why, stop, watch)?;
        if let (Some(g), true) = (&gone, steps.is_empty()) {
            if !g.measured {
                // Nothing measured yet: the search fails as a single run does.
                anyhow::bail!("{}", g.why);
            }
        }
        if step.generator_limited && gone.is_none() {
            // Once more: a moment's stall of a shared load machine looks the same as a
            // generator too slow for the rate; only a limit seen twice ends the search.
            steps.push(step);
            (step, gone) = run_step(b, rate, steps, why, stop, watch)?;
        }
        tried.push((rate, step.passed, steps.len()));
        let limited = step.generator_limited;
        let refused = step.rejects_everything();
        steps.push(step);
        if let Some(g) = gone {
            // The target is gone: no lower rate will bring it back.
            *lost = Some(g.why);
            return Ok(found(None, false, false));
        }
        if stop.requested() {
            // Ctrl-C: the steps so far are the result; no peak is claimed from them.
            return Ok(found(None, false, false));
        }
        if limited {
            return Ok(found(None, false, true));
        }
        if refused {
            // A lower rate will not turn a 404 or a refused connection into an answer.
            return Ok(found(None, false, false));
        }
    }
}

/// The highest rate whose trials passed by majority, if any.
fn best_pass(outcomes: &[(f64, bool)]) -> Option<f64> {
    crate::load::search::tally(outcomes)
        .iter()
        .filter(|t| t.verdict() == crate::load::search::Verdict::Pass)
        .map(|t| t.rate)
        .reduce(f64::max)
}

/// Doubles, bisects, measures again where trials disagree, confirms; stops early when the
/// generator is the limit, and when the target could not be reached (that step recorded).
/// The watch is shown each step, and the search so far after each. An error is a step that
/// could not run (the search of the steps before it in [`Error::measured`]).
pub fn execute(b: &Bounds, stop: &Stop, watch: &mut dyn Watch) -> Result<PeakSearch, Error> {
    let mut steps: Vec<Step> = Vec::new();
    let mut tried: Vec<Trial> = Vec::new();
    let mut lost = None;
    let found = bracket(b, stop, watch, &mut steps, &mut tried, &mut lost);
    let (peak, limited, failed) = match found {
        Ok(f) => (peak_of(&steps, &tried, &f), f.limited, None),
        Err(e) => (None, false, Some(e)),
    };
    let interrupted = stop.requested();
    let stopped = match (&failed, &lost, interrupted) {
        (Some(e), _, _) => Some(format!("{e:#}")),
        (None, Some(why), _) => Some(why.clone()),
        (None, None, true) => Some(format!("stopped by {}", stop.by())),
        (None, None, false) => None,
    };
    let mut peak = peak;
    let busy = peak.as_ref().and_then(|p| busy_bound(&steps, p));
    let conclusion = match (&stopped, &busy) {
        (Some(why), _) if !interrupted => lost_conclusion(&steps, b, why),
        (None, Some(line)) => {
            // Not the target's peak: a lower bound, unconfirmed (exit 1).
            if let Some(p) = peak.as_mut() {
                p.confirmed = false;
            }
            line.clone()
        }
        _ => conclusion(peak.as_ref(), limited, &steps, b, stop),
    };
    let measured_any = !steps.is_empty();
    let mut search = document(b, steps, peak, limited, conclusion, stopped);
    search.contradictions = contradictions(&tried);
    match failed {
        None => Ok(search),
        Some(cause) => Err(Error {
            cause,
            measured: measured_any.then(|| Box::new(Document::Peak(Box::new(search)))),
        }),
    }
}

/// The peak at the rate found, from every trial at it (None when none was found).
fn peak_of(steps: &[Step], tried: &[Trial], found: &Found) -> Option<Peak> {
    let rate = found.rate?;
    let at: Vec<&Step> = tried
        .iter()
        .filter(|t| t.0 == rate)
        .filter_map(|t| steps.get(t.2))
        .collect();
    Peak::of(&at, found.confirmed)
}

/// The contradictions among the trials, as the report names them.
pub fn contradictions(tried: &[Trial]) -> Vec<Contradiction> {
    let outcomes: Vec<(f64, bool)> = tried.iter().map(|t| (t.0, t.1)).collect();
    crate::load::search::contradictions(&outcomes)
        .into_iter()
        .map(|c| Contradiction {
            rate_per_s: c.rate,
            passed: c.passed,
            failed: c.failed,
            decided: c.decided,
        })
        .collect()
}

/// Why a target is taken for gone (it `did` so): the step's first error.
fn stopped_answering(step: &Step, did: &str) -> Option<String> {
    let e = step.result.errors.by_kind.first()?;
    Some(format!(
        "the target {did}: every request of the step at {:.0}/s failed ({} {}: {})",
        step.offered_per_s, e.count, e.kind, e.sample
    ))
}
