//! Seeded randomness shared by the templates' keys and the arrival processes: a small fast
//! generator, a counter-based hash (so request `i`'s draw depends on the seed and `i` alone,
//! whichever connection sends it), exponential and Zipf draws.
//!
//! Everything random in a run comes from its seed (`--seed`, recorded in the result's config),
//! so a study can be run again exactly.

/// A small fast random number generator (xorshift64*): good enough to vary keys and spread
/// arrivals, not for secrets.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from the kernel's random numbers.
    pub fn new() -> Rng {
        Rng::seeded(entropy())
    }

    /// A generator that gives the same numbers for the same seed.
    pub fn seeded(seed: u64) -> Rng {
        // xorshift's state must not be 0; mixing first spreads close seeds apart.
        Rng(mix(seed, 0) | 1)
    }

    /// The generator of draw `i` of `seed` (request `i`'s keys, say): independent of the order
    /// in which draws are made.
    pub fn nth(seed: u64, i: u64) -> Rng {
        Rng(mix(seed, i.wrapping_add(1)) | 1)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in [0, 1), with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// A number below `n` (n ≥ 1), without modulo bias (Lemire's multiply-shift).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

impl Default for Rng {
    fn default() -> Self {
        Rng::new()
    }
}

/// 64 bits from the kernel (getrandom), or a constant if it fails (never seen).
pub fn entropy() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into the 8-byte buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
    if n == 8 {
        u64::from_ne_bytes(b)
    } else {
        0x9e37_79b9_7f4a_7c15
    }
}

/// A seed for a run given none: short (below 2³²) so that a report can print it and a user
/// type it back as `--seed`.
pub fn fresh_seed() -> u64 {
    entropy() >> 32
}

/// The `i`-th value of the stream `seed`: SplitMix64's output function (Steele, Lea & Flood,
/// OOPSLA 2014) at `seed + i·γ`, a bijection of its input, so every `(seed, i)` gets its own bits.
pub fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The top 53 bits of `x` as a number in [0, 1).
pub fn unit(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An exponential draw of mean 1 from the uniform bits `x` (inversion: −ln(1 − U), U in [0, 1),
/// so never infinite).
pub fn exp1(x: u64) -> f64 {
    -(-unit(x)).ln_1p()
}

/// Zipf's law over ranks 1..=n: P(k) ∝ 1/k^s. Drawn by rejection-inversion (Hörmann &
/// Derflinger, ACM TOMACS 1996; as Apache Commons RNG's sampler): constant memory and time
/// whatever n, where a table would cost 8 bytes per key.
#[derive(Clone, Copy, Debug)]
pub struct Zipf {
    n: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl PartialEq for Zipf {
    fn eq(&self, other: &Zipf) -> bool {
        self.n == other.n && self.s.to_bits() == other.s.to_bits()
    }
}

impl Eq for Zipf {}

impl Zipf {
    /// The law over `n` ≥ 1 ranks with exponent `s` > 0 (finite); None otherwise.
    pub fn new(n: u64, s: f64) -> Option<Zipf> {
        if n == 0 || !(s > 0.0 && s.is_finite()) {
            return None;
        }
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.cut = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        Some(z)
    }

    /// How many ranks.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The exponent.
    pub fn s(&self) -> f64 {
        self.s
    }

    /// A rank in 1..=n; rank 1 is the most likely.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            if k as f64 - x <= self.cut || u >= self.h_integral(k as f64 + 0.5) - self.h(k as f64) {
                return k;
            }
        }
    }

    /// P(rank k), for tests and expectations: 1/k^s over the generalized harmonic number.
    pub fn probability(&self, k: u64) -> f64 {
        let norm: f64 = (1..=self.n).map(|i| (i as f64).powf(-self.s)).sum();
        (k as f64).powf(-self.s) / norm
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x)/x, exact near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (eˣ − 1)/x, exact near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pearson's chi-square statistic of `counts` against `expected` probabilities.
    fn chi_square(counts: &[u64], p: impl Fn(usize) -> f64) -> f64 {
        let total: u64 = counts.iter().sum();
        counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let e = p(i) * total as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn zipf_draws_match_the_law_by_chi_square() {
        // 100,000 draws at a fixed seed for each exponent, 20 ranks: 19 degrees of freedom,
        // whose 0.1 % critical value is 43.82. Draws that ignored s, or were off by one rank,
        // give thousands.
        for s in [0.5, 0.99, 1.0, 1.5] {
            let z = Zipf::new(20, s).unwrap();
            let mut rng = Rng::seeded(42);
            let mut counts = [0u64; 20];
            for _ in 0..100_000 {
                counts[(z.sample(&mut rng) - 1) as usize] += 1;
            }
            let chi2 = chi_square(&counts, |i| z.probability(i as u64 + 1));
            assert!(
                chi2 < 43.82,
                "s = {s}: chi-square {chi2}, counts {counts:?}"
            );
            assert!(
                counts[0] > counts[1] && counts[1] > counts[19],
                "{counts:?}"
            );
        }
    }

    #[test]
    fn zipf_stays_in_range_and_rejects_bad_laws() {
        let mut rng = Rng::seeded(7);
        for (n, s) in [(1, 1.0), (2, 0.2), (1_000_000_000, 1.2), (3, 8.0)] {
            let z = Zipf::new(n, s).unwrap();
            for _ in 0..10_000 {
                let k = z.sample(&mut rng);
                assert!((1..=n).contains(&k), "{k} of {n}");
            }
        }
        assert!(Zipf::new(0, 1.0).is_none());
        assert!(Zipf::new(10, 0.0).is_none());
        assert!(Zipf::new(10, f64::NAN).is_none());
    }

    #[test]
    fn draws_repeat_from_their_seed() {
        let a: Vec<u64> = (0..5).map(|i| Rng::nth(9, i).next_u64()).collect();
        let b: Vec<u64> = (0..5).map(|i| Rng::nth(9, i).next_u64()).collect();
        assert_eq!(a, b);
        assert_ne!(Rng::nth(9, 0).next_u64(), Rng::nth(10, 0).next_u64());
        let mut r = Rng::seeded(1);
        assert!((0..1000).all(|_| r.below(7) < 7));
        // Exponential draws: mean 1, never infinite.
        let mean = (0..100_000).map(|i| exp1(mix(3, i))).sum::<f64>() / 1e5;
        assert!((mean - 1.0).abs() < 0.02, "{mean}");
        assert!(exp1(0).is_finite() && exp1(u64::MAX).is_finite());
    }
}
