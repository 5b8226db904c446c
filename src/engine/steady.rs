//! `--warmup auto`: the warm-up ends once the run is in steady state, judged as Georges,
//! Buytaert and Eeckhout do (OOPSLA 2007, "Statistically Rigorous Java Performance
//! Evaluation", §4.2): the coefficient of variation of the last k measurements falls below a
//! bound. Here a measurement is one second of the warm-up: its ok count in a closed loop (whose
//! rate is what the target gives), its mean latency in an open loop (whose rate is fixed by the
//! timetable, so only latency can settle).
//!
//! The workers add each warm-up reply to a [`WarmTally`] (two relaxed atomic adds, during the
//! warm-up only); the collector reads it once a second and asks a [`Judge`] whether to start
//! measuring. A warm-up that never settles ends at its cap, and the report says so.

use crate::record::Settled;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The seconds judged together (Georges et al.'s k).
pub const WINDOW: usize = 3;

/// The CoV below which those seconds are steady.
pub const BOUND: f64 = 0.05;

/// The warm-up's replies so far, added by every worker.
#[derive(Debug, Default)]
pub struct WarmTally {
    ok: AtomicU64,
    latency_ns: AtomicU64,
}

impl WarmTally {
    /// A reply of the warm-up came after `latency`.
    #[inline]
    pub fn add(&self, latency: Duration) {
        self.ok.fetch_add(1, Ordering::Relaxed);
        let ns = latency.as_nanos().min(u64::MAX as u128) as u64;
        self.latency_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Replies and their summed latency (ns) so far.
    pub fn read(&self) -> (u64, u64) {
        (
            self.ok.load(Ordering::Relaxed),
            self.latency_ns.load(Ordering::Relaxed),
        )
    }
}

/// Judges the warm-up second by second from the tally's running totals.
#[derive(Debug)]
pub struct Judge {
    open_loop: bool,
    last: (u64, u64),
    seconds: Vec<f64>,
}

impl Judge {
    /// A judge of a closed loop's ops/s, or of an open loop's mean latency.
    pub fn new(open_loop: bool) -> Judge {
        Judge {
            open_loop,
            last: (0, 0),
            seconds: Vec::new(),
        }
    }

    /// One more second ended with the tally at `totals` (replies, latency ns) after `secs`
    /// seconds (a collector woken late makes it a little more than 1): returns the verdict
    /// once the last [`WINDOW`] seconds are steady.
    pub fn second(&mut self, totals: (u64, u64), secs: f64) -> Option<Settled> {
        let (ok, ns) = (totals.0 - self.last.0, totals.1 - self.last.1);
        self.last = totals;
        let figure = match self.open_loop {
            // A second without a reply is not steady: an infinite mean.
            true if ok == 0 => f64::INFINITY,
            true => ns as f64 / ok as f64,
            false => ok as f64 / secs.max(1e-3),
        };
        self.seconds.push(figure);
        self.verdict().filter(|s| s.steady)
    }

    /// The replies counted so far (the tally as of the last second judged).
    pub fn replies(&self) -> u64 {
        self.last.0
    }

    /// The verdict now, whatever it is (at the cap: not steady unless the last seconds are);
    /// None before the first second.
    pub fn verdict(&self) -> Option<Settled> {
        if self.seconds.is_empty() {
            return None;
        }
        let last = &self.seconds[self.seconds.len().saturating_sub(WINDOW)..];
        let cov = cov(last).filter(|_| last.len() == WINDOW);
        Some(Settled {
            steady: cov.is_some_and(|c| c <= BOUND),
            cov,
            judged: self.judged(),
            window: WINDOW,
            bound: BOUND,
        })
    }
}

impl Judge {
    /// The figure this judge judges.
    pub fn judged(&self) -> &'static str {
        if self.open_loop {
            "mean latency"
        } else {
            "ops/s"
        }
    }
}

/// The coefficient of variation (sample standard deviation over the mean) of `xs`; None when it
/// has no meaning (fewer than two, a mean of zero, an infinite figure).
fn cov(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds per-second ok counts (closed loop) and returns the second at which it settled.
    fn settles_at(per_second: &[u64]) -> Option<usize> {
        let mut j = Judge::new(false);
        let mut total = 0;
        per_second.iter().position(|&n| {
            total += n;
            j.second((total, 0), 1.0).is_some()
        })
    }

    #[test]
    fn a_climbing_rate_settles_once_the_last_seconds_agree() {
        // Cold caches: 500, 800, 950, then steady around 1000.
        assert_eq!(settles_at(&[500, 800, 950, 1000, 1010, 990, 1000]), Some(4));
        // Steady from the start: after WINDOW seconds.
        assert_eq!(settles_at(&[1000, 1000, 1000]), Some(2));
        // Noisy throughout: never.
        assert_eq!(settles_at(&[1000, 700, 1000, 700, 1000, 700]), None);
    }

    #[test]
    fn an_open_loop_judges_its_mean_latency_and_a_silent_second_is_not_steady() {
        let mut j = Judge::new(true);
        // 100 replies a second; the mean latency falls from 5 ms to 1 ms and stays.
        let mut totals = (0, 0);
        let mut at = None;
        for (i, mean_ms) in [5u64, 3, 1, 1, 1].into_iter().enumerate() {
            totals = (totals.0 + 100, totals.1 + 100 * mean_ms * 1_000_000);
            if j.second(totals, 1.0).is_some() && at.is_none() {
                at = Some(i);
            }
        }
        assert_eq!(at, Some(4));
        let v = j.verdict().unwrap();
        assert!(v.steady && v.judged == "mean latency" && v.cov == Some(0.0));
        // A second with no reply at all (the target froze): not steady, no CoV.
        assert!(j.second(totals, 1.0).is_none());
        assert_eq!(j.verdict().unwrap().cov, None);
    }

    #[test]
    fn the_verdict_at_the_cap_says_how_far_from_steady_it_was() {
        let mut j = Judge::new(false);
        assert_eq!(j.verdict(), None, "no second yet");
        let mut total = 0;
        for n in [100, 200, 300] {
            total += n;
            assert!(j.second((total, 0), 1.0).is_none());
        }
        let v = j.verdict().unwrap();
        assert!(!v.steady);
        assert!((v.cov.unwrap() - 0.5).abs() < 1e-9, "{v:?}");
    }
}
