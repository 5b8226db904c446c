//! A connection's socket I/O: reading into the fixed buffer with a deadline, writing the
//! queued responses (flushing early when more requests are probably waiting), and the linger
//! after a closing response.

use super::{Conn, End, OUT_START};
use crate::serve::http::file;
use std::io::ErrorKind;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::{timeout, timeout_at, Instant};

/// The most capacity the output buffer keeps between batches.
const OUT_KEEP: usize = 128 * 1024;
/// After an error response, or one that closes the connection, how long (and how many bytes)
/// the server reads until the client closes too. Closing a socket with unread bytes makes the
/// kernel send a reset, which can destroy the response before the client reads it. 64 KiB
/// covers a body already in flight; a garbage flood (a new connection after each 400) made the
/// server read 1 MiB per connection when this was 1 MiB, most of its CPU under that attack.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 64 * 1024;

/// Resolves once the client has left (closed its side, reset, or the socket failed); never
/// otherwise. Bytes that arrive meanwhile (pipelined requests) are read into `buf` after
/// `*end`; once it is full the client's leaving can no longer be seen, and this waits for ever.
pub(super) async fn left(stream: &TcpStream, buf: &mut [u8], end: &mut usize) {
    loop {
        if *end == buf.len() {
            return std::future::pending().await;
        }
        if stream.readable().await.is_err() {
            return;
        }
        match stream.try_read(&mut buf[*end..]) {
            Ok(0) => return,
            Ok(n) => *end += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(_) => return,
        }
    }
}

/// Why waiting for bytes ended without any.
#[derive(Debug)]
pub(super) enum Wait {
    Eof,
    TimedOut,
    Failed,
}

impl Conn<'_> {
    /// Reads more bytes after the unused ones, waiting until `due` at most. Queued responses
    /// are written first, unless more requests are probably waiting already, so a batch of
    /// pipelined requests is answered with one write; never waits with responses queued.
    pub(super) async fn fill(&mut self, due: Instant) -> Result<(), Wait> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        debug_assert!(self.end < self.buf.len(), "callers leave room to read");
        if !self.out.is_empty() && !self.full {
            self.flush().await.map_err(|_| Wait::Failed)?;
        }
        loop {
            match self.stream.try_read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(Wait::Eof),
                Ok(n) => {
                    self.end += n;
                    self.full = self.end == self.buf.len();
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if !self.out.is_empty() {
                        self.flush().await.map_err(|_| Wait::Failed)?;
                        continue;
                    }
                    match timeout_at(due, self.stream.readable()).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) => return Err(Wait::Failed),
                        Err(_) => return Err(Wait::TimedOut),
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(Wait::Failed),
            }
        }
    }

    /// Writes the queued responses (counting them first, so a client that has its response
    /// finds it counted).
    pub(super) async fn flush(&mut self) -> Result<(), End> {
        self.tally.take(&mut self.local);
        if self.out.is_empty() {
            return Ok(());
        }
        let written = self.write_all(&self.out).await;
        self.out.clear();
        if self.out.capacity() > OUT_KEEP {
            self.out = Vec::with_capacity(OUT_START);
        }
        written
    }

    /// [`Conn::flush`] with `MSG_MORE`, before a file: the head leaves in the file's first
    /// segment rather than in a packet of its own.
    pub(super) async fn flush_more(&mut self) -> Result<(), End> {
        self.tally.take(&mut self.local);
        let mut done = 0;
        while done < self.out.len() {
            match file::send_more(&self.stream, &self.out[done..]) {
                Ok(0) => return Err(End::Quiet),
                Ok(n) => done += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.writable().await?,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(End::Quiet),
            }
        }
        self.out.clear();
        Ok(())
    }

    /// Writes all of `buf`; a write that makes no progress for the idle timeout ends the
    /// connection.
    pub(super) async fn write_all(&self, mut buf: &[u8]) -> Result<(), End> {
        while !buf.is_empty() {
            match self.stream.try_write(buf) {
                Ok(0) => return Err(End::Quiet),
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.writable().await?,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(End::Quiet),
            }
        }
        Ok(())
    }

    /// Waits until the socket takes more bytes, for the idle timeout at most.
    pub(super) async fn writable(&self) -> Result<(), End> {
        match timeout(self.shared.options.idle_timeout, self.stream.writable()).await {
            Ok(Ok(())) => Ok(()),
            _ => Err(End::Quiet),
        }
    }

    /// Shuts down the sending side, then reads and drops what the client still sends until it
    /// closes, for [`LINGER`] and [`LINGER_BYTES`] at most.
    pub(super) async fn linger(&mut self) {
        let _ = socket2::SockRef::from(&self.stream).shutdown(std::net::Shutdown::Write);
        let drain = async {
            let mut total = 0;
            while total < LINGER_BYTES {
                if self.stream.readable().await.is_err() {
                    break;
                }
                match self.stream.try_read(&mut self.buf) {
                    Ok(0) => break,
                    Ok(n) => total += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => break,
                }
            }
        };
        let _ = timeout(LINGER, drain).await;
    }
}
