//! The peak search: which rate to try next, given the outcomes of the trials so far (pure).
//!
//! First doubling from the start rate until a trial fails, then bisecting between the highest
//! rate that passed and the lowest that failed until they are within a tolerance (2 %) of each
//! other: mutilate's `--search`, and RFC 2544 §26.1's throughput as the highest rate sustained
//! (there without loss; here within the objective). Halving instead when the start rate fails.
//!
//! One trial decides nothing on a noisy machine (a stall of the host fails a step the target
//! would pass), so the search tolerates noise as draft-ietf-bmwg-mlrsearch does: each rate's
//! verdict comes from all its trials, and a rate whose trials disagree is measured again until
//! a majority decides; a rate that failed below one that passed is measured again; the failure
//! that bounds the result is measured twice; the result is confirmed by [`CONFIRM_TRIALS`]
//! trials of which most passed. The search is a pure function of its trials, so every path is
//! tested in a table below without a socket.

mod tally;

pub use tally::{contradictions, tally, Contradiction, Tally, Verdict};

/// Trials at the rate found before it is the result (the bisection's pass and two more): a
/// best of three.
pub const CONFIRM_TRIALS: usize = 3;
/// No rate is measured more often: a tie left at this count is a failure.
pub const MAX_TRIALS: usize = 5;

/// Why a rate already tried is measured again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Its trials disagree (as many passed as failed): one more decides.
    Contradiction,
    /// It failed below a rate that passed: a stall is more likely than a target that
    /// serves more at a higher rate.
    BelowPass,
    /// It is the failure that bounds the result, so one failure must not be a stall.
    Recheck,
    /// It is the result: confirmed by [`CONFIRM_TRIALS`] trials.
    Confirm,
}

impl Why {
    /// The word the report and the JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Why::Contradiction => "contradiction",
            Why::BelowPass => "below_pass",
            Why::Recheck => "recheck",
            Why::Confirm => "confirmation",
        }
    }
}

/// What the search does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Run a trial at a rate not tried yet (requests/s).
    Try(f64),
    /// Run another trial at a rate tried before, and why.
    Retry(f64, Why),
    /// The search is over: the highest rate that passed, confirmed (none passed: `None`).
    Done(Option<f64>),
}

/// How a search starts and when it stops.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// The next trial after `trials` (rate, passed), in the order they were run.
    pub fn next(&self, trials: &[(f64, bool)]) -> Next {
        if trials.is_empty() {
            return Next::Try(self.start.min(self.ceiling));
        }
        let rates = tally(trials);
        // A rate that both passed and failed as often: one more trial decides.
        if let Some(t) = rates.iter().find(|t| t.verdict() == Verdict::Undecided) {
            return Next::Retry(t.rate, Why::Contradiction);
        }
        let lowest_fail = rates.iter().find(|t| t.verdict() == Verdict::Fail);
        if let Some(f) = lowest_fail {
            let pass_above = rates
                .iter()
                .any(|t| t.rate > f.rate && t.verdict() == Verdict::Pass);
            if pass_above && f.trials() < 2 {
                return Next::Retry(f.rate, Why::BelowPass);
            }
        }
        // Passes above a failure that held twice are not counted (MLRsearch's conservative
        // lower bound: the highest pass below the lowest failure).
        let hi = lowest_fail;
        let lo = rates
            .iter()
            .rfind(|t| t.verdict() == Verdict::Pass && hi.is_none_or(|h| t.rate < h.rate));
        match (lo, hi) {
            (Some(lo), None) if lo.rate >= self.ceiling => confirm(lo),
            (Some(lo), None) => Next::Try((lo.rate * 2.0).min(self.ceiling)),
            (None, Some(hi)) if hi.rate / 2.0 < self.floor => Next::Done(None),
            (None, Some(hi)) => Next::Try(hi.rate / 2.0),
            (Some(lo), Some(hi)) if hi.rate - lo.rate <= self.tolerance * lo.rate => {
                if hi.trials() < 2 {
                    Next::Retry(hi.rate, Why::Recheck)
                } else {
                    confirm(lo)
                }
            }
            (Some(lo), Some(hi)) => Next::Try((lo.rate + hi.rate) / 2.0),
            (None, None) => Next::Done(None),
        }
    }

    /// The most trials a search can run when no trial contradicts another: doubling up to the
    /// ceiling (or halving down to the floor), bisecting a bracket `[r, 2r]` until it is
    /// within the tolerance, the recheck of its failure and the confirmation trials. For
    /// `wirebench study --dry-run`.
    pub fn steps_at_most(&self) -> usize {
        let log2 = |x: f64| x.max(1.0).log2().ceil() as usize;
        let up = log2(self.ceiling / self.start) + 1;
        let down = log2(self.start / self.floor) + 1;
        up.max(down) + log2(1.0 / self.tolerance) + 1 + (CONFIRM_TRIALS - 1)
    }
}

/// The result `lo` once enough of its trials passed; until then another trial of it.
fn confirm(lo: &Tally) -> Next {
    match lo.trials() < CONFIRM_TRIALS {
        true => Next::Retry(lo.rate, Why::Confirm),
        false => Next::Done(Some(lo.rate)),
    }
}

#[cfg(test)]
mod tests;
