//! What a peak search concludes, in one sentence: the peak confirmed, or why none is
//! claimed (the machine was busy, the generator was the limit, the target went away, every
//! request failed).

use super::{Bounds, FLOOR};
use crate::engine::stop::Stop;
use crate::summary::busy::{self, BUSY_PRESSURE_PERCENT};
use crate::summary::peak::{Limit, Peak, Step};

/// The busy-machine line for a peak whose bound is the machine's, not the target's: every
/// failure at the lowest failing rate above the peak ran at a CPU pressure of
/// [`BUSY_PRESSURE_PERCENT`] or more. The peak is then a lower bound, not confirmed.
pub(super) fn busy_bound(steps: &[Step], peak: &Peak) -> Option<String> {
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
pub(super) fn lost_conclusion(steps: &[Step], b: &Bounds, why: &str) -> String {
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

/// When no step completed a single request: the first error of the first step, in words
/// (`404 × 5: status 404` …), so a wrong URL is not reported as a slow target.
fn every_request_failed(steps: &[Step]) -> Option<String> {
    if steps.is_empty() || steps.iter().any(|s| s.result.ok > 0) {
        return None;
    }
    let first = steps[0].result.errors.by_kind.first()?;
    Some(format!("{} {}: {}", first.count, first.kind, first.sample))
}
