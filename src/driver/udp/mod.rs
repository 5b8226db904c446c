//! UDP: what one operation is over datagrams. A session is a connected UDP socket. With
//! wirebench framing every datagram carries a [`crate::wire::datagram::Header`] (flow, sequence,
//! send time), so replies are matched by sequence number whatever their order, and late,
//! duplicated and reordered replies are counted; raw datagrams (`--payload`, `--raw`, e.g. a DNS
//! query) are matched first in, first out. A request that gets no reply within the timeout is
//! lost; the session goes on. In stream mode nothing is answered: at the end the session asks
//! the reference server for its counters of the flow (received, lost, reordered, jitter).
//!
//! A worker thread with a single closed-loop session uses blocking socket calls instead of the
//! event loop (see [`UdpDriver::blocking`]): one `send` and one `recv` per round trip, as
//! sockperf makes.

mod check;
mod sock;
mod window;

use super::target::{Family, ProtocolName, Scheme};
use super::workload::{ClientMode, Reply, Request, Workload};
use super::{Done, Driver, Expiry, Job, Placement, Protocol, ReadOutcome, Sent, Session};
use crate::record::{ErrorKind, OpError, PeerReport};
use crate::sys::socket::SocketOptions;
use crate::wire::datagram::{parse_report_answer, Header, Kind, HEADER_LEN};
use sock::{Sock, MIN_SOCKET_TIMEOUT};
use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use window::{Fate, Pending, HISTORY};

/// Datagrams received per `read` before yielding.
const BATCH: usize = 64;

/// The origin of the send timestamps in datagram headers (only differences matter).
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_nanos() as u64
}

/// Opens UDP sessions to one target.
#[derive(Debug)]
pub struct UdpDriver {
    addr: SocketAddr,
    socket: SocketOptions,
    /// The datagram sent for every request (the header is rewritten each time if framed).
    template: Vec<u8>,
    framed: bool,
    reply_size: u32,
    expects_replies: bool,
    /// Flow ids: a random base per run, one more per session.
    next_flow: Cell<u64>,
    /// Sessions use blocking socket calls (see [`UdpDriver::blocking`]).
    blocking: bool,
}

impl UdpDriver {
    /// A driver for `workload` against `addr`.
    pub fn new(addr: SocketAddr, workload: &Workload, socket: SocketOptions) -> UdpDriver {
        let (template, framed) = match &workload.request {
            Request::Payload(p) => (p.clone(), false),
            Request::Sized { size, preamble } => {
                let t = (0..*size).map(|i| b'a' + (i % 26) as u8).collect();
                (t, *preamble)
            }
        };
        let reply_size = match workload.reply {
            Reply::Size(n) => n as u32,
            Reply::Until(_) => 0,
        };
        UdpDriver {
            addr,
            socket,
            template,
            framed,
            reply_size,
            expects_replies: workload.mode == ClientMode::Rr,
            next_flow: Cell::new(random_u64()),
            blocking: false,
        }
    }

    /// Makes sessions use blocking socket calls: right when a worker thread owns a single
    /// session in a closed loop, where a round trip is then one `send` and one `recv` instead
    /// of a send, an epoll wait and two receives (the second finding the socket empty).
    ///
    /// SO_RCVTIMEO and SO_SNDTIMEO are the request timeout. A receive that runs into it finds
    /// the oldest request overdue; the session then steps off the socket (a short sleep)
    /// so the engine's timer expires the request as lost, as it does with the event loop, and
    /// the session goes on. The engine must check its other deadlines itself, since a
    /// blocking session yields only then.
    pub fn blocking(mut self, on: bool) -> UdpDriver {
        self.blocking = on;
        self
    }
}

/// A random 64-bit number from the kernel, for flow ids.
fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into the 8-byte buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
    if n == 8 {
        u64::from_ne_bytes(b)
    } else {
        nanos_since_epoch(Instant::now()) ^ u64::from(std::process::id()) << 32
    }
}

impl Driver for UdpDriver {
    type Session = UdpSession;

    /// Binds and connects a UDP socket: no handshake, so no connect time. A blocking session's
    /// socket calls time out after `timeout`.
    async fn connect(&self, timeout: Duration) -> Result<(UdpSession, Option<Duration>), OpError> {
        let sock = self
            .open(timeout)
            .map_err(|e| OpError::io("udp socket", &e))?;
        let flow = self.next_flow.get();
        self.next_flow.set(flow.wrapping_add(1));
        let session = UdpSession {
            sock,
            timeout,
            flow,
            template: self.template.clone(),
            framed: self.framed,
            reply_size: self.reply_size,
            expects_replies: self.expects_replies,
            queued: Vec::new(),
            in_flight: VecDeque::new(),
            outstanding: 0,
            history: vec![(u64::MAX, Fate::Answered); HISTORY].into_boxed_slice(),
            completed: Vec::new(),
            rx: vec![0; 65_536].into_boxed_slice(),
            datagrams_sent: 0,
            held_back: 0,
            highest_reply: None,
            duplicating: false,
        };
        Ok((session, None))
    }
}

/// One connected UDP socket and its requests in flight.
#[derive(Debug)]
pub struct UdpSession {
    sock: Sock,
    /// The request timeout (`--timeout`), as the session was opened with.
    timeout: Duration,
    flow: u64,
    template: Vec<u8>,
    framed: bool,
    reply_size: u32,
    expects_replies: bool,
    queued: Vec<(u64, Sent)>,
    /// Requests by sequence number, oldest first (sequence numbers are consecutive).
    in_flight: VecDeque<Pending>,
    /// Entries of `in_flight` not yet answered.
    outstanding: usize,
    /// Fates of requests that left `in_flight`, indexed by sequence number modulo [`HISTORY`].
    history: Box<[(u64, Fate)]>,
    completed: Vec<Done>,
    rx: Box<[u8]>,
    /// Data datagrams sent by this session (all phases), to compare with the server's count.
    datagrams_sent: u64,
    /// Datagrams the host's own queue refused (ENOBUFS): never sent, not counted as sent.
    held_back: u64,
    /// The highest sequence number answered so far.
    highest_reply: Option<u64>,
    /// Some reply came twice: the path duplicates (see [`UdpSession::leave_blocking`]).
    duplicating: bool,
}

impl UdpSession {
    /// Asks the server for its counters of this flow; retries a few times within `limit`.
    async fn ask_report(&mut self, limit: Duration) -> Option<PeerReport> {
        let mut req = [0u8; HEADER_LEN];
        Header {
            kind: Kind::ReportRequest,
            reply_size: 0,
            flow: self.flow,
            seq: 0,
            sent_ns: nanos_since_epoch(Instant::now()),
        }
        .encode(&mut req);
        let deadline = Instant::now() + limit;
        let mut answer = None;
        // Asked again, at growing intervals (100 ms, doubled up to 1 s), until `limit`: a
        // request or answer lost behind a full queue, or a server still reading its backlog.
        let mut wait = Duration::from_millis(100);
        'ask: while Instant::now() < deadline {
            if self.sock.send(&req).await.is_err() {
                break;
            }
            let until = (Instant::now() + wait).min(deadline);
            wait = (wait * 2).min(Duration::from_secs(1));
            while let Some(n) = self.recv_by(until).await {
                if let Some((h, report)) = parse_report_answer(&self.rx[..n]) {
                    if h.flow == self.flow {
                        answer = Some(PeerReport {
                            sent: self.datagrams_sent,
                            held_back: self.held_back,
                            report,
                        });
                        break 'ask;
                    }
                }
            }
        }
        if let Sock::Blocking(s) = &self.sock {
            // Back to the request timeout, in case the session is used again.
            let _ = s.set_read_timeout(Some(self.timeout.max(MIN_SOCKET_TIMEOUT)));
        }
        answer
    }
}

impl Session for UdpSession {
    fn in_flight(&self) -> usize {
        self.outstanding
    }

    fn oldest(&self) -> Option<Instant> {
        self.in_flight
            .iter()
            .find(|p| !p.answered)
            .map(|p| p.sent.at)
    }

    fn queue(&mut self, seq: u64, sent: Sent) {
        self.queued.push((seq, sent));
        if self.expects_replies {
            self.in_flight.push_back(Pending {
                seq,
                sent,
                answered: false,
            });
            self.outstanding += 1;
        }
    }

    async fn flush(&mut self) -> Result<usize, OpError> {
        let mut bytes = 0;
        for i in 0..self.queued.len() {
            let (seq, sent) = self.queued[i];
            // Each datagram carries the time it was written, which the receiver's jitter
            // (RFC 3550) sets against its arrival: a batch stamped with its first one's time,
            // written over the time the socket took it, read as a constant jitter of one
            // datagram's time on the link (~115 µs at 100 Mbit/s, issue 38).
            let mut at = if i == 0 { sent.at } else { Instant::now() };
            let sent = loop {
                if self.framed {
                    Header {
                        kind: Kind::Data,
                        reply_size: self.reply_size,
                        flow: self.flow,
                        seq,
                        sent_ns: nanos_since_epoch(at),
                    }
                    .encode(&mut self.template);
                }
                match self.sock.try_send(&self.template) {
                    Ok(n) => break Some(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.sock
                            .writable()
                            .await
                            .map_err(|e| OpError::io("send datagram", &e))?;
                        at = Instant::now();
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // The host's own queue toward the target is full (a stream's socket asks
                    // IP_RECVERR, so a qdisc's drop is said, not hidden as a success): the
                    // datagram was refused here, never sent, and is counted so, apart from
                    // what the sender wrote. Before issue 38's fix the sender counted them as
                    // sent: 150 Mbit/s "sent" into a 100 Mbit/s link, a third dropped here.
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => break None,
                    Err(e) => return Err(OpError::io("send datagram", &e)),
                }
            };
            let Some(n) = sent else {
                self.held_back += 1;
                continue;
            };
            bytes += n;
            self.datagrams_sent += 1;
        }
        self.queued.clear();
        Ok(bytes)
    }

    async fn read(&mut self) -> Result<ReadOutcome, OpError> {
        self.completed.clear();
        let mut out = ReadOutcome::default();
        if self.duplicating {
            self.leave_blocking()
                .map_err(|e| OpError::io("udp socket", &e))?;
        }
        let blocking = match &self.sock {
            Sock::Async(s) => {
                s.readable()
                    .await
                    .map_err(|e| OpError::io("read reply", &e))?;
                false
            }
            Sock::Blocking(s) => {
                let fd = s.as_raw_fd();
                self.recv_blocking(fd, &mut out).await?;
                true
            }
        };
        // Then what is queued, up to a batch. A blocking session stops once nothing is
        // outstanding: a further datagram could only be late or a duplicate, the next read
        // takes it, and a ping-pong is spared a receive that finds the socket empty (about 2%
        // of a loopback round trip).
        for _ in 0..BATCH {
            if blocking && self.outstanding == 0 {
                break;
            }
            match self.sock.try_recv(&mut self.rx) {
                Ok(n) => self.on_datagram(n, &mut out),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(OpError::io("read reply", &e)),
            }
        }
        self.trim();
        Ok(out)
    }

    fn completed(&self) -> &[Done] {
        &self.completed
    }

    /// A datagram that got no reply in time is lost; the others are unaffected.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Expiry {
        let lost = self.expire_overdue(now, timeout);
        if lost == 0 {
            Expiry::None
        } else {
            Expiry::Lost(lost)
        }
    }

    async fn start_bulk(&mut self) -> Result<(), OpError> {
        Err(unsupported())
    }

    async fn send_bulk(&mut self) -> Result<usize, OpError> {
        Err(unsupported())
    }

    async fn recv_bulk(&mut self) -> Result<usize, OpError> {
        Err(unsupported())
    }

    /// Every datagram is the request template, under RFC 768's 8-byte UDP header.
    fn segment(&self) -> Option<crate::record::Segment> {
        Some(crate::record::Segment {
            payload: self.template.len() as u32,
            received: match self.reply_size {
                0 => self.template.len() as u32,
                n => n,
            },
            header: 8,
            acked: None,
        })
    }

    async fn report(&mut self, limit: Duration) -> Option<PeerReport> {
        if !self.framed {
            return None;
        }
        self.ask_report(limit).await
    }
}

fn unsupported() -> OpError {
    OpError::new(
        ErrorKind::Other,
        "UDP has no bulk transfer: use --mode stream with --bandwidth",
    )
}

/// Requests and replies, or a paced stream, in datagrams (`udp://`).
#[derive(Debug)]
pub struct Udp;

impl Protocol for Udp {
    const SCHEMES: &'static [Scheme] = &[Scheme {
        name: "udp",
        protocol: ProtocolName::Udp,
        family: Family::Datagram,
        default_port: None,
        tls: false,
        path: false,
    }];
    const FLAGS: &'static [&'static str] = &[crate::driver::tcp::flags::MESSAGE];

    fn message(
        groups: &[&dyn crate::driver::FlagGroup],
        workload: &mut Workload,
    ) -> Result<(), crate::error::UsageError> {
        crate::driver::group::<crate::driver::tcp::flags::MessageArgs>(groups)?.shape(workload)
    }

    fn check(workload: &Workload) -> Result<(), crate::error::UsageError> {
        check::datagrams(workload)
    }

    // Datagrams do not block one another: by default any number may be in flight. A stream
    // is paced by its bit rate, at iperf3's default for UDP unless -b gives one.
    fn pacing(mode: ClientMode) -> crate::driver::Pacing {
        crate::driver::Pacing {
            window: None,
            bandwidth: (mode == ClientMode::Stream).then_some(1e6),
        }
    }
    type Driver = UdpDriver;

    fn prepare(_job: &Job) -> Result<Udp, crate::driver::Error> {
        Ok(Udp)
    }

    fn driver(&self, job: &Job, at: Placement) -> UdpDriver {
        UdpDriver::new(job.target.addr, &job.workload, job.socket).blocking(at.blocking)
    }
}
