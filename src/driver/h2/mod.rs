//! HTTP/2 (`--http2`): h2c with prior knowledge on http://, ALPN `h2` on https://. One
//! session is one connection; `--pipeline K` requests in flight are K concurrent streams on it.
//!
//! Two implementations behind one session type: the framing layer of wirebench's own
//! ([`framing`], the default: a third of the h2 crate's instructions per request), and the
//! hyperium `h2` crate, kept for comparison and as a fallback (`WIREBENCH_H2=crate` in the
//! environment selects it). What follows describes the h2 crate path; both behave alike.
//!
//! The h2 crate session drives the h2 connection itself, inside its own `flush`/`read`, instead of in a
//! task of its own: every frame is then processed in the connection's own task, a wake-up per
//! socket event as with HTTP/1.1. The streams of the requests in flight are polled after the
//! connection with a no-op waker: nothing but that connection poll (which registered the real
//! waker with the socket) can change their state. A response's time to first byte is when its
//! HEADERS were seen; its body is drained as DATA arrives and the flow-control capacity given
//! back at once, so a body of any length costs at most a window of memory.
//!
//! Failures: a stream the server resets or refuses (RST_STREAM) is an error of that request
//! alone and the connection goes on; a connection that fails or closes fails its streams, is
//! not reused, and the engine opens another. A graceful GOAWAY (NO_ERROR, as nginx sends at its
//! `keepalive_requests`) is no failure: a read waits until every stream at or below its last
//! stream has finished, and the streams above it, which the server did not process, are handed
//! back to the engine ([`Session::goodbye`]) to go out again on a new connection, as h2load
//! does — unless the connection answered nothing at all, when they are errors (a server that
//! takes no stream would otherwise have them sent again forever). A request past `--timeout` is
//! cancelled alone (RST_STREAM CANCEL), unless the connection has been silent all that time:
//! then the whole connection is given up, as an HTTP/1.1 one is.
//!
//! Payload bytes are bodies both ways, as for HTTP/1.1; wire bytes are what the connection
//! wrote and read (frames, compressed headers).

mod failure;
mod framing;
#[doc(hidden)]
pub mod fuzz;
mod handshake;
mod io;
mod request;
mod streams;

use super::stream::connect_stream;
use super::target::Scheme;
use super::tls::TlsClient;
use super::{
    Done, Driver, Expiry, Failure, Job, Placement, Protocol, ReadOutcome, Retry, Sent, Session,
};
use crate::driver::http::spec::HttpSpec;
use crate::driver::http::template::{Rng, Vars};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use bytes::Bytes;
use failure::{stream_failure, unprocessed};
use framing::FramedSession;
use h2::client::{Connection, SendRequest};
use handshake::handshake;
use io::{Counts, Io};
pub use request::RequestError;
use request::Shapes;
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use streams::{open, quiet, Entry, Opened, Outcome, Stage};

/// The receive window granted to each stream: how much of one body the server may send ahead.
const STREAM_WINDOW: u32 = 4 << 20;
/// The receive window of the whole connection: at most this much is buffered unread.
const CONNECTION_WINDOW: u32 = 8 << 20;
/// Streams assumed allowed until the server's SETTINGS say otherwise (connect waits for them,
/// so this matters only for a server whose SETTINGS are late): the least a server should allow
/// (RFC 9113 §5.1.2 recommends no fewer than 100).
const INITIAL_STREAMS: usize = 100;

/// A stream refused by a graceful GOAWAY on a connection that answered nothing.
const GOAWAY_FIRST: Failure = Failure {
    kind: ErrorKind::Refused,
    what: "HTTP/2: the server sent GOAWAY before answering any stream on the connection; it did not process this one",
    code: Some("NO_ERROR"),
};

/// Checks that every request of `spec` can be sent over HTTP/2 (at plan time: bad input).
pub fn check(spec: &HttpSpec, https: bool) -> Result<(), RequestError> {
    Shapes::new(spec, https).map(|_| ())
}

/// Opens HTTP/2 connections to one target.
#[derive(Debug)]
pub struct H2Driver {
    addr: SocketAddr,
    socket: SocketOptions,
    tls: Option<Arc<TlsClient>>,
    spec: Arc<HttpSpec>,
    shapes: Rc<Shapes>,
    worker: usize,
    connections: u64,
    builder: h2::client::Builder,
    /// The framing layer of our own (default) or the h2 crate (`WIREBENCH_H2=crate`).
    framed: bool,
}

impl H2Driver {
    /// A driver for worker `worker` of a run with `connections` connections; TLS with `tls`.
    pub fn new(
        addr: SocketAddr,
        spec: Arc<HttpSpec>,
        socket: SocketOptions,
        worker: usize,
        connections: usize,
        tls: Option<Arc<TlsClient>>,
    ) -> H2Driver {
        #[allow(
            clippy::expect_used,
            reason = "the plan builds the same shapes and refuses the run as bad input if they fail"
        )]
        let shapes = Shapes::new(&spec, tls.is_some()).expect("checked when the plan was made");
        let mut builder = h2::client::Builder::new();
        builder
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .initial_max_send_streams(INITIAL_STREAMS)
            .enable_push(false);
        H2Driver {
            addr,
            socket,
            tls,
            spec,
            shapes: Rc::new(shapes),
            worker,
            connections: connections as u64,
            builder,
            framed: std::env::var_os("WIREBENCH_H2").is_none_or(|v| v != "crate"),
        }
    }
}

impl Driver for H2Driver {
    type Session = H2Session;

    async fn connect(&self, timeout: Duration) -> Result<(H2Session, Option<Duration>), OpError> {
        let started = Instant::now();
        let (mut stream, _) = connect_stream(self.addr, self.socket, timeout, false).await?;
        // From here on the target is there: what fails now is its answer.
        if let Some(tls) = &self.tls {
            stream = stream.tls(tls, timeout).await.map_err(OpError::reached)?;
        }
        let fd = stream.fd();
        let counts = Rc::new(Counts::default());
        let io = Io::new(stream, counts.clone())?;
        if self.framed {
            let requests = framing::Requests {
                spec: self.spec.clone(),
                shapes: self.shapes.clone(),
                worker: self.worker,
                connections: self.connections,
            };
            let cleartext = self.tls.is_none();
            let s = FramedSession::start(io, counts, requests, fd, cleartext, timeout)
                .await
                .map_err(OpError::reached)?;
            return Ok((
                H2Session(Inner::Framed(Box::new(s))),
                Some(started.elapsed()),
            ));
        }
        let (send, conn) = handshake(&self.builder, io, &counts, self.tls.is_none(), timeout)
            .await
            .map_err(OpError::reached)?;
        let took = started.elapsed();
        let session = CrateSession {
            conn,
            send,
            spec: self.spec.clone(),
            shapes: self.shapes.clone(),
            worker: self.worker,
            connections: self.connections,
            rng: Rng::new(),
            scratch: Vec::new(),
            entries: Vec::new(),
            waiting: 0,
            completed: Vec::new(),
            delivered: true,
            body_bytes: 0,
            body_queued: 0,
            counts,
            reported: 0,
            read_reported: 0,
            gone: false,
            closed: None,
            again: Vec::new(),
            graceful: false,
            answered: false,
            fd,
        };
        Ok((H2Session(Inner::Crate(Box::new(session))), Some(took)))
    }
}

/// One open HTTP/2 connection, on either implementation.
#[derive(Debug)]
pub struct H2Session(Inner);

#[derive(Debug)]
enum Inner {
    Crate(Box<CrateSession>),
    Framed(Box<FramedSession>),
}

/// Calls `$call` on whichever session is inside.
macro_rules! either {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Inner::Crate($s) => $call,
            Inner::Framed($s) => $call,
        }
    };
}

impl Session for H2Session {
    fn in_flight(&self) -> usize {
        either!(&self.0, s => s.in_flight())
    }
    fn oldest(&self) -> Option<Instant> {
        either!(&self.0, s => s.oldest())
    }
    fn queue(&mut self, seq: u64, sent: Sent) {
        either!(&mut self.0, s => s.queue(seq, sent))
    }
    async fn flush(&mut self) -> Result<usize, OpError> {
        either!(&mut self.0, s => s.flush().await)
    }
    fn sent_payload(&mut self, wire: usize) -> usize {
        either!(&mut self.0, s => s.sent_payload(wire))
    }
    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        either!(&mut self.0, s => s.read().await)
    }
    fn completed(&self) -> &[Done] {
        either!(&self.0, s => s.completed())
    }
    fn segment(&self) -> Option<crate::record::Segment> {
        either!(&self.0, s => s.segment())
    }
    fn reusable(&self) -> bool {
        either!(&self.0, s => s.reusable())
    }
    fn goodbye(&mut self) -> Option<Vec<Retry>> {
        either!(&mut self.0, s => s.goodbye())
    }
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        either!(&mut self.0, s => s.expire(now, timeout))
    }
}

/// One open HTTP/2 connection on the h2 crate.
struct CrateSession {
    conn: Connection<Io, Bytes>,
    send: SendRequest<Bytes>,
    spec: Arc<HttpSpec>,
    shapes: Rc<Shapes>,
    worker: usize,
    connections: u64,
    rng: Rng,
    /// Scratch space for rendering templated parts.
    scratch: Vec<u8>,
    /// Requests in flight, oldest first.
    entries: Vec<Entry>,
    /// How many of them are [`Stage::Queued`] (always the newest).
    waiting: usize,
    /// Finished requests: those of the last read once `delivered`, else ones still to report.
    completed: Vec<Done>,
    delivered: bool,
    /// Body bytes not yet reported.
    body_bytes: usize,
    /// Request body bytes queued since the last [`Session::sent_payload`].
    body_queued: usize,
    counts: Rc<Counts>,
    /// Bytes written already reported by `flush`.
    reported: u64,
    /// Bytes read already reported by `read`.
    read_reported: u64,
    /// The connection takes no new streams (GOAWAY, failure or close).
    gone: bool,
    /// The connection has ended, and how (None while it runs).
    closed: Option<Failure>,
    /// Requests the server did not process before its graceful GOAWAY (not in flight).
    again: Vec<Retry>,
    /// The server sent a GOAWAY with NO_ERROR.
    graceful: bool,
    /// Some request got its reply on this connection.
    answered: bool,
    /// The TCP socket under the connection (owned by `conn`), for `TCP_INFO`.
    fd: std::os::fd::RawFd,
}

impl std::fmt::Debug for CrateSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrateSession")
            .field("in_flight", &self.entries.len())
            .field("gone", &self.gone)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl CrateSession {
    /// Polls the connection: reads and handles what has arrived, writes what is queued.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if self.closed.is_some() {
            return;
        }
        match Pin::new(&mut self.conn).poll(cx) {
            Poll::Pending => {}
            // h2 ends a connection without error only after a GOAWAY with NO_ERROR.
            Poll::Ready(Ok(())) => {
                self.gone = true;
                self.graceful = true;
                self.closed = Some(Failure {
                    kind: ErrorKind::ShortReply,
                    what: "HTTP/2: the connection closed before the response",
                    code: None,
                });
            }
            Poll::Ready(Err(e)) => {
                self.gone = true;
                self.graceful |= unprocessed(&e);
                self.closed = Some(stream_failure(&e));
            }
        }
    }

    /// Advances every request after a connection poll; returns whether a queued one was
    /// handed to h2 (the connection must then be polled again to send it).
    fn advance(&mut self, now: Instant) -> bool {
        let waiting = self.waiting;
        let (send, gone, bytes, completed, again) = (
            &mut self.send,
            &mut self.gone,
            &mut self.body_bytes,
            &mut self.completed,
            &mut self.again,
        );
        let (accept, answered) = (&self.spec.accept, &mut self.answered);
        let mut still_waiting = 0;
        self.entries
            .retain_mut(|e| match e.poll(now, send, gone, bytes, accept) {
                Some(Outcome::Done(d)) => {
                    *answered |= d.failure.is_none();
                    completed.push(d);
                    false
                }
                Some(Outcome::Again) => {
                    again.push(Retry {
                        seq: e.seq,
                        sent: e.sent,
                    });
                    false
                }
                None => {
                    still_waiting += matches!(e.stage, Stage::Queued(_)) as usize;
                    true
                }
            });
        self.waiting = still_waiting;
        still_waiting < waiting
    }
}

impl Session for CrateSession {
    fn in_flight(&self) -> usize {
        let unreported = if self.delivered {
            0
        } else {
            self.completed.len()
        };
        self.entries.len() + unreported
    }

    fn oldest(&self) -> Option<Instant> {
        let first = self.entries.first().map(|e| e.sent.at);
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
        let unique = super::http::unique_seq(seq, self.connections);
        // The request's own draws, from the seed and its number alone (as HTTP/1.1's).
        self.rng = Rng::nth(self.spec.seed, unique);
        let mut vars = Vars {
            seq: unique,
            worker: self.worker,
            rng: &mut self.rng,
        };
        let Some(req) = self.shapes.render(&mut vars, &mut self.scratch) else {
            let what = "HTTP/2: a placeholder rendered a value HTTP/2 cannot carry";
            return self.completed.push(Done {
                sent,
                first_byte: None,
                status: None,
                accepted: false,
                failure: Some(Failure {
                    kind: ErrorKind::Other,
                    what,
                    code: None,
                }),
                kind: 0,
            });
        };
        self.body_queued += req.1.as_ref().map_or(0, |b| b.len());
        let mut entry = Entry {
            seq,
            sent,
            mark: self.counts.read.get(),
            first_byte: None,
            status: 0,
            stage: Stage::Queued(Box::new(req)),
        };
        // Behind requests already waiting for a stream, this one waits too.
        if let Some(req) = (self.waiting == 0)
            .then(|| entry.stage.take_queued())
            .flatten()
        {
            match open(&mut self.send, req, &mut self.gone) {
                Opened::Stream(r) => entry.stage = Stage::Head(r),
                Opened::Wait(req) => entry.stage = Stage::Queued(req),
                Opened::Failed(f) => return self.completed.push(entry.failed(f)),
                Opened::Again => {
                    self.graceful = true;
                    return self.again.push(Retry { seq, sent });
                }
            }
        }
        self.waiting += matches!(entry.stage, Stage::Queued(_)) as usize;
        self.entries.push(entry);
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        // The frames go out with the connection poll that starts the next read; report what
        // the connection has written since the last flush.
        let written = self.counts.written.get();
        let n = written - self.reported;
        self.reported = written;
        Ok(n as usize)
    }

    fn sent_payload(&mut self, wire: usize) -> usize {
        // The frames may go out only with the next read's poll: the bodies count now.
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

    /// The send MSS and TCP header of this connection, from `TCP_INFO` (the payload counted
    /// is the HTTP/2 bytes: frames, HPACK heads; over TLS its records' overhead is not
    /// counted). The socket stays open while the session lives: `conn` owns it.
    fn segment(&self) -> Option<crate::record::Segment> {
        super::stream::segment_of(self.fd)
    }

    fn reusable(&self) -> bool {
        !self.gone
    }

    fn goodbye(&mut self) -> Option<Vec<Retry>> {
        (self.graceful && self.answered).then(|| std::mem::take(&mut self.again))
    }

    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        let overdue = self
            .entries
            .iter()
            .take_while(|e| now >= e.sent.at + timeout)
            .count();
        if overdue == 0 {
            return Expiry::None;
        }
        if self.counts.read.get() == self.entries[0].mark {
            return Expiry::Reset;
        }
        // Dropping a stream's handles resets it (RST_STREAM CANCEL) with the next poll.
        let queued = self.entries[..overdue]
            .iter()
            .filter(|e| matches!(e.stage, Stage::Queued(_)))
            .count();
        self.waiting -= queued;
        self.entries.drain(..overdue);
        Expiry::Lost(overdue)
    }
}

impl CrateSession {
    /// Nothing was answered on this connection: the streams the server did not process are
    /// errors, not sent again.
    fn refuse_again(&mut self) {
        for r in self.again.drain(..) {
            self.completed.push(Done {
                sent: r.sent,
                first_byte: None,
                status: None,
                accepted: false,
                failure: Some(GOAWAY_FIRST),
                kind: 0,
            });
        }
    }

    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<ReadOutcome, OpError>> {
        loop {
            self.drive(cx);
            let handed = self.advance(Instant::now());
            if !handed || self.closed.is_some() {
                break;
            }
        }
        if let Some(f) = self.closed {
            // Every stream has its error from h2 by now; this is a safety net.
            for e in self.entries.drain(..) {
                self.completed.push(e.failed(f));
            }
            self.waiting = 0;
        } else if !self.gone {
            // A GOAWAY shows here first when no stream was beyond its last one.
            if let Poll::Ready(Err(e)) = self.send.poll_ready(&mut quiet()) {
                self.gone = true;
                self.graceful |= unprocessed(&e);
            }
        }
        // A stream beyond a GOAWAY's last one fails only with a graceful GOAWAY's error.
        self.graceful |= !self.again.is_empty();
        // After a GOAWAY, wait for every stream still in flight: the engine drops a session
        // it cannot reuse, and with it any request not yet reported.
        let draining = self.gone && !self.entries.is_empty();
        let drained = self.gone && self.entries.is_empty();
        if drained && !self.answered {
            self.refuse_again();
        }
        let progress = !self.completed.is_empty()
            || self.body_bytes > 0
            || (drained && !self.again.is_empty());
        if progress && !draining {
            self.delivered = true;
            let read = self.counts.read.get();
            let out = ReadOutcome {
                bytes: std::mem::take(&mut self.body_bytes),
                wire: (read - std::mem::replace(&mut self.read_reported, read)) as usize,
                replies: self.completed.len(),
                ..ReadOutcome::default()
            };
            return Poll::Ready(Ok(out));
        }
        if let Some(f) = self.closed {
            if self.completed.is_empty() {
                return Poll::Ready(Err(OpError::new(f.kind, f.message())));
            }
        }
        Poll::Pending
    }
}

/// HTTP/2 (`--http2`: h2c by prior knowledge on `http://`, ALPN h2 on `https://`).
#[derive(Debug)]
pub struct Http2 {
    spec: Arc<HttpSpec>,
    tls: Option<Arc<TlsClient>>,
}

impl Protocol for Http2 {
    const SCHEMES: &'static [Scheme] = &crate::driver::http::SCHEMES;
    const FLAGS: &'static [&'static str] = &[crate::driver::http::flags::HTTP];

    fn check(w: &crate::driver::workload::Workload) -> Result<(), crate::error::UsageError> {
        crate::driver::http::flags::check(w)
    }
    type Driver = H2Driver;

    fn carries(job: &Job) -> bool {
        job.workload.spec_of::<HttpSpec>().is_some_and(|h| h.http2)
    }

    fn prepare(job: &Job) -> Result<Http2, crate::driver::Error> {
        let tls = crate::driver::http::tls_client(job, true)?;
        let spec = crate::driver::http::http_spec(job)?;
        check(&spec, job.target.tls()).map_err(crate::driver::Error::Request)?;
        Ok(Http2 { spec, tls })
    }

    fn driver(&self, job: &Job, at: Placement) -> H2Driver {
        H2Driver::new(
            job.target.addr,
            self.spec.clone(),
            job.socket,
            at.worker,
            job.connections,
            self.tls.as_ref().map(|t| Arc::new(t.for_worker())),
        )
    }
}
