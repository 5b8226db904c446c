//! TCP: what one operation is. A [`TcpDriver`] opens [`TcpConn`]s with the plan's socket options;
//! a connection queues requests, writes them, and parses replies (sized or delimited), checking
//! echoed bytes. It knows nothing of rates, deadlines or phases: that is the engine's business.

pub mod flags;
mod reply;
mod request;

use super::stream::{connect_stream, Stream};
use super::target::{Family, ProtocolName, Scheme};
use super::workload::{ClientMode, Reply, Request, Workload};
use super::{Done, Driver, Expiry, Job, Placement, Protocol, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use crate::wire::delimiter::Delimiter;
use reply::server_error;
use request::{big_part, pattern_byte, Template};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

impl Driver for TcpDriver {
    type Session = TcpConn;

    /// Connects within `timeout`; returns the connection and how long the handshake took.
    async fn connect(&self, timeout: Duration) -> Result<(TcpConn, Option<Duration>), OpError> {
        let (stream, took) = connect_stream(self.addr, self.socket, timeout, self.blocking).await?;
        let conn = TcpConn {
            stream,
            shape: self.clone_shape(),
            out: self.preamble.clone().unwrap_or_default(),
            out_pos: 0,
            payload_out: 0,
            inbuf: vec![0; self.read_len].into_boxed_slice(),
            in_flight: VecDeque::new(),
            reply_pos: 0,
            delim_matched: 0,
            completed: Vec::new(),
            bulk: self.bulk.clone(),
            bulk_pos: 0,
            big: VecDeque::new(),
            big_off: 0,
            head: [0; 8],
            early: None,
            reported: self.reported,
        };
        Ok((conn, Some(took)))
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
    /// What flush read while its writes waited (see [`Session::take_early`]).
    early: Option<ReadOutcome>,
    /// A reporting stream: the sink acknowledges the preamble and counts what it received.
    reported: bool,
}

impl Session for TcpConn {
    /// Requests sent whose replies have not fully arrived.
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// When the oldest request in flight was actually sent.
    fn oldest(&self) -> Option<Instant> {
        self.in_flight.front().map(|&(_, s)| s.at)
    }

    /// Queues request `seq`, counted as sent at `sent`; [`Session::flush`] writes it.
    fn queue(&mut self, seq: u64, sent: Sent) {
        let len = self.shape.request.len();
        if len > IO_CHUNK {
            if self.big.is_empty() {
                self.head = seq.to_le_bytes();
            }
            self.big.push_back(seq);
            self.payload_out += len;
            self.in_flight.push_back((seq, sent));
            return;
        }
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        self.shape.request.write(seq, &mut self.out);
        self.payload_out += self.shape.request.len();
        self.in_flight.push_back((seq, sent));
    }

    /// Writes everything queued; returns the payload bytes written. While the socket takes
    /// no more it reads instead: a server that answers as it reads (an echo) would otherwise
    /// stop reading once its replies fill the buffers, and both sides would wait for ever.
    async fn flush(&mut self) -> Result<usize, OpError> {
        if self.early.is_none() {
            self.completed.clear();
        }
        loop {
            let data: &[u8] = if self.out_pos < self.out.len() {
                &self.out[self.out_pos..]
            } else if !self.big.is_empty() {
                big_part(&self.shape.request, &self.head, self.big_off)
            } else {
                break;
            };
            match self.stream.try_write_now(data) {
                Ok(0) => {
                    return Err(OpError::new(
                        ErrorKind::Reset,
                        "write request: connection closed",
                    ))
                }
                Ok(n) => self.advance(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.wait_duplex().await?,
                Err(e) => return Err(OpError::io("write request", &e)),
            }
        }
        Ok(std::mem::take(&mut self.payload_out))
    }

    fn take_early(&mut self) -> Option<ReadOutcome> {
        self.early.take()
    }

    /// Reads once and parses what came; completed replies' send times go to [`Session::completed`].
    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        if let Some(early) = self.early.take() {
            return Ok(early);
        }
        self.completed.clear();
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read reply", &e))?;
        if n == 0 {
            return Err(self.closed_early());
        }
        let replies = self.parse(n)?;
        Ok(ReadOutcome {
            bytes: n,
            replies,
            ..ReadOutcome::default()
        })
    }

    /// Send times of the replies completed by the last [`Session::read`].
    fn completed(&self) -> &[Done] {
        &self.completed
    }

    /// A byte stream's replies come in order: once the oldest request has timed out, the
    /// replies still on their way can no longer be told apart, so the connection is dropped.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        match self.oldest() {
            Some(at) if now >= at + timeout => Expiry::Reset,
            _ => Expiry::None,
        }
    }

    /// Sends the preamble, if any, before bulk transfer begins; a reporting stream waits for
    /// the sink's acknowledgement, so no byte counts as sent to a server that refused it.
    async fn start_bulk(&mut self) -> Result<(), OpError> {
        self.flush().await?;
        if !self.reported {
            return Ok(());
        }
        let line = self.read_line("read the acknowledgement").await?;
        if line == crate::wire::framing::OK_LINE {
            return Ok(());
        }
        Err(server_error(&line).unwrap_or_else(|| {
            OpError::fatal(
                ErrorKind::Mismatch,
                format!(
                    "the server answered \"{}\" to the wirebench stream preamble: it is not a wirebench sink (wirebench serve tcp --mode sink); for other servers use --raw",
                    line.escape_ascii()
                ),
            )
        }))
    }

    /// The send MSS and TCP header of this connection, from `TCP_INFO`.
    fn segment(&self) -> Option<crate::record::Segment> {
        self.stream.segment()
    }

    /// A reporting stream's end: half-close, then read the sink's count of the bytes it read.
    async fn finish_bulk(&mut self, limit: Duration) -> Option<u64> {
        if !self.reported {
            return None;
        }
        self.stream.shutdown_write().ok()?;
        let line = tokio::time::timeout(limit, self.read_line("read the count"))
            .await
            .ok()?
            .ok()?;
        crate::wire::framing::parse_received(&line)
    }

    /// Writes bulk payload (stream mode) from a buffer of whole messages, up to
    /// `BULK_WRITE` bytes a call; returns the payload bytes written by this call.
    async fn send_bulk(&mut self) -> Result<usize, OpError> {
        if self.bulk.is_empty() {
            return Err(OpError::new(
                ErrorKind::Other,
                "no bulk buffer outside stream mode",
            ));
        }
        let n = match self.stream.write(&self.bulk[self.bulk_pos..]).await {
            Ok(n) if n > 0 => n,
            Ok(_) => return Err(OpError::new(ErrorKind::Reset, "write: connection closed")),
            Err(e) => return Err(self.refusal().unwrap_or_else(|| OpError::io("write", &e))),
        };
        self.bulk_pos = (self.bulk_pos + n) % self.bulk.len();
        Ok(n)
    }

    /// Reads bulk payload (source mode); returns the bytes read.
    async fn recv_bulk(&mut self) -> Result<usize, OpError> {
        let n = self
            .stream
            .read(&mut self.inbuf)
            .await
            .map_err(|e| OpError::io("read", &e))?;
        if n == 0 {
            return Err(OpError::new(
                ErrorKind::ShortReply,
                "the server closed the connection",
            ));
        }
        match server_error(&self.inbuf[..n]) {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }
}

impl TcpConn {
    /// `n` more queued bytes went out.
    fn advance(&mut self, n: usize) {
        if self.out_pos < self.out.len() {
            self.out_pos += n;
            return;
        }
        self.big_off += n;
        if self.big_off == self.shape.request.len() {
            self.big.pop_front();
            self.big_off = 0;
            if let Some(&seq) = self.big.front() {
                self.head = seq.to_le_bytes();
            }
        }
    }

    /// Waits until the socket takes more or has input; reads and parses the input, keeping
    /// what it brought for [`Session::take_early`].
    async fn wait_duplex(&mut self) -> Result<(), OpError> {
        let (readable, _) = self
            .stream
            .wait_duplex()
            .await
            .map_err(|e| OpError::io("write request", &e))?;
        if !readable {
            return Ok(());
        }
        let n = match self.stream.try_read_now(&mut self.inbuf) {
            Ok(0) => return Err(self.closed_early()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(OpError::io("read reply", &e)),
        };
        let replies = self.parse(n)?;
        let early = self.early.get_or_insert_with(ReadOutcome::default);
        early.bytes += n;
        early.replies += replies;
        Ok(())
    }

    /// After a failed upload: the reference server's reason, if it sent one before closing
    /// (a stream sent to an echo server), read without waiting.
    fn refusal(&mut self) -> Option<OpError> {
        let n = match &self.stream {
            Stream::Async(s) => s.try_read(&mut self.inbuf).ok()?,
            Stream::Blocking(s) => {
                s.set_nonblocking(true).ok()?;
                let n = std::io::Read::read(&mut &*s, &mut self.inbuf).ok();
                let _ = s.set_nonblocking(false);
                n?
            }
            Stream::Tls(_) => return None, // tcp:// never speaks TLS
        };
        server_error(&self.inbuf[..n])
    }

    /// Reads one short line from the server (the framing's answers), newline included.
    async fn read_line(&mut self, doing: &str) -> Result<Vec<u8>, OpError> {
        let mut line = Vec::new();
        while !line.ends_with(b"\n") && line.len() < crate::wire::framing::MAX_PREAMBLE {
            match self.stream.read(&mut self.inbuf).await {
                Ok(0) if line.is_empty() => {
                    return Err(OpError::new(
                        ErrorKind::ShortReply,
                        format!("{doing}: the server closed the connection"),
                    ))
                }
                Ok(0) => break,
                Ok(n) => line.extend_from_slice(&self.inbuf[..n]),
                Err(e) => return Err(OpError::io(doing, &e)),
            }
        }
        Ok(line)
    }
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
