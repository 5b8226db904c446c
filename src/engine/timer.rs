//! A precise timer for the open loop (and under the worker's clock, `clock.rs`). Tokio's timer wheel has a 1 ms tick, so a request due in
//! 200 µs would go out up to a millisecond late and that lag would count as latency. A Linux
//! `timerfd` (an hrtimer, nanosecond resolution) registered with the runtime wakes the sender
//! within the kernel's wake-up latency instead.

use crate::sys::timerfd::Timer;
use std::io;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A one-shot timer that can be re-armed; callers must tolerate early wake-ups (a stale
/// expiry from an earlier arming), which the open loop does by re-checking the time.
pub struct PreciseTimer {
    fd: AsyncFd<Timer>,
}

impl PreciseTimer {
    /// A new disarmed timer on CLOCK_MONOTONIC (the clock behind `Instant`).
    pub fn new() -> io::Result<PreciseTimer> {
        // SAFETY: the AsyncFd owns the Timer, whose descriptor is never replaced, so it stays
        // the same open file for the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register_with_interest(Timer::new()?, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(PreciseTimer { fd })
    }

    /// Resolves at (or a little after) `at`; at once if `at` has passed.
    pub async fn sleep_until(&self, at: Instant) -> io::Result<()> {
        if at <= Instant::now() {
            return Ok(());
        }
        self.arm(at)?;
        std::future::poll_fn(|cx| self.poll_fired(cx)).await
    }

    /// Arms the timer for `at`, replacing any earlier arming (see [`Timer::arm`]).
    pub fn arm(&self, at: Instant) -> io::Result<()> {
        self.fd.get_ref().arm(at)
    }

    /// Ready once the armed timer has expired (its expiry read).
    pub fn poll_fired(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut guard = std::task::ready!(self.fd.poll_read_ready(cx))?;
            match guard.try_io(|fd| fd.get_ref().clear()) {
                Ok(result) => {
                    // One read takes every expiry and the timer is now disarmed: nothing more
                    // can be read until it is armed again, so forget the readiness now rather
                    // than pay a read that would block next time.
                    guard.clear_ready();
                    return Poll::Ready(result);
                }
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn wakes_close_to_the_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let t = PreciseTimer::new().unwrap();
            for micros in [300u64, 1500, 50] {
                let at = Instant::now() + Duration::from_micros(micros);
                t.sleep_until(at).await.unwrap();
                assert!(Instant::now() >= at, "woke before {micros} µs");
            }
            // A deadline in the past returns at once.
            t.sleep_until(Instant::now() - Duration::from_millis(1))
                .await
                .unwrap();
        });
    }
}
