//! Whether the target is still there: a run by count against a target gone for good (killed,
//! its host down) ends, instead of retrying its connections until its deadline (`-n 300000
//! --timeout 1s -c 4` after the server was killed still ran at 60 s, 498 errors later).
//!
//! The target is gone once, on every worker, nothing has come back (no reply, ok or not, no
//! byte) for the grace ([`grace`]: `--timeout`, at least [`GRACE`]) while its operations kept
//! failing: every request or connection in that time failed, since any still waiting would
//! have outlived its `--timeout`. Each worker watches its own recorder (no shared write on
//! the hot path) and says what it sees here every [`WATCH`]; the first to find every worker
//! silent or finished ends the run. A run by time ends on time anyway and is left alone.

use crate::plan::Plan;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

/// The shortest time with nothing answered after which a run by count takes its target for
/// gone: long enough for a server to restart, or a link to come back.
pub const GRACE: Duration = Duration::from_secs(10);

/// How often each worker looks at its recorder.
pub const WATCH: Duration = Duration::from_millis(250);

/// A worker answering, silent (its operations failing, nothing back for the grace), or done.
const ANSWERING: u8 = 0;
const SILENT: u8 = 1;
const FINISHED: u8 = 2;

/// The time with nothing answered after which `plan`'s target is gone: None for a run by time
/// (it ends on time whatever the target does).
pub fn grace(plan: &Plan) -> Option<Duration> {
    (plan.stop.requests.is_some() && plan.stop.duration.is_none()).then(|| plan.timeout.max(GRACE))
}

/// What the workers of one run see of their target.
#[derive(Debug)]
pub struct Vitals {
    /// None: not watched (a run by time).
    pub grace: Option<Duration>,
    workers: Vec<AtomicU8>,
    gone: AtomicBool,
}

impl Vitals {
    /// The vitals of a run of `plan` (one entry per worker thread).
    pub fn new(plan: &Plan) -> Vitals {
        Vitals {
            grace: grace(plan),
            workers: (0..plan.threads)
                .map(|_| AtomicU8::new(ANSWERING))
                .collect(),
            gone: AtomicBool::new(false),
        }
    }

    /// Worker `w` finds its target silent (or not); true once the target is gone: every worker
    /// silent or finished, at least one silent.
    pub fn say(&self, w: usize, silent: bool) -> bool {
        if let Some(v) = self.workers.get(w) {
            v.store(if silent { SILENT } else { ANSWERING }, Ordering::Relaxed);
        }
        if !self.gone.load(Ordering::Relaxed) && silent {
            let states = || self.workers.iter().map(|v| v.load(Ordering::Relaxed));
            if states().all(|s| s != ANSWERING) && states().any(|s| s == SILENT) {
                self.gone.store(true, Ordering::Relaxed);
            }
        }
        self.gone()
    }

    /// Worker `w` has done its share: it no longer holds the verdict back.
    pub fn finished(&self, w: usize) {
        if let Some(v) = self.workers.get(w) {
            v.store(FINISHED, Ordering::Relaxed);
        }
    }

    /// Whether the run ended because its target was gone.
    pub fn gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vitals(workers: usize) -> Vitals {
        Vitals {
            grace: Some(GRACE),
            workers: (0..workers).map(|_| AtomicU8::new(ANSWERING)).collect(),
            gone: AtomicBool::new(false),
        }
    }

    #[test]
    fn gone_only_when_no_worker_is_answering() {
        let v = vitals(3);
        assert!(!v.say(0, true));
        assert!(!v.say(1, true));
        v.finished(2);
        assert!(!v.say(1, false), "worker 1 answered again");
        assert!(v.say(1, true));
        assert!(v.gone());
        // Once gone, always gone: the run is ending.
        assert!(v.say(0, false));
    }

    #[test]
    fn finished_workers_alone_are_not_a_gone_target() {
        let v = vitals(2);
        v.finished(0);
        v.finished(1);
        assert!(!v.say(0, false));
        assert!(!v.gone());
    }
}
