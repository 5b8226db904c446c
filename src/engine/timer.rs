//! A precise timer for the open loop. Tokio's timer wheel has a 1 ms tick, so a request due in
//! 200 µs would go out up to a millisecond late and that lag would count as latency. A Linux
//! `timerfd` (an hrtimer, nanosecond resolution) registered with the runtime wakes the sender
//! within the kernel's wake-up latency instead.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A one-shot timer that can be re-armed; callers must tolerate early wake-ups (a stale
/// expiry from an earlier arming), which the open loop does by re-checking the time.
pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    /// A new disarmed timer on CLOCK_MONOTONIC (the clock behind `Instant`).
    pub fn new() -> io::Result<PreciseTimer> {
        // SAFETY: timerfd_create has no memory effects; the result is checked before use.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: `owned` is a valid open descriptor that the AsyncFd owns from here on and
        // never replaces, so it stays the same open file for the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register_with_interest(owned, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(PreciseTimer { fd })
    }

    /// Resolves at (or a little after) `at`; at once if `at` has passed.
    pub async fn sleep_until(&self, at: Instant) -> io::Result<()> {
        let now = Instant::now();
        if at <= now {
            return Ok(());
        }
        let wait = at - now;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: the descriptor is valid for the life of `self`; `spec` is a valid itimerspec.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut guard = self.fd.readable().await?;
            let read = guard.try_io(|fd| {
                let mut expirations = [0u8; 8];
                // SAFETY: reading 8 bytes into an 8-byte buffer from a valid timerfd.
                let n = unsafe { libc::read(fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
            match read {
                Ok(result) => return result,
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
