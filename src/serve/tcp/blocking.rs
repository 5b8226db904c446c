//! `--blocking`: each connection on its own thread, with blocking socket calls.
//!
//! The event loop waits in epoll, then reads: two syscalls per request where a blocking read is
//! one. For a handful of connections, as in a latency benchmark, a thread per connection is the
//! quicker server (sockperf's server works this way); the event loop is the one that scales to
//! tens of thousands. The loops in `transfer` run unchanged on a [`BlockingStream`], whose
//! reads and writes block and then complete at once.

use crate::serve::Shutdown;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How often a blocked read or write looks whether the server is stopping.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// A blocking socket behind tokio's I/O traits: every poll completes (or fails) before it
/// returns, so code written against `AsyncRead`/`AsyncWrite` runs without an event loop.
pub(crate) struct BlockingStream {
    socket: std::net::TcpStream,
    shutdown: Shutdown,
    /// A read or write that makes no progress for this long fails (TimedOut), so the
    /// connection ends: the idle timeout of the event loop's connections, here too.
    idle: Option<Duration>,
}

impl BlockingStream {
    /// Takes a connection out of the event loop and makes its calls block, each for `idle` at
    /// most (none: as long as it takes).
    pub(crate) fn new(
        stream: tokio::net::TcpStream,
        shutdown: Shutdown,
        idle: Option<Duration>,
    ) -> io::Result<Self> {
        let socket = stream.into_std()?;
        socket.set_nonblocking(false)?;
        // Wake often enough to see a stop, and an idle timeout shorter than that.
        let check = idle.map_or(STOP_CHECK, |d| d.min(STOP_CHECK));
        socket.set_read_timeout(Some(check))?;
        socket.set_write_timeout(Some(check))?;
        Ok(BlockingStream {
            socket,
            shutdown,
            idle,
        })
    }

    /// Retries `op` while it times out, the server is not stopping and the idle timeout has
    /// not passed.
    fn retry<T>(&self, mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        let began = Instant::now();
        loop {
            match op() {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) && self.idle.is_some_and(|d| began.elapsed() >= d) =>
                {
                    return Err(io::ErrorKind::TimedOut.into())
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) && !self.shutdown.is_triggered() => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

impl AsyncRead for BlockingStream {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let fd = self.socket.as_raw_fd();
        // SAFETY: recv writes at most `unfilled.len()` bytes into the buffer's unfilled part;
        // exactly the `n` it reports are then marked initialised and filled.
        let read = self.retry(|| unsafe {
            let unfilled = buf.unfilled_mut();
            let n = libc::recv(fd, unfilled.as_mut_ptr().cast(), unfilled.len(), 0);
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        });
        Poll::Ready(read.map(|n| {
            // SAFETY: the kernel initialised these `n` bytes.
            unsafe { buf.assume_init(n) };
            buf.advance(n);
        }))
    }
}

impl AsyncWrite for BlockingStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut socket = &this.socket;
        Poll::Ready(this.retry(|| socket.write(data)))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.socket.shutdown(std::net::Shutdown::Write))
    }
}
