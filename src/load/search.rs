//! The peak search: which rate to try next, given the outcomes of the steps so far (pure).
//!
//! First doubling from the start rate until a step fails, then bisecting between the highest
//! rate that passed and the lowest that failed until they are within a tolerance (2 %) of each
//! other: mutilate's `--search`, and RFC 2544 §26.1's throughput as the highest rate sustained
//! (there without loss; here within the objective). Halving instead when the start rate fails.

/// What the search does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Run a step at this rate (requests/s).
    Try(f64),
    /// The search is over: the highest rate that passed (none passed: `None`).
    Done(Option<f64>),
}

/// How a search starts and when it stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// The first rate tried, requests/s.
    pub start: f64,
    /// Stop when (failed − passed) / passed is at most this, e.g. 0.02.
    pub tolerance: f64,
    /// Never try above this rate; reaching it with a pass ends the search there.
    pub ceiling: f64,
    /// Give up halving below this rate: nothing sustainable was found.
    pub floor: f64,
}

impl Search {
    /// The next rate after `steps` (rate, passed), in the order they were run.
    pub fn next(&self, steps: &[(f64, bool)]) -> Next {
        if steps.is_empty() {
            return Next::Try(self.start.min(self.ceiling));
        }
        let passed = steps.iter().filter(|s| s.1).map(|s| s.0).reduce(f64::max);
        let failed = steps.iter().filter(|s| !s.1).map(|s| s.0).reduce(f64::min);
        match (passed, failed) {
            (Some(lo), None) if lo >= self.ceiling => Next::Done(Some(lo)),
            (Some(lo), None) => Next::Try((lo * 2.0).min(self.ceiling)),
            (None, Some(hi)) if hi / 2.0 < self.floor => Next::Done(None),
            (None, Some(hi)) => Next::Try(hi / 2.0),
            (Some(lo), Some(hi)) if hi <= lo || (hi - lo) <= self.tolerance * lo => {
                Next::Done(Some(lo))
            }
            (Some(lo), Some(hi)) => Next::Try((lo + hi) / 2.0),
            (None, None) => unreachable!("steps is not empty"),
        }
    }
}

impl Search {
    /// The most steps a search can run before its first confirmation, whatever the outcomes:
    /// doubling up to the ceiling (or halving down to the floor), then bisecting a bracket
    /// `[r, 2r]` until it is within the tolerance. For `wirebench study --dry-run`.
    pub fn steps_at_most(&self) -> usize {
        let log2 = |x: f64| x.max(1.0).log2().ceil() as usize;
        let up = log2(self.ceiling / self.start) + 1;
        let down = log2(self.start / self.floor) + 1;
        up.max(down) + log2(1.0 / self.tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Search = Search {
        start: 100.0,
        tolerance: 0.02,
        ceiling: 1e6,
        floor: 1.0,
    };

    #[test]
    fn next_rate_table() {
        let table: &[(&[(f64, bool)], Next)] = &[
            (&[], Next::Try(100.0)),
            (&[(100.0, true)], Next::Try(200.0)),
            (&[(100.0, true), (200.0, true)], Next::Try(400.0)),
            (&[(100.0, true), (200.0, false)], Next::Try(150.0)),
            (
                &[(100.0, true), (200.0, false), (150.0, false)],
                Next::Try(125.0),
            ),
            (
                &[(100.0, true), (200.0, false), (150.0, true)],
                Next::Try(175.0),
            ),
            // Within 2 %: done at the highest pass.
            (&[(100.0, true), (101.5, false)], Next::Done(Some(100.0))),
            (&[(100.0, false)], Next::Try(50.0)),
            (&[(100.0, false), (50.0, true)], Next::Try(75.0)),
            (&[(1.5, false)], Next::Done(None)),
        ];
        for (steps, want) in table {
            assert_eq!(S.next(steps), *want, "after {steps:?}");
        }
    }

    #[test]
    fn the_ceiling_caps_the_doubling_and_ends_a_search_that_reaches_it() {
        let s = Search {
            ceiling: 300.0,
            ..S
        };
        assert_eq!(s.next(&[(200.0, true)]), Next::Try(300.0));
        assert_eq!(
            s.next(&[(200.0, true), (300.0, true)]),
            Next::Done(Some(300.0))
        );
    }

    /// Against a target that sustains exactly `peak`, the search ends within 2 % below it.
    #[test]
    fn the_search_converges_on_a_known_peak() {
        for peak in [37.0, 999.0, 4000.0, 123_456.0] {
            let mut steps = Vec::new();
            let found = loop {
                match S.next(&steps) {
                    Next::Try(r) => steps.push((r, r <= peak)),
                    Next::Done(found) => break found.unwrap(),
                }
                assert!(steps.len() < 40, "{steps:?}");
            };
            assert!(found <= peak && found >= peak * 0.98, "{peak}: {found}");
        }
    }

    #[test]
    fn no_search_runs_more_steps_than_its_bound() {
        let bound = S.steps_at_most();
        assert_eq!(bound, 15 + 6);
        // A target that sustains exactly `cap`, for caps across the whole range.
        for cap in [
            0.5, 1.0, 3.0, 99.0, 100.0, 101.0, 777.0, 5e4, 999_999.0, 2e6,
        ] {
            let mut steps: Vec<(f64, bool)> = Vec::new();
            while let Next::Try(rate) = S.next(&steps) {
                steps.push((rate, rate <= cap));
            }
            assert!(steps.len() <= bound, "cap {cap}: {} steps", steps.len());
        }
    }
}
