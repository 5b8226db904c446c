//! The session's socket: registered with the runtime's event loop, or used with blocking calls
//! (a worker thread with a single closed-loop session), and the receives a session makes on it.

use super::{UdpDriver, UdpSession};
use crate::driver::ReadOutcome;
use crate::record::OpError;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

/// A blocking session whose oldest request is overdue waits this long at a time (off the
/// socket, so the engine's timer can expire the request) before it looks again.
const OVERDUE_PAUSE: Duration = Duration::from_millis(1);
/// A stream's send buffer asked of the kernel when `--sndbuf` is not given (it grants twice
/// this, at most twice net.core.wmem_max).
const STREAM_SNDBUF: usize = 1 << 20;
/// The shortest SO_RCVTIMEO/SO_SNDTIMEO (zero would mean "never").
pub(super) const MIN_SOCKET_TIMEOUT: Duration = Duration::from_millis(1);

impl UdpDriver {
    /// A socket bound to any port and connected to the target, with the plan's buffer sizes;
    /// a blocking one's calls time out after `timeout`.
    pub(super) fn open(&self, timeout: Duration) -> io::Result<Sock> {
        let domain = socket2::Domain::for_address(self.addr);
        let s = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))?;
        match self.socket.sndbuf {
            Some(n) => s.set_send_buffer_size(n)?,
            // A stream's sender blocks on its send buffer when the path is slower than its
            // rate, and wakes only once half of it has drained: with the default buffer
            // (208 KiB) it wrote 71-78 Mbit/s into a 100 Mbit/s tbf link when offered 150.
            // 1 MiB (the kernel doubles it, up to twice net.core.wmem_max) keeps the link's
            // queue fed: 150 Mbit/s written, the link full.
            None if !self.expects_replies => s.set_send_buffer_size(STREAM_SNDBUF)?,
            None => {}
        }
        if let Some(n) = self.socket.rcvbuf {
            s.set_recv_buffer_size(n)?;
        }
        if !self.expects_replies {
            recverr(&s, self.addr.is_ipv6())?;
        }
        let any: SocketAddr = match self.addr {
            SocketAddr::V4(_) => SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0)),
            SocketAddr::V6(_) => SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0)),
        };
        s.bind(&any.into())?;
        s.connect(&self.addr.into())?;
        if crate::sys::socket::connected_to_itself((&s).into(), self.addr) {
            // The kernel gave this socket the target's own port (a local target nobody holds
            // the port of, after a refusal): what it sends would come back to it as if
            // answered. Held while another is opened, so that one gets another port. Against
            // a killed local server, one new socket in a few thousand got the freed port, and
            // `-n 100000 --timeout 1s` still ran 120 s after the server's end.
            return self.open(timeout);
        }
        if self.blocking {
            let limit = timeout.max(MIN_SOCKET_TIMEOUT);
            s.set_read_timeout(Some(limit))?;
            s.set_write_timeout(Some(limit))?;
            return Ok(Sock::Blocking(s.into()));
        }
        s.set_nonblocking(true)?;
        UdpSocket::from_std(s.into()).map(Sock::Async)
    }
}

/// A session's socket: registered with the runtime, or blocking.
#[derive(Debug)]
pub(super) enum Sock {
    /// Non-blocking, woken by the runtime's epoll.
    Async(UdpSocket),
    /// Blocking calls with SO_RCVTIMEO/SO_SNDTIMEO set to the request timeout; every `await`
    /// on it completes at once, except when a request is overdue (see [`UdpDriver::blocking`]).
    Blocking(std::net::UdpSocket),
}

impl Sock {
    /// Receives one datagram if one is queued, never waiting (the runtime's readiness is
    /// cleared when there is none, so its next wait is real).
    pub(super) fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Async(s) => s.try_recv(buf),
            Sock::Blocking(s) => recv(s.as_raw_fd(), buf, libc::MSG_DONTWAIT),
        }
    }

    /// Sends one datagram if the socket takes it now (a blocking socket: as `send`).
    pub(super) fn try_send(&self, datagram: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Async(s) => s.try_send(datagram),
            Sock::Blocking(s) => s.send(datagram).map_err(timed_out),
        }
    }

    /// Waits until the socket may take a datagram (a blocking socket: at once).
    pub(super) async fn writable(&self) -> io::Result<()> {
        match self {
            Sock::Async(s) => s.writable().await,
            Sock::Blocking(_) => Ok(()),
        }
    }

    /// Sends one datagram.
    pub(super) async fn send(&self, datagram: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Async(s) => s.send(datagram).await,
            Sock::Blocking(s) => loop {
                match s.send(datagram) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    sent => return sent.map_err(timed_out),
                }
            },
        }
    }
}

/// Asks the kernel to say when the host's own queue drops a datagram this socket sent
/// (IP_RECVERR: without it UDP reports a full qdisc's ENOBUFS as a success, and a stream's
/// sender writes at its rate whatever the link takes, the excess thrown away unseen).
fn recverr(s: &socket2::Socket, v6: bool) -> io::Result<()> {
    let (level, name) = match v6 {
        true => (libc::IPPROTO_IPV6, libc::IPV6_RECVERR),
        false => (libc::IPPROTO_IP, libc::IP_RECVERR),
    };
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads `size_of::<c_int>()` bytes from `&on`, valid for the call.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// One `recv` on `fd` into `buf`: blocking (up to SO_RCVTIMEO), or not with `MSG_DONTWAIT`.
pub(super) fn recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`, valid for the whole call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A blocking call that ran into SO_RCVTIMEO/SO_SNDTIMEO reports EAGAIN; say what it means.
pub(super) fn timed_out(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        io::Error::new(io::ErrorKind::TimedOut, "no progress within --timeout")
    } else {
        e
    }
}

impl UdpSession {
    /// Moves a blocking session onto the event loop, once its path has duplicated a reply.
    /// A duplicate follows its original closely (a server sends both at once), and the event
    /// loop, waking up later than a blocking receive returns, finds it already queued behind
    /// the original and counts it in the same read. A blocking read stops at the original,
    /// leaving the duplicate to the next read; for the run's last reply there is none, so on
    /// such a path it would go uncounted.
    pub(super) fn leave_blocking(&mut self) -> io::Result<()> {
        let Sock::Blocking(s) = &self.sock else {
            return Ok(());
        };
        // The same socket under a second descriptor; the first closes when replaced.
        let s = s.try_clone()?;
        s.set_nonblocking(true)?;
        self.sock = Sock::Async(UdpSocket::from_std(s)?);
        Ok(())
    }

    /// Blocking mode's wait in [`crate::driver::Session::read`]: one blocking `recv`,
    /// accounted. With a request overdue it does not block: it waits off the socket for the
    /// engine to expire the request, looking for replies every [`OVERDUE_PAUSE`].
    pub(super) async fn recv_blocking(
        &mut self,
        fd: RawFd,
        out: &mut ReadOutcome,
    ) -> Result<(), OpError> {
        loop {
            let flags = if self.overdue(Instant::now()) {
                libc::MSG_DONTWAIT
            } else {
                0
            };
            match recv(fd, &mut self.rx, flags) {
                Ok(n) => {
                    self.on_datagram(n, out);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.outstanding == 0 {
                        return Err(OpError::io("read reply", &timed_out(e)));
                    }
                    // SO_RCVTIMEO passed, so the oldest request is overdue: yield, and the
                    // engine's timer counts it lost (this read is then dropped). The session
                    // goes on, as with the event loop.
                    tokio::time::sleep(OVERDUE_PAUSE).await;
                }
                Err(e) => return Err(OpError::io("read reply", &e)),
            }
        }
    }

    /// Receives one datagram into `rx` by `until`; None when none came in time (or on error).
    pub(super) async fn recv_by(&mut self, until: Instant) -> Option<usize> {
        match &self.sock {
            Sock::Async(s) => tokio::time::timeout_at(until.into(), s.recv(&mut self.rx))
                .await
                .ok()?
                .ok(),
            Sock::Blocking(s) => loop {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                s.set_read_timeout(Some(left.max(MIN_SOCKET_TIMEOUT)))
                    .ok()?;
                match recv(s.as_raw_fd(), &mut self.rx, 0) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    got => return got.ok(),
                }
            },
        }
    }
}
