//! A worker's timers on one timerfd in its epoll set, not on tokio's timer wheel.
//!
//! While any tokio timer is pending, the runtime waits in `epoll_wait` with a timeout, which the
//! kernel arms and cancels as an hrtimer at every wait: a worker that sleeps between replies
//! waits thousands of times a second, and one 50 ms tokio timer beside 50 keep-alive connections
//! cost the plainest tokio client 5.1% more CPU per request (bench/floor.rs `--tick 50`, per_cpu.sh
//! --http1, 20 x 3 s together; the same timer on a timerfd: 1.000). A worker has timers all the
//! time (each connection's expiry and hard stop, the second's tick, the watch for a stop), so
//! they all live here: one timerfd, armed for the earliest deadline, and the runtime waits
//! without a timeout.
//!
//! A deadline that fires wakes the task that asked for it; [`Clock::run`] does that and must be
//! polled beside the worker's futures. A task asks again after each reset of its deadline, and a
//! wake-up for a deadline it has since moved is a spare poll, nothing worse.

use super::timer::PreciseTimer;
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::task::{Poll, Waker};
use std::time::Instant;

/// A worker's timers (see the module's head).
pub(in crate::engine) struct Clock {
    timer: PreciseTimer,
    /// Every deadline at or before this has passed (the last time the timer fired).
    passed: Cell<Instant>,
    /// Deadlines asked for and not yet fired, the earliest first.
    due: RefCell<BinaryHeap<Reverse<Due>>>,
    /// The deadline the timerfd is armed for (None: disarmed).
    armed: Cell<Option<Instant>>,
}

/// A deadline and the task to wake at it.
struct Due {
    at: Instant,
    waker: Waker,
}

impl PartialEq for Due {
    fn eq(&self, other: &Due) -> bool {
        self.at == other.at
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Due) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Due) -> std::cmp::Ordering {
        self.at.cmp(&other.at)
    }
}

impl Clock {
    /// A clock with no deadline yet; within a runtime with I/O enabled.
    pub(in crate::engine) fn new() -> io::Result<Clock> {
        Ok(Clock {
            timer: PreciseTimer::new()?,
            passed: Cell::new(Instant::now()),
            due: RefCell::default(),
            armed: Cell::new(None),
        })
    }

    /// Whether `at` has passed, as far as the clock has fired (no clock read).
    pub(in crate::engine) fn passed(&self, at: Instant) -> bool {
        at <= self.passed.get()
    }

    /// Wakes `waker` once `at` has passed.
    pub(in crate::engine) fn wake_at(&self, at: Instant, waker: &Waker) {
        self.due.borrow_mut().push(Reverse(Due {
            at,
            waker: waker.clone(),
        }));
        if self.armed.get().is_none_or(|armed| at < armed) {
            self.arm(at);
        }
    }

    /// Arms the timerfd for `at`. timerfd_settime fails only for a bad descriptor or value,
    /// which this one and `PreciseTimer::arm`'s are not; were it to, the deadline would wait for the
    /// next one armed.
    fn arm(&self, at: Instant) {
        if self.timer.arm(at).is_ok() {
            self.armed.set(Some(at));
        }
    }

    /// Resolves once `at` has passed.
    pub(in crate::engine) async fn sleep_until(&self, at: Instant) {
        let mut asked = false;
        std::future::poll_fn(|cx| {
            if self.passed(at) {
                return Poll::Ready(());
            }
            if !asked {
                self.wake_at(at, cx.waker());
                asked = true;
            }
            Poll::Pending
        })
        .await
    }

    /// Fires deadlines as they pass; never ends (poll it beside the worker's futures, as a
    /// helper that ends with them).
    pub(in crate::engine) async fn run(&self) {
        loop {
            let fired = std::future::poll_fn(|cx| self.timer.poll_fired(cx)).await;
            if fired.is_err() {
                // The runtime is shutting down.
                return std::future::pending().await;
            }
            self.armed.set(None);
            let now = Instant::now();
            self.passed.set(now);
            // Taken off first and woken after, so that no wake-up finds the queue borrowed.
            let mut woken = Vec::new();
            let next = {
                let mut due = self.due.borrow_mut();
                while due.peek().is_some_and(|d| d.0.at <= now) {
                    woken.extend(due.pop().map(|d| d.0.waker));
                }
                due.peek().map(|d| d.0.at)
            };
            if let Some(next) = next {
                self.arm(next);
            }
            woken.into_iter().for_each(Waker::wake);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;
    use crate::engine::block_on;
    use std::cell::RefCell;
    use std::time::{Duration, Instant};

    /// Deadlines asked for out of order each wake their own task at their time, and the
    /// runtime needs no timer of its own for that.
    #[test]
    fn deadlines_fire_in_their_order_at_their_time() {
        block_on(async {
            let clock = Clock::new().unwrap();
            let began = Instant::now();
            let order = RefCell::new(Vec::new());
            let wait = |ms: u64| {
                let (clock, order) = (&clock, &order);
                async move {
                    clock.sleep_until(began + Duration::from_millis(ms)).await;
                    order.borrow_mut().push((ms, began.elapsed()));
                }
            };
            tokio::select! {
                _ = clock.run() => unreachable!("the clock runs until dropped"),
                _ = async { tokio::join!(wait(60), wait(20), wait(40)) } => {}
            }
            let order = order.take();
            assert_eq!(
                order.iter().map(|(ms, _)| *ms).collect::<Vec<_>>(),
                [20, 40, 60]
            );
            for (ms, took) in order.iter() {
                assert!(
                    *took >= Duration::from_millis(*ms) && *took < Duration::from_secs(5),
                    "{ms} ms took {took:?}"
                );
            }
            // A deadline already passed resolves at once.
            clock.sleep_until(began).await;
        });
    }
}
