//! The three things a connection does once its framing is known: echo, sink, source.
//!
//! Counters are updated once per read (or per written batch), before the write that answers it,
//! so a client that has its reply always finds it counted.

use super::conn::BUF;
use super::filler::Filler;
use super::framer::{BadFrame, Framer};
use super::stats::Tally;
use super::Stall;
use crate::serve::delay::Pause;
use crate::serve::rate::Service;
use std::io;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// What the loops read from and write to: a connection in the event loop, or a
/// [`super::blocking::BlockingStream`].
pub(crate) trait Wire: AsyncRead + AsyncWrite + Unpin {}

impl<T: AsyncRead + AsyncWrite + Unpin> Wire for T {}

/// Why a connection ends early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// Read or write failed; usually the client closed or reset the connection. The error is
    /// not kept: a reset is a normal end for a load-test connection, not worth reporting.
    Io,
    /// The client's bytes cannot be framed: close at once.
    Bad,
    /// A wirebench client must be told this (after the error prefix) before the close.
    Refuse(String),
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Stop {
        Stop::Io
    }
}

impl From<BadFrame> for Stop {
    fn from(_: BadFrame) -> Stop {
        Stop::Bad
    }
}

/// What an echo server answers each request with.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The request's own bytes. Echoed as they arrive: the output is byte-identical to the input
    /// whatever the read boundaries, so nothing is held back.
    Same,
    /// A synthetic reply, sent once the whole request has arrived.
    Filler(Filler),
}

/// The echo loop's test faults: a server that misbehaves on purpose, so `wirebench diagnose`
/// has something to find and its tests something to find it in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Faults {
    /// Hold every reply during a recurring window.
    pub(crate) stall: Option<Stall>,
    /// Write each reply in this many write() calls (Nagle meets delayed ACK, seed 003).
    pub(crate) reply_writes: usize,
    /// Serve only every Nth request of a connection with the service's delay.
    pub(crate) delay_every: Option<u64>,
}

impl Faults {
    /// True when replies go out one write per chunk, each as soon as it is due.
    fn none(&self) -> bool {
        self.reply_writes <= 1 && self.delay_every.is_none()
    }

    /// Whether the connection's request number `n` (from 0) waits for its service.
    fn waits(&self, n: u64) -> bool {
        self.delay_every.is_none_or(|k| n % k == k - 1)
    }
}

/// Echo loop. `buf` holds bytes already read (after the preamble); returns when the client closes.
pub(crate) async fn echo<S: Wire>(
    stream: &mut S,
    mut buf: Vec<u8>,
    mut framer: Framer,
    reply: &Reply,
    (service, faults): (&Service, Faults),
    tally: &Tally,
    idle: Option<Duration>,
) -> Result<(), Stop> {
    let mut pace = Pace {
        service,
        pause: Pause::default(),
        faults,
        served: 0,
    };
    loop {
        if !buf.is_empty() {
            tally.read(buf.len());
            if let Some(s) = faults.stall {
                s.wait_out().await;
            }
            if service.is_instant() && faults.none() {
                answer(stream, &buf, &mut framer, reply, tally).await?;
            } else {
                answer_paced(stream, &buf, &mut framer, reply, &mut pace, tally).await?;
            }
        }
        if !read(stream, &mut buf, idle).await? {
            return Ok(());
        }
    }
}

/// A connection's service: when each request is due, and how its reply is written.
struct Pace<'a> {
    service: &'a Service,
    pause: Pause,
    faults: Faults,
    /// Requests this connection has started to answer.
    served: u64,
}

impl Pace<'_> {
    /// Waits until the next request is due (unless `delay_every` spares it).
    async fn next(&mut self) {
        if self.faults.waits(self.served) {
            let due = self.service.due(Instant::now());
            self.service.wait_until(&mut self.pause, due).await;
        }
        self.served += 1;
    }
}

/// Writes `bytes` in `pieces` write calls of about equal size (at least a byte each).
async fn write_in<S: Wire>(stream: &mut S, bytes: &[u8], pieces: usize) -> io::Result<()> {
    let step = bytes.len().div_ceil(pieces.max(1)).max(1);
    for piece in bytes.chunks(step) {
        stream.write_all(piece).await?;
    }
    Ok(())
}

/// Reads the next chunk into the (emptied) buffer; false at end of stream. A client that sends
/// nothing for `idle` is an error (the connection ends), so silent connections cannot pile up.
async fn read<S: Wire>(
    stream: &mut S,
    buf: &mut Vec<u8>,
    idle: Option<Duration>,
) -> io::Result<bool> {
    buf.clear();
    debug_assert!(buf.capacity() >= BUF);
    // `read_buf` fills the spare capacity without zeroing it first.
    Ok(within(idle, stream.read_buf(buf)).await? > 0)
}

/// A read (or write) `io`, given up after `idle` (none: waits as long as it takes) with a
/// TimedOut error.
pub(crate) async fn within<F>(idle: Option<Duration>, io: F) -> io::Result<usize>
where
    F: std::future::Future<Output = io::Result<usize>>,
{
    match idle {
        None => io.await,
        Some(idle) => tokio::time::timeout(idle, io)
            .await
            .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into())),
    }
}

/// Answers every request a chunk completes with one write (or one per block of filler).
async fn answer<S: Wire>(
    stream: &mut S,
    chunk: &[u8],
    framer: &mut Framer,
    reply: &Reply,
    tally: &Tally,
) -> Result<(), Stop> {
    let done = framer.count(chunk)?;
    tally.requests(done);
    match reply {
        Reply::Same => {
            tally.wrote(chunk.len() as u64);
            stream.write_all(chunk).await?;
        }
        Reply::Filler(filler) => {
            tally.wrote(done * filler.size() as u64);
            filler.write(stream, done).await?;
        }
    }
    Ok(())
}

/// Like [`answer`], but one request after the other: each waits until its service is due (its
/// `--max-rate` slot, then the delay) before the first byte of its reply, and its reply goes
/// out in `reply_writes` pieces (an echoed request in as many per chunk it arrived in). The
/// waits dominate, so one write per request costs nothing that matters.
async fn answer_paced<S: Wire>(
    stream: &mut S,
    chunk: &[u8],
    framer: &mut Framer,
    reply: &Reply,
    pace: &mut Pace<'_>,
    tally: &Tally,
) -> Result<(), Stop> {
    let pieces = pace.faults.reply_writes;
    let mut rest = chunk;
    while !rest.is_empty() {
        match reply {
            Reply::Same => {
                if framer.at_start() {
                    pace.next().await;
                }
                let end = framer.split(rest)?;
                let cut = end.unwrap_or(rest.len());
                tally.requests(u64::from(end.is_some()));
                tally.wrote(cut as u64);
                write_in(stream, &rest[..cut], pieces).await?;
                rest = &rest[cut..];
            }
            Reply::Filler(filler) => {
                let Some(end) = framer.split(rest)? else {
                    break;
                };
                pace.next().await;
                tally.requests(1);
                tally.wrote(filler.size() as u64);
                let whole = filler.slice_from(0);
                if pieces > 1 && whole.len() >= filler.size() {
                    write_in(stream, &whole[..filler.size()], pieces).await?;
                } else {
                    filler.write(stream, 1).await?;
                }
                rest = &rest[end..];
            }
        }
    }
    Ok(())
}

/// Sink loop: read, count, discard; returns the bytes read once the client closes.
pub(crate) async fn sink<S: Wire>(
    stream: &mut S,
    mut buf: Vec<u8>,
    mut framer: Framer,
    tally: &Tally,
    idle: Option<Duration>,
) -> Result<u64, Stop> {
    let mut total = 0u64;
    loop {
        if !buf.is_empty() {
            tally.read(buf.len());
            total += buf.len() as u64;
            tally.requests(framer.count(&buf)?);
        }
        if !read(stream, &mut buf, idle).await? {
            return Ok(total);
        }
    }
}

/// Source loop: push messages as fast as the client takes them, until a write fails because the
/// client closed, or the client takes nothing for `idle` (a write that makes no progress so
/// long ends the connection: a client that stopped reading would hold it forever). Each message goes out in its own write, as a publisher sends each update (the
/// DIM study's server), so messages/s measures the per-message cost; the kernel may still
/// coalesce small messages into one segment. `pending` bytes the client sent are counted; anything it sends later is left
/// unread, since reading would add a syscall per write for nothing. Counters follow each write
/// the kernel accepted, so they match what the client could have received.
pub(crate) async fn source<S: Wire>(
    stream: &mut S,
    pending: usize,
    filler: &Filler,
    service: &Service,
    tally: &Tally,
    idle: Option<Duration>,
) -> Result<(), Stop> {
    tally.read(pending);
    let size = filler.size();
    let mut off = 0; // into the current message
    let mut pause = Pause::default();
    loop {
        if !service.is_instant() && off == 0 {
            service
                .wait_until(&mut pause, service.due(Instant::now()))
                .await;
        }
        let slice = filler.slice_from(off);
        let slice = &slice[..slice.len().min(size - off)];
        let n = within(idle, stream.write(slice)).await?;
        if n == 0 {
            return Err(Stop::Io);
        }
        tally.wrote(n as u64);
        tally.requests(((off + n) / size) as u64);
        off = (off + n) % size;
    }
}
