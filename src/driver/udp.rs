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

use super::{Done, Driver, Expiry, PeerReport, ReadOutcome, Sent, Session};
use crate::cli::ClientMode;
use crate::plan::{Reply, Request, Workload};
use crate::record::{ErrorKind, OpError};
use crate::sys::socket::SocketOptions;
use crate::wire::datagram::{parse_report_answer, Header, Kind, HEADER_LEN};
use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

/// Replies remembered after their request left the window, to tell late from duplicate.
const HISTORY: usize = 4096;
/// Datagrams received per `read` before yielding.
const BATCH: usize = 64;
/// A blocking session whose oldest request is overdue waits this long at a time (off the
/// socket, so the engine's timer can expire the request) before it looks again.
const OVERDUE_PAUSE: Duration = Duration::from_millis(1);
/// The shortest SO_RCVTIMEO/SO_SNDTIMEO (zero would mean "never").
const MIN_SOCKET_TIMEOUT: Duration = Duration::from_millis(1);

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

    fn open(&self, timeout: Duration) -> io::Result<Sock> {
        let domain = socket2::Domain::for_address(self.addr);
        let s = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))?;
        if let Some(n) = self.socket.sndbuf {
            s.set_send_buffer_size(n)?;
        }
        if let Some(n) = self.socket.rcvbuf {
            s.set_recv_buffer_size(n)?;
        }
        let any: SocketAddr = match self.addr {
            SocketAddr::V4(_) => "0.0.0.0:0".parse().expect("literal"),
            SocketAddr::V6(_) => "[::]:0".parse().expect("literal"),
        };
        s.bind(&any.into())?;
        s.connect(&self.addr.into())?;
        if self.blocking {
            let limit = timeout.max(MIN_SOCKET_TIMEOUT);
            s.set_read_timeout(Some(limit))?;
            s.set_write_timeout(Some(limit))?;
            return Ok(Sock::Blocking(s.into()));
        }
        s.set_nonblocking(true)?;
        UdpSocket::from_std(s.into()).map(Sock::Async)
    }
}

/// A session's socket: registered with the runtime, or blocking.
#[derive(Debug)]
enum Sock {
    /// Non-blocking, woken by the runtime's epoll.
    Async(UdpSocket),
    /// Blocking calls with SO_RCVTIMEO/SO_SNDTIMEO set to the request timeout; every `await`
    /// on it completes at once, except when a request is overdue (see [`UdpDriver::blocking`]).
    Blocking(std::net::UdpSocket),
}

impl Sock {
    /// Receives one datagram if one is queued, never waiting (the runtime's readiness is
    /// cleared when there is none, so its next wait is real).
    fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Async(s) => s.try_recv(buf),
            Sock::Blocking(s) => recv(s.as_raw_fd(), buf, libc::MSG_DONTWAIT),
        }
    }

    /// Sends one datagram.
    async fn send(&self, datagram: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Async(s) => s.send(datagram).await,
            Sock::Blocking(s) => loop {
                match s.send(datagram) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    sent => return sent.map_err(timed_out),
                }
            },
        }
    }
}

/// One `recv` on `fd` into `buf`: blocking (up to SO_RCVTIMEO), or not with `MSG_DONTWAIT`.
fn recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`, valid for the whole call.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A blocking call that ran into SO_RCVTIMEO/SO_SNDTIMEO reports EAGAIN; say what it means.
fn timed_out(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        io::Error::new(io::ErrorKind::TimedOut, "no progress within --timeout")
    } else {
        e
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
            highest_reply: None,
            duplicating: false,
        };
        Ok((session, None))
    }
}

/// What became of a request that left the in-flight window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Answered,
    Expired,
}

/// A request in flight: its sequence number, send times, and whether it has been answered.
#[derive(Clone, Copy, Debug)]
struct Pending {
    seq: u64,
    sent: Sent,
    answered: bool,
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
    /// The highest sequence number answered so far.
    highest_reply: Option<u64>,
    /// Some reply came twice: the path duplicates (see [`UdpSession::leave_blocking`]).
    duplicating: bool,
}

impl UdpSession {
    /// Drops answered entries from the front of the window.
    fn trim(&mut self) {
        while let Some(p) = self.in_flight.front().filter(|p| p.answered) {
            self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Answered);
            self.in_flight.pop_front();
        }
    }

    /// Accounts one received datagram.
    fn on_datagram(&mut self, n: usize, out: &mut ReadOutcome) {
        out.bytes += n;
        if !self.framed {
            // Raw datagrams carry no sequence number: the oldest request is answered.
            if let Some(p) = self.in_flight.iter_mut().find(|p| !p.answered) {
                p.answered = true;
                self.outstanding -= 1;
                self.completed.push(Done::ok(p.sent));
                out.replies += 1;
            }
            return;
        }
        let Some(h) =
            Header::decode(&self.rx[..n]).filter(|h| h.kind == Kind::Reply && h.flow == self.flow)
        else {
            return;
        };
        let front = self.in_flight.front().map_or(u64::MAX, |p| p.seq);
        if h.seq < front || front == u64::MAX {
            match self.history[(h.seq as usize) % HISTORY] {
                (s, Fate::Expired) if s == h.seq => {
                    out.late += 1;
                    self.history[(h.seq as usize) % HISTORY] = (s, Fate::Answered);
                }
                _ => {
                    out.duplicates += 1;
                    self.duplicating = true;
                }
            }
            return;
        }
        let Some(p) = self.in_flight.get_mut((h.seq - front) as usize) else {
            return; // a sequence number never sent: not ours
        };
        if p.answered {
            out.duplicates += 1;
            self.duplicating = true;
            return;
        }
        p.answered = true;
        let sent = p.sent;
        self.outstanding -= 1;
        // Out of order as RFC 4737 counts it: below the highest sequence number seen so far.
        match self.highest_reply {
            Some(top) if h.seq < top => out.reordered += 1,
            _ => self.highest_reply = Some(h.seq),
        }
        self.completed.push(Done::ok(sent));
        out.replies += 1;
    }

    /// Moves a blocking session onto the event loop, once its path has duplicated a reply.
    /// A duplicate follows its original closely (a server sends both at once), and the event
    /// loop, waking up later than a blocking receive returns, finds it already queued behind
    /// the original and counts it in the same read. A blocking read stops at the original,
    /// leaving the duplicate to the next read; for the run's last reply there is none, so on
    /// such a path it would go uncounted.
    fn leave_blocking(&mut self) -> io::Result<()> {
        let Sock::Blocking(s) = &self.sock else {
            return Ok(());
        };
        // The same socket under a second descriptor; the first closes when replaced.
        let s = s.try_clone()?;
        s.set_nonblocking(true)?;
        self.sock = Sock::Async(UdpSocket::from_std(s)?);
        Ok(())
    }

    /// Whether the oldest request still unanswered was sent `timeout` or more before `now`.
    fn overdue(&self, now: Instant) -> bool {
        self.outstanding > 0
            && self
                .in_flight
                .iter()
                .find(|p| !p.answered)
                .is_some_and(|p| now >= p.sent.at + self.timeout)
    }

    /// Blocking mode's wait in [`Session::read`]: one blocking `recv`, accounted. With a
    /// request overdue it does not block: it waits off the socket for the engine to expire the
    /// request, looking for replies every [`OVERDUE_PAUSE`].
    async fn recv_blocking(&mut self, fd: RawFd, out: &mut ReadOutcome) -> Result<(), OpError> {
        loop {
            let flags = if self.overdue(Instant::now()) {
                libc::MSG_DONTWAIT
            } else {
                0
            };
            match recv(fd, &mut self.rx, flags) {
                Ok(n) => {
                    self.on_datagram(n, out);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.outstanding == 0 {
                        return Err(OpError::io("read reply", &timed_out(e)));
                    }
                    // SO_RCVTIMEO passed, so the oldest request is overdue: yield, and the
                    // engine's timer counts it lost (this read is then dropped). The session
                    // goes on, as with the event loop.
                    tokio::time::sleep(OVERDUE_PAUSE).await;
                }
                Err(e) => return Err(OpError::io("read reply", &e)),
            }
        }
    }

    /// Receives one datagram into `rx` by `until`; None when none came in time (or on error).
    async fn recv_by(&mut self, until: Instant) -> Option<usize> {
        match &self.sock {
            Sock::Async(s) => tokio::time::timeout_at(until.into(), s.recv(&mut self.rx))
                .await
                .ok()?
                .ok(),
            Sock::Blocking(s) => loop {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                s.set_read_timeout(Some(left.max(MIN_SOCKET_TIMEOUT)))
                    .ok()?;
                match recv(s.as_raw_fd(), &mut self.rx, 0) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    got => return got.ok(),
                }
            },
        }
    }

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
        'ask: for _ in 0..3 {
            if self.sock.send(&req).await.is_err() {
                break;
            }
            let wait = (deadline - Instant::now().min(deadline)) / 2;
            let until = Instant::now() + wait.max(Duration::from_millis(50));
            while let Some(n) = self.recv_by(until).await {
                if let Some((h, report)) = parse_report_answer(&self.rx[..n]) {
                    if h.flow == self.flow {
                        answer = Some(PeerReport {
                            sent: self.datagrams_sent,
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
            if self.framed {
                Header {
                    kind: Kind::Data,
                    reply_size: self.reply_size,
                    flow: self.flow,
                    seq,
                    sent_ns: nanos_since_epoch(sent.at),
                }
                .encode(&mut self.template);
            }
            let n = self
                .sock
                .send(&self.template)
                .await
                .map_err(|e| OpError::io("send datagram", &e))?;
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
        let mut lost = 0;
        while let Some(&p) = self.in_flight.front() {
            if p.answered {
                self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Answered);
            } else if now >= p.sent.at + timeout {
                self.history[(p.seq as usize) % HISTORY] = (p.seq, Fate::Expired);
                self.outstanding -= 1;
                lost += 1;
            } else {
                break;
            }
            self.in_flight.pop_front();
        }
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
