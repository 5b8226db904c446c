//! Serial correlation in a run's per-second figures, and the test of two runs that allows for it.
//!
//! A run's seconds are not independent samples: a slow second tends to follow a slow second (a
//! queue that built up, a CPU taken by something else, a cache warming). Welch's test over such
//! seconds takes n of them for n independent draws and calls too many differences
//! significant. The variance of a mean of n autocorrelated values is σ²/n · (1 + 2 Σₖ (1 − k/n) ρₖ),
//! so the series carries the information of n_eff = n / (1 + 2 Σₖ (1 − k/n) ρₖ) independent
//! values (Zwiers & von Storch, "Taking serial correlation into account in tests of the mean",
//! J. Climate 8, 1995; the correction latte applies to its per-second samples). The sum runs
//! over the lags before the first autocorrelation that is not positive (Geyer's initial
//! positive sequence, Statistical Science 7, 1992), since the estimates beyond it are noise.
//! Welch's test is then made with each side's n_eff in place of n, for both the standard error
//! and the Welch–Satterthwaite degrees of freedom.

use super::stats::{self, t975};
use super::welch::Welch;

/// The effective sample size of `xs`: between 1 and `xs.len()` (a series without spread, or
/// with its lag-1 autocorrelation not positive, counts whole).
pub fn effective_n(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 3 {
        return n as f64;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let dev: Vec<f64> = xs.iter().map(|x| x - mean).collect();
    let c0 = dev.iter().map(|d| d * d).sum::<f64>() / n as f64;
    if c0 <= 0.0 || !c0.is_finite() {
        return n as f64;
    }
    let mut sum = 0.0;
    for k in 1..n - 1 {
        let ck = dev.iter().zip(&dev[k..]).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        let rho = ck / c0;
        if rho <= 0.0 {
            break;
        }
        sum += (1.0 - k as f64 / n as f64) * rho;
    }
    (n as f64 / (1.0 + 2.0 * sum)).clamp(1.0, n as f64)
}

/// Welch's test of `a`'s mean against `b`'s, each side's per-second values counted by their
/// effective sample size; with those sizes (a, b). None unless each side has two values or more.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(Welch, [f64; 2])> {
    let (sa, sb) = (stats::of(a)?, stats::of(b)?);
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (na, nb) = (effective_n(a), effective_n(b));
    let (va, vb) = (sa.stddev.powi(2) / na, sb.stddev.powi(2) / nb);
    let se = (va + vb).sqrt();
    let difference = sa.mean - sb.mean;
    if se == 0.0 {
        let test = Welch {
            difference,
            ci95: 0.0,
            df: f64::INFINITY,
            t: 0.0,
            significant: difference != 0.0,
        };
        return Some((test, [na, nb]));
    }
    // Welch–Satterthwaite with the effective sizes; a side worth one value adds no degree of
    // freedom (its term is left out, and below one degree t975 reads the widest interval).
    let part = |v: f64, n: f64| if n > 1.0 { v.powi(2) / (n - 1.0) } else { 0.0 };
    let denominator = part(va, na) + part(vb, nb);
    let df = match denominator > 0.0 {
        true => ((va + vb).powi(2) / denominator).max(1.0),
        false => 1.0,
    };
    let ci95 = t975(df) * se;
    let test = Welch {
        difference,
        ci95,
        df,
        t: difference / se,
        significant: difference.abs() > ci95,
    };
    Some((test, [na, nb]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_values_count_whole() {
        // Alternating values: lag-1 autocorrelation negative, nothing to correct.
        let xs = [1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0];
        assert_eq!(effective_n(&xs), 8.0);
        assert_eq!(effective_n(&[5.0; 10]), 10.0);
        assert_eq!(effective_n(&[1.0, 2.0]), 2.0);
    }

    #[test]
    fn a_slow_drift_counts_for_little() {
        // A ramp: every second like its neighbour. Ten seconds carry about three values' worth.
        let xs: Vec<f64> = (0..10).map(f64::from).collect();
        let n = effective_n(&xs);
        assert!((1.0..4.0).contains(&n), "{n}");
        // Two plateaus (a level shift halfway): far fewer than 20 independent values.
        let steps: Vec<f64> = (0..20)
            .map(|i| if i < 10 { 100.0 } else { 110.0 })
            .collect();
        let n = effective_n(&steps);
        assert!(n < 5.0, "{n}");
    }

    #[test]
    fn an_ar1_series_is_corrected_by_about_its_factor() {
        // x_t = 0.8 x_{t-1} + e_t: n_eff ≈ n (1 − ρ)/(1 + ρ) = n / 9 for large n. A fixed
        // pseudo-random sequence (xorshift) keeps the test deterministic.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut x = 0.0;
        let xs: Vec<f64> = (0..4000)
            .map(|_| {
                x = 0.8 * x + uniform();
                x
            })
            .collect();
        let ratio = xs.len() as f64 / effective_n(&xs);
        assert!((6.0..13.0).contains(&ratio), "{ratio}");
    }

    #[test]
    fn a_drifting_run_is_not_significant_where_welch_on_seconds_says_it_is() {
        // Two runs of one server whose rate wanders slowly: per-second Welch treats 30 seconds a
        // side as 30 independent draws and calls the 2% gap significant; corrected, it is not.
        let wave = |phase: f64, level: f64| -> Vec<f64> {
            (0..30)
                .map(|i| level + 40.0 * ((i as f64 + phase) / 6.0).sin())
                .collect()
        };
        let (a, b) = (wave(0.0, 1000.0), wave(2.0, 1020.0));
        let naive = super::super::welch::welch(&b, &a).unwrap();
        assert!(naive.significant, "{naive:?}");
        let (corrected, n) = welch(&b, &a).unwrap();
        assert!(!corrected.significant, "{corrected:?} {n:?}");
        assert!(n[0] < 15.0 && n[1] < 15.0, "{n:?}");
    }

    #[test]
    fn a_clear_difference_stays_significant() {
        let a: Vec<f64> = (0..20).map(|i| 1000.0 + f64::from(i % 3)).collect();
        let b: Vec<f64> = (0..20).map(|i| 500.0 + f64::from(i % 3)).collect();
        let (test, _) = welch(&b, &a).unwrap();
        assert!(test.significant && test.difference < 0.0, "{test:?}");
        assert!(welch(&[1.0], &a).is_none());
    }
}
