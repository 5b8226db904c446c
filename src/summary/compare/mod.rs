//! Comparison of targets over repeated rounds: each target's change from the baseline per
//! metric, paired by round (each round's target figure over the baseline's, [`super::paired`]:
//! one interval decides the verdict), and the Flash study's view of each target's latency
//! shape (docs/studies.md: throughput, median, mean, p95; the mean above p95 flagged).

mod judge;

pub use judge::{verdicts, withhold};

use super::paired::Method;
use super::stats;
use super::sweep::{Metric, Sweep};
use super::Name;
use serde::{Deserialize, Serialize};

/// The metrics a comparison gives a verdict on.
pub const METRICS: [Metric; 5] = [
    Metric::Rate,
    Metric::Mean,
    Metric::P50,
    Metric::P95,
    Metric::P99,
];

/// The schema identifier of `wirebench compare --json`.
pub const SCHEMA: &str = "wirebench.compare/1";

/// A whole comparison: the runs, the verdicts and the shapes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: Name,
    /// The test used, in words ([`METHOD`]).
    pub method: Name,
    /// The baseline target's name.
    pub baseline: String,
    /// The seed of the targets' order and the percentiles' bootstrap (`--seed` repeats it);
    /// None for a comparison judged from runs in the order given.
    pub seed: Option<u64>,
    /// The order the targets ran in, per round and point.
    pub order: Vec<Round>,
    /// Each other target against it, per metric and point.
    pub verdicts: Vec<Verdict>,
    /// With `--runs auto`: the precision asked for, the rounds run, and whether it was met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<super::auto_runs::AutoRuns>,
    /// Each target's latency shape, per point.
    pub shapes: Vec<Shape>,
    /// Every run (schema `wirebench.sweep/1`).
    pub sweep: Sweep,
}

/// The name `report` and JSON give the method.
pub const METHOD: &str = "paired by round: each round's target figure over the baseline's; the \
     change is the geometric mean of those ratios with a 95% CI of the mean log-ratio (Kalibera & \
     Jones, ISMM 2013): Student's t for throughput and the mean, a seeded block bootstrap over \
     rounds for p50, p95 and p99; significant iff the whole CI lies beyond the metric's noise \
     threshold (±threshold_pct; 0: iff it excludes 0), as criterion.rs's noise threshold; \
     inconclusive when a CI that calls nothing is wider than ±50% of the ratio, and p95/p99 below 10 \
     rounds or when a sign test at 5% finds the rounds do not lean the verdict's way; targets in \
     a random order within each round (Abedi & Brecht, ICPE 2017)";

/// Rounds below which a tail (p95, p99) gets no verdict: beside a CPU hog, identical servers'
/// p95 and p99 differed by +200% in a round or two of six often enough to be called 3 times in
/// 20 compares (issue 38); ten rounds let a sign test see such rounds as the few they are.
pub const TAIL_MIN_ROUNDS: usize = 10;

/// An interval wider than this, ± % of its ratio ([`super::auto_runs::half_width_pct`]), tells
/// nothing either way: the verdict is inconclusive, whatever its bounds.
pub const WIDE_PCT: f64 = 50.0;

/// Changes too small to call, per metric, in % of the baseline (`--threshold`,
/// `--tail-threshold`). Two instances of one server differ by a little for good: on a machine
/// with a CPU hog beside them, identical `serve tcp --delay 1ms` processes differed by
/// 1-3% in throughput and the mean, and by 10-40% in p95 and p99, persistently over a
/// comparison's rounds (tests/compare_noise.rs). Such a difference is real but says nothing
/// about the targets, so a verdict calls a change only when its whole 95% CI lies beyond the
/// threshold (criterion.rs does the same with its 1% noise threshold).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Thresholds {
    /// Throughput, the mean and the median, %.
    pub center_pct: f64,
    /// p95 and p99, %.
    pub tail_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            center_pct: 3.0,
            tail_pct: 10.0,
        }
    }
}

impl Thresholds {
    /// None: every change the CI shows is called (the CI excluding 0 suffices).
    pub const NONE: Thresholds = Thresholds {
        center_pct: 0.0,
        tail_pct: 0.0,
    };

    /// The threshold of metric `m`, %.
    pub fn of(&self, m: Metric) -> f64 {
        match m {
            Metric::P95 | Metric::P99 => self.tail_pct,
            _ => self.center_pct,
        }
    }
}

/// One target against the baseline on one metric at one point, paired by round. A field an
/// older document lacks reads as its default; its own verdicts (Welch's t-test) carry
/// `ci95_percent` and `welch` in place of the paired interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Verdict {
    /// The target's name.
    pub target: String,
    /// The swept values of the point (empty without a sweep).
    pub at: String,
    /// `ops_per_s`, `mean_us`, `p50_us`, `p95_us`, `p99_us`.
    pub metric: Name,
    /// The baseline's mean over its kept runs.
    pub baseline_mean: f64,
    /// The target's mean over its kept runs.
    pub mean: f64,
    /// The change as a ratio: the geometric mean of the per-round ratios (target / baseline).
    pub ratio: f64,
    /// The change in %, (ratio − 1)·100.
    pub difference_percent: f64,
    /// The 95% interval's low end, in %.
    pub low_pct: f64,
    /// The 95% interval's high end, in %.
    pub high_pct: f64,
    /// Whether the whole interval lies beyond ±`threshold_pct` (one computation: they cannot
    /// disagree; with a threshold of 0, whether it excludes 0).
    pub significant: bool,
    /// The noise threshold of this metric, % ([`Thresholds`]).
    pub threshold_pct: f64,
    /// How the interval was computed: `t` (Student's t of the mean log-ratio) or `bootstrap`
    /// (over rounds, for percentiles).
    pub interval: Method,
    /// Each round's ratio, by run number, outliers flagged.
    pub rounds: Vec<RoundRatio>,
    /// The verdict without the outlier rounds, when there are some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_outliers: Option<Without>,
    /// The verdict in words.
    pub text: String,
    /// Why no verdict could be given either way (too few rounds for a tail, an interval too
    /// wide, rounds that do not lean the way of the interval); `significant` is then false.
    /// None: the verdict stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inconclusive: Option<String>,
    /// Kept rounds left out of this verdict, and why (a run that measured nothing: no
    /// connection, no reply): named, never dropped without a word.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
    /// An older document's interval: half the width of the 95% CI of the difference, in %
    /// (no `low_pct`, `high_pct`); None in documents written since verdicts are paired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95_percent: Option<f64>,
    /// An older document's Welch's t-test, which decided its significance; None since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub welch: Option<OlderWelch>,
}

/// Welch's t-test as an older comparison document wrote it in each verdict.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OlderWelch {
    /// mean(target) − mean(baseline).
    pub difference: f64,
    /// Half the width of the difference's 95% CI.
    pub ci95: f64,
    /// The Welch–Satterthwaite degrees of freedom; None when neither side varied.
    pub df: Option<f64>,
    /// The t statistic.
    pub t: f64,
    /// Whether the interval excluded 0.
    pub significant: bool,
}

/// A kept round a verdict could not use.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Dropped {
    /// The run number, from 1.
    pub run: usize,
    /// Why, in words (`a measured no p99 (no reply)`).
    pub why: String,
}

/// One round's ratio, the target's figure over the baseline's in that round.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoundRatio {
    /// The run number, from 1 (the tables' Run N).
    pub run: usize,
    /// target / baseline.
    pub ratio: f64,
    /// Whether this round is an outlier ([`super::paired::outliers`]).
    pub outlier: bool,
}

/// A verdict recomputed without its outlier rounds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Without {
    /// The change in %, without them.
    pub difference_percent: f64,
    /// The 95% interval's low end, in %.
    pub low_pct: f64,
    /// The 95% interval's high end, in %.
    pub high_pct: f64,
    /// Whether that interval lies beyond the threshold.
    pub significant: bool,
    /// Whether this differs from the verdict over every round: the outliers decided it.
    pub changes_verdict: bool,
    /// In words.
    pub text: String,
}

/// The order the targets ran in, per round and point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Round {
    /// The run number, from 1.
    pub run: usize,
    /// The swept values of the point; empty without a sweep.
    pub at: String,
    /// The targets' names, in the order they ran.
    pub targets: Vec<String>,
}

/// The order of every round of `sweep` (discarded ones too), as it ran.
pub fn order(sweep: &Sweep, points: &[(Vec<usize>, String)]) -> Vec<Round> {
    let mut out: Vec<Round> = Vec::new();
    for p in &sweep.points {
        let at = (points.iter().find(|(a, _)| *a == p.at)).map_or(String::new(), |x| x.1.clone());
        match out.last_mut() {
            Some(r) if r.run == p.run && r.at == at => r.targets.push(p.target.clone()),
            _ => out.push(Round {
                run: p.run,
                at,
                targets: vec![p.target.clone()],
            }),
        }
    }
    out
}

/// The Flash study's view of one target at one point: means over the kept runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Shape {
    /// The target's name.
    pub target: String,
    /// The swept values of the point.
    pub at: String,
    /// Operations (or messages) per second.
    pub ops_per_s: f64,
    /// Median latency, µs.
    pub p50_us: Option<f64>,
    /// Mean latency, µs.
    pub mean_us: Option<f64>,
    /// 95th percentile latency, µs.
    pub p95_us: Option<f64>,
    /// The mean above p95: a few very slow requests dominate it.
    pub mean_above_p95: bool,
}

/// Each target's shape at each point.
pub fn shapes(sweep: &Sweep, points: &[(Vec<usize>, String)]) -> Vec<Shape> {
    let mut out = Vec::new();
    for (at, label) in points {
        for (ti, t) in sweep.targets.iter().enumerate() {
            let mean = |m| stats::of(&sweep.kept(m, ti, at)).map(|s| s.mean);
            let (mean_us, p95_us) = (mean(Metric::Mean), mean(Metric::P95));
            out.push(Shape {
                target: t.name.clone(),
                at: label.clone(),
                ops_per_s: mean(Metric::Rate).unwrap_or(0.0),
                p50_us: mean(Metric::P50),
                mean_us,
                p95_us,
                mean_above_p95: matches!((mean_us, p95_us), (Some(m), Some(p)) if m > p),
            });
        }
    }
    out
}
