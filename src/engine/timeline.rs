//! The phases of a run in time: warm-up, then the measured part, which ends at a deadline or
//! when the request quota is used up.
//!
//! A warm-up by duration ends at a known instant. A warm-up by count ends when the last
//! connection has done its share: connections that finish early wait at a gate, so the measured
//! part starts at one instant for every worker and the per-second series lines up.
//!
//! A warm-up until steady state (`--warmup auto`) ends when the collector judges it so
//! ([`super::steady`]), or at its cap.
//!
//! An open loop with no warm-up starts its timetable once every connection is open, a moment
//! ([`START_LEAD`]) after the last one: started at once, its first requests would wait for the
//! worker threads and their connections and go out tens of milliseconds late (send lag that
//! says nothing about the target).

use crate::plan::{Plan, Warmup};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long after the last connection is open an open loop's timetable starts: time for every
/// worker to hear of the start and arm its timer before the first request is due.
pub const START_LEAD: Duration = Duration::from_millis(5);

/// Shared by all workers: when the run began and when measuring starts.
#[derive(Debug)]
pub struct Timeline {
    /// When the run (warm-up included) began.
    pub t0: Instant,
    /// Measuring time, if the run is bounded by time.
    pub duration: Option<Duration>,
    /// The whole run's limit from `t0` (`--deadline`), if it has one.
    pub overall: Option<Duration>,
    /// Whether the overall limit passed before the run's work was done.
    expired: AtomicBool,
    /// Connections still warming up (warm-up by count) or connecting (open-loop start).
    remaining: AtomicUsize,
    /// Whether the measured part starts once every connection is open (open loop, no warm-up).
    gated: bool,
    start: watch::Sender<Option<Instant>>,
    /// `--warmup auto`: its cap, and the replies of the warm-up so far.
    pub auto: Option<(Duration, super::steady::WarmTally)>,
    /// What stops this run early (Ctrl-C for the command line).
    pub stop: super::stop::Stop,
    /// Whether the target still answers (a run by count ends once it is gone).
    pub vitals: super::vitals::Vitals,
}

impl Timeline {
    /// The timeline of `plan`, beginning now, stopped early by `stop`.
    pub fn new(plan: &Plan, stop: super::stop::Stop) -> Timeline {
        let t0 = Instant::now();
        let gated = plan.warmup.is_none() && plan.load.schedule().is_some();
        let start = match plan.warmup {
            None if gated => None,
            None => Some(t0),
            Some(Warmup::Duration(w)) => Some(t0 + w),
            Some(Warmup::Count(_) | Warmup::Auto(_)) => None,
        };
        let auto = match plan.warmup {
            Some(Warmup::Auto(cap)) => Some((cap, super::steady::WarmTally::default())),
            _ => None,
        };
        Timeline {
            t0,
            duration: plan.stop.duration,
            overall: plan.deadline,
            expired: AtomicBool::new(false),
            remaining: AtomicUsize::new(plan.connections),
            gated,
            start: watch::channel(start).0,
            auto,
            stop,
            vitals: super::vitals::Vitals::new(plan),
        }
    }

    /// When measuring starts, if that is known yet.
    pub fn measure_start(&self) -> Option<Instant> {
        *self.start.borrow()
    }

    /// Waits until the measuring start is known, and returns it.
    pub async fn wait_measure_start(&self) -> Instant {
        let mut rx = self.start.subscribe();
        // The sender lives in `self`, so the wait ends only with a start.
        let start = rx.wait_for(Option::is_some).await.ok().and_then(|s| *s);
        start.unwrap_or_else(Instant::now)
    }

    /// A connection has done its warm-up share; the last one to arrive starts the measured part.
    pub fn arrive(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.start.send_replace(Some(Instant::now()));
        }
    }

    /// The warm-up is steady (or over for another reason): measuring starts now, unless it
    /// has started already.
    pub fn begin(&self) {
        self.start.send_if_modified(|s| {
            let unset = s.is_none();
            if unset {
                *s = Some(Instant::now());
            }
            unset
        });
    }

    /// Whether a warm-up until steady state is still going on: it issues nothing more once over.
    pub fn warming(&self) -> bool {
        self.measure_start().is_none()
    }

    /// Whether each connection must report [`Timeline::connected`] before measuring starts.
    pub fn gated(&self) -> bool {
        self.gated
    }

    /// A connection is open (or has tried to open); once the last one is, the open loop's
    /// timetable starts [`START_LEAD`] later.
    pub fn connected(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.start.send_replace(Some(Instant::now() + START_LEAD));
        }
    }

    /// Waits until the run's overall limit passes (never, without one), then marks it passed.
    pub(super) async fn overall_deadline(&self, clock: &super::clock::Clock) {
        match self.overall {
            Some(d) => clock.sleep_until(self.t0 + d).await,
            None => std::future::pending().await,
        }
        self.expired.store(true, Ordering::Relaxed);
    }

    /// Whether the run's overall limit has passed at `now` (marking it passed if so). Asked by
    /// a closed loop before each request: a worker whose one connection blocks in its socket
    /// calls never yields to [`Timeline::overall_deadline`], so without this a count run ran
    /// on past its `--deadline` (19-39 s for a 2 s deadline).
    pub fn overall_passed(&self, now: Instant) -> bool {
        let passed = self.overall.is_some_and(|d| now >= self.t0 + d);
        if passed {
            self.expired.store(true, Ordering::Relaxed);
        }
        passed
    }

    /// Whether the run's overall limit passed before its work was done.
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::Relaxed)
    }

    /// When the measured part ends, given its start (None: ends by request count only).
    pub fn deadline(&self, start: Instant) -> Option<Instant> {
        self.duration.map(|d| start + d)
    }

    /// The last whole second of the series, so stragglers past the deadline fold into it.
    pub fn last_second(&self) -> Option<u64> {
        self.duration
            .map(|d| (d.as_secs_f64().ceil() as u64).saturating_sub(1))
    }
}
