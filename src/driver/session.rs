//! What the engine calls per connection: a [`Driver`] opens sessions to one target, a
//! [`Session`] queues requests, writes them and recognises replies; and what passes between
//! them and the engine ([`Sent`], [`Done`], [`Failure`], [`Retry`], [`ReadOutcome`], [`Expiry`]).

use crate::record::{ErrorKind, OpError, PeerReport, Segment};
use std::time::{Duration, Instant};

/// When a request was meant to go out and when it did; equal in a closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// The scheduled send time (latency counts from here: no coordinated omission).
    pub intended: Instant,
    /// The actual send time (service time counts from here).
    pub at: Instant,
}

impl Sent {
    /// How long a reply at `now` was waited for: from the intended send (its latency) and from
    /// the actual one (its service time). One subtraction in a closed loop, where they are equal.
    #[inline]
    pub fn waited(self, now: Instant) -> Waited {
        let latency = now.saturating_duration_since(self.intended);
        let service = if self.at == self.intended {
            latency
        } else {
            now.saturating_duration_since(self.at)
        };
        Waited { latency, service }
    }
}

/// How long a reply was waited for ([`Sent::waited`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waited {
    /// Since the intended send time (what the latency histogram records).
    pub latency: Duration,
    /// Since the actual send time (the service time; what `--timeout` limits).
    pub service: Duration,
}

/// One completed reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// When its request was meant to go out and did.
    pub sent: Sent,
    /// When the first byte of the reply arrived, where the protocol tells (HTTP).
    pub first_byte: Option<Instant>,
    /// The reply's status code, where the protocol has one (HTTP).
    pub status: Option<u16>,
    /// Whether the reply counts as a success (an HTTP status outside `--accept` does not).
    pub accepted: bool,
    /// Set when this request failed on its own while its session went on (an HTTP/2 stream
    /// the server reset or refused): an error of that kind, not a reply.
    pub failure: Option<Failure>,
    /// The request's kind in a mix, from 1 (recorded on its own too); 0 without a mix.
    pub kind: u8,
}

/// Why one request failed while its session went on. Static text keeps [`Done`] `Copy`; the
/// recorder builds the message only for the error samples it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The error counter it goes to.
    pub kind: ErrorKind,
    /// What happened, in words.
    pub what: &'static str,
    /// The protocol's name for the cause, if it gave one (e.g. `REFUSED_STREAM`).
    pub code: Option<&'static str>,
}

impl Failure {
    /// The message for the report's sample column.
    pub fn message(&self) -> String {
        match self.code {
            Some(code) => format!("{} ({code})", self.what),
            None => self.what.to_string(),
        }
    }
}

impl Done {
    /// A plain successful reply to a request sent at `sent`.
    pub fn ok(sent: Sent) -> Done {
        Done {
            sent,
            first_byte: None,
            status: None,
            accepted: true,
            failure: None,
            kind: 0,
        }
    }

    /// A request sent at `sent` that failed with `f` while its session went on.
    pub fn failed(sent: Sent, f: Failure) -> Done {
        Done {
            accepted: false,
            failure: Some(f),
            ..Done::ok(sent)
        }
    }
}

/// A request the server did not process before it ended its connection in good order, to be
/// sent again on a new connection: its number and its original send times (its latency counts
/// from the first attempt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The engine's number of the request (its `{seq}` stays the same).
    pub seq: u64,
    /// When it was meant to go out and first did.
    pub sent: Sent,
}

/// What one `read` brought.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Payload bytes read (HTTP: bodies).
    pub bytes: usize,
    /// Bytes read off the connection, protocol heads included (HTTP: whole responses); 0
    /// where the protocol has no heads to tell apart (then the same as `bytes`).
    pub wire: usize,
    /// Replies completed (their send times are in [`Session::completed`]).
    pub replies: usize,
    /// Replies that came after their request had already timed out (datagram protocols).
    pub late: u64,
    /// Replies that answered a request already answered (datagram protocols).
    pub duplicates: u64,
    /// Replies that overtook a reply to an earlier request (datagram protocols).
    pub reordered: u64,
    /// When the bytes came in, where the session read the clock for them (HTTP/1.1: the time
    /// its replies completed, as its first-byte times are); None: the engine reads it after
    /// the read. One clock read per reply fewer on the hot path.
    pub at: Option<Instant>,
}

/// What a session does with requests whose time limit has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Nothing has expired.
    None,
    /// The stream is unusable (its reply order is lost): every request in flight failed and
    /// the engine reconnects.
    Reset,
    /// These requests are lost; the session goes on (datagrams).
    Lost(usize),
}

/// Opens sessions to one target.
#[allow(async_fn_in_trait)] // workers are single-threaded: no Send bound is wanted
pub trait Driver {
    /// The session type.
    type Session: Session;

    /// Opens a session within `timeout`; returns it and how long its handshake took (None when
    /// there is none, as with UDP).
    async fn connect(
        &self,
        timeout: Duration,
    ) -> Result<(Self::Session, Option<Duration>), OpError>;
}

/// One open session: queued requests, requests in flight, and the reply parser.
///
/// Methods must be cancel-safe between awaits (progress kept in the session), so the engine can
/// race a read against its send timetable and drop it at a deadline.
#[allow(async_fn_in_trait)]
pub trait Session {
    /// Requests sent whose replies have not arrived.
    fn in_flight(&self) -> usize;
    /// The actual send time of the oldest request in flight.
    fn oldest(&self) -> Option<Instant>;
    /// Queues request `seq`; [`Session::flush`] sends it.
    fn queue(&mut self, seq: u64, sent: Sent);
    /// Sends everything queued; returns the bytes written (protocol heads included).
    async fn flush(&mut self) -> Result<usize, OpError>;
    /// Of the `wire` bytes the last [`Session::flush`] wrote, the payload (HTTP: the request
    /// bodies); protocols without heads to tell apart keep the default, all of it.
    fn sent_payload(&mut self, wire: usize) -> usize {
        wire
    }
    /// Sends what is queued if the socket takes all of it now: the bytes written (heads
    /// included) then. None if it could not without waiting (what went out is kept, and
    /// [`Session::flush`] sends the rest and counts it all), or where the protocol only sends
    /// by awaiting (the default).
    fn flush_now(&mut self) -> Option<Result<usize, OpError>> {
        None
    }
    /// Waits for input once and parses it.
    async fn read(&mut self) -> Result<ReadOutcome, OpError>;
    /// [`Session::read`] as a poll, for a loop that waits on it beside its own timer without a
    /// future per read; None where the protocol only reads by awaiting (the default). Ready
    /// once it has read and parsed, as `read` returns.
    fn poll_read(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> Option<std::task::Poll<Result<ReadOutcome, OpError>>> {
        None
    }
    /// The replies completed by the last [`Session::read`] (or, after a `Some` from
    /// [`Session::take_early`], by the reads that flush made).
    fn completed(&self) -> &[Done];
    /// What the last [`Session::flush`] read while its writes were blocked (a large request
    /// to a server that answers as it reads: reading meanwhile keeps both sides moving), with
    /// the replies it completed in [`Session::completed`]. None if it read nothing.
    fn take_early(&mut self) -> Option<ReadOutcome> {
        None
    }
    /// Whether the session can carry another request (false once an HTTP server said
    /// `Connection: close`); the engine opens a new one if not.
    fn reusable(&self) -> bool {
        true
    }
    /// Asked once the session is not reusable: if the server ended it in good order (an
    /// HTTP/2 GOAWAY with NO_ERROR, a `Connection: close` on a kept-alive HTTP/1.1 connection)
    /// after answering some requests, the requests it did not process, taken out of those in
    /// flight, for the engine to send again on a new session (as h2load does); None if it did
    /// not end that way, or answered nothing (a server that takes no request would have them
    /// sent again forever).
    fn goodbye(&mut self) -> Option<Vec<Retry>> {
        None
    }
    /// Deals with requests sent before `now - timeout`.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry;
    /// Bulk modes: anything to send before the transfer starts (a preamble). Protocols
    /// without a bulk mode (HTTP: download a large body with GET) keep the default error.
    async fn start_bulk(&mut self) -> Result<(), OpError> {
        Err(no_bulk())
    }
    /// Bulk upload: sends one chunk; returns payload bytes sent.
    async fn send_bulk(&mut self) -> Result<usize, OpError> {
        Err(no_bulk())
    }
    /// Bulk download: receives one chunk; returns payload bytes received.
    async fn recv_bulk(&mut self) -> Result<usize, OpError> {
        Err(no_bulk())
    }
    /// At the end of a bulk upload: half-closes and returns the payload bytes the receiving
    /// server counted, if the protocol can ask (a wirebench sink can), within `limit`.
    async fn finish_bulk(&mut self, _limit: Duration) -> Option<u64> {
        None
    }
    /// At the end of a run: the size of this session's packets (TCP's send MSS from
    /// `TCP_INFO`, a datagram's bytes) with their transport header, where the protocol knows.
    fn segment(&self) -> Option<Segment> {
        None
    }
    /// At the end of a run: the receiving server's own counters of this session, if the
    /// protocol can ask for them (wirebench datagrams can).
    async fn report(&mut self, _limit: Duration) -> Option<PeerReport> {
        None
    }
    /// At the end of a run: ends the session the way its protocol asks (DICOM's A-RELEASE),
    /// within `limit`; most protocols just close.
    async fn close(&mut self, _limit: Duration) {}
}

fn no_bulk() -> OpError {
    OpError::new(
        ErrorKind::Other,
        "this protocol has no bulk mode (for HTTP, download a large body with GET)",
    )
}
