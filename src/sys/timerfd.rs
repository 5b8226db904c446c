//! A Linux timerfd: an hrtimer with nanosecond resolution and no timer slack, where tokio's
//! timer wheel ticks in whole milliseconds. Shared by the open loop's pacer (`engine`) and the
//! reference servers' `--delay` (`serve`), which must not import each other.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// A one-shot timerfd on CLOCK_MONOTONIC (the clock behind [`Instant`]), non-blocking: readable
/// once it has expired. The open loop's pacer and the reference servers' `--delay` wait on it through the
/// runtime (`AsyncFd`); the blocking UDP server with `ppoll`.
#[derive(Debug)]
pub struct Timer {
    fd: OwnedFd,
}

impl Timer {
    /// A new, disarmed timer.
    pub fn new() -> io::Result<Timer> {
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
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(Timer { fd })
    }

    /// Arms the timer to expire at `at` (at once if `at` has passed), replacing any earlier
    /// arming and forgetting an expiry not yet read.
    pub fn arm(&self, at: Instant) -> io::Result<()> {
        // A zero it_value would disarm the timer: a deadline that has passed gets 1 ns.
        let wait = at
            .saturating_duration_since(Instant::now())
            .max(Duration::from_nanos(1));
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
        Ok(())
    }

    /// Reads the expiry count: `Ok` once the timer has expired (which makes it unreadable
    /// again), `WouldBlock` before.
    pub fn clear(&self) -> io::Result<()> {
        let mut expirations = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer from a valid timerfd.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl AsRawFd for Timer {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
