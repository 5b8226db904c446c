//! `wirebench run` with several targets or swept flags: one run per target and point, each its
//! own plan (the parsed arguments cloned, one value set), validated before anything runs, run
//! interleaved across targets, and reported as tables (one row per target, one column per value).

use super::keep::Keep;
use crate::cli::RunArgs;

use super::knob::Knob;
use crate::error::UsageError;
use crate::load::sweep;
use crate::plan::Plan;
use crate::study::sweep::{Points, Run};
use crate::study::{Design, Document};
use crate::summary::sweep::{NamedTarget, Point, Sweep};
use crate::units::thousands;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// The runs a command line asks for (targets × swept points × rounds), every one validated:
/// bad input is a usage error before anything is measured.
pub fn batch(a: &RunArgs) -> Result<Points, UsageError> {
    let targets = targets(a)?;
    let (rounds, discard) = repeats(a)?;
    let (mut axes, mut knobs) = (Vec::new(), Vec::new());
    for knob in Knob::ALL {
        let (flag, kind) = (knob.flag(), knob.kind());
        match knob.get(a) {
            Some(t) if sweep::is_sweep(kind, t) => {
                axes.push(sweep::expand(flag, kind, t).map_err(|e| UsageError::flag(flag, e))?);
                knobs.push(knob);
            }
            _ => {}
        }
    }
    let lens: Vec<usize> = axes.iter().map(|x| x.values.len()).collect();
    let all = lens
        .iter()
        .fold(targets.len().saturating_mul(rounds), |n, &l| {
            n.saturating_mul(l)
        });
    if all > MAX_RUNS {
        return Err(UsageError::flags(&["--runs"], format!(
                "{} runs ({} targets x {} points x {rounds} runs) are more than one study may hold ({}): sweep fewer values, give fewer --runs, or split the study",
                thousands(all as u64),
                targets.len(),
                thousands(lens.iter().product::<usize>() as u64),
                thousands(MAX_RUNS as u64)
            )));
    }
    let points = sweep::matrix(&lens);
    let mut plans = Vec::new();
    // Each run's arguments name its one target: cloned from arguments without the list of
    // all of them (cloning 10,000 URLs for each of 10,000 runs made validation quadratic).
    let base = RunArgs {
        urls: Vec::new(),
        ..a.clone()
    };
    for (point, target) in sweep::interleave(points.len(), targets.len()) {
        let mut args = base.clone();
        args.urls = vec![targets[target].url.clone()];
        for ((axis, knob), &i) in axes.iter().zip(&knobs).zip(&points[point]) {
            knob.set(&mut args, axis.values[i].clone());
        }
        let plan = Plan::try_from(&args).map_err(|e| e.in_target(&targets[target].name))?;
        plans.push((point, target, plan));
    }
    check_descriptors(&plans)?;
    // Whole rounds, one after the other: A B A B …, never A A B B.
    let runs = (0..rounds)
        .flat_map(|round| {
            plans.iter().map(move |(point, target, plan)| Run {
                round,
                point: *point,
                target: *target,
                plan: plan.clone(),
            })
        })
        .collect();
    Ok(Points {
        targets,
        axes,
        points,
        rounds,
        discard,
        runs,
        seed: None,
        units: a.units,
        sharded: None,
    })
}

/// Batches of one target each (their own flags) as one batch, run interleaved as the
/// targets of one command line are; they must sweep the same values the same number of
/// times, so their tables share columns.
pub fn merge(parts: Vec<Points>) -> Result<Points, UsageError> {
    let mut parts = parts.into_iter();
    let Some(mut all) = parts.next() else {
        return Err(UsageError::new("no target to run: give a target URL"));
    };
    for (ti, part) in parts.enumerate().map(|(i, p)| (i + 1, p)) {
        if part.axes != all.axes || part.rounds != all.rounds || part.discard != all.discard {
            let t = &part.targets[0];
            return Err(UsageError::target(&t.url, format!(
                    "target '{}' sweeps other values or runs than the others: a target's own flags may not change the swept flags, runs or discards, so that its row shares the tables' columns",
                    t.name
                ))
                .in_target(&t.name));
        }
        all.targets.extend(part.targets);
        all.runs
            .extend(part.runs.into_iter().map(|r| Run { target: ti, ..r }));
    }
    // Rounds, then points, then targets: A p1, B p1, A p2 …, as `interleave` orders them.
    all.runs.sort_by_key(|r| (r.round, r.point, r.target));
    Ok(all)
}

/// The most runs one batch may hold: each is a plan kept in memory until it runs
/// (`--runs 100000000` would fill it before the first).
const MAX_RUNS: usize = 100_000;

/// A batch of more runs than this asks for `--yes`.
pub const CONFIRM_RUNS: usize = 1_000;

/// A batch whose durations and warm-ups add up to more than this asks for `--yes` (the
/// examples' largest, DIM, takes 225 s).
pub const CONFIRM_TIME: Duration = Duration::from_secs(30 * 60);

/// Every point's open files, checked (and the soft limit raised) before the first runs: a
/// sweep `-c 1..100000` was refused at its 16th point, after 15 were measured.
fn check_descriptors(plans: &[(usize, usize, Plan)]) -> Result<(), UsageError> {
    let most = plans
        .iter()
        .map(|(_, _, p)| p)
        .max_by_key(|p| crate::engine::descriptors(p));
    let Some(plan) = most else {
        return Ok(());
    };
    crate::sys::usage::ensure_fd_limit(crate::engine::descriptors(plan)).map_err(|e| {
        e.map(|why| {
            format!(
                "the point with -c {} cannot run, so nothing was: {why}",
                plan.connections
            )
        })
    })
}

/// The batch's time as far as it is known: the durations and warm-ups of the runs bounded by
/// time (a warm-up until steady counts at its cap), and how many others stop (or warm up) at a
/// request count, whose time the target
/// decides.
pub fn estimate(batch: &Points) -> (Duration, usize) {
    let (mut known, mut unknown) = (Duration::ZERO, 0);
    for run in &batch.runs {
        match (run.plan.stop.duration, run.plan.warmup) {
            (Some(d), Some(crate::plan::Warmup::Duration(w) | crate::plan::Warmup::Auto(w))) => {
                known += d + w
            }
            (Some(d), None) => known += d,
            _ => unknown += 1,
        }
    }
    (known, unknown)
}

/// A big batch (more than [`CONFIRM_RUNS`] runs, or [`CONFIRM_TIME`]) runs only with `yes`
/// or, on a terminal, once the user says so; in a script it is refused, naming `--yes`, before
/// anything is measured.
pub fn confirm(batch: &Points, yes: bool) -> Result<(), UsageError> {
    let (known, unknown) = estimate(batch);
    if yes || (batch.runs.len() <= CONFIRM_RUNS && known <= CONFIRM_TIME) {
        return Ok(());
    }
    let counted = match unknown {
        0 => String::new(),
        n => format!(" plus {n} runs by request count"),
    };
    let what = format!(
        "this study is {} runs ({} targets x {} points x {} runs), estimated {}{counted}",
        thousands(batch.runs.len() as u64),
        batch.targets.len(),
        thousands(batch.points.len() as u64),
        batch.rounds,
        long_time(known)
    );
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        return Err(UsageError::flags(
            &["--yes"],
            format!("{what}: give --yes to run a study this big, or sweep fewer values"),
        ));
    }
    eprint!("{what}. Run it? [y/N] ");
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(UsageError::flags(
            &["--yes"],
            format!("not run: {what}; give --yes to run it without asking"),
        )),
    }
}

/// A batch's length in the unit its size calls for: `57 min`, `3.2 h`, `1,157 days`.
fn long_time(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86_400.0 * 2.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{} days", thousands((s / 86_400.0) as u64))
    }
}

/// `--runs` and the runs discarded: at least one run, and at least one kept.
fn repeats(a: &RunArgs) -> Result<(usize, usize), UsageError> {
    let discard = match (a.discard_first, a.discard) {
        (true, _) => 1,
        (false, k) => k.unwrap_or(0),
    };
    let runs = match a.runs {
        None => 1,
        Some(crate::cli::Runs::Count(n)) => n,
        Some(crate::cli::Runs::Auto) => {
            return Err(UsageError::flags(&["--runs"], 
                "--runs auto repeats rounds until a comparison's intervals are narrow enough, so it is for compare: give a count here, e.g. --runs 5",
            ))
        }
    };
    if runs == 0 {
        return Err(UsageError::flags(
            &["--runs"],
            "--runs 0 measures nothing: give at least one run, e.g. --runs 5",
        ));
    }
    if discard >= runs {
        return Err(UsageError::flags(&["--discard", "--runs"], format!(
            "--discard {discard} with --runs {runs} keeps no run: discard fewer than --runs, e.g. --runs {} --discard {discard}",
            discard + 5
        )));
    }
    Ok((runs, discard))
}

/// The targets, named (`name=URL`) or not; names must differ.
fn targets(a: &RunArgs) -> Result<Vec<NamedTarget>, UsageError> {
    let mut out: Vec<NamedTarget> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for text in &a.urls {
        let (name, url) = sweep::named(text);
        if !seen.insert(name) {
            return Err(UsageError::new(format!(
                "the target name '{name}' is given twice: name each target once, e.g. a=tcp://… b=tcp://…"
            )));
        }
        out.push(NamedTarget {
            name: name.to_string(),
            url: url.to_string(),
        });
    }
    Ok(out)
}

/// Runs every point of `batch`, then prints the tables (or the JSON document). When a point
/// cannot run (the target went away), the points already measured are printed and saved.
pub fn main(args: &RunArgs, batch: Points, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    super::shard::refuse(&args.shard, "a sweep")?;
    let keep = Keep::prepare(&args.keep, crate::store::Kind::Sweep, args.quiet)?;
    finish(args, batch, keep, out)
}

/// Runs every point of `batch`, saving the sweep with `keep` after each (a partial document
/// until the last), then prints the tables (or the JSON document), checks the thresholds and
/// saves it whole. When a point's target could not be reached, or a point could not run, the
/// sweep ends there: the runs so far (the unreachable one with its error) are printed, saved
/// as partial, and the command fails (exit 1).
pub fn finish(
    args: &RunArgs,
    batch: Points,
    mut keep: Keep,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let total = batch.runs.len();
    let command = keep.command();
    crate::app::signals::stop_on_ctrl_c()?;
    let show = !args.quiet && !args.json;
    let done = {
        let mut save = |d: &Document| keep.progress(d);
        let mut live = super::watch::Live::new(Some(total), show, &mut save);
        crate::study::execute(
            &Design::Sweep(batch),
            crate::app::signals::process(),
            &mut live,
        )
    };
    let (sweep, failed) = match measured(done)? {
        (Document::Run(sweep), failed) => (sweep, failed),
        _ => anyhow::bail!("a sweep's study ended in another document: a bug, please report it"),
    };
    let interrupted = crate::app::signals::requested();
    keep.mark_partial(sweep.stopped.is_some() && !interrupted);
    let render = |out: &mut dyn Write| {
        crate::report::sweep::write_as(&sweep, command, out)?;
        if interrupted {
            writeln!(
                out,
                "\nInterrupted ({}) after {} of {total} runs: the tables cover those.",
                super::keep::stopped_by(),
                sweep.points.len()
            )?;
        }
        Ok(())
    };
    let code = conclude(&sweep, keep, args.json, &render, out)?;
    ended(&sweep, total, code, failed)
}

/// A study's outcome as a command handles it: the document of the runs measured, and the
/// error that stopped the study early, if any; the error alone when nothing was measured.
pub fn measured(
    done: Result<Document, crate::study::Error>,
) -> anyhow::Result<(Document, Option<anyhow::Error>)> {
    match done {
        Ok(doc) => Ok((doc, None)),
        Err(crate::study::Error {
            cause,
            measured: Some(doc),
        }) => Ok((*doc, Some(cause))),
        Err(e) => Err(e.cause),
    }
}

/// The exit code of a sweep printed and saved: `code`, unless it stopped before its last run
/// (not by a signal): then the error naming why, after the report (exit 1; 2 when `failed`,
/// the error that stopped it, is bad input).
pub fn ended(
    sweep: &Sweep,
    total: usize,
    code: ExitCode,
    failed: Option<anyhow::Error>,
) -> anyhow::Result<ExitCode> {
    let stopped = format!(
        "the sweep stopped after {} of {total} runs (those are reported above and saved)",
        sweep.points.len()
    );
    match (failed, &sweep.stopped) {
        (Some(e), _) => Err(e.context(stopped)),
        (None, Some(why)) if !crate::app::signals::requested() => {
            Err(anyhow::anyhow!("{stopped}: {why}"))
        }
        _ => {
            if code == ExitCode::from(super::EXIT_FAILED) && !crate::app::signals::requested() {
                super::run::say_failure(failure(sweep));
            }
            Ok(code)
        }
    }
}

/// Why [`exit_code`] is 1: how many kept runs failed, and the first one's reason
/// (`2 of 6 runs failed; the first, --size 64k: 3 of 100 operations failed (timeout 3; …)`).
pub fn failure(sweep: &Sweep) -> Option<String> {
    let kept: Vec<&Point> = sweep.points.iter().filter(|p| !p.discarded).collect();
    let bad: Vec<&&Point> = kept.iter().filter(|p| failed(&p.result)).collect();
    let first = bad.first()?;
    let why = super::run::failure(&first.result)?;
    let mut words = Vec::new();
    if sweep.targets.len() > 1 {
        words.push(first.target.clone());
    }
    words.extend(first.values.iter().map(|(flag, v)| format!("{flag} {v}")));
    if sweep.runs > 1 {
        words.push(format!("run {}", first.run));
    }
    let which = match (bad.len(), words.is_empty()) {
        (1, true) => String::new(),
        (1, false) => format!(" ({})", words.join(" ")),
        (_, true) => "; the first".to_string(),
        (_, false) => format!("; the first, {}", words.join(" ")),
    };
    let runs = match kept.len() {
        1 => "run".to_string(),
        n => format!("of {n} runs"),
    };
    Some(format!("{} {runs} failed{which}: {why}", bad.len()))
}

/// Checks the thresholds against the kept runs of `sweep`, prints, saves: the exit code.
pub fn conclude(
    sweep: &Sweep,
    mut keep: Keep,
    json: bool,
    render: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    keep.name_points(kept_points(sweep));
    keep.finish(sweep, &kept(sweep), exit_code(sweep), json, render, out)
}

/// The names of the runs not discarded, in [`kept`]'s order: the target when there are
/// several, each swept flag's value, the run's number when there are repeats
/// (`local --connections 100 run 2`).
pub fn kept_points(sweep: &Sweep) -> Vec<String> {
    sweep
        .points
        .iter()
        .filter(|p| !p.discarded)
        .map(|p| {
            let mut words = Vec::new();
            if sweep.targets.len() > 1 {
                words.push(p.target.clone());
            }
            words.extend(p.values.iter().map(|(flag, v)| format!("{flag} {v}")));
            if sweep.runs > 1 {
                words.push(format!("run {}", p.run));
            }
            words.join(" ")
        })
        .collect()
}

/// The results of the runs not discarded.
pub fn kept(sweep: &Sweep) -> Vec<&crate::summary::Summary> {
    sweep
        .points
        .iter()
        .filter(|p| !p.discarded)
        .map(|p| &p.result)
        .collect()
}

/// 1 when a kept run would have exited 1 on its own, else 0.
pub fn exit_code(sweep: &Sweep) -> ExitCode {
    match sweep
        .points
        .iter()
        .any(|p| !p.discarded && failed(&p.result))
    {
        true => ExitCode::from(super::EXIT_FAILED),
        false => ExitCode::SUCCESS,
    }
}

/// Whether a run would have exited 1 on its own.
fn failed(s: &crate::summary::Summary) -> bool {
    super::run::exit_code(s) != ExitCode::SUCCESS
}
