//! Paired analysis of a comparison's interleaved rounds (pure). Each round runs every target
//! once, so each round gives one ratio, the target's figure over the baseline's; drift that
//! hits both in that round cancels in it. The change is reported as that ratio with a 95%
//! confidence interval (Kalibera & Jones, "Rigorous benchmarking in reasonable time", ISMM
//! 2013), computed on the log-ratios ln(Bᵢ/Aᵢ). One computation gives interval and verdict —
//! significant iff the interval excludes 0% — so the two cannot contradict each other.
//!
//! - Throughput and mean latency: Student's t-interval of the mean log-ratio over the rounds.
//! - Percentiles (p50, p95, p99), whose per-round ratios are skewed and lumpy: a seeded
//!   bootstrap over rounds of the mean log-ratio (percentile interval, Efron & Tibshirani, "An
//!   Introduction to the Bootstrap", 1993, ch. 13), expanded for the few rounds a benchmark has
//!   (Hesterberg, "What teachers should know about the bootstrap", The American Statistician
//!   69(4), 2015: the plain percentile interval covers too little at small n). Hesterberg's
//!   form moves the quantiles to Φ(−√(n/(n−1))·t); five rounds give too few distinct resamples
//!   for that, so the same factor √(n/(n−1))·t(0.975, n−1)/1.96 widens the interval about the
//!   estimate instead, keeping the bootstrap's asymmetry.
//! - Rounds are not independent on a shared machine: a burst of other work spans several
//!   rounds in a row, and they lean the same way. The bootstrap resamples circular blocks of
//!   consecutive rounds (Politis & Romano, "The stationary bootstrap", JASA 89(428), 1994; a
//!   block of ⌊n^⅓⌋ rounds, Hall, Horowitz & Jing, Biometrika 82(3), 1995), so such a run of
//!   rounds stays together and widens the interval as it should; below eight rounds a
//!   block is one round, the plain bootstrap.
//! - A tail's verdict must also be the rounds' majority: at least as many rounds on its side
//!   of 1 as a two-sided sign test at 5% asks ([`sign_agrees`]), so that one or two rounds a
//!   busy machine blew up cannot carry it, and never against the direction most rounds show.
//! - An outlier round (one run stalled), among five rounds or more: a log-ratio further than
//!   3 scaled MADs from the median (Hampel's identifier; Leys et al., "Detecting outliers", JESP 49(4), 2013), and
//!   more than [`OUTLIER_FLOOR`] off; the interval is recomputed without it, so a verdict can
//!   say whether that round decided it.

use super::stats::{self, t975};
use serde::Serialize;

/// How a verdict's interval is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Student's t-interval of the mean log-ratio.
    #[default]
    T,
    /// The expanded bootstrap over rounds of the mean log-ratio.
    Bootstrap,
}

/// A change as a ratio with its 95% interval, in percent of the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The estimate: the geometric mean of the per-round ratios, minus 1, in %.
    pub difference_pct: f64,
    /// The interval's low end, in %.
    pub low_pct: f64,
    /// The interval's high end, in %.
    pub high_pct: f64,
    /// Whether the interval excludes 0 (decided on these very bounds).
    pub significant: bool,
}

/// Log-ratios further than this from the median are never outliers however tight the rest
/// are (5%): on a shared machine one run in a few is that far off without a stall.
pub const OUTLIER_FLOOR: f64 = 0.048_790_164; // ln 1.05

/// Bootstrap resamples per interval: the 2.5% and 97.5% quantiles from 100 values each side.
pub const RESAMPLES: usize = 4000;

impl Interval {
    /// From the mean log-ratio and its interval's ends, in natural-log units. The bounds are
    /// converted with exp_m1, which keeps their signs exactly, and the verdict is read from
    /// the converted bounds, so the numbers printed decide it.
    fn of_logs(center: f64, low: f64, high: f64) -> Interval {
        // e^700 is still finite: a bound never becomes infinity (JSON's null).
        let pct = |x: f64| 100.0 * x.clamp(-700.0, 700.0).exp_m1();
        let (low_pct, high_pct) = (pct(low), pct(high));
        Interval {
            difference_pct: pct(center),
            low_pct,
            high_pct,
            significant: low_pct > 0.0 || high_pct < 0.0,
        }
    }

    /// Whether 0% lies in the interval.
    pub fn contains_zero(&self) -> bool {
        self.low_pct <= 0.0 && 0.0 <= self.high_pct
    }

    /// Whether the whole interval lies beyond ±`threshold_pct`: a change larger than the
    /// noise threshold (0: any change, the interval excluding 0). The bounds printed decide.
    pub fn beyond(&self, threshold_pct: f64) -> bool {
        self.low_pct > threshold_pct || self.high_pct < -threshold_pct
    }
}

/// ln(target / base) of one round; None unless both are positive and finite (a run with no
/// operation has no rate to divide by).
pub fn log_ratio(base: f64, target: f64) -> Option<f64> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    (ok(base) && ok(target)).then(|| (target / base).ln())
}

/// Student's t-interval of the mean of `logs`: mean ± t(0.975, n−1)·s/√n; None below two.
pub fn t_interval(logs: &[f64]) -> Option<Interval> {
    let s = stats::of(logs)?;
    let h = s.ci95?;
    Some(Interval::of_logs(s.mean, s.mean - h, s.mean + h))
}

/// The rounds in one block of the bootstrap: ⌊n^⅓⌋, at least one.
pub fn block_len(n: usize) -> usize {
    let mut b = 1;
    while (b + 1) * (b + 1) * (b + 1) <= n {
        b += 1;
    }
    b
}

/// The mean of one resample of `logs`: circular blocks of `block` consecutive rounds, each
/// starting at a random round, until `n` rounds are drawn.
fn block_resample_mean(logs: &[f64], block: usize, rng: &mut SplitMix64) -> f64 {
    let n = logs.len();
    let mut sum = 0.0;
    let mut drawn = 0;
    while drawn < n {
        let start = rng.below(n);
        for k in 0..block.min(n - drawn) {
            sum += logs[(start + k) % n];
        }
        drawn += block;
    }
    sum / n as f64
}

/// The expanded block bootstrap interval of the mean of `logs` (see the module's doc), from
/// [`RESAMPLES`] resamples drawn with `seed`; None below two values.
pub fn bootstrap_interval(logs: &[f64], seed: u64) -> Option<Interval> {
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let mut rng = SplitMix64(seed);
    let block = block_len(n);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| block_resample_mean(logs, block, &mut rng))
        .collect();
    means.sort_by(f64::total_cmp);
    let k = RESAMPLES / 40; // 2.5% each side
    let (q_low, q_high) = (means[k], means[RESAMPLES - 1 - k]);
    let nf = n as f64;
    let widen = (nf / (nf - 1.0)).sqrt() * t975(nf - 1.0) / 1.96;
    let low = mean - widen * (mean - q_low).max(0.0);
    let high = mean + widen * (q_high - mean).max(0.0);
    Some(Interval::of_logs(mean, low, high))
}

/// The interval of `logs` by `method`.
pub fn interval(logs: &[f64], method: Method, seed: u64) -> Option<Interval> {
    match method {
        Method::T => t_interval(logs),
        Method::Bootstrap => bootstrap_interval(logs, seed),
    }
}

/// The fewest of `n` rounds that must lean one way for a two-sided sign test at 5% to reject
/// "either way alike" (P(Binomial(n, ½) ≥ k) ≤ 2.5%); None when even all `n` cannot (n < 6).
pub fn sign_needed(n: usize) -> Option<usize> {
    // P(X ≥ k) summed from the top, exactly in f64 for the counts a comparison has.
    let total = 2f64.powi(n as i32);
    let mut tail = 0.0;
    let mut choose = 1.0; // C(n, n)
    let mut needed = None;
    for k in (0..=n).rev() {
        tail += choose / total;
        if tail > 0.025 {
            break;
        }
        needed = Some(k);
        // C(n, k−1) = C(n, k) · k / (n − k + 1)
        choose = choose * k as f64 / (n - k + 1) as f64;
    }
    needed
}

/// Whether enough of the rounds `logs` lean the way of `up` (a ratio above 1 when true) for
/// a sign test ([`sign_needed`]).
pub fn sign_agrees(logs: &[f64], up: bool) -> bool {
    let leaning = logs
        .iter()
        .filter(|&&l| (l > 0.0) == up && l != 0.0)
        .count();
    sign_needed(logs.len()).is_some_and(|k| leaning >= k)
}

/// Indices of the outlier rounds of `logs`: further than 3 scaled MADs (1.4826·MAD, the
/// standard deviation's estimate under normality) and than [`OUTLIER_FLOOR`] from the
/// median. Five rounds or more are needed to tell one from the rest: among three or four, the
/// median deviation is one or two other rounds' distance, so any round that differs reads as
/// an outlier (issue 40: `compare` flagged "outliers" among 3 rounds).
pub const OUTLIER_ROUNDS: usize = 5;

/// Indices of the outlier rounds of `logs` (see [`OUTLIER_ROUNDS`]).
pub fn outliers(logs: &[f64]) -> Vec<usize> {
    if logs.len() < OUTLIER_ROUNDS {
        return Vec::new();
    }
    let med = median(logs);
    let deviations: Vec<f64> = logs.iter().map(|x| (x - med).abs()).collect();
    let bound = (3.0 * 1.4826 * median(&deviations)).max(OUTLIER_FLOOR);
    (0..logs.len()).filter(|&i| deviations[i] > bound).collect()
}

/// A paired verdict: the interval over every round, the outlier rounds, and the interval
/// without them.
#[derive(Clone, Debug, PartialEq)]
pub struct Paired {
    /// Over every round.
    pub all: Interval,
    /// Indices (into the rounds given) of the outliers.
    pub outliers: Vec<usize>,
    /// Without the outliers, when there are some and two rounds or more remain.
    pub without: Option<Interval>,
}

/// The paired analysis of one metric's per-round log-ratios; None below two rounds.
pub fn analyse(logs: &[f64], method: Method, seed: u64) -> Option<Paired> {
    let all = interval(logs, method, seed)?;
    let outliers = outliers(logs);
    let rest: Vec<f64> = (0..logs.len())
        .filter(|i| !outliers.contains(i))
        .map(|i| logs[i])
        .collect();
    let without = match outliers.is_empty() {
        true => None,
        false => interval(&rest, method, seed),
    };
    Some(Paired {
        all,
        outliers,
        without,
    })
}

/// The median of a non-empty slice.
fn median(xs: &[f64]) -> f64 {
    stats::of(xs).map_or(f64::NAN, |s| s.median)
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a seeded generator, so that a comparison's order and bootstrap can be
/// repeated from its seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0..n (n > 0), by Lemire's multiply-shift (the bias is below 2⁻⁵⁰ here).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A seed for one verdict's bootstrap, from the comparison's seed and the verdict's place,
/// so that every verdict draws its own resamples and all repeat from one seed.
pub fn derive(seed: u64, place: u64) -> u64 {
    SplitMix64(seed ^ place.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn logs(ratios: &[f64]) -> Vec<f64> {
        ratios.iter().map(|r| log_ratio(1.0, *r).unwrap()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn known_ratios_give_known_t_intervals() {
        // Worked out by hand: ln of the ratios, mean m, s, h = t(0.975, 4)·s/√5 = 2.776·s/√5;
        // the bounds are e^(m ± h) − 1.
        let cases: &[(&[f64], f64, f64, f64, bool)] = &[
            (
                &[1.10, 1.20, 1.15, 1.05, 1.25],
                14.782_113,
                5.370_096,
                25.034_844,
                true,
            ),
            (
                &[0.98, 1.03, 1.00, 0.99, 1.01],
                0.185_293,
                -2.166_735,
                2.593_867,
                false,
            ),
        ];
        for &(ratios, diff, low, high, significant) in cases {
            let i = t_interval(&logs(ratios)).unwrap();
            assert!(close(i.difference_pct, diff), "{ratios:?}: {i:?}");
            assert!(
                close(i.low_pct, low) && close(i.high_pct, high),
                "{ratios:?}: {i:?}"
            );
            assert_eq!(i.significant, significant, "{ratios:?}");
        }
        // A ratio and its inverse are the same change, mirrored.
        let down = t_interval(&logs(&[
            1.0 / 1.10,
            1.0 / 1.20,
            1.0 / 1.15,
            1.0 / 1.05,
            0.8,
        ]))
        .unwrap();
        assert!(
            close(down.difference_pct, 100.0 * (1.0 / 1.147_821_13 - 1.0)),
            "{down:?}"
        );
        assert!(down.significant && down.high_pct < 0.0);
        assert!(t_interval(&logs(&[1.5])).is_none());
        // No spread: the interval is the point, significant unless it is 0.
        let flat = t_interval(&logs(&[1.2, 1.2, 1.2])).unwrap();
        assert!(flat.significant && close(flat.low_pct, 20.0) && close(flat.high_pct, 20.0));
        assert!(!t_interval(&logs(&[1.0, 1.0])).unwrap().significant);
    }

    #[test]
    fn the_bootstrap_is_near_t_on_symmetric_data_and_repeats_from_its_seed() {
        let l = logs(&[1.10, 1.20, 1.15, 1.05, 1.25]);
        let (t, b) = (t_interval(&l).unwrap(), bootstrap_interval(&l, 7).unwrap());
        assert_eq!(
            b,
            bootstrap_interval(&l, 7).unwrap(),
            "same seed, same interval"
        );
        assert!(close(b.difference_pct, t.difference_pct), "{b:?}");
        // The expanded bootstrap's width is the t-interval's within the resampling noise.
        let (wt, wb) = (t.high_pct - t.low_pct, b.high_pct - b.low_pct);
        assert!((wb / wt - 1.0).abs() < 0.2, "t {t:?} bootstrap {b:?}");
        assert!(b.significant);
        // Two rounds: far wider than their range, as the t-interval is (no false certainty).
        let two = bootstrap_interval(&logs(&[1.02, 1.04]), 1).unwrap();
        assert!(two.low_pct < 0.0 && two.high_pct > 6.0, "{two:?}");
        assert!(bootstrap_interval(&logs(&[1.02]), 1).is_none());
    }

    #[test]
    fn one_stalled_round_is_flagged_and_judged_without() {
        // Round 4's baseline stalled: the target looks 1000 times faster there.
        let l = logs(&[1.01, 0.99, 1.00, 0.001, 1.02]);
        assert_eq!(outliers(&l), vec![3]);
        for method in [Method::T, Method::Bootstrap] {
            let p = analyse(&l, method, 3).unwrap();
            assert_eq!(p.outliers, vec![3]);
            assert!(!p.all.significant && p.all.contains_zero(), "{p:?}");
            let w = p.without.unwrap();
            assert!(
                !w.significant && w.low_pct > -3.0 && w.high_pct < 4.0,
                "{w:?}"
            );
        }
        // A real 30% change with one stalled round: the round hides it, its removal shows it.
        let l = logs(&[1.30, 1.28, 1.32, 0.002, 1.31, 1.29]);
        let p = analyse(&l, Method::T, 0).unwrap();
        assert!(!p.all.significant, "{p:?}");
        assert!(p.without.unwrap().significant, "{p:?}");
        // Spread within 5% is never an outlier, however tight the others are.
        assert!(outliers(&logs(&[1.0, 1.0, 1.0, 1.0, 1.04])).is_empty());
        assert!(
            outliers(&logs(&[1.0, 0.001])).is_empty(),
            "two rounds cannot tell"
        );
        for few in [&[1.0, 1.01, 0.5][..], &[1.0, 1.01, 1.0, 0.5]] {
            assert!(outliers(&logs(few)).is_empty(), "{few:?}: too few to tell");
        }
        assert_eq!(
            analyse(&logs(&[1.0, 1.01, 0.99]), Method::T, 0)
                .unwrap()
                .without,
            None
        );
    }

    #[test]
    fn sign_test_and_block_lengths() {
        // P(Binomial(n, 1/2) >= k) <= 2.5%, worked out from the binomial table.
        let table = [
            (5, None),
            (6, Some(6)),
            (9, Some(8)),
            (10, Some(9)),
            (12, Some(10)),
            (20, Some(15)),
        ];
        for (n, k) in table {
            assert_eq!(sign_needed(n), k, "n = {n}");
        }
        let l = logs(&[1.1, 1.2, 1.1, 0.9, 1.1, 1.2, 1.1, 1.3, 1.1, 1.2]);
        assert!(sign_agrees(&l, true) && !sign_agrees(&l, false));
        let l = logs(&[1.1, 1.2, 1.1, 0.9, 0.8, 1.2, 1.1, 1.3, 1.1, 1.2]);
        assert!(!sign_agrees(&l, true), "8 of 10 is not enough");
        let blocks: Vec<usize> = [1, 7, 8, 26, 27, 64].map(block_len).to_vec();
        assert_eq!(blocks, [1, 1, 2, 2, 3, 4]);
    }

    #[test]
    fn a_run_of_correlated_rounds_widens_the_block_bootstrap() {
        // Twenty rounds: the same values, once interleaved, once with the high ones together
        // (a burst of other work over five rounds in a row). Blocks keep the run together.
        let mut mixed = Vec::new();
        for i in 0..20 {
            mixed.push(if i % 4 == 0 { 1.3 } else { 1.0 });
        }
        let mut bunched = vec![1.0; 20];
        for r in bunched.iter_mut().skip(5).take(5) {
            *r = 1.3;
        }
        let (a, b) = (
            bootstrap_interval(&logs(&mixed), 5).unwrap(),
            bootstrap_interval(&logs(&bunched), 5).unwrap(),
        );
        assert!(
            b.high_pct - b.low_pct > 1.1 * (a.high_pct - a.low_pct),
            "interleaved {a:?}, bunched {b:?}"
        );
    }

    #[test]
    fn shuffles_repeat_from_the_seed_and_reach_every_order() {
        let order = |seed| {
            let mut v = [0, 1, 2];
            SplitMix64(seed).shuffle(&mut v);
            v
        };
        assert_eq!(order(42), order(42));
        let seen: std::collections::BTreeSet<[i32; 3]> = (0..200).map(order).collect();
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert_ne!(derive(1, 0), derive(1, 1));
    }

    proptest! {
        /// Whatever the rounds measured, the verdict is the interval's: significant iff 0% is
        /// outside it, and the estimate lies within it.
        #[test]
        fn the_interval_never_contradicts_the_verdict(
            ratios in proptest::collection::vec(1e-4f64..1e4, 0..12),
            seed in any::<u64>(),
        ) {
            let l = logs(&ratios);
            for method in [Method::T, Method::Bootstrap] {
                let Some(p) = analyse(&l, method, seed) else {
                    prop_assert!(l.len() < 2);
                    continue;
                };
                for i in std::iter::once(p.all).chain(p.without) {
                    prop_assert_eq!(i.significant, !i.contains_zero(), "{:?}", i);
                    prop_assert!(i.low_pct <= i.high_pct, "{:?}", i);
                    prop_assert!(i.low_pct <= i.difference_pct * (1.0 + 1e-9) + 1e-9, "{:?}", i);
                    prop_assert!(i.difference_pct <= i.high_pct * (1.0 + 1e-9) + 1e-9, "{:?}", i);
                    prop_assert!(i.low_pct.is_finite() && i.high_pct.is_finite());
                }
            }
        }
    }
}
