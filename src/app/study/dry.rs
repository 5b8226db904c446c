//! `wirebench study FILE --dry-run`: what a plan would run and how long it would take; nothing
//! is sent.

use super::read::Checked;
use crate::cli::PeakArgs;
use crate::plan::file::PlanFile;
use crate::plan::{Plan, Warmup};
use crate::study::peak::{step_args, Bounds, MAX_STEPS};
use crate::study::sweep::Points;
use std::io::{Result, Write};
use std::time::Duration;

/// Lists the runs (or the peak search's steps) and the estimated time.
pub fn write(path: &str, plan: &PlanFile, checked: &Checked, out: &mut dyn Write) -> Result<()> {
    // Buffered: a study of 10,000 targets lists 50,000 runs, a write each to a line-buffered
    // stdout otherwise.
    let mut out = std::io::BufWriter::with_capacity(64 << 10, out);
    list(path, plan, checked, &mut out)?;
    out.flush()
}

/// [`write`], to `out`.
fn list(path: &str, plan: &PlanFile, checked: &Checked, out: &mut dyn Write) -> Result<()> {
    let title = plan.title.as_deref().unwrap_or(path);
    match checked {
        Checked::Run(_, batch) => runs(title, "", batch, out),
        Checked::Compare(args, prepared) => {
            let baseline = &prepared.rounds.points.targets[prepared.rounds.baseline].name;
            let what = format!(
                " compare against {baseline} (--baseline{}),",
                match args.baseline {
                    Some(_) => "",
                    None => ": the first target",
                }
            );
            runs(title, &what, &prepared.rounds.points, out)
        }
        Checked::Peak(args, setup) => steps(title, args, setup, out),
    }
}

/// A study of runs: each run in order, then the time.
fn runs(title: &str, what: &str, batch: &Points, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{title}:{what} {} runs ({} targets x {} points x {} runs)",
        batch.runs.len(),
        batch.targets.len(),
        batch.points.len(),
        batch.rounds
    )?;
    let (mut total, mut unknown) = (Duration::ZERO, 0);
    // Each run's columns: its target, its swept values, its round; padded to the widest of
    // each, so the list reads as a table (issue 40: the columns wandered with the names).
    let rows: Vec<[String; 3]> = (batch.runs.iter())
        .map(|run| {
            let values: Vec<String> = (batch.axes.iter())
                .zip(&batch.points[run.point])
                .map(|(x, &v)| format!("{} {}", x.flag, x.values[v]))
                .collect();
            let discarded = match run.round < batch.discard {
                true => " (discarded)",
                false => "",
            };
            let round = format!("run {}/{}{discarded}", run.round + 1, batch.rounds);
            [
                batch.targets[run.target].name.clone(),
                values.join(" "),
                round,
            ]
        })
        .collect();
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let (names, values) = (width(0), width(1));
    for (i, (run, [name, value, round])) in batch.runs.iter().zip(&rows).enumerate() {
        let mut line = format!("  {:>4}  {name:<names$}  ", i + 1);
        if values > 0 {
            line += &format!("{value:<values$}  ");
        }
        writeln!(out, "{line}{round}")?;
        match time(&run.plan) {
            Some(t) => total += t,
            None => unknown += 1,
        }
    }
    writeln!(out, "{}", estimate(total, unknown, batch.runs.len()))
}

/// The estimate when every run stops at a request count.
const ALL_COUNTED: &str = "estimated time: unknown: every run stops or warms up at a request count (-n, --warmup N), which takes as long as the target needs (time one with `wirebench run URL -n N`); --dry-run ran nothing";

/// The estimated time of `runs` runs: `total` for those of known length; the other `unknown`
/// stop (or warm up) at a request count, whose time only the target decides, so they are
/// said to be unknown rather than counted as nothing.
fn estimate(total: Duration, unknown: usize, runs: usize) -> String {
    let secs = total.as_secs_f64();
    match unknown {
        0 => format!("estimated time: {secs:.1} s (durations + warm-ups); --dry-run ran nothing"),
        n if n == runs => ALL_COUNTED.to_string(),
        n => format!(
            "estimated time: more than {secs:.1} s: the durations + warm-ups of {} runs, plus {n} runs stopped or warmed up by a request count (-n), of unknown time; --dry-run ran nothing",
            runs - n
        ),
    }
}

/// A run's duration and warm-up (a warm-up until steady: its cap); None when either is a
/// request count.
fn time(plan: &Plan) -> Option<Duration> {
    match (plan.stop.duration, plan.warmup) {
        (Some(d), Some(Warmup::Duration(w) | Warmup::Auto(w))) => Some(d + w),
        (Some(d), None) => Some(d),
        _ => None,
    }
}

/// A peak search: its steps are chosen as it goes, so the count is an upper bound.
fn steps(title: &str, args: &PeakArgs, setup: &Bounds, out: &mut dyn Write) -> Result<()> {
    let s = &setup.search;
    let most = s.steps_at_most();
    let slos: Vec<&str> = setup.slos.iter().map(|s| s.text.as_str()).collect();
    writeln!(out, "{title}: peak search of {}", args.run.urls[0])?;
    writeln!(out, "  objectives: {}", slos.join(", "))?;
    let each = setup.step + setup.rest;
    // The first step's plan, as the search builds it (validated already by `peak::setup`).
    let first = Plan::try_from(&step_args(&args.run, s.start, setup.step)).ok();
    let (warm, warmup) = match first.and_then(|p| p.warmup) {
        Some(Warmup::Duration(w)) => (w, format!(" after a warm-up of {w:?}")),
        Some(Warmup::Count(n)) => (Duration::ZERO, format!(" after a warm-up of {n} requests")),
        Some(Warmup::Auto(cap)) => (
            cap,
            format!(" after a warm-up until steady (at most {cap:?})"),
        ),
        None => (Duration::ZERO, String::new()),
    };
    writeln!(
        out,
        "  steps of {:?} each{warmup}, {:?} apart: doubling from {}/s (at most {}/s), halving if the first fails, then bisecting to {:.0}%, the bounding failure measured twice, the peak confirmed by 3 trials",
        setup.step,
        setup.rest,
        s.start,
        s.ceiling,
        s.tolerance * 100.0
    )?;
    let upper = (each + warm) * most as u32;
    writeln!(
        out,
        "estimated time: at most {:.1} s: an upper bound of {most} steps (doubling or halving, bisecting, recheck, confirmation) x (step + rest{}) when no trial contradicts another; contradictions (re-measured until a majority decides) or a generator limit add steps, never more than {} in all; --dry-run ran nothing",
        upper.as_secs_f64(),
        match warm.is_zero() {
            true => "",
            false => " + warm-up",
        },
        MAX_STEPS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_stopped_by_a_count_are_unknown_never_zero() {
        let all = estimate(Duration::ZERO, 3, 3);
        assert!(all.starts_with("estimated time: unknown"), "{all}");
        assert!(!all.contains("0.0 s"), "{all}");
        let some = estimate(Duration::from_secs(4), 1, 3);
        assert!(
            some.contains("more than 4.0 s") && some.contains("1 runs"),
            "{some}"
        );
        let none = estimate(Duration::from_secs(4), 0, 2);
        assert!(none.starts_with("estimated time: 4.0 s"), "{none}");
    }
}
