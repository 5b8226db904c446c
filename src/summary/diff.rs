//! Two stored documents compared for a regression check (`wirebench diff OLD NEW`), by Welch's
//! t-test (two-sided, 95%; [`super::welch`]). (`compare` pairs its runs by round instead.)
//!
//! **Two results** (one run each): the samples are taken inside each run, its per-second
//! figures (each whole second is a sample; a last second shorter than half a second is left
//! out), tested by Welch's test with each side counted by its effective sample size, which
//! allows for the serial correlation of seconds ([`super::serial`]):
//!
//! - throughput, median and p99 latency: judged on the per-second figures, so a change must
//!   stand out from the run's own second-to-second spread to count;
//! - mean latency: shown, not judged. The series keeps no per-second mean, and a test over
//!   every request would take requests for independent samples, which they are not.
//!
//! One run a side cannot show run-to-run variance (what a restart, another placement of
//! memory or another machine state moves), which is often larger than second-to-second
//! spread; the report says so and names the way to measure it.
//!
//! **Two documents of repeated runs** (sweeps, compares, studies with `--runs`): each point
//! (target and swept values) of NEW against the same point of OLD, by Welch's test over the
//! kept runs' figures — independent samples, so the mean latency is judged too. A point with
//! one run a side falls back to the per-second test of those runs.
//!
//! A metric regressed when it got worse by more than the bound and the difference is
//! significant. Too few samples to test: a change beyond the bound counts, and the verdict
//! says it was not tested.

use super::serial;
use super::sweep::Metric;
use super::welch::{welch, Welch};
use super::Summary;
use serde::Serialize;

/// The schema identifier of `wirebench diff --json`.
pub const SCHEMA: &str = "wirebench.diff/1";

/// The method for two results, in words, for the report and the JSON.
pub const METHOD: &str = "Welch's unequal-variances t-test (Welch 1947), two-sided, 95%: \
throughput, p50 and p99 over each run's per-second figures, each side counted by its effective \
sample size for serial correlation (Zwiers & von Storch 1995; lags to the first non-positive \
autocorrelation, Geyer 1992); the mean latency shown, not judged";

/// The method for two documents of repeated runs.
pub const METHOD_RUNS: &str = "Welch's unequal-variances t-test (Welch 1947), two-sided, 95%, \
per point over the kept runs' figures (throughput, mean, p50, p99); a point with one run a \
side: its runs' per-second figures, corrected for serial correlation";

/// What two single runs cannot show.
pub const ONE_RUN: &str = "one run a side: the test sees each run's second-to-second spread, \
not run-to-run variance (a restart, another machine state), which is often larger; to \
measure that, repeat the runs (`wirebench compare A B --runs 5`, or `--runs 5` on both sweeps) \
and diff those documents";

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
    /// Samples on each side, old and new: seconds, or runs (requests for a result's mean,
    /// which is not judged).
    pub samples: [u64; 2],
    /// What the seconds are worth as independent samples, old and new (their effective
    /// sample size, [`serial::effective_n`]); None where the samples are runs (independent)
    /// or not tested.
    pub effective_samples: Option<[f64; 2]>,
    /// Worse by more than the bound, and significant (or untestable).
    pub regressed: bool,
    /// `improved` or `regressed` (beyond the bound and significant, or untestable),
    /// `inconclusive` (beyond the bound, not significant) or `unchanged` (within the bound);
    /// `shown` for a metric not judged.
    pub verdict: &'static str,
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
    /// `results` (one run a side) or `runs` (documents of repeated runs, point by point).
    pub samples: &'static str,
    /// What the test cannot see ([`ONE_RUN`] for two results); None for repeated runs.
    pub note: Option<&'static str>,
    /// The bound, percent.
    pub max_regression_percent: f64,
    /// Each metric of two results (empty for documents of runs: see `points`).
    pub changes: Vec<Change>,
    /// Each point found in both documents of runs, with its metrics.
    pub points: Vec<PointChanges>,
    /// Points found in only one of the documents, e.g. `only in old: web c=10`.
    pub unmatched: Vec<String>,
    /// What makes the two another test, compared anyway (`--force`): `target A vs B`,
    /// `connections 1 vs 100` … ([`differences`]); empty for runs of one test.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<String>,
    /// Whether any metric regressed.
    pub regressed: bool,
}

/// One point (target and swept values) of two documents of runs.
#[derive(Clone, Debug, Serialize)]
pub struct PointChanges {
    /// The target's name.
    pub target: String,
    /// The swept values, `flag=value` separated by spaces (empty without a sweep).
    pub at: String,
    /// Kept runs, old and new.
    pub runs: [u64; 2],
    /// Each metric.
    pub changes: Vec<Change>,
}

/// The kept runs of one point of a document of runs.
#[derive(Clone, Debug)]
pub struct RunsAt {
    /// The target's name.
    pub target: String,
    /// The swept values, as [`PointChanges::at`].
    pub at: String,
    /// The runs' results, in the order they ran.
    pub runs: Vec<Summary>,
}

/// Every point of `new` against the same point of `old`: the matched points and a line per
/// point only one side has.
pub fn point_changes(
    old: &[RunsAt],
    new: &[RunsAt],
    bound: f64,
) -> (Vec<PointChanges>, Vec<String>) {
    let name = |p: &RunsAt| match p.at.is_empty() {
        true => p.target.clone(),
        false => format!("{} {}", p.target, p.at),
    };
    let find = |side: &[RunsAt], p: &RunsAt| -> Option<usize> {
        side.iter()
            .position(|q| q.target == p.target && q.at == p.at)
    };
    let mut matched = Vec::new();
    let mut unmatched = Vec::new();
    for o in old {
        match find(new, o) {
            Some(i) => matched.push(point(o, &new[i], bound)),
            None => unmatched.push(format!("only in old: {}", name(o))),
        }
    }
    for n in new.iter().filter(|n| find(old, n).is_none()) {
        unmatched.push(format!("only in new: {}", name(n)));
    }
    (matched, unmatched)
}

/// One point's metrics over its runs (or, with one run a side, over those runs' seconds).
fn point(old: &RunsAt, new: &RunsAt, bound: f64) -> PointChanges {
    let runs = [old.runs.len() as u64, new.runs.len() as u64];
    let changes = match (old.runs.as_slice(), new.runs.as_slice()) {
        ([o], [n]) => changes(o, n, bound),
        _ => {
            let metrics = [
                ("ops_per_s", Metric::Rate, false),
                ("mean_us", Metric::Mean, true),
                ("p50_us", Metric::P50, true),
                ("p99_us", Metric::P99, true),
            ];
            metrics
                .into_iter()
                .filter_map(|(name, metric, higher_is_worse)| {
                    let of = |runs: &[Summary]| -> Vec<f64> {
                        runs.iter().filter_map(|s| metric.of(s)).collect()
                    };
                    let (so, sn) = (of(&old.runs), of(&new.runs));
                    let (mo, mn) = (super::stats::of(&so)?.mean, super::stats::of(&sn)?.mean);
                    let samples = [so.len() as u64, sn.len() as u64];
                    let test = welch(&sn, &so);
                    Some(judge(
                        name,
                        higher_is_worse,
                        mo,
                        mn,
                        test,
                        samples,
                        None,
                        bound,
                    ))
                })
                .collect()
        }
    };
    PointChanges {
        target: old.target.clone(),
        at: old.at.clone(),
        runs,
        changes,
    }
}

/// Per-second samples of a run: rate, p50, p99 (whole seconds, or the last one if ≥ 0.5 s).
fn per_second(s: &Summary) -> [Vec<f64>; 3] {
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for p in super::sweep::samples(s) {
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
            effective_samples: None,
            regressed: false,
            verdict: "shown",
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
    let tested = serial::welch(sn, so);
    judge(
        metric,
        higher_is_worse,
        old,
        new,
        tested.map(|(w, _)| w),
        [so.len() as u64, sn.len() as u64],
        // serial::welch gives (new, old); the document says old, new.
        tested.map(|(_, [n, o])| [o, n]),
        bound,
    )
}

/// The verdict on one metric.
#[allow(
    clippy::too_many_arguments,
    reason = "one verdict's eight facts, each named"
)]
fn judge(
    metric: &'static str,
    higher_is_worse: bool,
    old: f64,
    new: f64,
    test: Option<Welch>,
    samples: [u64; 2],
    effective_samples: Option<[f64; 2]>,
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
    // Judged both ways: a change beyond the bound is an improvement or a regression when
    // significant, inconclusive when not; within the bound, unchanged for this check.
    let beyond = worse_by.abs() > bound;
    let significant = test.map(|w| w.significant);
    let called = beyond && significant.unwrap_or(true);
    let regressed = called && worse_by > 0.0;
    let (verdict, word) = match (called, worse_by > 0.0) {
        (true, true) => ("regressed", "regressed"),
        (true, false) => ("improved", "improved"),
        (false, _) if beyond => ("inconclusive", ""),
        (false, _) => ("unchanged", ""),
    };
    let by = worse_by.abs();
    let text = match (verdict, significant) {
        ("regressed" | "improved", Some(_)) => {
            format!("{metric} {word} {by:.1}% (beyond {bound}%; significant)")
        }
        ("regressed" | "improved", None) => {
            format!("{metric} {word} {by:.1}% (beyond {bound}%; too few samples to test)")
        }
        ("inconclusive", _) => format!(
            "{metric} {change_percent:+.1}%: inconclusive (beyond {bound}% but not significant)"
        ),
        _ => format!("{metric} {change_percent:+.1}%: unchanged (within {bound}%)"),
    };
    Change {
        metric,
        old,
        new,
        change_percent,
        higher_is_worse,
        welch: test,
        samples,
        effective_samples,
        regressed,
        verdict,
        text,
    }
}

/// What makes `new` another test than `old`: its target (when `with_target`), protocol, mode,
/// load shape (closed loop, a rate or a ramp), connections, pipeline, think time and request
/// size, each as `what: old vs new`. Empty when they are runs of one test. `diff` refuses to
/// judge across these (a change of load is not a regression of the target).
pub fn differences(old: &Summary, new: &Summary, with_target: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what} {a} vs {b}"));
        }
    };
    if with_target {
        differ("target", old.target.clone(), new.target.clone());
    }
    differ(
        "protocol",
        old.protocol.to_string(),
        new.protocol.to_string(),
    );
    differ("mode", old.mode.to_string(), new.mode.to_string());
    let load = |s: &Summary| match &s.open_loop {
        Some(o) => format!("an open loop ({})", o.schedule),
        None => "a closed loop".to_string(),
    };
    differ("load", load(old), load(new));
    let (o, n) = (&old.config, &new.config);
    differ(
        "connections",
        o.connections.to_string(),
        n.connections.to_string(),
    );
    let pipeline = |p: Option<usize>| p.unwrap_or(1).to_string();
    differ("pipeline", pipeline(o.pipeline), pipeline(n.pipeline));
    let think = |c: &super::Config| match (&c.think_law, c.think_s) {
        (Some(law), _) => law.clone(),
        (None, Some(t)) => format!("{t}s"),
        (None, None) => "none".to_string(),
    };
    differ("think", think(o), think(n));
    differ(
        "request size",
        format!("{} B", o.request_bytes),
        format!("{} B", n.request_bytes),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::judge;

    /// A change is judged both ways: beyond the bound and significant (or untestable) it is an
    /// improvement or a regression, beyond it but not significant inconclusive, within it
    /// unchanged (an improvement of 35.8% was once "within 5%").
    #[test]
    fn verdicts_say_improved_regressed_inconclusive_or_unchanged() {
        let at = |higher_is_worse, old, new| {
            judge("m", higher_is_worse, old, new, None, [1, 1], None, 5.0)
        };
        let up = at(false, 100.0, 135.8);
        assert_eq!(
            (up.verdict, up.regressed),
            ("improved", false),
            "{}",
            up.text
        );
        assert!(up.text.contains("improved 35.8%"), "{}", up.text);
        let down = at(false, 100.0, 50.0);
        assert_eq!((down.verdict, down.regressed), ("regressed", true));
        let slower = at(true, 100.0, 200.0);
        assert_eq!(slower.verdict, "regressed");
        let same = at(true, 100.0, 103.0);
        assert_eq!((same.verdict, same.regressed), ("unchanged", false));
        assert!(same.text.contains("unchanged (within 5%)"), "{}", same.text);
        let noisy = super::Welch {
            difference: 1.0,
            ci95: 2.0,
            df: 4.0,
            t: 1.0,
            significant: false,
        };
        let wide = judge("m", true, 100.0, 150.0, Some(noisy), [3, 3], None, 5.0);
        assert_eq!((wide.verdict, wide.regressed), ("inconclusive", false));
        assert!(wide.text.contains("inconclusive"), "{}", wide.text);
    }
}
