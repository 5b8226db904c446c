//! Statistics over repeated runs (pure): mean, median, sample standard deviation and the 95%
//! confidence interval of the mean by Student's t distribution.

/// The figures of a set of runs' values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// How many values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (the mean of the middle two for an even count).
    pub median: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stddev: f64,
    /// Half the width of the 95% confidence interval of the mean, t(0.975, n−1) · s / √n;
    /// None for fewer than two values.
    pub ci95: Option<f64>,
}

/// The figures of `xs`; None when it is empty.
pub fn of(xs: &[f64]) -> Option<Stats> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = match n {
        1 => 0.0,
        _ => xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64,
    };
    let stddev = var.sqrt();
    let ci95 = (n > 1).then(|| t975((n - 1) as f64) * stddev / (n as f64).sqrt());
    Some(Stats {
        n,
        mean,
        median: median(xs),
        stddev,
        ci95,
    })
}

/// The median of a non-empty slice.
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    match v.len() % 2 {
        1 => v[m],
        _ => (v[m - 1] + v[m]) / 2.0,
    }
}

/// Two-sided 95% critical values of Student's t, t(0.975, df), for df = 1 … 30, then 40, 60,
/// 120 and ∞. Source: NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2, "Critical
/// values of the Student's t distribution".
const T975: [(f64, f64); 34] = [
    (1.0, 12.706),
    (2.0, 4.303),
    (3.0, 3.182),
    (4.0, 2.776),
    (5.0, 2.571),
    (6.0, 2.447),
    (7.0, 2.365),
    (8.0, 2.306),
    (9.0, 2.262),
    (10.0, 2.228),
    (11.0, 2.201),
    (12.0, 2.179),
    (13.0, 2.160),
    (14.0, 2.145),
    (15.0, 2.131),
    (16.0, 2.120),
    (17.0, 2.110),
    (18.0, 2.101),
    (19.0, 2.093),
    (20.0, 2.086),
    (21.0, 2.080),
    (22.0, 2.074),
    (23.0, 2.069),
    (24.0, 2.064),
    (25.0, 2.060),
    (26.0, 2.056),
    (27.0, 2.052),
    (28.0, 2.048),
    (29.0, 2.045),
    (30.0, 2.042),
    (40.0, 2.021),
    (60.0, 2.000),
    (120.0, 1.980),
    (f64::INFINITY, 1.960),
];

/// t(0.975, df): the table's value, interpolated linearly in 1/df between its entries (the
/// usual rule for tables of t; off by under 0.01 from df 4 up, by up to 0.06 between 2 and 3). `df` may be fractional, as
/// Welch's degrees of freedom are; below 1 it is taken as 1.
pub fn t975(df: f64) -> f64 {
    let df = df.max(1.0);
    for w in T975.windows(2) {
        let ((d0, t0), (d1, t1)) = (w[0], w[1]);
        if df <= d1 {
            let (x0, x1, x) = (1.0 / d0, 1.0 / d1, 1.0 / df);
            return t0 + (t1 - t0) * (x0 - x) / (x0 - x1);
        }
    }
    1.960
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn known_values() {
        // mean 5, sum of squares 32, s = √(32/7); t(0.975, 7) = 2.365.
        let s = of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.mean, s.median), (8, 5.0, 4.5));
        assert!(close(s.stddev, 2.138_090, 1e-6), "{s:?}");
        assert!(close(
            s.ci95.unwrap(),
            2.365 * 2.138_090 / 8f64.sqrt(),
            1e-6
        ));
        let s = of(&[10.0, 30.0, 20.0]).unwrap();
        assert_eq!((s.mean, s.median, s.stddev), (20.0, 20.0, 10.0));
        assert!(close(s.ci95.unwrap(), 4.303 * 10.0 / 3f64.sqrt(), 1e-9));
        let one = of(&[7.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, None));
        assert!(of(&[]).is_none());
    }

    #[test]
    fn t_table_and_interpolation() {
        assert_eq!(t975(1.0), 12.706);
        assert_eq!(t975(5.0), 2.571);
        assert_eq!(t975(30.0), 2.042);
        assert_eq!(t975(0.5), 12.706);
        // Exact values (the t density integrated numerically): t(0.975, 50) = 2.0086,
        // t(0.975, 4.5) = 2.6589, t(0.975, 2.5) = 3.5747.
        assert!(close(t975(50.0), 2.0086, 0.003), "{}", t975(50.0));
        assert!(close(t975(4.5), 2.6589, 0.01), "{}", t975(4.5));
        assert!(close(t975(2.5), 3.5747, 0.06), "{}", t975(2.5));
        assert!(close(t975(1e9), 1.960, 1e-3));
    }
}
