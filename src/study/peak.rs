//! A peak search: the highest rate a target sustains within its objectives. Each step is the
//! study's run with its rate set by [`crate::load::search`] (the run's arguments cloned, the
//! rate changed, validated into a plan and measured like `wirebench run`); a step passes when
//! every objective holds and the target kept up with the offered rate.

use super::shards::{At, Shards};
use super::{point, Document, Error, Watch};
use crate::cli::RunArgs;
use crate::engine::stop::Stop;
use crate::load::search::{Next, Search, Why};
use crate::plan::Plan;
use crate::summary::busy::{self, BUSY_PRESSURE_PERCENT};
use crate::summary::peak::{Contradiction, Limit, Peak, PeakSearch, Step, PEAK_SCHEMA};
use crate::summary::slo::Slo;
use std::sync::Arc;
use std::time::Duration;

/// Stop bisecting once the bracket is this close (mutilate's --search uses a similar step).
pub const TOLERANCE: f64 = 0.02;
/// Halving below this rate gives up: nothing sustainable.
pub const FLOOR: f64 = 1.0;
/// A search never runs more steps than this (doubling from 1/s to 10M/s is 24, bisection ~6).
pub const MAX_STEPS: usize = 48;

/// A peak search's design: the run each step repeats, its objectives and its bounds.
#[derive(Clone, Debug)]
pub struct Bounds {
    /// The run of every step, without its rate and duration (one target).
    pub run: RunArgs,
    /// The objectives every step must meet.
    pub slos: Vec<Slo>,
    /// How long each step offers its rate.
    pub step: Duration,
    /// The pause after each step.
    pub rest: Duration,
    /// Where the search starts and stops.
    pub search: Search,
    /// Each step launched as shards and merged (`--shards`), if so.
    pub sharded: Option<Arc<dyn Shards>>,
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
            watch.run_starts(&what, &plan);
            let measured = shards.measure(At::Step { rate, step: b.step });
            watch.run_ends();
            (measured?, None)
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

/// The busy-machine line for a peak whose bound is the machine's, not the target's: every
/// failure at the lowest failing rate above the peak ran at a CPU pressure of
/// [`BUSY_PRESSURE_PERCENT`] or more. The peak is then a lower bound, not confirmed.
fn busy_bound(steps: &[Step], peak: &Peak) -> Option<String> {
    let above = |s: &&Step| s.offered_per_s > peak.offered_per_s && !s.passed;
    let bound = steps
        .iter()
        .filter(above)
        .map(|s| s.offered_per_s)
        .reduce(f64::min)?;
    let at: Vec<&crate::summary::Generator> = (steps.iter().filter(above))
        .filter(|s| s.offered_per_s == bound)
        .map(|s| &s.result.generator)
        .collect();
    if at.is_empty() || !at.iter().all(|g| busy::is_busy(g)) {
        return None;
    }
    let least = |f: fn(&crate::summary::Generator) -> Option<f64>| {
        at.iter().map(|g| f(g).unwrap_or(0.0)).fold(100.0, f64::min)
    };
    let pressure = least(|g| g.cpu_pressure_percent);
    let steal = least(|g| g.steal_percent);
    let state = match (
        pressure >= BUSY_PRESSURE_PERCENT,
        steal >= busy::BUSY_STEAL_PERCENT,
    ) {
        (true, _) if pressure >= 99.5 => "CPU pressure 100%".to_string(),
        (true, _) => format!("CPU pressure {pressure:.0}% or above"),
        (false, true) => format!("steal {steal:.0}% or above"),
        (false, false) => "CPU pressure or steal at their bounds".to_string(),
    };
    Some(format!(
        "the machine was busy: {state} in the steps that failed at {bound:.0}/s — no peak claimed (the target sustained at least {:.0}/s); rerun on a quieter machine or with fewer connections",
        peak.ops_per_s
    ))
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

/// The objective as written (`p99<=50ms, errors<=1%`) and the highest rate a step sustained
/// within it, if any did.
fn objective_and_best(steps: &[Step], b: &Bounds) -> (String, Option<f64>) {
    let objective = b
        .slos
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let best = steps
        .iter()
        .filter(|s| s.passed)
        .map(|s| s.offered_per_s)
        .reduce(f64::max);
    (objective, best)
}

/// The conclusion of a search its target left (or a step that could not run): no peak.
fn lost_conclusion(steps: &[Step], b: &Bounds, why: &str) -> String {
    let (objective, best) = objective_and_best(steps, b);
    format!(
        "stopped after {} step(s), no peak claimed: {why}; the highest rate sustained within {objective} until then was {:.0}/s",
        steps.len(),
        best.unwrap_or(0.0)
    )
}

/// One sentence on what the search found.
pub fn conclusion(
    peak: Option<&Peak>,
    limited: bool,
    steps: &[Step],
    b: &Bounds,
    stop: &Stop,
) -> String {
    let (objective, best) = objective_and_best(steps, b);
    if stop.requested() {
        return format!(
            "interrupted ({}) after {} step(s): no peak claimed; the highest rate sustained within {objective} so far was {:.0}/s",
            stop.by(),
            steps.len(),
            best.unwrap_or(0.0)
        );
    }
    match (peak, limited) {
        (_, true) => match steps.last().and_then(|s| busy_machine(s, &b.slos)) {
            Some(line) => line,
            None => limited_conclusion(steps, best, &objective),
        },
        (Some(p), false) if p.confirmed => format!(
            "peak {:.0} ops/s sustained within {objective} (offered {:.0}/s, confirmed: {} of {} trials passed, {:.0}–{:.0} ops/s)",
            p.ops_per_s,
            p.offered_per_s,
            p.passed_trials,
            p.trials,
            p.ops_per_s_range[0],
            p.ops_per_s_range[1]
        ),
        (Some(p), false) => format!(
            "peak {:.0}/s found within {objective}, but not confirmed ({} of {} trials passed; the search ended before a majority of three): the target is not steady at this rate",
            p.offered_per_s, p.passed_trials, p.trials
        ),
        (None, false) => match every_request_failed(steps) {
            Some(why) => format!(
                "no peak: every request of every step failed ({why}), so no rate can meet {objective}; check the workload first with `wirebench run URL -n 10`"
            ),
            None => format!("no rate down to {FLOOR}/s was sustained within {objective}"),
        },
    }
}

/// The one line for a search a busy machine ended (its last step generator-limited by its own
/// send lag, [`Limit::Lag`]): "the machine was busy: CPU pressure 62%, send lag p99 77ms above
/// the 20ms objective — no peak claimed; …". None for a step another limit held back.
pub fn busy_machine(step: &Step, slos: &[crate::summary::slo::Slo]) -> Option<String> {
    if step.limit != Some(Limit::Lag) {
        return None;
    }
    let (slo, lag) = crate::summary::peak::generator_lag(&step.result, slos)?;
    let g = &step.result.generator;
    let mut state = Vec::new();
    if let Some(p) = g.cpu_pressure_percent {
        state.push(format!("CPU pressure {p:.0}%"));
    }
    if let Some(s) = g.steal_percent.filter(|s| *s >= 1.0) {
        state.push(format!("steal {s:.0}%"));
    }
    let what = slo.text.split(['<', '=']).next().unwrap_or("p99").trim();
    let bound = crate::units::format_us(slo.bound);
    let against = match lag > slo.bound {
        true => format!("above the {bound} objective"),
        false => format!("over half the {bound} objective"),
    };
    state.push(format!(
        "send lag {what} {} {against} at {:.0}/s",
        crate::units::format_us(lag),
        step.offered_per_s
    ));
    Some(format!(
        "the machine was busy: {} — no peak claimed; rerun on a quieter machine or with fewer connections",
        state.join(", ")
    ))
}

/// Why the generator was the limit, and the flag to raise.
fn limited_conclusion(steps: &[Step], best: Option<f64>, objective: &str) -> String {
    let Some(last) = steps.last() else {
        return "no peak: the generator was the limit".into();
    };
    let at = last.offered_per_s;
    let best = best.unwrap_or(0.0);
    let config = &last.result.config;
    let why = match last.limit {
        Some(Limit::Connections) => {
            let c = config.connections;
            let service = last
                .result
                .service_time
                .as_ref()
                .map_or(0.0, |d| d.mean_us);
            format!(
                "the generator fell behind its timetable: {c} connection(s) each waiting {} for a reply cannot offer {at:.0}/s, while the target answered as fast as at lower rates; raise -c (e.g. -c {})",
                crate::units::format_us(service),
                (c * 4).max(crate::cli::PEAK_CONNECTIONS.parse().unwrap_or(10))
            )
        }
        Some(Limit::Cpu) => format!(
            "the generator's {} thread(s) were busy ({:.0}% CPU) at {at:.0}/s; raise -t, or load from more machines",
            config.threads, last.result.generator.cpu_percent_of_threads
        ),
        _ => format!(
            "the generator could not send on time at {at:.0}/s while the target stayed fast; raise -t (or -c), or load from more machines"
        ),
    };
    // On a contended machine the limit seen may be the machine's: say so first.
    let g = &last.result.generator;
    let pressure = g.cpu_pressure_percent.unwrap_or(0.0);
    let steal = g.steal_percent.unwrap_or(0.0);
    let busy = match busy::is_busy(g) {
        true if pressure >= BUSY_PRESSURE_PERCENT => {
            format!("the machine was busy: CPU pressure {pressure:.0}% — ")
        }
        true => format!("the machine was busy: steal {steal:.0}% — "),
        false => String::new(),
    };
    format!(
        "{busy}no peak claimed: {why}. The target sustained at least {best:.0}/s within {objective}"
    )
}

/// Why a target is taken for gone (it `did` so): the step's first error.
fn stopped_answering(step: &Step, did: &str) -> Option<String> {
    let e = step.result.errors.by_kind.first()?;
    Some(format!(
        "the target {did}: every request of the step at {:.0}/s failed ({} {}: {})",
        step.offered_per_s, e.count, e.kind, e.sample
    ))
}

/// When no step completed a single request: the first error of the first step, in words
/// (`404 × 5: status 404` …), so a wrong URL is not reported as a slow target.
fn every_request_failed(steps: &[Step]) -> Option<String> {
    if steps.is_empty() || steps.iter().any(|s| s.result.ok > 0) {
        return None;
    }
    let first = steps[0].result.errors.by_kind.first()?;
    Some(format!("{} {}: {}", first.count, first.kind, first.sample))
}
