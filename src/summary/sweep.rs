//! A sweep's results: every point's summary, with the targets and swept values that locate it,
//! and the figures its tables show. Field names are the JSON schema (`schema/sweep.v1.json`).

use super::{Name, Summary};
use crate::load::sweep::Axis;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema identifier written into a sweep's JSON document.
pub const SCHEMA: &str = "wirebench.sweep/1";

/// A whole sweep: targets × swept values, one summary per point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Sweep {
    /// Always [`SCHEMA`].
    pub schema: Name,
    /// The wirebench version that measured.
    pub wirebench_version: Name,
    /// The targets, in the order given: the tables' rows.
    pub targets: Vec<NamedTarget>,
    /// The swept flags and their values; the first is the tables' columns.
    pub axes: Vec<Axis>,
    /// Runs of each target at each point (`--runs`).
    pub runs: usize,
    /// The first runs of each, discarded: kept out of every figure but their own cells.
    pub discard: usize,
    /// Every run, in the order it ran (interleaved across targets).
    pub points: Vec<Point>,
    /// Why the sweep ended before its last run (its target could not be reached; wirebench
    /// was stopped while it ran): a partial sweep, holding the runs finished. None: complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The one line saying the machine was busy over the kept runs (their median CPU
    /// pressure at [`super::busy::BUSY_PRESSURE_PERCENT`] or more), and what it means for the
    /// figures (a comparison: for its verdicts); None on a calm machine (issue 38).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
    /// The payload throughput unit `--units` forced on every table; None: chosen by the
    /// largest figure. How the tables print, not a measurement, so not in the JSON.
    #[serde(skip)]
    pub units: Option<crate::units::ByteUnit>,
    /// The seed that put the targets in a random order within each round (`compare`); None:
    /// in the order given. A comparison's JSON carries it (`seed`), not the sweep's.
    #[serde(skip)]
    pub seed: Option<u64>,
}

/// A target and the name its row carries.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NamedTarget {
    /// The name given (`local=tcp://…`), else the URL.
    pub name: String,
    /// The URL.
    pub url: String,
}

/// One run of the sweep.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    /// The target's name.
    pub target: String,
    /// Each swept flag's value at this point.
    pub values: BTreeMap<Name, String>,
    /// Which run of this target and point, from 1.
    pub run: usize,
    /// Whether it is one of the first `discard` runs, kept out of the statistics.
    pub discarded: bool,
    /// The run's result (schema `wirebench.result/1`); an older or partial one reads with
    /// defaults for what it lacks ([`Summary::tolerant`]).
    #[serde(deserialize_with = "super::read::tolerant_summary")]
    pub result: Summary,
    /// Index into `targets`.
    #[serde(skip)]
    pub target_index: usize,
    /// Index into each axis' values.
    #[serde(skip)]
    pub at: Vec<usize>,
}

/// A figure a sweep's tables show, one table per metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Ok operations (or bulk messages) per second.
    Rate,
    /// Payload bytes per second, both directions added (the receiver's count in bulk modes).
    Bytes,
    /// Median latency, µs.
    P50,
    /// 99th percentile latency, µs.
    P99,
    /// Mean latency, µs (compare's verdicts and the Flash view).
    Mean,
    /// 95th percentile latency, µs (the Flash view).
    P95,
    /// Failed operations.
    Errors,
}

/// Every metric, in the order of the tables.
pub const METRICS: [Metric; 5] = [
    Metric::Rate,
    Metric::Bytes,
    Metric::P50,
    Metric::P99,
    Metric::Errors,
];

impl Metric {
    /// This metric of one run; None where the run has no such figure (latency in bulk modes).
    pub fn of(self, s: &Summary) -> Option<f64> {
        match self {
            Metric::Rate => Some(s.throughput.messages_per_s),
            // Gbit/s both ways, back to bytes: the receiver's count in bulk modes.
            Metric::Bytes => Some(s.throughput.gbit_per_s * 1e9 / 8.0),
            Metric::P50 => s.latency.as_ref().map(|d| d.p50_us),
            Metric::P99 => s.latency.as_ref().map(|d| d.p99_us),
            Metric::Mean => s.latency.as_ref().map(|d| d.mean_us),
            Metric::P95 => s.latency.as_ref().map(|d| d.p95_us),
            Metric::Errors => Some(s.errors.total as f64),
        }
    }
}

/// The coefficient of variation above which a run's per-second figures are too spread for one
/// run to stand for its point: 10% for rates, bytes and the median, 25% for p99, whose
/// per-second values move more by nature (a few slow requests make a second's tail).
pub fn noisy_above(metric: Metric) -> Option<f64> {
    match metric {
        Metric::Rate | Metric::Bytes | Metric::P50 => Some(0.10),
        Metric::P99 => Some(0.25),
        Metric::Mean | Metric::P95 | Metric::Errors => None,
    }
}

/// The spread of `metric` over a run's whole seconds (each at least half a second): their
/// coefficient of variation, standard deviation over mean; None for a metric the series does
/// not keep (mean, p95, errors) or a run of under three seconds.
pub fn per_second_spread(metric: Metric, s: &Summary) -> Option<f64> {
    if whole_seconds(s) < 3 {
        return None;
    }
    let seconds = samples(s);
    let values: Vec<f64> = match metric {
        Metric::Rate => seconds.map(|p| p.ok as f64 / p.duration_s).collect(),
        Metric::Bytes => seconds
            .map(|p| (p.sent_bytes + p.received_bytes) as f64 / p.duration_s)
            .collect(),
        Metric::P50 => seconds.filter_map(|p| p.p50_us).collect(),
        Metric::P99 => seconds.filter_map(|p| p.p99_us).collect(),
        Metric::Mean | Metric::P95 | Metric::Errors => return None,
    };
    if values.len() < 3 {
        return None;
    }
    let st = super::stats::of(&values)?;
    (st.mean > 0.0).then(|| st.stddev / st.mean)
}

/// Whether a run moves messages one way (stream, source) rather than requests and replies.
fn bulk(s: &Summary) -> bool {
    s.mode.bulk()
}

/// The seconds of a run's series that count as samples of it: whole ones, and a last one of
/// at least half a second.
pub fn whole_seconds(s: &Summary) -> usize {
    samples(s).count()
}

/// The seconds of a run's series that [`whole_seconds`] counts, in order.
pub fn samples(s: &Summary) -> impl Iterator<Item = &crate::record::SeriesPoint> {
    s.series.iter().filter(|p| p.duration_s >= 0.5)
}

/// Whether one run's `metric` is too spread second to second to stand for its point alone.
pub fn noisy(metric: Metric, s: &Summary) -> bool {
    match (noisy_above(metric), per_second_spread(metric, s)) {
        (Some(bound), Some(cov)) => cov > bound,
        _ => false,
    }
}

impl Sweep {
    /// Every run of target `target` at the point whose axis indices are `at`, by run number.
    pub fn runs_of(&self, target: usize, at: &[usize]) -> Vec<&Point> {
        let mut v: Vec<&Point> = self
            .points
            .iter()
            .filter(|p| p.target_index == target && p.at == at)
            .collect();
        v.sort_by_key(|p| p.run);
        v
    }

    /// `metric` of each kept (not discarded) run of `target` at `at`.
    pub fn kept(&self, metric: Metric, target: usize, at: &[usize]) -> Vec<f64> {
        self.runs_of(target, at)
            .into_iter()
            .filter(|p| !p.discarded)
            .filter_map(|p| self.value(metric, p))
            .collect()
    }

    /// `metric` of one run as the sweep's tables show it, every run's cell and every mean
    /// alike: a request/response run's payload throughput one way where [`Sweep::one_way`]
    /// (its requests, as a pushed message is one).
    pub fn value(&self, metric: Metric, p: &Point) -> Option<f64> {
        match metric == Metric::Bytes && !bulk(&p.result) && self.one_way() {
            true => Some(p.result.throughput.sent_mb_per_s * 1e6),
            false => metric.of(&p.result),
        }
    }

    /// Each point's indices (its target's, its values' on each axis) found again from its
    /// names, as a sweep read back from JSON lacks them (they are not written): without them
    /// no point is found at its place (a study read back had no per-run tables).
    pub fn relocate(&mut self) {
        for p in &mut self.points {
            p.target_index = (self.targets.iter())
                .position(|t| t.name == p.target)
                .unwrap_or_default();
            p.at = (self.axes.iter())
                .map(|a| {
                    let v = p.values.get(&a.flag);
                    a.values
                        .iter()
                        .position(|x| Some(x) == v)
                        .unwrap_or_default()
                })
                .collect();
        }
    }

    /// Whether its payload throughput is counted one way: its runs mix request/response with
    /// bulk (push or upload), whose bytes go one way only, so request/response counts its
    /// requests alone and the rows compare (as the DIM study's table; issue 40: the echo's
    /// row added both directions beside the push's one).
    pub fn one_way(&self) -> bool {
        let bulks = self.points.iter().filter(|p| bulk(&p.result)).count();
        bulks > 0 && bulks < self.points.len()
    }

    /// `metric` of each kept run of `target` at `at`, with its run number (from 1), so that
    /// runs of the same round can be paired.
    pub fn kept_by_run(&self, metric: Metric, target: usize, at: &[usize]) -> Vec<(usize, f64)> {
        self.runs_of(target, at)
            .into_iter()
            .filter(|p| !p.discarded)
            .filter_map(|p| Some((p.run, self.value(metric, p)?)))
            .collect()
    }

    /// The mean of `metric` over the kept runs of `target` at `at` (the one run's figure
    /// without `--runs`); None when no run has it.
    pub fn mean(&self, metric: Metric, target: usize, at: &[usize]) -> Option<f64> {
        super::stats::of(&self.kept(metric, target, at)).map(|s| s.mean)
    }
}
