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
///
/// A non-blocking connect(2) to a listener on this host has finished its handshake when it
/// returns (the kernel answers the SYN within the call), so one poll(2) without waiting asks
/// whether the connection is up: if so, it goes on at once, with no timer armed and no trip
/// through the event loop for its first "writable" (tokio's connect waits for that event and
/// arms a timer for the timeout each time: ~1,500 of crr's ~10,000 instructions per request,
/// callgrind). That poll(2) takes the place of the getsockopt(SO_ERROR) tokio makes. Only a
/// handshake still under way waits, for writable within `timeout`, as before; a blocking
/// stream waits in poll(2) and is never registered with the event loop at all.
pub(crate) async fn connect_stream(
    addr: SocketAddr,
    socket: SocketOptions,
    timeout: Duration,
    blocking: bool,
) -> Result<(Stream, Duration), OpError> {
    use std::os::fd::{FromRawFd, IntoRawFd};
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
    let connect_error = |e: std::io::Error| OpError::io(&format!("connect {addr}"), &e);
    // SAFETY: the descriptor is the socket just made, owned from here on by the std stream.
    let std = unsafe { std::net::TcpStream::from_raw_fd(sock.into_raw_fd()) };
    if let Err(e) = socket2::SockRef::from(&std).connect(&addr.into()) {
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(connect_error(e));
        }
    }
    let (up, blocking) = match poll_out(&std, 0).map_err(connect_error)? {
        Handshake::Failed => return Err(connect_error(socket_error(&std))),
        Handshake::Up if met_itself(&std, addr) => return Err(connect_error(refused())),
        Handshake::Up => (std, blocking),
        Handshake::UnderWay if blocking => {
            let wait = timeout.saturating_sub(started.elapsed());
            let wait_ms = wait.as_millis().clamp(1, i32::MAX as u128) as i32;
            match poll_out(&std, wait_ms).map_err(connect_error)? {
                Handshake::Up if met_itself(&std, addr) => return Err(connect_error(refused())),
                Handshake::Up => (std, true),
                Handshake::Failed => return Err(connect_error(socket_error(&std))),
                Handshake::UnderWay => return Err(connect_timeout(addr, timeout)),
            }
        }
        Handshake::UnderWay => {
            let stream = TcpStream::from_std(std).map_err(connect_error)?;
            let wait = timeout.saturating_sub(started.elapsed());
            match tokio::time::timeout(wait, stream.writable()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(connect_error(e)),
                Err(_) => return Err(connect_timeout(addr, timeout)),
            }
            if let Some(e) = stream.take_error().map_err(connect_error)? {
                return Err(connect_error(e));
            }
            if met_itself(&stream, addr) {
                return Err(connect_error(refused()));
            }
            let took = started.elapsed();
            set_nodelay(&stream, socket.nodelay)?;
            return Ok((Stream::Async(stream), took));
        }
    };
    let took = started.elapsed();
    set_nodelay(&up, socket.nodelay)?;
    let stream = if blocking {
        // A blocking stream's calls never return to the runtime, so without this a connection
        // that keeps failing (a target that never answers a stream's preamble) reconnects in a
        // loop the run's end and Ctrl-C never get to stop: the runtime gets one turn per connect.
        tokio::task::yield_now().await;
        Stream::blocking(up, timeout).map_err(|e| OpError::io("blocking socket", &e))?
    } else {
        Stream::Async(TcpStream::from_std(up).map_err(|e| OpError::io("register socket", &e))?)
    };
    Ok((stream, took))
}

/// Whether a connection to `addr` met its own socket: a local target nobody listens on, whose
/// port the kernel gave this socket as its source port, so that the SYN answered itself (a
/// simultaneous open). Its requests would come back as replies: a raw echo counted them ok.
/// In a namespace whose ephemeral range was 40000-40001, 2 of 4 runs against
/// tcp://127.0.0.1:40000 with no server connected so. Only a loopback target with a port in
/// the ephemeral range can meet itself, and only then is the socket's address asked for: one
/// getsockname(2) per connect there, none elsewhere.
fn met_itself(s: &impl std::os::fd::AsFd, addr: SocketAddr) -> bool {
    if !addr.ip().is_loopback() || !ephemeral(addr.port()) {
        return false;
    }
    crate::sys::socket::connected_to_itself(socket2::SockRef::from(s), addr)
}

/// Whether `port` is in this host's ephemeral range (read once; Linux's default if unreadable).
fn ephemeral(port: u16) -> bool {
    static RANGE: std::sync::OnceLock<(u16, u16)> = std::sync::OnceLock::new();
    let (lo, hi) =
        *RANGE.get_or_init(|| crate::sys::netstat::port_range().unwrap_or((32768, 60999)));
    (lo..=hi).contains(&port)
}

/// The error a connection that met itself fails with: nothing listens at its address.
fn refused() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ECONNREFUSED)
}

/// Where a non-blocking connect stands.
#[derive(Debug, PartialEq, Eq)]
enum Handshake {
    /// Connected: the socket is writable, with no error.
    Up,
    /// Refused, reset or unreachable: the socket's error says which.
    Failed,
    /// Still waiting for the peer's answer.
    UnderWay,
}

/// Asks poll(2) where `s`'s connect stands, waiting up to `wait_ms` (0: not at all).
fn poll_out(s: &impl std::os::fd::AsRawFd, wait_ms: i32) -> std::io::Result<Handshake> {
    let mut p = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut p, 1, wait_ms) } {
            n if n >= 0 => break,
            _ => match std::io::Error::last_os_error() {
                e if e.kind() == std::io::ErrorKind::Interrupted => continue,
                e => return Err(e),
            },
        }
    }
    Ok(if p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
        Handshake::Failed
    } else if p.revents & libc::POLLOUT != 0 {
        Handshake::Up
    } else {
        Handshake::UnderWay
    })
}

/// The error a failed connect left on its socket (SO_ERROR).
fn socket_error(s: &std::net::TcpStream) -> std::io::Error {
    match s.take_error() {
        Ok(Some(e)) | Err(e) => e,
        Ok(None) => std::io::Error::from(std::io::ErrorKind::ConnectionReset),
    }
}

fn connect_timeout(addr: SocketAddr, timeout: Duration) -> OpError {
    OpError::new(
        ErrorKind::Timeout,
        format!("connect {addr}: no answer within {timeout:?}"),
    )
}

/// TCP_NODELAY as the plan asks: set when on; off is the kernel's default for a new socket, so
/// no call is made for it.
fn set_nodelay(s: &impl std::os::fd::AsFd, on: bool) -> Result<(), OpError> {
    if !on {
        return Ok(());
    }
    socket2::SockRef::from(s)
        .set_nodelay(true)
        .map_err(|e| OpError::io("TCP_NODELAY", &e))
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
