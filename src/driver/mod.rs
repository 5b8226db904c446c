//! WHAT one operation is: one file per protocol. The engine drives sessions through the
//! [`Driver`] and [`Session`] traits; a driver opens sessions (a TCP connection, a connected UDP
//! socket), a session writes requests and recognises replies. Neither knows about rates,
//! deadlines or phases.

pub mod h2;
pub mod http;
mod stream;
pub mod tcp;
pub mod tls;
pub mod udp;

use crate::record::{ErrorKind, OpError};
use std::time::{Duration, Instant};

/// When a request was meant to go out and when it did; equal in a closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// The scheduled send time (latency counts from here: no coordinated omission).
    pub intended: Instant,
    /// The actual send time (service time counts from here).
    pub at: Instant,
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
        }
    }
}

/// What one `read` brought.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Payload bytes read.
    pub bytes: usize,
    /// Replies completed (their send times are in [`Session::completed`]).
    pub replies: usize,
    /// Replies that came after their request had already timed out (datagram protocols).
    pub late: u64,
    /// Replies that answered a request already answered (datagram protocols).
    pub duplicates: u64,
    /// Replies that overtook a reply to an earlier request (datagram protocols).
    pub reordered: u64,
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
    /// Sends everything queued; returns the payload bytes sent.
    async fn flush(&mut self) -> Result<usize, OpError>;
    /// Waits for input once and parses it.
    async fn read(&mut self) -> Result<ReadOutcome, OpError>;
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
    /// At the end of a run: the receiving server's own counters of this session, if the
    /// protocol can ask for them (wirebench datagrams can).
    async fn report(&mut self, _limit: Duration) -> Option<PeerReport> {
        None
    }
}

/// What the server counted of one session's datagrams, with what the session sent.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerReport {
    /// Data datagrams the session sent (warm-up included, as the server counts them).
    pub sent: u64,
    /// The server's counters.
    pub report: crate::wire::datagram::FlowReport,
}

fn no_bulk() -> OpError {
    OpError::new(
        ErrorKind::Other,
        "this protocol has no bulk mode (for HTTP, download a large body with GET)",
    )
}
