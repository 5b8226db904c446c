//! A TCP connection's socket for the drivers that speak over TCP: opened with the plan's socket
//! options, then either left to the runtime's event loop or switched to blocking calls.

mod connect;

pub(crate) use connect::connect_stream;

use crate::record::{ErrorKind, OpError};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A connection's socket: registered with the runtime, or blocking.
#[derive(Debug)]
pub(crate) enum Stream {
    /// Non-blocking, woken by the runtime's epoll.
    Async(TcpStream),
    /// Blocking calls with SO_RCVTIMEO/SO_SNDTIMEO set to the request timeout: every `await`
    /// on it completes at once, so a worker with one connection makes one syscall per read and
    /// per write, as sockperf does.
    Blocking(std::net::TcpStream),
    /// TLS over a connection in the event loop (https).
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Stream {
    /// A blocking stream from a connected socket the event loop does not know.
    fn blocking(s: std::net::TcpStream, timeout: Duration) -> std::io::Result<Stream> {
        s.set_nonblocking(false)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        Ok(Stream::Blocking(s))
    }

    /// The socket under the stream (under TLS too).
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Async(s) => s.as_raw_fd(),
            Stream::Blocking(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.get_ref().0.as_raw_fd(),
        }
    }

    /// The connection's packets ([`segment_of`] its socket).
    pub(crate) fn segment(&self) -> Option<crate::record::Segment> {
        segment_of(self.fd())
    }

    /// Half-closes: no more bytes go out, replies can still come in (plain TCP only).
    pub(crate) fn shutdown_write(&self) -> std::io::Result<()> {
        match self {
            Stream::Async(s) => socket2::SockRef::from(s).shutdown(std::net::Shutdown::Write),
            Stream::Blocking(s) => s.shutdown(std::net::Shutdown::Write),
            Stream::Tls(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "no half-close over TLS",
            )),
        }
    }

    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => std::future::poll_fn(|cx| poll_recv(s, cx, buf)).await,
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                recv_raw(s.as_raw_fd(), buf, 0).map_err(timed_out)
            }
            Stream::Tls(s) => s.read(buf).await,
        }
    }

    pub(crate) async fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => s.write(buf).await,
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                send_raw(s.as_raw_fd(), buf, 0).map_err(timed_out)
            }
            Stream::Tls(s) => s.write(buf).await,
        }
    }

    /// Writes `buf[*pos..]`, advancing `*pos` as bytes go out (so a cancelled call loses
    /// nothing), then pushes out anything TLS still holds. Returns the bytes written.
    pub(crate) async fn write_from(
        &mut self,
        buf: &[u8],
        pos: &mut usize,
    ) -> Result<usize, OpError> {
        let start = *pos;
        // Straight to the socket first: tokio writes only once its event loop has seen the
        // socket writable, which a fresh connection's socket has not, so its first request
        // would wait a trip through the loop. What the socket does not take now goes the event
        // loop's way below (a stale "writable" then costs one more send, only when the
        // socket's buffer is full).
        if let Some(sent) = self.send_now_from(buf, pos) {
            sent?;
        }
        while *pos < buf.len() {
            let n = self
                .write(&buf[*pos..])
                .await
                .map_err(|e| OpError::io("write request", &e))?;
            if n == 0 {
                return Err(OpError::new(
                    ErrorKind::Reset,
                    "write request: connection closed",
                ));
            }
            *pos += n;
        }
        self.flush()
            .await
            .map_err(|e| OpError::io("write request", &e))?;
        Ok(*pos - start)
    }

    /// Writes `buf[*pos..]` as far as the socket takes it now, advancing `*pos`, without
    /// waiting: Some(true) once all of it is out, Some(false) if the socket is full; None for
    /// a stream that cannot write without its event loop (TLS, or a blocking one), which
    /// [`Stream::write_from`] serves. Inlined into both callers: left to LLVM, sharing it with
    /// `write_from` cost the keep-alive path 27 instructions per request (callgrind).
    #[inline(always)]
    pub(crate) fn send_now_from(
        &mut self,
        buf: &[u8],
        pos: &mut usize,
    ) -> Option<Result<bool, OpError>> {
        let Stream::Async(s) = self else {
            return None;
        };
        use std::os::fd::AsRawFd;
        while *pos < buf.len() {
            match send_now(s.as_raw_fd(), &buf[*pos..]) {
                Ok(0) => return Some(Ok(false)),
                Ok(n) => *pos += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Some(Ok(false)),
                Err(e) => return Some(Err(OpError::io("write request", &e))),
            }
        }
        Some(Ok(true))
    }

    /// Polls a read into `buf` (as [`Stream::read`] awaits one); None for a stream that is not
    /// a plain socket on the event loop.
    pub(crate) fn poll_read_now(
        &mut self,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> Option<std::task::Poll<std::io::Result<usize>>> {
        match self {
            Stream::Async(s) => Some(poll_recv(s, cx, buf)),
            _ => None,
        }
    }

    /// Writes what the socket takes now, without waiting (WouldBlock if nothing).
    pub(crate) fn try_write_now(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => s.try_write(buf),
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                send_now(s.as_raw_fd(), buf)
            }
            Stream::Tls(_) => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }

    /// Reads what is there now, without waiting (WouldBlock if nothing).
    pub(crate) fn try_read_now(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => s.try_read(buf),
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                recv_now(s.as_raw_fd(), buf)
            }
            Stream::Tls(_) => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }

    /// Waits until the socket is readable or writable; returns (readable, writable). A blocking
    /// stream waits in poll(2) up to its read timeout.
    pub(crate) async fn wait_duplex(&mut self) -> std::io::Result<(bool, bool)> {
        match self {
            Stream::Async(s) => {
                let r = s
                    .ready(tokio::io::Interest::READABLE | tokio::io::Interest::WRITABLE)
                    .await?;
                Ok((r.is_readable() || r.is_read_closed(), r.is_writable()))
            }
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                let wait = s
                    .read_timeout()?
                    .map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
                let mut p = libc::pollfd {
                    fd: s.as_raw_fd(),
                    events: libc::POLLIN | libc::POLLOUT,
                    revents: 0,
                };
                loop {
                    // SAFETY: one valid pollfd.
                    match unsafe { libc::poll(&mut p, 1, wait) } {
                        0 => return Err(timed_out(std::io::ErrorKind::WouldBlock.into())),
                        n if n > 0 => break,
                        _ => match std::io::Error::last_os_error() {
                            e if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            e => return Err(e),
                        },
                    }
                }
                let r = p.revents;
                let bad = libc::POLLERR | libc::POLLHUP;
                Ok((r & (libc::POLLIN | bad) != 0, r & libc::POLLOUT != 0))
            }
            Stream::Tls(_) => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }

    /// Asks the kernel not to wake a reader until `bytes` are buffered (SO_RCVLOWAT; plain TCP
    /// only, a TLS record boundary is not a byte count). Fewer, larger reads for a long body.
    pub(crate) fn set_rcvlowat(&self, bytes: usize) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Stream::Async(s) => s.as_raw_fd(),
            Stream::Blocking(s) => s.as_raw_fd(),
            Stream::Tls(_) => return Ok(()),
        };
        let v = bytes.clamp(1, i32::MAX as usize) as libc::c_int;
        // SAFETY: a valid descriptor we own and a c_int of the size we pass.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Pushes out anything a layer above the socket still holds (TLS records).
    pub(crate) async fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tls(s) => s.flush().await,
            _ => Ok(()),
        }
    }

    /// Wraps a fresh connection in TLS.
    pub(crate) async fn tls(
        self,
        client: &super::tls::TlsClient,
        timeout: Duration,
    ) -> Result<Stream, OpError> {
        let Stream::Async(tcp) = self else {
            return Err(OpError::new(
                ErrorKind::Other,
                "TLS needs an event-loop socket",
            ));
        };
        match tokio::time::timeout(timeout, client.handshake(tcp)).await {
            Ok(Ok(s)) => Ok(Stream::Tls(Box::new(s))),
            Ok(Err(e)) => Err(super::tls::handshake_error(&e)),
            Err(_) => Err(OpError::new(
                ErrorKind::Timeout,
                format!("TLS handshake: no answer within {timeout:?}"),
            )),
        }
    }
}

/// Reads into `buf` what the socket has, or waits for the event loop to see it readable: tokio's
/// `poll_read`, made of the parts tokio lends out. The socket is read at once when the loop last
/// saw it readable, and only when it was not is the loop asked to wake the task (once a reply,
/// where `poll_read` asks twice: for the wake-up and again before it reads); the read is the raw
/// recvfrom system call (glibc's recv() is a cancellation point, see [`send_now`]). As in tokio,
/// a read that leaves part of `buf` empty has drained the socket, and the loop's readiness is
/// cleared with it (`try_io` clears it on WouldBlock, so a short read reports itself as one and
/// gives its count apart); each read takes from the task's cooperative budget, so a connection
/// whose socket is never empty still lets its worker's other tasks and timers run.
fn poll_recv(
    s: &TcpStream,
    cx: &mut std::task::Context<'_>,
    buf: &mut [u8],
) -> std::task::Poll<std::io::Result<usize>> {
    use std::io::ErrorKind::{Interrupted, WouldBlock};
    use std::os::fd::AsRawFd;
    use std::task::{ready, Poll};
    if buf.is_empty() {
        return Poll::Ready(Ok(0));
    }
    let coop = ready!(tokio::task::coop::poll_proceed(cx));
    let fd = s.as_raw_fd();
    loop {
        let mut drained = 0;
        let read = s.try_io(tokio::io::Interest::READABLE, || {
            let n = recv_now(fd, buf)?;
            if 0 < n && n < buf.len() {
                drained = n;
                return Err(WouldBlock.into());
            }
            Ok(n)
        });
        match read {
            Ok(n) => {
                coop.made_progress();
                return Poll::Ready(Ok(n));
            }
            Err(e) if drained > 0 => {
                // The WouldBlock made above, a bare kind: nothing to free.
                std::mem::forget(e);
                coop.made_progress();
                return Poll::Ready(Ok(drained));
            }
            Err(e) => match e.kind() {
                WouldBlock | Interrupted => {}
                _ => return Poll::Ready(Err(e)),
            },
        }
        // Not readable when last seen (or no longer): wait for the loop to say it is.
        ready!(s.poll_read_ready(cx))?;
    }
}

/// recv(2) of what the socket `fd` holds now, without waiting (WouldBlock if nothing).
fn recv_now(fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    recv_raw(fd, buf, libc::MSG_DONTWAIT)
}

/// recv(2) with `flags`, as the raw recvfrom system call ([`send_now`] says why).
fn recv_raw(fd: std::os::fd::RawFd, buf: &mut [u8], flags: libc::c_int) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for writes of its length; recvfrom's address is null with length 0.
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd,
            buf.as_mut_ptr(),
            buf.len(),
            flags,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    byte_count(n as libc::ssize_t)
}

/// send(2) of what the socket `fd` takes now, without waiting (WouldBlock if nothing) and
/// without SIGPIPE. Made as the raw sendto system call: glibc's send() is a thread
/// cancellation point, and marks the thread cancellable around the call, ~60 instructions per
/// request that a send which never blocks does not need (callgrind).
fn send_now(fd: std::os::fd::RawFd, buf: &[u8]) -> std::io::Result<usize> {
    send_raw(fd, buf, libc::MSG_DONTWAIT)
}

/// send(2) with `flags` and without SIGPIPE, as the raw sendto system call ([`send_now`]).
fn send_raw(fd: std::os::fd::RawFd, buf: &[u8], flags: libc::c_int) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for reads of its length; sendto's address is null with length 0.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf.as_ptr(),
            buf.len(),
            flags | libc::MSG_NOSIGNAL,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::socklen_t,
        )
    };
    byte_count(n as libc::ssize_t)
}

/// A blocking call that ran into SO_RCVTIMEO/SO_SNDTIMEO reports EAGAIN; say what it means.
/// A send(2) or recv(2) result: the byte count, or the error the call set.
fn byte_count(n: libc::ssize_t) -> std::io::Result<usize> {
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

fn timed_out(e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::WouldBlock {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "no progress within --timeout")
    } else {
        e
    }
}

/// The packets of the TCP connection on `fd`: the send MSS from `TCP_INFO` (read once, at the
/// end of a session, off the hot path) and the TCP header, with the timestamp option if
/// negotiated; and the bytes the peer has acknowledged so far (what crossed the link).
pub(crate) fn segment_of(fd: std::os::fd::RawFd) -> Option<crate::record::Segment> {
    let tcp = crate::sys::link::tcp_segment(fd).ok()?;
    // RFC 793's 20-byte header, plus RFC 7323's 10-byte timestamp option padded to 12.
    let header = if tcp.timestamps { 32 } else { 20 };
    (tcp.mss > 0).then_some(crate::record::Segment {
        payload: tcp.mss,
        received: tcp.rcv_mss.max(1),
        header,
        acked: Some(tcp.acked),
    })
}

#[cfg(test)]
mod tests {
    use super::{connect_stream, Stream};
    use crate::sys::socket::SocketOptions;
    use std::time::Duration;

    /// Reads all ways a socket can be read: a short one (the socket drained, its readiness
    /// cleared, the next read waits for the peer), ones that fill the buffer (more is there,
    /// read again at once) and the peer's close (0). The payload arrives whole and in order,
    /// and the reads end (a lost wake-up would hang them until the timeout fails the test).
    #[test]
    fn a_stream_reads_short_full_and_closing_reads_in_order() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let payload: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let sent = payload.clone();
        let peer = std::thread::spawn(move || {
            use std::io::Write;
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(&sent[..1000]).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            s.write_all(&sent[1000..]).unwrap();
        });
        let got = crate::engine::block_on(async {
            let timeout = Duration::from_secs(5);
            let (mut stream, _) = connect_stream(addr, SocketOptions::default(), timeout, false)
                .await
                .unwrap();
            assert!(matches!(stream, Stream::Async(_)));
            let mut got = Vec::new();
            let mut buf = vec![0u8; 4096];
            let (mut full, mut short) = (0, 0);
            let all = async {
                loop {
                    let n = stream.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break;
                    }
                    full += (n == buf.len()) as u32;
                    short += (n < buf.len()) as u32;
                    got.extend_from_slice(&buf[..n]);
                }
            };
            tokio::time::timeout(Duration::from_secs(10), all)
                .await
                .expect("the reads ended");
            assert!(
                full > 0 && short > 0,
                "full reads {full}, short reads {short}"
            );
            got
        });
        peer.join().unwrap();
        assert!(got == payload, "{} bytes of {}", got.len(), payload.len());
    }
}
