//! A sweep: one run per target and point (and round), each its own validated plan, run
//! interleaved across targets (A B A B …, never A A B B), and the sweep of what they measured.

use super::shards::{At, Shards};
use super::{point, Document, Error, Watch};
use crate::engine::stop::Stop;
use crate::load::sweep::Axis;
use crate::plan::Plan;
use crate::summary::sweep::{NamedTarget, Point, Sweep, SCHEMA};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A sweep's design: the targets × swept points × rounds, every run validated. It is a
/// document: it serializes with each run's plan as its arguments, and reads back validated.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Points {
    /// The targets, named.
    pub targets: Vec<NamedTarget>,
    /// The swept flags.
    pub axes: Vec<Axis>,
    /// The points, each an index per axis (the first axis turning fastest).
    pub points: Vec<Vec<usize>>,
    /// Runs of each target at each point (`--runs`).
    pub rounds: usize,
    /// The first runs of each, discarded (`--discard-first`, `--discard K`).
    pub discard: usize,
    /// One plan per (round, point, target), in the order they run.
    pub runs: Vec<Run>,
    /// The seed of [`Points::shuffle`], once the targets' order was randomized.
    pub seed: Option<u64>,
    /// The units the reports give rates in (`--units`).
    pub units: Option<crate::units::ByteUnit>,
    /// Each run launched as shards and merged (`--shards`), if so: how they are launched is
    /// the command layer's, not part of the document.
    #[serde(skip)]
    pub sharded: Option<Arc<dyn Shards>>,
}

/// One run of a sweep.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Run {
    /// Which round, from 0.
    pub round: usize,
    /// Index into the points.
    pub point: usize,
    /// Index into the targets.
    pub target: usize,
    /// Its validated plan.
    pub plan: Plan,
}

impl Points {
    /// Puts the targets in a random order within each round and point, drawn from `seed`
    /// (randomized multiple interleaved trials: Abedi & Brecht, ICPE 2017). A fixed order
    /// lets anything periodic, or the first run of a round after a pause, always hit the
    /// same target; a random one spreads it, and the seed repeats the order.
    pub fn shuffle(&mut self, seed: u64) {
        let mut rng = crate::summary::paired::SplitMix64(seed);
        let same = |a: &Run, b: &Run| (a.round, a.point) == (b.round, b.point);
        for group in self.runs.chunk_by_mut(same) {
            rng.shuffle(group);
        }
        self.seed = Some(seed);
    }

    /// One target, nothing swept, one run: a plain run.
    pub fn is_single(&self) -> bool {
        self.runs.len() == 1 && self.axes.is_empty()
    }

    /// The empty sweep these points fill.
    fn sweep(&self) -> Sweep {
        Sweep {
            schema: SCHEMA.into(),
            wirebench_version: env!("CARGO_PKG_VERSION").into(),
            targets: self.targets.clone(),
            axes: self.axes.clone(),
            runs: self.rounds,
            discard: self.discard,
            points: Vec::with_capacity(self.runs.len()),
            stopped: None,
            busy: None,
            units: self.units,
            seed: self.seed,
        }
    }
}

/// Runs every point of `points` in order: the sweep, its busy line said when the machine was
/// (see [`crate::summary::busy`]).
pub fn execute(points: &Points, stop: &Stop, watch: &mut dyn Watch) -> Result<Sweep, Error> {
    let on_point = &mut |w: &mut dyn Watch, s: Sweep| {
        let doc = Document::Run(s);
        w.so_far(&doc);
        let Document::Run(s) = doc else {
            unreachable!("a sweep's document holds its sweep")
        };
        s
    };
    let mut sweep = measure_until(points, stop, watch, on_point, &mut |_| false)?;
    sweep.busy = crate::summary::busy::sweep_line(&sweep);
    Ok(sweep)
}

/// Shows the sweep so far to a watch, and hands it back.
pub type OnPoint<'a> = &'a mut dyn FnMut(&mut dyn Watch, Sweep) -> Sweep;

/// Runs every point of `points` in order, showing the sweep so far to `on_point` after each,
/// until one cannot run, `stop` is requested, or, after a whole round, `done` says the sweep
/// so far is enough (`compare --runs auto`; the sweep's `runs` is then the rounds measured).
/// A target that could not be reached is not an error: its point is recorded (one failed
/// operation), and is the sweep's last, the reason in [`Sweep::stopped`].
pub fn measure_until(
    points: &Points,
    stop: &Stop,
    watch: &mut dyn Watch,
    on_point: OnPoint,
    done: &mut dyn FnMut(&Sweep) -> bool,
) -> Result<Sweep, Error> {
    let total = points.runs.len();
    let mut sweep = points.sweep();
    let mut runs = points.runs.iter().peekable();
    while let Some(run) = runs.next() {
        if stop.requested() {
            // Asked between two runs (by the watch, or a signal as the last one ended): no
            // run starts after a stop.
            sweep.stopped = Some(format!("stopped by {}", stop.by()));
            break;
        }
        let at = points.points[run.point].clone();
        let values: BTreeMap<_, _> = (sweep.axes.iter().zip(&at))
            .map(|(x, &v)| (x.flag.clone(), x.values[v].clone()))
            .collect();
        let name = sweep.targets[run.target].name.clone();
        let (result, lost) = match measure(points, run, &values, stop, watch) {
            Ok(measured) => measured,
            Err(e) => {
                let any = !sweep.points.is_empty();
                return Err(Error::after(e, Document::Run(sweep), any));
            }
        };
        if let (Some(why), true) = (&lost, sweep.points.is_empty() && result.ok == 0) {
            // Nothing measured yet: the study fails as a single run does.
            return Err(Error::after(
                anyhow::anyhow!("{why}"),
                Document::Run(sweep),
                false,
            ));
        }
        sweep.points.push(Point {
            run: run.round + 1,
            discarded: run.round < points.discard,
            target: name,
            values,
            result,
            target_index: run.target,
            at,
        });
        // A stop: the run it stopped is kept as measured; no later one starts. A target that
        // could not be reached ends the sweep with its point.
        sweep.stopped = match (lost, stop.requested()) {
            (Some(why), _) => Some(why),
            (None, true) => Some(format!("stopped by {}", stop.by())),
            (None, false) => None,
        };
        if sweep.stopped.is_some() {
            sweep = on_point(watch, sweep);
            break;
        }
        // Shown (and saved) as it goes, marked in progress: a wirebench killed now leaves
        // these runs.
        sweep.stopped = Some(format!(
            "in progress: {} of {total} runs finished",
            sweep.points.len()
        ));
        sweep = on_point(watch, sweep);
        sweep.stopped = None;
        let ends_round = runs.peek().is_none_or(|next| next.round != run.round);
        if ends_round && done(&sweep) {
            sweep.runs = run.round + 1;
            break;
        }
    }
    Ok(sweep)
}

/// Measures `run`, at the swept `values`, here or on the shards.
fn measure(
    points: &Points,
    run: &Run,
    values: &BTreeMap<crate::summary::Name, String>,
    stop: &Stop,
    watch: &mut dyn Watch,
) -> anyhow::Result<(crate::summary::Summary, Option<String>)> {
    let round = match points.rounds {
        1 => String::new(),
        n => format!(" run {}/{n}", run.round + 1),
    };
    let target = &points.targets[run.target];
    let what = format!("{}{round} {}", target.name, describe(values));
    let Some(shards) = &points.sharded else {
        return point::watched(&run.plan, &what, stop, watch);
    };
    let values = values_of(values);
    let at = At::Point {
        url: &target.url,
        values: &values,
    };
    super::shards::watched(&**shards, at, &what, &run.plan, watch).map(|r| (r, None))
}

/// A point's swept values as flag and value.
fn values_of(values: &BTreeMap<crate::summary::Name, String>) -> Vec<(&str, String)> {
    values
        .iter()
        .map(|(f, v)| (f.as_ref(), v.clone()))
        .collect()
}

/// `--size 1024 --connections 4`, for the progress line.
fn describe(values: &BTreeMap<crate::summary::Name, String>) -> String {
    let parts: Vec<String> = values.iter().map(|(f, v)| format!("{f} {v}")).collect();
    parts.join(" ")
}
