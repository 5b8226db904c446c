//! Service time to the microsecond: the one wait behind every reference server's `--delay`
//! (TCP, with and without `--blocking`; HTTP, and its `/delay/D`; UDP).
//!
//! tokio's timer wheel ticks in whole milliseconds and rounds each sleep up to the next tick, so
//! `tokio::time::sleep(5ms)` answered a wirebench client after 6.3 ms median and 8.6 ms p99,
//! and a 200 µs sleep after ~1.1 ms. A Linux timerfd is an hrtimer started with no slack
//! (`timerfd_settime` arms it with a zero range, unlike `nanosleep` or a `ppoll` timeout, which get
//! the thread's 50 µs timer slack), so it expires on time; what is left is how long the
//! sleeping thread takes to run again (an idle CPU leaving its sleep state, a VM's virtual
//! interrupt): 40–60 µs median and 90–140 µs p99 on the 2-vCPU VM this was written on. So the
//! timer is armed a [`Margin`] before the deadline, a high quantile of the lateness seen so far,
//! and the rest of the wait is spent looking at the clock, letting other work of the thread run
//! between looks. Over a run the spin costs about the spread of the wake-up latency per wait
//! (~30–40 µs here, measured with a C loop doing the same), not the whole margin. A wait holds
//! one descriptor (per connection, made at its first wait), and never ends before its deadline.
//!
//! What a margin cannot cover is a wake-up later than itself: a halted vCPU (the `serve`
//! commands therefore hold the CPUs out of idle sleep with `--delay`, as root,
//! `crate::sys::awake`), and other processes on the CPU (`serve tcp --realtime`: SCHED_FIFO).

use crate::sys::timerfd::Timer;
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The end of a wait that is spun without letting other tasks run: about two rounds through the
/// runtime, so a wait ends within a clock read of its deadline, not a round after it.
const HARD_SPIN: Duration = Duration::from_micros(10);

/// Looks at the clock until `at`.
fn spin_until(at: Instant) {
    while Instant::now() < at {
        std::hint::spin_loop();
    }
}

/// How long before a deadline to arm the timer: a high quantile of how late the thread woke
/// after its recent timers, the second-latest of the last [`WINDOW`] wake-ups (about their
/// p99.6), plus [`PAD`]. A smoothed estimate (the margin before, which rose by a quarter of any
/// lateness above it and fell by 1/64 below) settled near p95 of the wake-ups, so a few in a
/// hundred waits ended late by the rest of their wake-up and the p99 of the delay missed by
/// 80–180 µs (bench/results/delay.txt). One outlier does not move the margin (the second-latest
/// is taken), and a burst of late wake-ups ages out after [`WINDOW`] waits.
#[derive(Clone, Debug)]
pub(crate) struct Margin {
    /// The latest wake-ups' lateness in µs (a ring), `u16::MAX` for 65 ms and more.
    seen: [u16; WINDOW],
    /// Where the next wake-up goes in `seen`.
    next: usize,
    ns: u64,
    /// The deadline asked for last, and when it was first asked for: the wait's length.
    wait: Option<(Instant, Instant)>,
}

/// Wake-ups the margin is taken from.
const WINDOW: usize = 256;
/// Time on top of the quantile: the clock reads and the runtime's round between the timer's
/// wake-up and the spin.
const PAD: Duration = Duration::from_micros(5);
/// The margin before any wake-up was seen.
const FIRST_MARGIN: Duration = Duration::from_micros(100);
/// The most time a wait spends spinning: on a loaded machine wake-ups come later and the margin
/// follows them, up to this. Not more: a thread that spins long uses up its share of a busy CPU
/// and then waits behind the others (a 1 ms cap gave `serve http --delay 1ms` a p99 of 12 ms
/// beside other builds, where this one stays within the tests' bounds).
const MAX_MARGIN: Duration = Duration::from_micros(250);

impl Default for Margin {
    fn default() -> Self {
        let first = FIRST_MARGIN.as_micros() as u16;
        Margin {
            seen: [first; WINDOW],
            next: 0,
            ns: FIRST_MARGIN.as_nanos() as u64,
            wait: None,
        }
    }
}

impl Margin {
    /// When to arm the timer for a deadline `at`; `None` when that moment has passed, and only
    /// the spin is left. The margin is at most half the wait (from the first time `at` was
    /// asked for), so every wait sleeps on its timer for a while: a thread that only spun
    /// would learn no more wake-ups (the margin stayed at its cap for good once two in a
    /// window were late, so every 200 µs wait was spun whole), and a thread that never sleeps
    /// keeps its CPU busy, so the client it answers is woken on the other one (CI measured a
    /// 200 µs delay at p50 ~600 µs that way).
    pub(crate) fn wake_for(&mut self, at: Instant) -> Option<Instant> {
        let now = Instant::now();
        let began = match self.wait {
            Some((deadline, began)) if deadline == at => began,
            _ => {
                self.wait = Some((at, now));
                now
            }
        };
        let margin = Duration::from_nanos(self.ns).min(at.saturating_duration_since(began) / 2);
        at.checked_sub(margin).filter(|&wake| wake > now)
    }

    /// Takes in one wake-up: the thread ran again `late` after the timer it armed expired.
    pub(crate) fn observe(&mut self, late: Duration) {
        self.seen[self.next] = late.as_micros().min(u16::MAX as u128) as u16;
        self.next = (self.next + 1) % WINDOW;
        // The two largest in one pass: 256 compares, next to a syscall and a wake-up.
        let (mut first, mut second) = (0u16, 0u16);
        for &v in &self.seen {
            if v > first {
                (first, second) = (v, first);
            } else if v > second {
                second = v;
            }
        }
        let quantile = Duration::from_micros(second as u64) + PAD;
        self.ns = quantile.min(MAX_MARGIN).as_nanos() as u64;
    }
}

/// The waits of one connection (or one server thread): a timer, made at the first wait, and
/// its margin. Waiting is done in the runtime, so the thread serves its other connections
/// meanwhile; with `--blocking` the connection's own runtime has nothing else to do.
#[derive(Debug, Default)]
pub(crate) struct Pause {
    /// `None` until the first wait needs it, and after the timerfd could not be made (out of
    /// descriptors): waits then fall back to tokio's timer, late but still waits.
    timer: Option<AsyncFd<Timer>>,
    failed: bool,
    /// The moment the timer is armed for, so a wait given up (a `select!` that took another
    /// branch) and asked again for the same deadline does not re-arm it.
    armed: Option<Instant>,
    margin: Margin,
}

impl Pause {
    /// Waits `d` from now.
    #[cfg(test)]
    pub(crate) async fn sleep(&mut self, d: Duration) {
        if !d.is_zero() {
            self.until(Instant::now() + d).await;
        }
    }

    /// Waits until `at` and returns as close after it as the clock allows. Cancel-safe: a
    /// wait dropped before its end can be resumed by asking again.
    pub(crate) async fn until(&mut self, at: Instant) {
        if let Some(wake) = self.margin.wake_for(at) {
            self.wait_timer(wake).await;
        }
        // The last stretch: look at the clock, and let the thread's other tasks run between
        // looks (a task yielding is polled again as soon as nothing else is ready; each round
        // through the runtime takes a few µs), then spin the last few µs without yielding.
        while at.saturating_duration_since(Instant::now()) > HARD_SPIN {
            tokio::task::yield_now().await;
        }
        spin_until(at);
    }

    /// Waits for the timer armed for `wake`, and learns from how late it woke the thread.
    async fn wait_timer(&mut self, wake: Instant) {
        self.make_timer();
        let Some(timer) = &self.timer else {
            return tokio::time::sleep_until(wake.into()).await;
        };
        if self.armed != Some(wake) {
            if timer.get_ref().arm(wake).is_err() {
                return tokio::time::sleep_until(wake.into()).await;
            }
            self.armed = Some(wake);
        }
        loop {
            let Ok(mut ready) = timer.readable().await else {
                // Only when the runtime is shutting down.
                return tokio::time::sleep_until(wake.into()).await;
            };
            // An expiry read by an earlier wait can leave the descriptor marked readable:
            // `try_io` clears that mark when the read finds nothing.
            if let Ok(read) = ready.try_io(|t| t.get_ref().clear()) {
                self.armed = None;
                if read.is_ok() {
                    self.margin.observe(wake.elapsed());
                }
                return;
            }
        }
    }

    /// Makes the timer and registers it with this thread's runtime, once.
    fn make_timer(&mut self) {
        if self.timer.is_some() || self.failed {
            return;
        }
        let made = Timer::new().and_then(|t| {
            // SAFETY: the AsyncFd owns the Timer, whose descriptor is never replaced or
            // closed before the AsyncFd is dropped (and with it the registration).
            unsafe { AsyncFd::register_with_interest(t, Interest::READABLE) }
                .map_err(|e| e.into_parts().1)
        });
        self.failed = made.is_err();
        self.timer = made.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_is_the_second_latest_recent_wake_up() {
        let mut m = Margin::default();
        let us = |n: u64| Duration::from_micros(n);
        // Wake-ups at 40 µs: the margin falls to them once the first guess has aged out.
        for _ in 0..WINDOW {
            m.observe(us(40));
        }
        assert_eq!(Duration::from_nanos(m.ns), us(40) + PAD);
        // One late wake-up is an outlier; a second sets the margin.
        m.observe(us(300));
        assert_eq!(Duration::from_nanos(m.ns), us(40) + PAD);
        m.observe(us(200));
        assert_eq!(Duration::from_nanos(m.ns), us(200) + PAD);
        // They age out after WINDOW more wake-ups.
        for _ in 0..WINDOW {
            m.observe(us(40));
        }
        assert_eq!(Duration::from_nanos(m.ns), us(40) + PAD);
        // Lateness beyond the cap counts as the cap.
        for _ in 0..3 {
            m.observe(Duration::from_secs(1));
        }
        assert_eq!(Duration::from_nanos(m.ns), MAX_MARGIN);
    }

    #[test]
    fn wake_for_sleeps_at_least_half_of_every_wait() {
        let mut m = Margin::default();
        let later = Instant::now() + Duration::from_millis(50);
        assert_eq!(m.wake_for(later), Some(later - FIRST_MARGIN));
        // A wait shorter than twice the margin sleeps its first half.
        let began = Instant::now();
        let soon = began + FIRST_MARGIN;
        let wake = m.wake_for(soon).expect("the first half is slept");
        assert!(
            wake >= began + FIRST_MARGIN / 2 && wake < soon,
            "{wake:?} {began:?}"
        );
        // Asked again for the same deadline, the same moment (not half of what is left).
        if let Some(again) = m.wake_for(soon) {
            assert_eq!(again, wake);
        }
        // Once that moment has passed only the spin is left.
        spin_until(wake);
        assert_eq!(m.wake_for(soon), None);
    }

    #[test]
    fn pause_never_returns_early() {
        let rt = super::super::threads::runtime().unwrap();
        rt.block_on(async {
            let mut p = Pause::default();
            for micros in [0u64, 50, 300, 2_000, 300] {
                let start = Instant::now();
                p.sleep(Duration::from_micros(micros)).await;
                assert!(start.elapsed() >= Duration::from_micros(micros));
            }
            assert!(p.timer.is_some(), "the 2 ms wait used the timerfd");
        });
    }
}
