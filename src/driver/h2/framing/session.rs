//! One connection of the framing layer as the engine sees it ([`Session`]): the socket, the
//! protocol state ([`Conn`]), and the replies handed to the engine.

use super::conn::{failed, Conn, End, Req};
use crate::driver::h2::io::{not_h2c, Counts, Io};
use crate::driver::h2::request::Shapes;
use crate::driver::http::spec::HttpSpec;
use crate::driver::http::template::{Rng, Vars};
use crate::driver::{Done, Expiry, Failure, ReadOutcome, Retry, Sent, Session};
use crate::record::{ErrorKind, OpError};
use std::future::poll_fn;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The read buffer: a whole frame of the largest size the client allows, many times over.
const READ_BUFFER: usize = 64 << 10;

/// A stream refused by a graceful GOAWAY on a connection that answered nothing.
const GOAWAY_FIRST: Failure = Failure {
    kind: ErrorKind::Refused,
    what: "HTTP/2: the server sent GOAWAY before answering any stream on the connection; it did not process this one",
    code: Some("NO_ERROR"),
};

/// What the run's requests are made from, shared by a worker's sessions.
#[derive(Debug)]
pub(in crate::driver::h2) struct Requests {
    pub spec: Arc<HttpSpec>,
    pub shapes: Rc<Shapes>,
    pub worker: usize,
    pub connections: u64,
    /// The run is a closed loop (see [`FramedSession::may_hold`]).
    pub closed_loop: bool,
}

/// One open HTTP/2 connection on the framing layer.
#[derive(Debug)]
pub struct FramedSession {
    io: Io,
    conn: Conn,
    counts: Rc<Counts>,
    requests: Requests,
    /// Bytes read and not yet handled: `inbuf[start..end]`.
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Of `conn.out`, the bytes already written.
    written: usize,
    /// Streams opened since `conn.out` was last written out whole.
    fresh: usize,
    /// `flush` held the queued frames back ([`FramedSession::may_hold`]): since when (the
    /// connection's bytes read then), and the timer that ends the hold at the latest.
    held: bool,
    held_read: u64,
    hold_timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Requests go out as replies free room (a closed loop), so new streams may wait for
    /// the rest of their connection's replies ([`FramedSession::may_hold`]).
    batch: bool,
    /// The fewest bytes a reply on this connection took (frames whole), once one came.
    reply_min: u32,
    /// A request's header block, rendered, and scratch space for its templated parts.
    block: Vec<u8>,
    scratch: Vec<u8>,
    /// Finished requests: those of the last read once `delivered`, else ones still to report.
    completed: Vec<Done>,
    delivered: bool,
    /// Response body bytes not yet reported; request body bytes queued since the last flush.
    body_bytes: usize,
    body_queued: usize,
    /// Bytes written (read) already reported by `flush` (`read`).
    reported: u64,
    read_reported: u64,
    /// Requests the server did not process before its graceful GOAWAY (not in flight).
    again: Vec<Retry>,
    /// Some request got its reply on this connection.
    answered: bool,
    /// The TCP socket under the connection, for `TCP_INFO`.
    fd: std::os::fd::RawFd,
}

impl FramedSession {
    /// Starts HTTP/2 over `io` (preface, SETTINGS) and waits, within `timeout`, until the
    /// server's SETTINGS are in force. `cleartext` (h2c) names an HTTP/1.1 server's answer.
    pub(in crate::driver::h2) async fn start(
        io: Io,
        counts: Rc<Counts>,
        requests: Requests,
        fd: std::os::fd::RawFd,
        cleartext: bool,
        timeout: Duration,
    ) -> Result<FramedSession, OpError> {
        let batch = requests.closed_loop;
        let mut s = FramedSession {
            io,
            conn: Conn::new(),
            counts,
            requests,
            inbuf: vec![0; READ_BUFFER],
            start: 0,
            end: 0,
            written: 0,
            fresh: 0,
            held: false,
            held_read: 0,
            hold_timer: None,
            batch,
            reply_min: u32::MAX,
            block: Vec::new(),
            scratch: Vec::new(),
            completed: Vec::new(),
            delivered: true,
            body_bytes: 0,
            body_queued: 0,
            reported: 0,
            read_reported: 0,
            again: Vec::new(),
            answered: false,
            fd,
        };
        let shake = poll_fn(|cx| s.poll_handshake(cx, cleartext));
        match tokio::time::timeout(timeout, shake).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!("HTTP/2 handshake: no SETTINGS from the server within {timeout:?}"),
                ))
            }
        }
        Ok(s)
    }

    fn poll_handshake(
        &mut self,
        cx: &mut Context<'_>,
        cleartext: bool,
    ) -> Poll<Result<(), OpError>> {
        loop {
            self.write_out(cx);
            let got = self.read_once(cx);
            if cleartext {
                let first = self.counts.first.borrow();
                let closed = self.conn.failed.is_some();
                if let Some(why) = not_h2c(&first).filter(|_| first.len() >= 9 || closed) {
                    if !first.is_empty() {
                        return Poll::Ready(Err(OpError::fatal(ErrorKind::Other, why)));
                    }
                }
            }
            if let Some(f) = self.conn.failed {
                let why = format!("HTTP/2 handshake: {}", f.message());
                return Poll::Ready(Err(OpError::new(f.kind, why)));
            }
            if self.conn.settings {
                return Poll::Ready(Ok(()));
            }
            if !got {
                return Poll::Pending;
            }
        }
    }

    /// Writes what `conn.out` holds, as far as the socket takes it now.
    fn write_out(&mut self, cx: &mut Context<'_>) {
        while self.written < self.conn.out.len() && self.conn.failed.is_none() {
            match Pin::new(&mut self.io).poll_write(cx, &self.conn.out[self.written..]) {
                Poll::Ready(Ok(n)) if n > 0 => self.written += n,
                Poll::Ready(Ok(_)) => self.conn.connection_failed(closed()),
                Poll::Ready(Err(e)) => self.conn.connection_failed(io_failure(&e)),
                Poll::Pending => break,
            }
        }
        if self.written == self.conn.out.len() {
            self.conn.out.clear();
            self.written = 0;
            self.fresh = 0;
            self.held = false;
        }
        // TLS: records may still sit in rustls's buffer, the socket having been full; this
        // sends them (or asks to be woken when it can). Over TCP it does nothing.
        let _ = Pin::new(&mut self.io).poll_flush(cx);
    }

    /// Reads once and handles the whole frames; whether anything was read.
    fn read_once(&mut self, cx: &mut Context<'_>) -> bool {
        if self.conn.failed.is_some() {
            return false;
        }
        let want = self.awaited();
        if want > 0 && self.io.poll_queued(cx, want).is_pending() {
            return false;
        }
        let mut rb = ReadBuf::new(&mut self.inbuf[self.end..]);
        match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
            Poll::Pending => return false,
            Poll::Ready(Err(e)) => {
                self.conn.connection_failed(io_failure(&e));
                return false;
            }
            Poll::Ready(Ok(())) if rb.filled().is_empty() => {
                self.conn.connection_failed(closed());
                return false;
            }
            Poll::Ready(Ok(())) => self.end += rb.filled().len(),
        }
        let now = Instant::now();
        let buf = &self.inbuf[self.start..self.end];
        self.start += self.conn.input(buf, now, &mut self.body_bytes);
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.start > 0 {
            self.inbuf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        true
    }

    /// Takes the ended requests out, then opens streams for waiting ones the server allows.
    fn settle(&mut self) {
        let (completed, again, answered, reply_min) = (
            &mut self.completed,
            &mut self.again,
            &mut self.answered,
            &mut self.reply_min,
        );
        let accept = &self.requests.spec.accept;
        self.conn.sweep(|r, end| match end {
            End::Done(mut d) => {
                if d.failure.is_none() {
                    d.accepted = accept.accepts(d.status.unwrap_or(0));
                    *answered = true;
                    *reply_min = (*reply_min).min(r.wire);
                }
                completed.push(d);
            }
            End::Again => again.push(Retry {
                seq: r.seq,
                sent: r.sent,
            }),
        });
        while self.conn.open < self.conn.reqs.len() && self.conn.may_open() {
            self.open_next();
        }
        self.conn.send_bodies();
    }

    /// Renders the first waiting request and opens its stream.
    fn open_next(&mut self) {
        let i = self.conn.open;
        let r = &self.requests;
        let seq = self.conn.reqs[i].seq;
        let unique = crate::driver::http::unique_seq(seq, r.connections);
        // The request's own draws, from the seed and its number alone (as HTTP/1.1's).
        let mut rng = Rng::nth(r.spec.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker: r.worker,
            rng: &mut rng,
        };
        self.block.clear();
        match r
            .shapes
            .encode(&mut vars, &mut self.scratch, &mut self.block)
        {
            Some(body) => {
                self.body_queued += body.as_ref().map_or(0, |b| b.len());
                self.conn.open(i, &self.block, body);
                self.fresh += 1;
            }
            None => {
                // Never for the placeholders wirebench has; the request fails alone.
                let f = Failure {
                    kind: ErrorKind::Other,
                    what: "HTTP/2: a placeholder rendered a value HTTP/2 cannot carry",
                    code: None,
                };
                let req = self.conn.reqs.remove(i);
                self.completed.push(failed(req.sent, f));
            }
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<ReadOutcome, OpError>> {
        loop {
            if self.held && self.hold_over(cx) {
                self.held = false;
            }
            if !self.held {
                self.write_out(cx);
            }
            let got = self.read_once(cx);
            self.settle();
            if self.held && self.hold_over(cx) {
                // The replies the new streams waited for are in: they go out in one write.
                self.held = false;
                self.write_out(cx);
            }
            let gone = self.conn.gone;
            let draining = gone && !self.conn.reqs.is_empty();
            let drained = gone && self.conn.reqs.is_empty();
            if drained && !self.answered {
                // Nothing answered here: the streams the server did not process are errors,
                // not sent again (a server that takes no stream would have them forever).
                for r in self.again.drain(..) {
                    self.completed.push(failed(r.sent, GOAWAY_FIRST));
                }
            }
            let progress = !self.completed.is_empty()
                || self.body_bytes > 0
                || (drained && !self.again.is_empty());
            if progress && !draining {
                self.delivered = true;
                let read = self.counts.read.get();
                return Poll::Ready(Ok(ReadOutcome {
                    bytes: std::mem::take(&mut self.body_bytes),
                    wire: (read - std::mem::replace(&mut self.read_reported, read)) as usize,
                    replies: self.completed.len(),
                    ..ReadOutcome::default()
                }));
            }
            if let Some(f) = self.conn.failed {
                if self.completed.is_empty() {
                    return Poll::Ready(Err(OpError::new(f.kind, f.message())));
                }
            }
            if !got {
                return Poll::Pending;
            }
        }
    }

    /// Whether `flush` may hold the frames of new streams back: in a closed loop, while
    /// streams opened in earlier writes are still in flight. Replies free streams a few at a
    /// time (nginx writes each reply's frames apart, and a client woken by the first reads
    /// them as they come); writing each one's successor at once makes one write, and one
    /// round of the server's reading, per reply or two, and each write on loopback also runs
    /// the receiving side on the sender's CPU. Held until the replies of the earlier writes
    /// are all in, the streams they free go out together, and the connection settles into
    /// whole windows: one write of K requests, K replies, one write again (as wrk's
    /// pipelining does by design). The hold ends at the latest after [`HOLD_LIMIT`] (a reply
    /// that is slow to come does not keep the others' successors waiting longer), or once
    /// [`HOLD_BYTES`] have been read meanwhile (long bodies: one write more is nothing there).
    /// The time a request waits here counts in its latency (its send time is when it was
    /// queued). An open loop sends at the schedule's times, never holding.
    fn may_hold(&self) -> bool {
        self.batch
            && self.fresh > 0
            && self.conn.reqs.len() > self.fresh
            && !self.conn.gone
            && self.written == 0
    }

    /// While frames are held: the bytes the replies they wait for are still to bring at the
    /// least (each at least the smallest reply seen, less what came of it), unless that is
    /// more than [`AWAIT_MAX`]; 0 otherwise. The socket is not read until that much is there:
    /// each read that finds a reply or two, the server writing them one by one, also makes
    /// the kernel send an ACK right away, which on loopback runs the server's side of it too
    /// (a third of the client's CPU time per request at -m 10). The event loop still wakes the
    /// connection as bytes come, and the socket's count (FIONREAD) is asked then; a server
    /// whose replies are shorter than the smallest seen meets the hold's time limit instead.
    fn awaited(&self) -> usize {
        if !self.held || self.reply_min == u32::MAX {
            return 0;
        }
        let older = self.conn.open.saturating_sub(self.fresh);
        let owed: usize = self.conn.reqs[..older]
            .iter()
            .filter(|r| r.end.is_none())
            .map(|r| self.reply_min.saturating_sub(r.wire) as usize)
            .sum();
        let owed = owed.saturating_sub(self.end - self.start);
        if owed > AWAIT_MAX {
            return 0;
        }
        owed
    }

    /// Starts holding the queued frames back (`flush`).
    fn hold(&mut self) {
        self.held = true;
        self.held_read = self.counts.read.get();
        let until = tokio::time::Instant::now() + HOLD_LIMIT;
        match &mut self.hold_timer {
            Some(t) => t.as_mut().reset(until),
            None => self.hold_timer = Some(Box::pin(tokio::time::sleep_until(until))),
        }
    }

    /// Whether the frames held back go out now: the replies they waited for are in, or the
    /// hold has lasted its limit of time or bytes read.
    fn hold_over(&mut self, cx: &mut Context<'_>) -> bool {
        !self.may_hold()
            || self.counts.read.get() - self.held_read >= HOLD_BYTES
            || self
                .hold_timer
                .as_mut()
                .is_none_or(|t| t.as_mut().poll(cx).is_ready())
    }
}

/// The longest new streams are held back for the replies of their connection's earlier
/// writes ([`FramedSession::may_hold`]); the runtime's timer rounds it up to its next
/// millisecond. Replies from a server that answers each write's streams together arrive
/// well within it.
const HOLD_LIMIT: Duration = Duration::from_millis(1);

/// Bytes read that end a hold: past them the replies are long, and a write per reply costs
/// little beside reading them.
const HOLD_BYTES: u64 = READ_BUFFER as u64;

/// The most bytes a held connection waits for before it reads ([`FramedSession::awaited`]).
const AWAIT_MAX: usize = READ_BUFFER / 2;

/// The server closed the connection.
fn closed() -> Failure {
    Failure {
        kind: ErrorKind::ShortReply,
        what: "HTTP/2: the server closed the connection",
        code: None,
    }
}

/// The socket failed with `e`.
fn io_failure(e: &std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof => closed(),
        _ => Failure {
            kind: ErrorKind::of_io(e),
            what: "HTTP/2: the connection failed",
            code: None,
        },
    }
}

impl Session for FramedSession {
    fn in_flight(&self) -> usize {
        let unreported = if self.delivered {
            0
        } else {
            self.completed.len()
        };
        self.conn.reqs.len() + unreported
    }

    fn oldest(&self) -> Option<Instant> {
        let first = self.conn.reqs.first().map(|r| r.sent.at);
        if self.delivered {
            return first;
        }
        self.completed.iter().map(|d| d.sent.at).chain(first).min()
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        if let Some(f) = self.conn.failed {
            return self.completed.push(failed(sent, f));
        }
        if self.conn.gone {
            // After a graceful GOAWAY: it goes out again on the next connection.
            return self.again.push(Retry { seq, sent });
        }
        self.conn
            .reqs
            .push(Req::new(seq, sent, self.counts.read.get()));
        // Behind requests already waiting for a stream, this one waits too.
        if self.conn.open + 1 == self.conn.reqs.len() && self.conn.may_open() {
            self.open_next();
            self.conn.send_bodies();
        }
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        // One write for every frame queued; what the socket does not take now goes out with
        // the reads (which also poll for writing).
        if self.held {
            // Still held: `read` writes them once the replies they wait for are in.
        } else if self.may_hold() {
            self.hold();
        } else {
            poll_fn(|cx| {
                self.write_out(cx);
                Poll::Ready(())
            })
            .await;
        }
        let written = self.counts.written.get();
        let n = written - self.reported;
        self.reported = written;
        Ok(n as usize)
    }

    fn sent_payload(&mut self, wire: usize) -> usize {
        let _ = wire;
        std::mem::take(&mut self.body_queued)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        if self.delivered {
            self.completed.clear();
            self.delivered = false;
        }
        poll_fn(|cx| self.poll_read(cx)).await
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    /// The send MSS and TCP header of this connection, from `TCP_INFO`.
    fn segment(&self) -> Option<crate::record::Segment> {
        crate::driver::stream::segment_of(self.fd)
    }

    fn reusable(&self) -> bool {
        !self.conn.gone
    }

    fn goodbye(&mut self) -> Option<Vec<Retry>> {
        let graceful = self.conn.graceful || !self.again.is_empty();
        (graceful && self.answered).then(|| std::mem::take(&mut self.again))
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        let reqs = &self.conn.reqs;
        let overdue = reqs
            .iter()
            .take_while(|r| now >= r.sent.at + timeout)
            .count();
        if overdue == 0 {
            return Expiry::None;
        }
        if self.counts.read.get() == reqs[0].mark {
            return Expiry::Reset;
        }
        self.conn.cancel(overdue);
        Expiry::Lost(overdue)
    }
}
