//! Welch's unequal-variances t-test of two samples' means (B. L. Welch, "The generalization
//! of 'Student's' problem when several different population variances are involved",
//! Biometrika 34, 1947): `diff`'s test of two runs' per-second figures, which are not paired.
//! (`compare` pairs its rounds instead: [`super::paired`].)

use super::stats::{self, t975};
use serde::Serialize;

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
}
