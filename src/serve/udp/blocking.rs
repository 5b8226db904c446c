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
//!   `ppoll` until the first of them is due or a datagram arrives, then receives it; so `--delay` does not serialise replies here either, and the held datagram is
//!   still released after [`super::REORDER_HOLD`].

use super::worker::{Out, Worker, RECV_BACKOFF, RECV_BUFFER};
use crate::serve::Shutdown;
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
    loop {
        let received = match worker.next_deadline() {
            None => socket.recv_from(&mut buf),
            Some(due) => {
                let now = Instant::now();
                if due <= now {
                    worker.on_timer(now, &out);
                    continue;
                }
                if wait_readable(&socket, (due - now).min(STOP_CHECK)) {
                    // Only this thread reads this socket: the receive returns at once.
                    socket.recv_from(&mut buf)
                } else {
                    Err(io::ErrorKind::WouldBlock.into())
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

/// Waits until `socket` is readable or `limit` has passed (ppoll: to the nanosecond, unlike
/// SO_RCVTIMEO's clock ticks); true if readable.
fn wait_readable(socket: &UdpSocket, limit: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_nsec: limit.subsec_nanos() as libc::c_long,
    };
    // SAFETY: ppoll(2) on one valid pollfd with a valid timeout and no signal mask.
    let n = unsafe { libc::ppoll(&mut fd, 1, &ts, std::ptr::null()) };
    n > 0
}
