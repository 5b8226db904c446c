//! TCP: what one operation is. A [`TcpDriver`] opens [`TcpConn`]s with the plan's socket options;
//! a connection queues requests, writes them, and parses replies (sized or delimited), checking
//! echoed bytes. It knows nothing of rates, deadlines or phases: that is the engine's business.

mod conn;
pub mod flags;
mod reply;
mod request;

use super::stream::Stream;
use super::target::{Family, ProtocolName, Scheme};
use super::workload::{ClientMode, Reply, Request, Workload};
use super::{Done, Job, Placement, Protocol, ReadOutcome, Sent};
use crate::sys::socket::SocketOptions;
use crate::wire::delimiter::Delimiter;
use request::{pattern_byte, Template};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

/// The longest period of the synthetic request pattern.
const PATTERN_LEN: usize = 64 * 1024;
/// Read buffer size (bulk reads are iperf3's default 128 KiB). Requests longer than this are
/// never built whole: they are written piece by piece from the pattern.
const IO_CHUNK: usize = 128 * 1024;
/// Bytes per bulk write (stream mode), in whole messages where they fit: four times iperf3's
/// default. On loopback a 512 KiB write costs the sender little more than a 128 KiB one, and
/// the sender's CPU is the limit: one stream moved ~1.5x more (bench/run.sh, bulk).
const BULK_WRITE: usize = 512 * 1024;

/// Opens connections to one target and knows the shape of its requests and replies.
#[derive(Clone, Debug)]
pub struct TcpDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    preamble: Option<Vec<u8>>,
    /// The preamble asks a sink to acknowledge it and report its byte count (stream mode).
    reported: bool,
    request: Template,
    reply: Reply,
    /// Sized requests answered by a same-sized reply are echoes: their bytes are checked.
    verify_echo: bool,
    /// Use blocking socket calls (see [`Stream::Blocking`]).
    blocking: bool,
    /// Read buffer size per connection: small for small replies, so ten thousand connections
    /// stay within a few megabytes; [`IO_CHUNK`] for bulk transfer.
    read_len: usize,
    /// Stream mode's send buffer, whole messages written round and round; one for all the
    /// connections (empty in other modes).
    bulk: Arc<[u8]>,
}

impl TcpDriver {
    /// A driver for `workload` against `addr`, with up to `in_flight` requests per connection.
    pub fn new(
        addr: SocketAddr,
        workload: &Workload,
        socket: SocketOptions,
        in_flight: usize,
    ) -> TcpDriver {
        let request = match &workload.request {
            Request::Sized { size, .. } => Template::Synthetic {
                size: *size,
                period: PATTERN_LEN.min(*size).max(8),
                pattern: {
                    let period = PATTERN_LEN.min(*size).max(8);
                    let extra = if *size > IO_CHUNK { IO_CHUNK } else { 0 };
                    (0..period + extra)
                        .map(|i| pattern_byte(i % period))
                        .collect()
                },
            },
            Request::Payload(p) => Template::Payload(p.as_slice().into()),
        };
        let verify_echo = matches!(
            (&workload.request, &workload.reply),
            (Request::Sized { size, .. }, Reply::Size(r)) if size == r
        );
        let read_len = match (&workload.mode, &workload.reply) {
            (ClientMode::Rr | ClientMode::Crr, Reply::Size(n)) => n
                .saturating_mul(in_flight)
                .next_power_of_two()
                .clamp(512, IO_CHUNK),
            (ClientMode::Rr | ClientMode::Crr, Reply::Until(_)) => 4096,
            _ => IO_CHUNK,
        };
        let bulk: Arc<[u8]> = if workload.mode == ClientMode::Stream {
            let unit = request.len();
            let len = if unit >= BULK_WRITE {
                BULK_WRITE
            } else {
                BULK_WRITE / unit * unit
            };
            (0..len).map(pattern_byte).collect()
        } else {
            Arc::from(&[][..])
        };
        TcpDriver {
            bulk,
            addr,
            socket,
            preamble: workload.preamble().map(|p| p.encode()),
            reported: matches!(
                workload.preamble(),
                Some(crate::wire::framing::Preamble::Stream { report: true, .. })
            ),
            request,
            reply: workload.reply.clone(),
            verify_echo,
            read_len,
            blocking: false,
        }
    }

    /// Makes connections use blocking socket calls: right when a worker thread owns a single
    /// connection in a closed loop, where it saves the epoll wait of every exchange (a round
    /// trip on one CPU drops by about a microsecond; docs/method.md, "What the runtime costs"). The engine
    /// must then check its deadlines itself, since a blocking session never yields.
    pub fn blocking(mut self, on: bool) -> TcpDriver {
        self.blocking = on;
        self
    }

    /// Bytes per request (or per bulk message).
    pub fn request_len(&self) -> usize {
        self.request.len()
    }

    fn clone_shape(&self) -> Shape {
        Shape {
            request: self.request.clone(),
            reply: self.reply.clone(),
            verify_echo: self.verify_echo,
            delimiter: match &self.reply {
                Reply::Until(d) => Some(Delimiter::new(d)),
                Reply::Size(_) => None,
            },
        }
    }
}

/// What a connection needs to know to build requests and parse replies.
#[derive(Debug)]
struct Shape {
    request: Template,
    reply: Reply,
    verify_echo: bool,
    /// The search for the reply delimiter (delimited replies).
    delimiter: Option<Delimiter>,
}

/// One open connection: queued output, requests in flight, and the reply parser's state.
///
/// Every method is cancel-safe between awaits: progress is kept in the struct, so a caller may
/// drop a pending `flush` or `read` at a deadline and carry on later.
#[derive(Debug)]
pub struct TcpConn {
    stream: Stream,
    shape: Shape,
    out: Vec<u8>,
    out_pos: usize,
    /// Payload bytes queued in `out` (the preamble is not payload).
    payload_out: usize,
    inbuf: Box<[u8]>,
    /// (sequence number, send times) of each request awaiting its reply, oldest first.
    in_flight: VecDeque<(u64, Sent)>,
    /// Bytes of the oldest reply received so far (sized replies).
    reply_pos: usize,
    /// Delimiter bytes matched so far (delimited replies).
    delim_matched: usize,
    /// Send times of the replies completed by the last `read`.
    completed: Vec<Done>,
    /// Stream mode's send buffer (the driver's), and where the next write starts in it.
    bulk: Arc<[u8]>,
    bulk_pos: usize,
    /// Requests over [`IO_CHUNK`] not yet fully written (sequence numbers), and how far the
    /// first one is.
    big: VecDeque<u64>,
    big_off: usize,
    /// The first one's sequence-number bytes.
    head: [u8; 8],
    /// What flush read while its writes waited (see [`crate::driver::Session::take_early`]).
    early: Option<ReadOutcome>,
    /// A reporting stream: the sink acknowledges the preamble and counts what it received.
    reported: bool,
}

/// Requests and replies, or bulk bytes, over TCP (`tcp://`).
#[derive(Debug)]
pub struct Tcp;

impl Protocol for Tcp {
    const SCHEMES: &'static [Scheme] = &[Scheme {
        name: "tcp",
        protocol: ProtocolName::Tcp,
        family: Family::Stream,
        default_port: None,
        tls: false,
        path: false,
    }];
    const FLAGS: &'static [&'static str] = &[flags::MESSAGE];
    type Driver = TcpDriver;

    fn message(
        groups: &[&dyn crate::driver::FlagGroup],
        workload: &mut Workload,
    ) -> Result<(), crate::error::UsageError> {
        crate::driver::group::<flags::MessageArgs>(groups)?.shape(workload)
    }

    fn prepare(_job: &Job) -> Result<Tcp, crate::driver::Error> {
        Ok(Tcp)
    }

    fn driver(&self, job: &Job, at: Placement) -> TcpDriver {
        TcpDriver::new(job.target.addr, &job.workload, job.socket, job.in_flight)
            .blocking(at.blocking)
    }
}
