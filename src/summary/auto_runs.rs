//! `compare --runs auto` (pure): whether a comparison has run enough rounds. Kalibera & Jones
//! (ISMM 2013) choose the repetitions from the variance measured; here rounds are added until
//! every verdict's 95% interval is within a relative precision of its ratio, ±5% by default,
//! or the budget of rounds ends — and the report says which.

use super::compare::Verdict;
use serde::Serialize;

/// Rounds kept before the precision is first checked: with two, one lucky pair of runs would
/// stop the comparison on a t of 12.7 that happens to be narrow.
pub const MIN_KEPT: usize = 3;

/// Rounds kept before `--runs auto` estimates how many each wide verdict needs, and stops
/// when every verdict still wide would need more than its budget: fewer give an estimate of
/// the noise itself too rough to give up on.
pub const ESTIMATE_AFTER: usize = 5;

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
    /// The round after which every verdict still wide was out of reach (it would need more
    /// rounds than the budget, `needed_rounds`): the comparison stopped there. None: it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_reach_after: Option<usize>,
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
    /// About how many kept rounds it would need for the precision at the noise seen so far
    /// (the interval narrows as 1/√rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed_rounds: Option<usize>,
}

/// About how many kept rounds an interval of ±`half_pct` over `kept` rounds needs to reach
/// ±`precision_pct`: kept · (ln(1 + half) / ln(1 + precision))², as a t-interval narrows with
/// the square root of the rounds (Kalibera & Jones, ISMM 2013, choose repetitions so).
pub fn rounds_needed(half_pct: f64, kept: usize, precision_pct: f64) -> usize {
    let h = (1.0 + half_pct / 100.0).ln();
    let p = (1.0 + precision_pct / 100.0).ln().max(1e-9);
    let n = kept as f64 * (h / p).powi(2);
    n.ceil().clamp(kept as f64, 1e9) as usize
}

/// Whether `--runs auto` should stop at `kept` rounds though some verdicts are still wide:
/// after [`ESTIMATE_AFTER`] rounds (and the rounds a tail needs to be judged at all, when the
/// budget has them), every wide verdict would need more than the `budget` of kept rounds.
pub fn out_of_reach(verdicts: &[Verdict], kept: usize, precision_pct: f64, budget: usize) -> bool {
    let tails = super::compare::TAIL_MIN_ROUNDS.min(budget);
    let wide = wide(verdicts, precision_pct);
    kept >= ESTIMATE_AFTER.max(tails)
        && !wide.is_empty()
        && (wide.iter()).all(|w| rounds_needed(w.half_width_pct, kept, precision_pct) > budget)
}

/// A verdict's interval's half-width relative to its ratio, in %: half the interval's width
/// in log-ratio, e^h − 1 (so +100% and −50% are the same precision).
pub fn half_width_pct(v: &Verdict) -> f64 {
    let ln = |pct: f64| (1.0 + pct / 100.0).max(f64::MIN_POSITIVE).ln();
    let h = (ln(v.high_pct) - ln(v.low_pct)) / 2.0;
    100.0 * h.exp_m1()
}

/// The verdicts wider than `precision_pct`, each with the rounds it would need.
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
            needed_rounds: (!v.rounds.is_empty())
                .then(|| rounds_needed(h, v.rounds.len(), precision_pct)),
        })
        .collect()
}

/// Whether `kept` rounds judged as `verdicts` are enough: at least [`MIN_KEPT`], and every
/// interval within `precision_pct`.
pub fn enough(verdicts: &[Verdict], kept: usize, precision_pct: f64) -> bool {
    kept >= MIN_KEPT && wide(verdicts, precision_pct).is_empty()
}

/// The outcome once the rounds ended (`stopped_early`: the round after which every wide
/// verdict was out of reach, if the comparison stopped so).
pub fn conclude(
    verdicts: &[Verdict],
    precision_pct: f64,
    max_runs: usize,
    rounds: usize,
    stopped_early: Option<usize>,
) -> AutoRuns {
    let wide = wide(verdicts, precision_pct);
    AutoRuns {
        precision_pct,
        max_runs,
        rounds,
        met: wide.is_empty(),
        wide,
        out_of_reach_after: stopped_early,
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
            let needs = w.needed_rounds.map_or(String::new(), |n| {
                format!(" (about {n} rounds at this noise)")
            });
            format!(
                "{} {}{at} ±{:.1}%{needs}",
                w.target, w.metric, w.half_width_pct
            )
        })
        .collect();
    if let Some(after) = a.out_of_reach_after {
        return format!(
            "--runs auto: after {after} rounds, ±{}% was out of reach within the budget of {} rounds (--max-runs) for: {}; stopped there rather than spend the budget (the other verdicts' CIs are within ±{}%).",
            a.precision_pct,
            a.max_runs,
            wide.join(", "),
            a.precision_pct
        );
    }
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
        let a = conclude(&one_wide, 5.0, 10, 10, None);
        assert!(!a.met && a.wide.len() == 1 && a.wide[0].metric == "p99_us");
        let text = words(&a);
        assert!(
            text.contains("the budget of 10 rounds (--max-runs) ended"),
            "{text}"
        );
        assert!(text.ends_with("still wider: b p99_us ±27.5%."), "{text}");
        // Rounds at this noise: ±27.5% over 10 rounds needs about 10·(ln 1.275 / ln 1.05)² = 250.
        let n = rounds_needed(27.5, 10, 5.0);
        assert!((240..=260).contains(&n), "{n}");
        assert_eq!(rounds_needed(4.0, 10, 5.0), 10, "never fewer than it has");
        let a = conclude(&narrow, 5.0, 20, 4, None);
        assert!(a.met);
        assert_eq!(
            words(&a),
            "--runs auto: 4 rounds; every verdict's 95% CI is within ±5% of its ratio."
        );
    }

    #[test]
    fn out_of_reach_stops_early_and_says_so() {
        let mut p99 = verdict("p99_us", -30.0, 40.0);
        p99.rounds = vec![crate::summary::compare::RoundRatio::default(); 10];
        let mut mean = verdict("mean_us", -2.0, 2.0);
        mean.rounds = p99.rounds.clone();
        let both = [mean.clone(), p99.clone()];
        assert!(!out_of_reach(&both, 4, 5.0, 20), "too early to tell");
        assert!(out_of_reach(&both, 10, 5.0, 20), "p99 needs hundreds");
        assert!(!out_of_reach(&[mean.clone()], 10, 5.0, 20), "nothing wide");
        let mut nearly = verdict("mean_us", -6.0, 6.0);
        nearly.rounds = p99.rounds.clone();
        assert!(
            !out_of_reach(&[nearly, p99.clone()], 10, 5.0, 20),
            "the mean is in reach"
        );
        let a = conclude(&both, 5.0, 20, 10, Some(10));
        let text = words(&a);
        assert!(
            text.starts_with("--runs auto: after 10 rounds, ±5% was out of reach"),
            "{text}"
        );
        assert!(text.contains("b p99_us ±"), "{text}");
        assert!(text.contains("rounds at this noise)"), "{text}");
    }
}
