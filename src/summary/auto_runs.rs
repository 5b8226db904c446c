//! `compare --runs auto` (pure): whether a comparison has run enough rounds. Kalibera & Jones
//! (ISMM 2013) choose the repetitions from the variance measured; here rounds are added until
//! every verdict's 95% interval is within a relative precision of its ratio, ±5% by default,
//! or the budget of rounds ends — and the report says which.

use super::compare::Verdict;
use serde::Serialize;

/// Rounds kept before the precision is first checked: with two, one lucky pair of runs would
/// stop the comparison on a t of 12.7 that happens to be narrow.
pub const MIN_KEPT: usize = 3;

/// What `--runs auto` asked for and what it got.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct AutoRuns {
    /// The widest interval allowed, as ± % of the ratio.
    pub precision_pct: f64,
    /// The most rounds it could run (discarded ones included).
    pub max_runs: usize,
    /// The rounds it ran.
    pub rounds: usize,
    /// Whether every verdict's interval came within the precision; false: the budget ended.
    pub met: bool,
    /// The verdicts still wider than the precision (empty when met).
    pub wide: Vec<Wide>,
}

/// A verdict whose interval is wider than the precision.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Wide {
    /// The target's name.
    pub target: String,
    /// The swept values of the point.
    pub at: String,
    /// The metric (`p99_us`).
    pub metric: super::Name,
    /// Its interval's half-width, as ± % of the ratio.
    pub half_width_pct: f64,
}

/// A verdict's interval's half-width relative to its ratio, in %: half the interval's width
/// in log-ratio, e^h − 1 (so +100% and −50% are the same precision).
pub fn half_width_pct(v: &Verdict) -> f64 {
    let ln = |pct: f64| (1.0 + pct / 100.0).max(f64::MIN_POSITIVE).ln();
    let h = (ln(v.high_pct) - ln(v.low_pct)) / 2.0;
    100.0 * h.exp_m1()
}

/// The verdicts wider than `precision_pct`.
pub fn wide(verdicts: &[Verdict], precision_pct: f64) -> Vec<Wide> {
    verdicts
        .iter()
        .map(|v| (v, half_width_pct(v)))
        .filter(|(_, h)| *h > precision_pct)
        .map(|(v, h)| Wide {
            target: v.target.clone(),
            at: v.at.clone(),
            metric: v.metric.clone(),
            half_width_pct: h,
        })
        .collect()
}

/// Whether `kept` rounds judged as `verdicts` are enough: at least [`MIN_KEPT`], and every
/// interval within `precision_pct`.
pub fn enough(verdicts: &[Verdict], kept: usize, precision_pct: f64) -> bool {
    kept >= MIN_KEPT && wide(verdicts, precision_pct).is_empty()
}

/// The outcome once the rounds ended.
pub fn conclude(
    verdicts: &[Verdict],
    precision_pct: f64,
    max_runs: usize,
    rounds: usize,
) -> AutoRuns {
    let wide = wide(verdicts, precision_pct);
    AutoRuns {
        precision_pct,
        max_runs,
        rounds,
        met: wide.is_empty(),
        wide,
    }
}

/// The outcome in words: `--runs auto: 6 rounds; every verdict's 95% CI is within ±5% of its
/// ratio.`, or the budget's end with the verdicts still wider.
pub fn words(a: &AutoRuns) -> String {
    if a.met {
        return format!(
            "--runs auto: {} rounds; every verdict's 95% CI is within ±{}% of its ratio.",
            a.rounds, a.precision_pct
        );
    }
    let wide: Vec<String> = (a.wide.iter())
        .map(|w| {
            let at = match w.at.is_empty() {
                true => String::new(),
                false => format!(" at {}", w.at),
            };
            format!("{} {}{at} ±{:.1}%", w.target, w.metric, w.half_width_pct)
        })
        .collect();
    format!(
        "--runs auto: the budget of {} rounds (--max-runs) ended before every 95% CI was within ±{}% of its ratio; still wider: {}.",
        a.max_runs,
        a.precision_pct,
        wide.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::paired::Method;

    fn verdict(metric: &'static str, low_pct: f64, high_pct: f64) -> Verdict {
        Verdict {
            target: "b".into(),
            at: String::new(),
            metric: metric.into(),
            baseline_mean: 1.0,
            mean: 1.0,
            ratio: 1.0,
            difference_percent: 0.0,
            low_pct,
            high_pct,
            significant: low_pct > 0.0 || high_pct < 0.0,
            threshold_pct: 0.0,
            interval: Method::T,
            rounds: Vec::new(),
            text: String::new(),
            ..Verdict::default()
        }
    }

    #[test]
    fn precision_is_relative_to_the_ratio() {
        // A ratio interval 0.95 … 1.05 is ±5.13%: 0.95 is further below 1 than 1.05 above, as
        // ratios go (ln 1.05 − ln 0.95 = 2 · 0.05004).
        let h = half_width_pct(&verdict("p50_us", -5.0, 5.0));
        assert!((h - 5.131_497).abs() < 1e-5, "{h}");
        // +100% … +300% (ratio 2 … 4) is ±41.4% of the ratio, not ±100 points.
        let h = half_width_pct(&verdict("p50_us", 100.0, 300.0));
        assert!((h - 41.421).abs() < 0.01, "{h}");
        // −50% … +100% (ratio 0.5 … 2) is ±100%: halving and doubling alike.
        assert!((half_width_pct(&verdict("m", -50.0, 100.0)) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn enough_needs_three_kept_rounds_and_every_interval_narrow() {
        let narrow = [verdict("ops_per_s", -2.0, 2.0), verdict("p99_us", 1.0, 4.0)];
        assert!(!enough(&narrow, 2, 5.0), "two rounds never suffice");
        assert!(enough(&narrow, 3, 5.0));
        let one_wide = [
            verdict("ops_per_s", -2.0, 2.0),
            verdict("p99_us", -20.0, 30.0),
        ];
        assert!(!enough(&one_wide, 10, 5.0));
        let a = conclude(&one_wide, 5.0, 10, 10);
        assert!(!a.met && a.wide.len() == 1 && a.wide[0].metric == "p99_us");
        let text = words(&a);
        assert!(
            text.contains("the budget of 10 rounds (--max-runs) ended"),
            "{text}"
        );
        assert!(text.ends_with("still wider: b p99_us ±27.5%."), "{text}");
        let a = conclude(&narrow, 5.0, 20, 4);
        assert!(a.met);
        assert_eq!(
            words(&a),
            "--runs auto: 4 rounds; every verdict's 95% CI is within ±5% of its ratio."
        );
    }
}
