//! One connection of the framing layer as the engine sees it ([`Session`]): the socket, the
//! protocol state ([`Conn`]), and the replies handed to the engine.

use super::conn::{Conn, End, Req};
use crate::driver::h2::io::{not_h2c, Counts, Io};
use crate::driver::h2::request::Shapes;
use crate::driver::http::spec::HttpSpec;
use crate::driver::http::template::{Rng, Vars};
use crate::driver::{Done, Expiry, Failure, ReadOutcome, Retry, Sent, Session};
use crate::record::{ErrorKind, OpError};
use std::future::poll_fn;
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
        let mut s = FramedSession {
            io,
            conn: Conn::new(),
            counts,
            requests,
            inbuf: vec![0; READ_BUFFER],
            start: 0,
            end: 0,
            written: 0,
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
        if s.conn.gone {
            // A connection closed before it took a stream is a failed connect: counted, so a
            // server that says GOAWAY to every connection cannot keep a count run going.
            return Err(OpError::new(
                ErrorKind::Reset,
                "HTTP/2 handshake: the server sent GOAWAY before taking any stream".to_string(),
            ));
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
        if self.written == self.conn.out.len() && self.written > 0 {
            self.conn.out.clear();
            self.written = 0;
            self.conn.acks = 0;
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
        let (completed, again, answered) =
            (&mut self.completed, &mut self.again, &mut self.answered);
        let accept = &self.requests.spec.accept;
        self.conn.sweep(|r, end| match end {
            End::Done(mut d) => {
                if d.failure.is_none() {
                    d.accepted = accept.accepts(d.status.unwrap_or(0));
                    *answered = true;
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
            }
            None => {
                // Never for the placeholders wirebench has; the request fails alone.
                let f = Failure {
                    kind: ErrorKind::Other,
                    what: "HTTP/2: a placeholder rendered a value HTTP/2 cannot carry",
                    code: None,
                };
                if let Some(req) = self.conn.reqs.remove(i) {
                    self.completed.push(Done::failed(req.sent, f));
                }
            }
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<ReadOutcome, OpError>> {
        loop {
            self.write_out(cx);
            let got = self.read_once(cx);
            self.settle();
            let gone = self.conn.gone;
            let draining = gone && !self.conn.reqs.is_empty();
            let drained = gone && self.conn.reqs.is_empty();
            if drained && !self.answered {
                // Nothing answered here: the streams the server did not process are errors,
                // not sent again (a server that takes no stream would have them forever).
                for r in self.again.drain(..) {
                    self.completed.push(Done::failed(r.sent, GOAWAY_FIRST));
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
}

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
        let first = self.conn.reqs.front().map(|r| r.sent.at);
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
            return self.completed.push(Done::failed(sent, f));
        }
        if self.conn.gone {
            // After a graceful GOAWAY: it goes out again on the next connection.
            return self.again.push(Retry { seq, sent });
        }
        self.conn
            .reqs
            .push_back(Req::new(seq, sent, self.counts.read.get()));
        // Behind requests already waiting for a stream, this one waits too.
        if self.conn.open + 1 == self.conn.reqs.len() && self.conn.may_open() {
            self.open_next();
            self.conn.send_bodies();
        }
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        // One write for every frame queued; what the socket does not take now goes out with
        // the reads (which also poll for writing).
        poll_fn(|cx| {
            self.write_out(cx);
            Poll::Ready(())
        })
        .await;
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
