//! Comparison of targets over repeated runs: each target's difference from the baseline per
//! metric, by Welch's t-test on the per-run figures (B. L. Welch, "The generalization of
//! 'Student's' problem when several different population variances are involved",
//! Biometrika 34, 1947), and the Flash study's view of each target's latency shape
//! (../shared/seeds/002: throughput, median, mean, p95; the mean above p95 flagged).

use super::stats::{self, t975};
use super::sweep::{Metric, Sweep};
use serde::Serialize;

/// The metrics a comparison gives a verdict on.
pub const METRICS: [Metric; 4] = [Metric::Rate, Metric::Mean, Metric::P50, Metric::P99];

/// The schema identifier of `wirebench compare --json`.
pub const SCHEMA: &str = "wirebench.compare/1";

/// A whole comparison: the runs, the verdicts and the shapes.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The test used, in words ([`METHOD`]).
    pub method: &'static str,
    /// The baseline target's name.
    pub baseline: String,
    /// Each other target against it, per metric and point.
    pub verdicts: Vec<Verdict>,
    /// Each target's latency shape, per point.
    pub shapes: Vec<Shape>,
    /// Every run (schema `wirebench.sweep/1`).
    pub sweep: Sweep,
}

/// The name `report` and JSON give the method.
pub const METHOD: &str =
    "Welch's unequal-variances t-test on the per-run figures (Welch 1947), two-sided, 95%";

/// Welch's test of two samples' means.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Welch {
    /// mean(a) − mean(b).
    pub difference: f64,
    /// Half the width of the difference's 95% confidence interval, t(0.975, df) · se.
    pub ci95: f64,
    /// The Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// The t statistic, difference / se.
    pub t: f64,
    /// Whether the interval excludes 0 (p < 0.05, two-sided).
    pub significant: bool,
}

/// Welch's t-test of `a` against `b`; None unless each has two values or more.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (stats::of(a)?, stats::of(b)?);
    welch_of((sa.n, sa.mean, sa.stddev), (sb.n, sb.mean, sb.stddev))
}

/// Welch's t-test from each sample's (count, mean, sample standard deviation), as a
/// histogram gives them; None unless each has two values or more.
pub fn welch_of(a: (usize, f64, f64), b: (usize, f64, f64)) -> Option<Welch> {
    let ((na, ma, sda), (nb, mb, sdb)) = (a, b);
    if na < 2 || nb < 2 {
        return None;
    }
    let (va, vb) = (sda.powi(2) / na as f64, sdb.powi(2) / nb as f64);
    let se = (va + vb).sqrt();
    let difference = ma - mb;
    if se == 0.0 {
        // No spread at all: any difference is certain, none is none.
        return Some(Welch {
            difference,
            ci95: 0.0,
            df: f64::INFINITY,
            t: 0.0,
            significant: difference != 0.0,
        });
    }
    // Welch–Satterthwaite: df = (va + vb)² / (va²/(na−1) + vb²/(nb−1)).
    let df = (va + vb).powi(2) / (va.powi(2) / (na - 1) as f64 + vb.powi(2) / (nb - 1) as f64);
    let ci95 = t975(df) * se;
    Some(Welch {
        difference,
        ci95,
        df,
        t: difference / se,
        significant: difference.abs() > ci95,
    })
}

/// Half the width of the 95% confidence interval of mean(a) / mean(b), by the delta method
/// (the ratio's relative variance is the sum of the means' relative variances, var(ā)/ā² +
/// var(b̄)/b̄²; Satterthwaite's degrees of freedom on those two terms). Dividing Welch's
/// interval by the baseline mean would take that mean as exact and understate the spread when
/// the baseline itself is noisy. Valid while the baseline mean's own CV is small, as it is for
/// repeated benchmark runs; Fieller's theorem would be the exact interval. None unless both
/// have two values or more and nonzero means.
pub fn ratio_ci95(a: &[f64], b: &[f64]) -> Option<f64> {
    let (sa, sb) = (stats::of(a)?, stats::of(b)?);
    if sa.n < 2 || sb.n < 2 || sa.mean == 0.0 || sb.mean == 0.0 {
        return None;
    }
    let rel = |s: &stats::Stats| s.stddev.powi(2) / s.n as f64 / s.mean.powi(2);
    let (ua, ub) = (rel(&sa), rel(&sb));
    let ratio = sa.mean / sb.mean;
    if ua + ub == 0.0 {
        return Some(0.0);
    }
    let df = (ua + ub).powi(2) / (ua.powi(2) / (sa.n - 1) as f64 + ub.powi(2) / (sb.n - 1) as f64);
    Some(t975(df) * ratio.abs() * (ua + ub).sqrt())
}

/// One target against the baseline on one metric at one point.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The target's name.
    pub target: String,
    /// The swept values of the point (empty without a sweep).
    pub at: String,
    /// `ops_per_s`, `mean_us`, `p50_us`, `p99_us`.
    pub metric: &'static str,
    /// The baseline's mean over its kept runs.
    pub baseline_mean: f64,
    /// The target's mean over its kept runs.
    pub mean: f64,
    /// mean / baseline_mean.
    pub ratio: f64,
    /// The difference in % of the baseline mean.
    pub difference_percent: f64,
    /// Half the width of the 95% CI of the difference in % ([`ratio_ci95`]: both means'
    /// uncertainty counted, the baseline's too).
    pub ci95_percent: f64,
    /// Welch's test itself.
    pub welch: Welch,
    /// The verdict in words.
    pub text: String,
}

/// Words for a metric in a verdict.
fn words(m: Metric) -> (&'static str, &'static str) {
    match m {
        Metric::Rate => ("ops_per_s", "the throughput"),
        Metric::Mean => ("mean_us", "the mean latency"),
        Metric::P50 => ("p50_us", "the median latency"),
        Metric::P99 => ("p99_us", "the p99 latency"),
        Metric::Bytes => ("bytes_per_s", "the payload throughput"),
        Metric::P95 => ("p95_us", "the p95 latency"),
        Metric::Errors => ("errors", "the errors"),
    }
}

/// Every target but the baseline, on every metric, at every point of `sweep`.
pub fn verdicts(sweep: &Sweep, baseline: usize, points: &[(Vec<usize>, String)]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (at, label) in points {
        for m in METRICS {
            let base = sweep.kept(m, baseline, at);
            for (ti, t) in sweep
                .targets
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != baseline)
            {
                let mine = sweep.kept(m, ti, at);
                if let Some(v) = verdict(m, &t.name, label, &mine, &base) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// One verdict, when both sides have two kept runs or more and a baseline mean to divide by.
fn verdict(m: Metric, name: &str, at: &str, mine: &[f64], base: &[f64]) -> Option<Verdict> {
    let w = welch(mine, base)?;
    let (bm, mm) = (stats::of(base)?.mean, stats::of(mine)?.mean);
    if bm == 0.0 {
        return None;
    }
    let (key, what) = words(m);
    let pct = 100.0 * w.difference / bm;
    let ci = 100.0 * ratio_ci95(mine, base)?;
    let verb = if pct >= 0.0 { "adds" } else { "takes" };
    let prep = if pct >= 0.0 { "to" } else { "from" };
    let text = match w.significant {
        true => format!(
            "{name} {verb} {:.1}% ± {ci:.1}% {prep} {what}; significant",
            pct.abs()
        ),
        false => format!("{name}: no significant difference in {what} ({pct:+.1}% ± {ci:.1}%)"),
    };
    Some(Verdict {
        target: name.to_string(),
        at: at.to_string(),
        metric: key,
        baseline_mean: bm,
        mean: mm,
        ratio: mm / bm,
        difference_percent: pct,
        ci95_percent: ci,
        welch: w,
        text,
    })
}

/// The Flash study's view of one target at one point: means over the kept runs.
#[derive(Clone, Debug, Serialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_on_known_samples() {
        // Worked by hand: a = [19, 20, 21] (s² = 1), b = [10, 12, 14] (s² = 4);
        // va = 1/3, vb = 4/3, se = √(5/3) = 1.29099; df = (5/3)² / ((1/3)²/2 + (4/3)²/2) = 2.9412.
        let w = welch(&[19.0, 20.0, 21.0], &[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(w.difference, 8.0);
        assert!((w.df - 2.941_176).abs() < 1e-5, "{w:?}");
        assert!((w.t - 8.0 / 1.290_994).abs() < 1e-5, "{w:?}");
        assert!(w.significant);
        let same = welch(&[10.0, 11.0, 12.0], &[10.5, 11.5, 11.0]).unwrap();
        assert!(!same.significant, "{same:?}");
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        let flat = welch(&[5.0, 5.0], &[5.0, 5.0]).unwrap();
        assert!(!flat.significant);
    }

    #[test]
    fn the_ratio_interval_counts_the_baseline_spread_too() {
        // a = [19, 20, 21]: ā = 20, var(ā) = 1/3; b = [10, 12, 14]: b̄ = 12, var(b̄) = 4/3.
        // ua = (1/3)/400, ub = (4/3)/144; ratio 5/3; df = (ua+ub)²/(ua²/2 + ub²/2).
        let (ua, ub) = (1.0 / 3.0 / 400.0, 4.0 / 3.0 / 144.0);
        let df = (ua + ub) * (ua + ub) / (ua * ua / 2.0 + ub * ub / 2.0);
        let want = t975(df) * 5.0 / 3.0 * (ua + ub).sqrt();
        let got = ratio_ci95(&[19.0, 20.0, 21.0], &[10.0, 12.0, 14.0]).unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // Wider than Welch's interval divided by the baseline mean, which ignores b̄'s spread
        // in the denominator.
        let w = welch(&[19.0, 20.0, 21.0], &[10.0, 12.0, 14.0]).unwrap();
        assert!(got > w.ci95 / 12.0, "{got} vs {}", w.ci95 / 12.0);
        assert_eq!(ratio_ci95(&[5.0, 5.0], &[4.0, 4.0]), Some(0.0));
        assert!(ratio_ci95(&[1.0, 2.0], &[0.0, 0.0]).is_none());
    }

    #[test]
    fn verdicts_in_words() {
        let v = verdict(
            Metric::Mean,
            "b",
            "",
            &[104.0, 104.2, 103.8],
            &[100.0, 100.2, 99.8],
        )
        .unwrap();
        assert!(v.text.starts_with("b adds 4.0% ± "), "{}", v.text);
        assert!(
            v.text.ends_with("to the mean latency; significant"),
            "{}",
            v.text
        );
        let v = verdict(
            Metric::Rate,
            "b",
            "",
            &[99.0, 101.0, 100.0],
            &[100.0, 99.0, 101.0],
        )
        .unwrap();
        assert!(
            v.text
                .starts_with("b: no significant difference in the throughput"),
            "{}",
            v.text
        );
    }
}
