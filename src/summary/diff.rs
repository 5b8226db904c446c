//! Two stored results compared for a regression check (`wirebench diff OLD NEW`), by Welch's
//! t-test (two-sided, 95%; [`super::welch`]). `compare` has several runs per target and pairs
//! them by round; a stored result is one run, so the samples are taken inside it:
//!
//! - throughput, median and p99 latency: the run's per-second figures (each whole second is a
//!   sample; a last second shorter than half a second is left out), so a change must stand out
//!   from the run's own second-to-second spread to count;
//! - mean latency: shown, not judged. The series keeps no per-second mean, and a test over
//!   every request (the histogram's count, mean and deviation) would take requests for
//!   independent samples, which they are not (latencies come in bursts): it calls a 2 % change
//!   on an unchanged server significant.
//!
//! A metric regressed when it got worse by more than the bound and the difference is
//! significant. A run too short for two per-second samples cannot be tested: its change
//! beyond the bound counts, and the verdict says it was not tested.

use super::welch::{welch, Welch};
use super::Summary;
use serde::Serialize;

/// The schema identifier of `wirebench diff --json`.
pub const SCHEMA: &str = "wirebench.diff/1";

/// The method, in words, for the report and the JSON.
pub const METHOD: &str =
    "Welch's unequal-variances t-test (Welch 1947), two-sided, 95%: throughput, p50 and p99 \
over each run's per-second figures; the mean latency shown, not judged";

/// One metric, old against new.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// `ops_per_s`, `mean_us`, `p50_us`, `p99_us`.
    pub metric: &'static str,
    /// The old run's value (the whole run's figure).
    pub old: f64,
    /// The new run's value.
    pub new: f64,
    /// (new − old) / old, percent.
    pub change_percent: f64,
    /// Whether a rise is worse (latency) or a fall (throughput).
    pub higher_is_worse: bool,
    /// Welch's test of the samples (new against old); None when a side has under two samples.
    pub welch: Option<Welch>,
    /// Samples on each side: seconds (requests for the mean, which is not judged).
    pub samples: [u64; 2],
    /// Worse by more than the bound, and significant (or untestable).
    pub regressed: bool,
    /// The verdict in words.
    pub text: String,
}

/// `wirebench diff --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// [`METHOD`].
    pub method: &'static str,
    /// The old run's id.
    pub old: String,
    /// The new run's id.
    pub new: String,
    /// The bound, percent.
    pub max_regression_percent: f64,
    /// Each metric.
    pub changes: Vec<Change>,
    /// Whether any metric regressed.
    pub regressed: bool,
}

/// Per-second samples of a run: rate, p50, p99 (whole seconds, or the last one if ≥ 0.5 s).
fn per_second(s: &Summary) -> [Vec<f64>; 3] {
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for p in s.series.iter().filter(|p| p.duration_s >= 0.5) {
        out[0].push(p.ok as f64 / p.duration_s);
        out[1].extend(p.p50_us);
        out[2].extend(p.p99_us);
    }
    out
}

/// Each metric of `new` against `old`, with `bound` percent allowed.
pub fn changes(old: &Summary, new: &Summary, bound: f64) -> Vec<Change> {
    let (so, sn) = (per_second(old), per_second(new));
    let mut out = vec![change(
        "ops_per_s",
        false,
        old.throughput.ops_per_s,
        new.throughput.ops_per_s,
        &so[0],
        &sn[0],
        bound,
    )];
    if let (Some(lo), Some(ln)) = (&old.latency, &new.latency) {
        let pct = if lo.mean_us == 0.0 {
            0.0
        } else {
            100.0 * (ln.mean_us - lo.mean_us) / lo.mean_us
        };
        out.push(Change {
            metric: "mean_us",
            old: lo.mean_us,
            new: ln.mean_us,
            change_percent: pct,
            higher_is_worse: true,
            welch: None,
            samples: [lo.count, ln.count],
            regressed: false,
            text: format!(
                "mean_us {pct:+.1}%: shown, not judged (requests are not independent samples)"
            ),
        });
        out.push(change(
            "p50_us", true, lo.p50_us, ln.p50_us, &so[1], &sn[1], bound,
        ));
        out.push(change(
            "p99_us", true, lo.p99_us, ln.p99_us, &so[2], &sn[2], bound,
        ));
    }
    out
}

/// A metric judged on per-second samples.
fn change(
    metric: &'static str,
    higher_is_worse: bool,
    old: f64,
    new: f64,
    so: &[f64],
    sn: &[f64],
    bound: f64,
) -> Change {
    let test = welch(sn, so);
    judge(
        metric,
        higher_is_worse,
        old,
        new,
        test,
        [so.len() as u64, sn.len() as u64],
        bound,
    )
}

/// The verdict on one metric.
fn judge(
    metric: &'static str,
    higher_is_worse: bool,
    old: f64,
    new: f64,
    test: Option<Welch>,
    samples: [u64; 2],
    bound: f64,
) -> Change {
    let change_percent = if old == 0.0 {
        0.0
    } else {
        100.0 * (new - old) / old
    };
    let worse_by = if higher_is_worse {
        change_percent
    } else {
        -change_percent
    };
    let beyond = worse_by > bound;
    let significant = test.map(|w| w.significant);
    let regressed = beyond && significant.unwrap_or(true);
    let text = match (regressed, significant) {
        (true, Some(_)) => {
            format!("{metric} regressed {worse_by:.1}% (beyond {bound}%; significant)")
        }
        (true, None) => {
            format!("{metric} regressed {worse_by:.1}% (beyond {bound}%; too few samples to test)")
        }
        (false, Some(false)) if beyond => {
            format!("{metric} {change_percent:+.1}%: not significant")
        }
        (false, _) => format!("{metric} {change_percent:+.1}%: within {bound}%"),
    };
    Change {
        metric,
        old,
        new,
        change_percent,
        higher_is_worse,
        welch: test,
        samples,
        regressed,
        text,
    }
}
