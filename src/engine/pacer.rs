//! Open-loop pacing for one worker: its share of the timetable, handed out request by request to
//! whichever of its connections has room, on one precise timer.
//!
//! Why not one timetable per connection: with one request in flight per connection (the TCP
//! default), a connection whose reply is late holds back its next request however idle the
//! others are, so a single slow reply becomes send lag. Here the connections that have room
//! queue for a turn (FIFO); the one at the head sleeps until the next request is due, takes
//! it (and any others due, up to its window), and passes the turn on. So one timer serves all
//! of a worker's connections, one connection wakes per due request rather than all of them,
//! and a due request waits only when every connection of the worker is full.

use super::timeline::Timeline;
use super::timer::PreciseTimer;
use crate::load::schedule::Clock;
use crate::load::{Lanes, Schedule};
use crate::record::Phase;
use std::cell::{Cell, OnceCell, RefCell};
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, MutexGuard};

/// The right to take due requests, held by one connection of a worker at a time.
pub type Turn<'a> = MutexGuard<'a, ()>;

/// One phase's requests for one worker: which remain, and when each is due.
pub struct Pacer {
    /// The timetable, read in order (Poisson arrivals sum their gaps as they go).
    clock: RefCell<Clock>,
    start: Instant,
    lanes: Lanes,
    /// No request of timetable index `limit` or above goes out (`--requests`, a warm-up count).
    limit: Option<u64>,
    /// Nothing goes out at or after this instant (the deadline).
    end: Option<Instant>,
    /// `--warmup auto`: nothing more goes out once this timeline's measured part has begun.
    steady: Option<Arc<Timeline>>,
    /// How many of this worker's requests have been taken.
    taken: Cell<u64>,
    turn: Mutex<()>,
    timer: PreciseTimer,
}

impl Pacer {
    /// The requests of `lanes` in `timetable`, with a timer of their own (a timerfd): only the
    /// connection holding the turn sleeps on it, so no two waits ever share it.
    pub fn new(timetable: Timetable, lanes: Lanes) -> io::Result<Pacer> {
        Ok(Pacer {
            clock: RefCell::new(Clock::new(timetable.schedule)),
            start: timetable.start,
            lanes,
            limit: timetable.limit,
            end: timetable.end,
            steady: timetable.steady,
            taken: Cell::new(0),
            turn: Mutex::new(()),
            timer: PreciseTimer::new()?,
        })
    }

    /// The intended time of the next request, if it is still to go out at `now`: past the end
    /// nothing more goes out, not even requests still owed from before it. Once `None`, always
    /// `None` (every condition only grows).
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        let i = self.lanes.nth(self.taken.get());
        if self.limit.is_some_and(|l| i >= l) || self.steady.as_ref().is_some_and(|t| !t.warming())
        {
            return None;
        }
        let at = self.start + self.clock.borrow_mut().time_of(i)?;
        self.end.is_none_or(|e| at < e && now < e).then_some(at)
    }

    /// Whether every request of this phase has been taken (or may no longer go out).
    pub fn finished(&self) -> bool {
        self.next_due(Instant::now()).is_none()
    }

    /// Takes the next request if it is due at `now`; returns its intended send time.
    pub fn take(&self, now: Instant) -> Option<Instant> {
        let at = self.next_due(now).filter(|&at| at <= now)?;
        self.taken.set(self.taken.get() + 1);
        Some(at)
    }

    /// Waits for this connection's turn and then for the next request's time; `None` when the
    /// phase has nothing more to send. Cancel-safe: dropped while waiting, the connection
    /// leaves the queue (a stale expiry of the timer is harmless, see [`PreciseTimer`]).
    ///
    /// With the turn comes how late the worker woke, when it had to sleep for the request
    /// (a connection had room before it was due): that lateness is the generator's own, its
    /// thread not run on time, whatever the target did. A request already due when the turn
    /// came waited for a connection, or for the reply of the one before: no wake to time.
    pub async fn turn(&self) -> Option<(Turn<'_>, Option<Duration>)> {
        let turn = self.turn.lock().await;
        let now = Instant::now();
        let due = self.next_due(now)?;
        if due <= now {
            return Some((turn, None));
        }
        if self.timer.sleep_until(due).await.is_err() {
            // The timerfd failed after it was made (never seen): tokio's 1 ms timer still works.
            tokio::time::sleep_until(due.into()).await;
        }
        Some((turn, Some(Instant::now().saturating_duration_since(due))))
    }
}

/// A worker's pacing: its lanes and the pacer of each open-loop phase, made by whichever of its
/// connections reaches the phase first (they all ask with the same figures).
pub struct Pacing {
    lanes: Lanes,
    warm: OnceCell<Rc<Pacer>>,
    measure: OnceCell<Rc<Pacer>>,
}

/// What a phase's pacer paces: its timetable from its start, and where it stops.
pub struct Timetable {
    /// The timetable.
    pub schedule: Schedule,
    /// When request 0 is due.
    pub start: Instant,
    /// Timetable indices at or above this do not go out.
    pub limit: Option<u64>,
    /// Nothing goes out at or after this instant.
    pub end: Option<Instant>,
    /// `--warmup auto`'s warm-up: nothing goes out once this timeline's measured part began.
    pub steady: Option<Arc<Timeline>>,
}

impl Pacing {
    /// The pacing of a worker that owns `own` of `connections` connections.
    pub fn new(connections: usize, own: &[usize]) -> Pacing {
        Pacing {
            lanes: Lanes::new(connections, own),
            warm: OnceCell::new(),
            measure: OnceCell::new(),
        }
    }

    /// The pacer of `phase`, made from `timetable()` on the first call. Fails only if its
    /// timer cannot be made (a timerfd: one per worker and phase).
    pub fn pacer(
        &self,
        phase: Phase,
        timetable: impl FnOnce() -> Timetable,
    ) -> io::Result<Rc<Pacer>> {
        let cell = match phase {
            Phase::Warmup => &self.warm,
            Phase::Measure => &self.measure,
        };
        if let Some(p) = cell.get() {
            return Ok(p.clone());
        }
        let pacer = Rc::new(Pacer::new(timetable(), self.lanes.clone())?);
        Ok(cell.get_or_init(|| pacer).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn poisson_arrivals_keep_their_intended_times() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _in_runtime = rt.enter();
        let schedule = Schedule::poisson(Schedule::Constant { rate: 1000.0 }, 11);
        let now = Instant::now();
        let start = now - ms(50);
        let timetable = Timetable {
            schedule: schedule.clone(),
            start,
            limit: None,
            end: None,
            steady: None,
        };
        // Lanes 0 and 2 of 3: requests 0, 2, 3, 5, 6, ...
        let p = Pacer::new(timetable, Lanes::new(3, &[2, 0])).unwrap();
        let due: Vec<_> = std::iter::from_fn(|| p.take(now)).collect();
        let lanes = Lanes::new(3, &[0, 2]);
        let want: Vec<_> = (0..)
            .map(|m| start + schedule.time_of(lanes.nth(m)).unwrap())
            .take_while(|&at| at <= now)
            .collect();
        assert!(want.len() > 10, "{} due in 50 ms at 1000/s", want.len());
        assert_eq!(due, want);
    }

    #[test]
    fn hands_out_the_workers_requests_in_order_until_limit_or_end() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _in_runtime = rt.enter(); // the timer registers with the runtime
        let now = Instant::now();
        let start = now - ms(10);
        let pacer = |limit, end| {
            let timetable = Timetable {
                schedule: Schedule::Constant { rate: 1000.0 },
                start,
                limit,
                end,
                steady: None,
            };
            // Lanes 1 and 3 of 4: requests 1, 3, 5, 7, 9, ... at 1 ms apart.
            Pacer::new(timetable, Lanes::new(4, &[3, 1])).unwrap()
        };
        let p = pacer(None, None);
        let due: Vec<_> = std::iter::from_fn(|| p.take(now)).collect();
        assert_eq!(due, [1, 3, 5, 7, 9].map(|i| start + ms(i)));
        // Request 11 is due 1 ms from now: not yet.
        assert_eq!(p.next_due(now), Some(start + ms(11)));
        assert!(!p.finished());

        // --requests 6: indices 0..6, so this worker's 1, 3, 5.
        let p = pacer(Some(6), None);
        assert_eq!(std::iter::from_fn(|| p.take(now)).count(), 3);
        assert!(p.finished() && p.next_due(now + ms(100)).is_none());

        // Past the end nothing more goes out, not even requests still owed.
        let p = pacer(None, Some(now - ms(1)));
        assert_eq!(p.take(now), None);
        assert!(p.finished());
    }
}
