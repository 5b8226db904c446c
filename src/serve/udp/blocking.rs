//! `--blocking`: each server thread serves its socket with plain blocking calls, no event loop.
//!
//! The event loop waits in epoll, then receives, then tries once more to find the socket empty:
//! three syscalls per request where a blocking `recv_from` is one (sockperf's server works this
//! way). The datagram itself is handled by the same [`Worker`] as in the event loop; only the
//! waiting differs:
//!
//! - a receive blocks for at most [`STOP_CHECK`] (SO_RCVTIMEO), so a server with no traffic
//!   notices the shutdown that soon; under traffic the shutdown is looked at once per
//!   [`STOP_CHECK`] too (on the clock read each datagram needs anyway), not per datagram;
//! - while delayed replies or a held datagram (`--reorder-every`) wait, the thread waits in
//!   `ppoll` until the first of them is due or a datagram arrives, then receives it; so
//!   `--delay` does not serialise replies here either, and the held datagram is still released
//!   after [`super::REORDER_HOLD`]. The wait ends on a timerfd armed a [`Margin`] before the
//!   due time (a `ppoll` timeout would get the thread's 50 µs timer slack), and the last
//!   stretch is spent polling the socket without sleeping, as `serve::delay` explains.

use super::worker::{Out, Worker, RECV_BACKOFF, RECV_BUFFER};
use crate::serve::delay::Margin;
use crate::serve::Shutdown;
use crate::sys::timerfd::Timer;
use socket2::SockRef;
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long a blocked receive (or send) waits before it looks whether the server is stopping.
pub(super) const STOP_CHECK: Duration = Duration::from_millis(200);

/// Serves `socket` with blocking calls until `shutdown`; pending delayed replies and a held
/// datagram are then dropped.
pub(super) fn run(mut worker: Worker, socket: UdpSocket, shutdown: &Shutdown) -> io::Result<()> {
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(Some(STOP_CHECK))?;
    socket.set_write_timeout(Some(STOP_CHECK))?;
    let out = Out::new(SockRef::from(&socket), shutdown);
    let mut buf = vec![0u8; RECV_BUFFER];
    let mut check_at = Instant::now() + STOP_CHECK;
    let mut due_timer = DueTimer::new()?;
    loop {
        let received = match worker.next_deadline() {
            None => socket.recv_from(&mut buf),
            Some(due) => {
                let now = Instant::now();
                if due <= now {
                    worker.on_timer(now, &out);
                    continue;
                }
                match due_timer.wait(&socket, due)? {
                    // Only this thread reads this socket: the receive returns at once.
                    Woke::Datagram => socket.recv_from(&mut buf),
                    Woke::Timer | Woke::Spinning => continue,
                    Woke::Neither => Err(io::ErrorKind::WouldBlock.into()),
                }
            }
        };
        match received {
            Ok((n, peer)) => {
                let now = Instant::now();
                worker.on_datagram(&mut buf[..n], peer, now, &out);
                if now >= check_at {
                    if shutdown.is_triggered() {
                        return Ok(());
                    }
                    check_at = now + STOP_CHECK;
                }
            }
            // Timed out (or a signal): nothing arrived; time to look at the shutdown.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                if shutdown.is_triggered() {
                    return Ok(());
                }
                check_at = Instant::now() + STOP_CHECK;
            }
            Err(_) => {
                if shutdown.is_triggered() {
                    return Ok(());
                }
                std::thread::sleep(RECV_BACKOFF);
            }
        }
    }
}

/// What ended a wait for the next due time.
enum Woke {
    /// A datagram is waiting.
    Datagram,
    /// The timer expired: the due time is a margin away, or has come.
    Timer,
    /// Within the margin of the due time, and no datagram: look again.
    Spinning,
    /// [`STOP_CHECK`] passed without either.
    Neither,
}

/// The precise wait for delayed replies: a timerfd, and how early to arm it.
struct DueTimer {
    timer: Timer,
    /// The moment the timer is armed for, so it is not re-armed for every datagram.
    armed: Option<Instant>,
    margin: Margin,
}

impl DueTimer {
    fn new() -> io::Result<DueTimer> {
        Ok(DueTimer {
            timer: Timer::new()?,
            armed: None,
            margin: Margin::default(),
        })
    }

    /// Waits for a datagram, or for `due` less the margin (on the timer); within the margin,
    /// only looks whether a datagram is waiting.
    fn wait(&mut self, socket: &UdpSocket, due: Instant) -> io::Result<Woke> {
        let Some(wake) = self.margin.wake_for(due) else {
            return Ok(match poll(socket, None, Duration::ZERO) {
                (true, _) => Woke::Datagram,
                _ => Woke::Spinning,
            });
        };
        if self.armed != Some(wake) {
            self.timer.arm(wake)?;
            self.armed = Some(wake);
        }
        Ok(match poll(socket, Some(&self.timer), STOP_CHECK) {
            (true, _) => Woke::Datagram,
            (false, true) => {
                self.armed = None;
                if self.timer.clear().is_ok() {
                    self.margin.observe(wake.elapsed());
                }
                Woke::Timer
            }
            (false, false) => Woke::Neither,
        })
    }
}

/// Waits until `socket` (or `timer`) is readable or `limit` has passed; says which is readable.
/// The timeout (ppoll: nanoseconds, though with the thread's timer slack) only bounds the wait
/// so the shutdown is looked at; the timer's expiry has no slack.
fn poll(socket: &UdpSocket, timer: Option<&Timer>, limit: Duration) -> (bool, bool) {
    let pollfd = |fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let mut fds = [
        pollfd(socket.as_raw_fd()),
        pollfd(timer.map_or(-1, |t| t.as_raw_fd())),
    ];
    let ts = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    let count = if timer.is_some() { 2 } else { 1 };
    // SAFETY: ppoll(2) on `count` valid pollfds with a valid timeout and no signal mask.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), count, &ts, std::ptr::null()) };
    let ready = |p: &libc::pollfd| n > 0 && p.revents != 0;
    (ready(&fds[0]), ready(&fds[1]))
}
