//! A TCP connection's socket for the drivers that speak over TCP: opened with the plan's socket
//! options, then either left to the runtime's event loop or switched to blocking calls.

use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Connects to `addr` within `timeout` with `socket`'s options; returns the stream and how long
/// the handshake took.
pub(crate) async fn connect_stream(
    addr: SocketAddr,
    socket: SocketOptions,
    timeout: Duration,
    blocking: bool,
) -> Result<(Stream, Duration), OpError> {
    let started = Instant::now();
    let sock = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(|e| OpError::io("socket", &e))?;
    // Buffer sizes must be set before connect to take part in window scaling.
    if let Some(n) = socket.sndbuf {
        sock.set_send_buffer_size(n as u32)
            .map_err(|e| OpError::io("SO_SNDBUF", &e))?;
    }
    if let Some(n) = socket.rcvbuf {
        sock.set_recv_buffer_size(n as u32)
            .map_err(|e| OpError::io("SO_RCVBUF", &e))?;
    }
    let stream = match tokio::time::timeout(timeout, sock.connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(OpError::io(&format!("connect {addr}"), &e)),
        Err(_) => {
            return Err(OpError::new(
                ErrorKind::Timeout,
                format!("connect {addr}: no answer within {timeout:?}"),
            ))
        }
    };
    let took = started.elapsed();
    stream
        .set_nodelay(socket.nodelay)
        .map_err(|e| OpError::io("TCP_NODELAY", &e))?;
    let stream = if blocking {
        Stream::blocking(stream, timeout).map_err(|e| OpError::io("blocking socket", &e))?
    } else {
        Stream::Async(stream)
    };
    Ok((stream, took))
}

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
    pub(crate) fn blocking(stream: TcpStream, timeout: Duration) -> std::io::Result<Stream> {
        let s = stream.into_std()?;
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
            Stream::Async(s) => s.read(buf).await,
            Stream::Blocking(s) => std::io::Read::read(s, buf).map_err(timed_out),
            Stream::Tls(s) => s.read(buf).await,
        }
    }

    pub(crate) async fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => s.write(buf).await,
            Stream::Blocking(s) => std::io::Write::write(s, buf).map_err(timed_out),
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
        if let (Stream::Async(s), true) = (&mut *self, *pos < buf.len()) {
            // A keep-alive request goes out at once on a socket that takes it (as it nearly always
            // does): try_write, one syscall, without the poll_write future around it (~150
            // instructions per request; callgrind). What is left waits below, as before.
            match s.try_write(&buf[*pos..]) {
                Ok(0) => {}
                Ok(n) => *pos += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(OpError::io("write request", &e)),
            }
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

    /// Writes what the socket takes now, without waiting (WouldBlock if nothing).
    pub(crate) fn try_write_now(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Async(s) => s.try_write(buf),
            Stream::Blocking(s) => {
                use std::os::fd::AsRawFd;
                // SAFETY: `buf` is valid for reads of its length.
                let n = unsafe {
                    libc::send(
                        s.as_raw_fd(),
                        buf.as_ptr().cast(),
                        buf.len(),
                        libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                    )
                };
                byte_count(n)
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
                // SAFETY: `buf` is valid for writes of its length.
                let n = unsafe {
                    libc::recv(
                        s.as_raw_fd(),
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                byte_count(n)
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
