//! The trials of a peak search counted per rate: each rate's verdict by majority, and the
//! contradictions the search met (a rate that both passed and failed; a pass above a rate
//! that failed twice).

use super::MAX_TRIALS;

/// One rate's trials.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    /// The rate, requests/s.
    pub rate: f64,
    /// Trials that passed.
    pub passed: usize,
    /// Trials that failed.
    pub failed: usize,
}

/// What a rate's trials say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// More of its trials passed than failed.
    Pass,
    /// More failed than passed, or a tie left after [`MAX_TRIALS`].
    Fail,
    /// As many passed as failed: another trial decides.
    Undecided,
}

impl Tally {
    /// How many trials ran at this rate.
    pub fn trials(&self) -> usize {
        self.passed + self.failed
    }

    /// The verdict by majority (MLRsearch decides a load by the share of trials that pass).
    pub fn verdict(&self) -> Verdict {
        use std::cmp::Ordering::*;
        match self.passed.cmp(&self.failed) {
            Greater => Verdict::Pass,
            Less => Verdict::Fail,
            Equal if self.trials() >= MAX_TRIALS => Verdict::Fail,
            Equal => Verdict::Undecided,
        }
    }
}

/// The trials (rate, passed) counted per rate, lowest rate first.
pub fn tally(trials: &[(f64, bool)]) -> Vec<Tally> {
    let mut rates: Vec<Tally> = Vec::new();
    for &(rate, passed) in trials {
        let i = match rates.iter().position(|t| t.rate == rate) {
            Some(i) => i,
            None => {
                rates.push(Tally {
                    rate,
                    passed: 0,
                    failed: 0,
                });
                rates.len() - 1
            }
        };
        let t = &mut rates[i];
        match passed {
            true => t.passed += 1,
            false => t.failed += 1,
        }
    }
    rates.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    rates
}

/// A disagreement the search met, and what decided it.
#[derive(Clone, Debug, PartialEq)]
pub struct Contradiction {
    /// The rate, requests/s.
    pub rate: f64,
    /// Its trials that passed.
    pub passed: usize,
    /// Its trials that failed.
    pub failed: usize,
    /// What decided, in words.
    pub decided: String,
}

/// Every contradiction in `trials`: each rate that both passed and failed (decided by the
/// majority of its trials, or not yet), and each rate that passed above one whose failure
/// held (not counted: the result stays below the failure).
pub fn contradictions(trials: &[(f64, bool)]) -> Vec<Contradiction> {
    let rates = tally(trials);
    let firm_fail = rates
        .iter()
        .find(|t| t.verdict() == Verdict::Fail && t.trials() >= 2);
    let mut out = Vec::new();
    for t in &rates {
        let n = t.trials();
        let decided = if t.passed > 0 && t.failed > 0 {
            match t.verdict() {
                Verdict::Pass => format!("passed by majority ({} of {n})", t.passed),
                Verdict::Fail if t.failed > t.passed => {
                    format!("failed by majority ({} of {n})", t.failed)
                }
                Verdict::Fail => format!("a tie after {n} trials, taken as a failure"),
                Verdict::Undecided => "undecided: the search ended first".into(),
            }
        } else {
            match firm_fail {
                Some(f) if t.verdict() == Verdict::Pass && t.rate > f.rate => format!(
                    "passed above {:.0}/s, which failed {} of {} trials: not counted",
                    f.rate,
                    f.failed,
                    f.trials()
                ),
                _ => continue,
            }
        };
        out.push(Contradiction {
            rate: t.rate,
            passed: t.passed,
            failed: t.failed,
            decided,
        });
    }
    out
}
