//! What the servers that accept TCP connections (`tcp` and `http`) share: the listening socket
//! (and the usage error when it cannot be bound, which the UDP server's command gives too), and
//! a server [`accepting`] on it: a handle on it and a runtime per thread, the accept loop, and
//! admission under a connection limit.

use super::counters::{Connections, Snapshot, Tally};
use super::threads::{runtime, Ready};
use super::Shutdown;
use crate::error::UsageError;
use crate::sys::socket::SocketOptions;
use socket2::{Domain, Protocol, SockRef, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Pending connections the kernel queues before the server accepts them; the kernel caps it at
/// net.core.somaxconn (4096 here). A client opening 10,000 connections at once overflowed 1024:
/// ~10% of its connects waited for a SYN retransmit and some hit a 2 s connect timeout.
const BACKLOG: i32 = 65535;

/// How long a thread backs off after a failed accept (e.g. out of file descriptors), so it does
/// not spin while the condition lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// Why a listening socket could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The address cannot be listened on (taken, privileged, not local): exit 2.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The operating system refused the socket or one of its options.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Binds and listens with socket2, so SO_RCVBUF is set before `listen`: the window scale a
/// connection uses is fixed by its handshake, and accepted sockets inherit the buffer size.
pub(crate) fn bind(
    addr: SocketAddr,
    options: &SocketOptions,
) -> Result<std::net::TcpListener, ListenError> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // A restarted server can bind its port again while old connections sit in TIME_WAIT.
    socket.set_reuse_address(true)?;
    if let Some(n) = options.rcvbuf {
        socket.set_recv_buffer_size(n)?;
    }
    socket
        .bind(&addr.into())
        .and_then(|()| socket.listen(BACKLOG))
        .map_err(|e| {
            bind_error(
                &format!("listen on {addr}"),
                &e,
                "check the address, or use 127.0.0.1:0",
            )
        })?;
    Ok(socket.into())
}

/// A usage error for a failed bind, `cannot WHAT (ERROR): FIX`, naming the likely fix;
/// `otherwise` is the fix for an error that suggests none.
pub(crate) fn bind_error(what: &str, e: &io::Error, otherwise: &str) -> UsageError {
    let fix = match e.kind() {
        io::ErrorKind::AddrInUse => "the port is taken: pick another, or port 0 for a free one",
        io::ErrorKind::PermissionDenied => {
            "ports below 1024 need privileges: pick a port above 1024, or port 0 for a free one"
        }
        io::ErrorKind::AddrNotAvailable => {
            "that address is not on this machine: use 127.0.0.1 or an address of a local interface"
        }
        _ => otherwise,
    };
    UsageError::new(format!("cannot {what} ({e}): {fix}"))
}

/// A server accepting on `listener` with `threads` threads, ready to start: each thread accepts
/// on a runtime of its own, admits a connection under `max_connections` with the `socket`
/// options applied (see [`admit`]), and hands it to `serve` on that thread.
pub(crate) fn accepting<S: Snapshot + 'static>(
    name: &'static str,
    listener: std::net::TcpListener,
    socket: SocketOptions,
    threads: usize,
    max_connections: Option<usize>,
    serve: impl Fn(TcpStream, Admission<S>, &Shutdown) + Clone + Send + 'static,
) -> io::Result<Ready<S>>
where
    S::Block: AsRef<Connections>,
{
    let addr = listener.local_addr()?;
    let limit = Limit::new(max_connections);
    let threads = per_thread(listener, &socket, threads)?;
    Ok(Ready::new(
        name,
        addr,
        threads,
        move |(listener, runtime), tally, stop| {
            let (limit, serve) = (limit.clone(), serve.clone());
            move || {
                accept_until(&stop, runtime, listener, |stream| {
                    // Refused: dropping the stream closes it.
                    if let Some(admission) = admit(&stream, &limit, &socket, &tally) {
                        serve(stream, admission, &stop);
                    }
                })
            }
        },
    ))
}

/// Switches `listener` to non-blocking mode and sets its SO_RCVBUF (accepted sockets inherit
/// it; ideally it was set before listen, as [`bind`] does, since the window scale is fixed by
/// the handshake), then makes per thread a handle on it and a runtime.
fn per_thread(
    listener: std::net::TcpListener,
    options: &SocketOptions,
    threads: usize,
) -> io::Result<Vec<(std::net::TcpListener, Runtime)>> {
    listener.set_nonblocking(true)?;
    if let Some(n) = options.rcvbuf {
        SockRef::from(&listener).set_recv_buffer_size(n)?;
    }
    // Duplicate descriptors of the same socket: every thread accepts from the one queue.
    (0..threads.max(1))
        .map(|_| Ok((listener.try_clone()?, runtime()?)))
        .collect()
}

/// Accepts on `runtime` until shutdown, handing each connection to `admit`, then drops the
/// runtime, which ends the connections it serves.
fn accept_until(
    shutdown: &Shutdown,
    runtime: Runtime,
    listener: std::net::TcpListener,
    mut admit: impl FnMut(TcpStream),
) -> io::Result<()> {
    runtime.block_on(async {
        let listener = TcpListener::from_std(listener)?;
        let stopped = shutdown.wait();
        tokio::pin!(stopped);
        loop {
            tokio::select! {
                _ = &mut stopped => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => admit(stream),
                    Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
                },
            }
        }
    })
}

/// `max_connections`, and the connections open now over all of a server's threads.
#[derive(Debug)]
struct Limit {
    max: usize,
    open: AtomicUsize,
}

impl Limit {
    /// A limit when `max_connections` is set; without one, an unlimited server touches no
    /// shared counter per connection.
    fn new(max_connections: Option<usize>) -> Option<Arc<Limit>> {
        max_connections.map(|max| {
            Arc::new(Limit {
                max,
                open: AtomicUsize::new(0),
            })
        })
    }
}

/// Admits a connection under `limit` and applies the socket options, or counts it rejected and
/// returns `None` (dropping the stream then closes it).
fn admit<S: Snapshot>(
    stream: &TcpStream,
    limit: &Option<Arc<Limit>>,
    socket: &SocketOptions,
    tally: &Tally<S>,
) -> Option<Admission<S>>
where
    S::Block: AsRef<Connections>,
{
    let Some(admission) = Admission::new(limit, tally) else {
        tally.as_ref().rejected();
        return None;
    };
    // Failures are ignored: the peer may already have reset the connection, and then the first
    // read says so.
    let _ = stream.set_nodelay(socket.nodelay);
    let sock = SockRef::from(stream);
    if let Some(n) = socket.sndbuf {
        let _ = sock.set_send_buffer_size(n);
    }
    if let Some(n) = socket.rcvbuf {
        let _ = sock.set_recv_buffer_size(n);
    }
    Some(admission)
}

/// An admitted connection: counted open (and against the limit) until dropped, which happens
/// when its task ends or its runtime is dropped.
pub(crate) struct Admission<S: Snapshot>
where
    S::Block: AsRef<Connections>,
{
    /// The counters of the thread that accepted it.
    pub(crate) tally: Tally<S>,
    limited: Option<Arc<Limit>>,
}

impl<S: Snapshot> Admission<S>
where
    S::Block: AsRef<Connections>,
{
    /// Admits a connection, or `None` when `max_connections` are already open.
    fn new(limit: &Option<Arc<Limit>>, tally: &Tally<S>) -> Option<Admission<S>> {
        if let Some(limit) = limit {
            if limit.open.fetch_add(1, Ordering::Relaxed) >= limit.max {
                limit.open.fetch_sub(1, Ordering::Relaxed);
                return None;
            }
        }
        tally.as_ref().opened();
        Some(Admission {
            tally: tally.clone(),
            limited: limit.clone(),
        })
    }
}

impl<S: Snapshot> Drop for Admission<S>
where
    S::Block: AsRef<Connections>,
{
    fn drop(&mut self) {
        self.tally.as_ref().closed();
        if let Some(limit) = &self.limited {
            limit.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_error_names_the_fix() {
        let taken = io::Error::from(io::ErrorKind::AddrInUse);
        let err = bind_error("listen on 127.0.0.1:1", &taken, "retry").0;
        assert!(err.starts_with("cannot listen on 127.0.0.1:1 ("), "{err}");
        assert!(err.ends_with("): the port is taken: pick another, or port 0 for a free one"));
        let other = io::Error::other("x");
        assert!(bind_error("bind udp 127.0.0.1:1", &other, "retry")
            .0
            .ends_with("(x): retry"));
    }
}
