//! Opening a TCP connection for a driver: the socket made with the plan's options, a
//! non-blocking connect(2) asked once with poll(2) whether it is up, the event loop (or a
//! blocking poll) waited on only while its handshake is under way, and a connection that met
//! its own socket refused.

use super::Stream;
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
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
