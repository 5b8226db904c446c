//! One server thread's work on each datagram — receive, classify, count, answer, delay the
//! reply — and the event-loop that drives it; the test faults are in [`super::faults`], the
//! flows' counters in [`super::flows`]. [`Worker`] itself does no waiting: both loops, this
//! event loop and the blocking one in [`super::blocking`], hand it each datagram with the time,
//! and let it send through an [`Out`].

use super::faults::{Fate, FaultState, Held};
use super::flows::FlowTable;
use super::stats::Tally;
use super::{Shared, MAX_AMPLIFICATION, MAX_PENDING_BYTES};
use crate::serve::delay::Pause;
use crate::serve::{Mode, Shutdown};
use crate::wire::datagram::{has_magic, report_answer, Header, Kind, HEADER_LEN, MAX_DATAGRAM};
use socket2::{SockAddr, SockRef};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The receive buffer: larger than any UDP datagram over IPv4.
pub(super) const RECV_BUFFER: usize = 65_536;
/// Datagrams drained per readiness before the loop looks at its timer and the shutdown again.
const BATCH: usize = 64;
/// How long a thread backs off after a failed receive, so it does not spin while it lasts.
pub(super) const RECV_BACKOFF: Duration = Duration::from_millis(1);
/// How long a send waits for room in a full send buffer before it looks at the shutdown again.
const SEND_WAIT_MS: libc::c_int = 200;
/// The byte replies are filled with after their header.
const FILL_BYTE: u8 = b'w';

/// What a received datagram is.
#[derive(Clone, Copy, Debug)]
enum Class {
    /// Not a wirebench datagram: served as bytes, counted under flow 0.
    Plain,
    /// Wirebench data.
    Data(Header),
    /// A report request.
    Report(Header),
    /// Malformed, or nothing a server takes.
    Bad,
}

/// Classifies a datagram; `from_self` when it came from the server's own address.
fn classify(data: &[u8], from_self: bool) -> Class {
    if from_self {
        return Class::Bad;
    }
    if !has_magic(data) {
        return Class::Plain;
    }
    match Header::decode(data) {
        Some(h) if h.kind == Kind::Data && h.reply_size as usize <= MAX_DATAGRAM => Class::Data(h),
        Some(h) if h.kind == Kind::ReportRequest => Class::Report(h),
        _ => Class::Bad,
    }
}

/// Where a thread's replies go: its socket, written to directly (whether the event loop or
/// blocking calls serve it), waiting while the send buffer is full.
pub(super) struct Out<'a> {
    socket: SockRef<'a>,
    shutdown: &'a Shutdown,
}

impl<'a> Out<'a> {
    pub(super) fn new(socket: SockRef<'a>, shutdown: &'a Shutdown) -> Out<'a> {
        Out { socket, shutdown }
    }

    /// Sends one datagram; waits while the send buffer is full (unless the server is
    /// stopping). On a non-blocking socket the send bypasses the runtime's readiness: a reply
    /// goes out at once, as the event loop's own `send_to` would after its readiness check.
    fn send_to(&self, bytes: &[u8], peer: SocketAddr) -> io::Result<usize> {
        let to = SockAddr::from(peer);
        loop {
            match self.socket.send_to(bytes, &to) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock && !self.shutdown.is_triggered() =>
                {
                    self.wait_writable()
                }
                done => return done,
            }
        }
    }

    fn wait_writable(&self) {
        let mut fd = libc::pollfd {
            fd: self.socket.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd; the descriptor outlives the call.
        unsafe { libc::poll(&mut fd, 1, SEND_WAIT_MS) };
    }
}

/// One server thread's state; everything in it belongs to this thread alone.
pub(super) struct Worker {
    shared: Arc<Shared>,
    tally: Tally,
    flows: FlowTable,
    delayed: DelayQueue,
    faults: FaultState,
    /// Zero of the server's monotonic clock for arrival times.
    epoch: Instant,
    /// Sized replies: [`FILL_BYTE`]s, with the reply header written over the front as needed.
    fill: Box<[u8]>,
}

/// How a reply's bytes are made.
enum Reply {
    /// The received bytes themselves (for a wirebench request, with its kind already changed).
    Same,
    /// The first `len` bytes of the fill buffer, after writing this header (if any) at its
    /// front, or plain filler there.
    Fill(usize, Option<Header>),
}

impl Worker {
    pub(super) fn new(shared: Arc<Shared>, tally: Tally) -> Worker {
        let options = &shared.options;
        let delayed = DelayQueue::new(options.max_pending, MAX_PENDING_BYTES);
        let flows = FlowTable::new(shared.flows_per_thread);
        let faults = FaultState::new(options.faults);
        let fill_len = match options.mode {
            Mode::Echo => MAX_DATAGRAM,
            _ => 0,
        };
        Worker {
            tally,
            flows,
            delayed,
            faults,
            epoch: Instant::now(),
            fill: vec![FILL_BYTE; fill_len].into_boxed_slice(),
            shared,
        }
    }

    /// When [`Worker::on_timer`] must run next: the first delayed reply, or the held
    /// datagram's limit.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        match (self.delayed.next_due(), self.faults.held_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends the delayed replies that are due by `now`, and serves a held datagram whose time
    /// is up.
    pub(super) fn on_timer(&mut self, now: Instant, out: &Out<'_>) {
        while let Some(d) = self.delayed.pop_due(now) {
            for _ in 0..d.copies {
                send(out, &self.tally, &d.bytes, d.peer);
            }
        }
        if self.faults.held_due().is_some_and(|due| due <= now) {
            self.release_held(now, out);
        }
    }

    /// One datagram received at `now`: counted, classified, put through the test faults,
    /// served.
    pub(super) fn on_datagram(
        &mut self,
        data: &mut [u8],
        peer: SocketAddr,
        now: Instant,
        out: &Out<'_>,
    ) {
        self.tally.received(data.len());
        let class = classify(data, self.is_self(peer));
        match class {
            Class::Bad => {
                self.tally.bad();
                return;
            }
            Class::Report(h) => {
                // A held datagram arrived before the request, so the report must include it.
                self.release_held(now, out);
                let report = self.flows.report(peer, h.flow);
                send(out, &self.tally, &report_answer(&h, &report), peer);
                return;
            }
            Class::Plain | Class::Data(_) => {}
        }
        match self.faults.apply(data, peer, now) {
            Fate::Dropped => self.tally.dropped(1),
            Fate::Held => {}
            Fate::Serve { copies, then } => {
                self.serve(data, peer, class, copies, now, out);
                if let Some(h) = then {
                    self.serve_held(h, now, out);
                }
            }
        }
    }

    /// True for the server's own address: answering it would loop.
    fn is_self(&self, peer: SocketAddr) -> bool {
        let local = self.shared.local;
        peer.port() == local.port()
            && (peer.ip() == local.ip() || (local.ip().is_unspecified() && peer.ip().is_loopback()))
    }

    fn release_held(&mut self, now: Instant, out: &Out<'_>) {
        if let Some(h) = self.faults.take_held() {
            self.serve_held(h, now, out);
        }
    }

    fn serve_held(&mut self, mut h: Held, now: Instant, out: &Out<'_>) {
        let class = classify(&h.data, false);
        self.serve(&mut h.data, h.peer, class, h.copies, now, out);
    }

    /// Counts a data datagram (`copies` times) in its flow and, in echo mode, answers it (or
    /// queues the answer, with a delay).
    fn serve(
        &mut self,
        data: &mut [u8],
        peer: SocketAddr,
        class: Class,
        copies: u8,
        now: Instant,
        out: &Out<'_>,
    ) {
        self.count(data.len(), peer, class, copies, now);
        let options = &self.shared.options;
        if options.mode != Mode::Echo {
            return;
        }
        let bytes: &[u8] = match reply(data, class, options.reply_size) {
            Reply::Same => data,
            Reply::Fill(n, header) => {
                match header {
                    Some(h) => h.encode(&mut self.fill),
                    None => self.fill[..HEADER_LEN].fill(FILL_BYTE),
                }
                &self.fill[..n]
            }
        };
        let service = &self.shared.service;
        if !service.is_instant() {
            if !self.delayed.push(service.due(now), peer, bytes, copies) {
                self.tally.dropped(u64::from(copies));
            }
            return;
        }
        for _ in 0..copies {
            send(out, &self.tally, bytes, peer);
        }
    }

    /// Counts a datagram of `len` bytes (`copies` times) in its flow, or as untracked when the
    /// flow table is full.
    fn count(&mut self, len: usize, peer: SocketAddr, class: Class, copies: u8, now: Instant) {
        let arrival_ns =
            u64::try_from(now.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(0);
        let (flow, seq) = match class {
            Class::Data(h) => (h.flow, Some((h.seq, h.sent_ns))),
            _ => (0, None),
        };
        let Some(counters) = self.flows.get(peer, flow, arrival_ns, &self.tally) else {
            self.tally.untracked(u64::from(copies));
            return;
        };
        for _ in 0..copies {
            match seq {
                Some((seq, sent_ns)) => counters.on_datagram(seq, sent_ns, arrival_ns, len),
                None => counters.on_unsequenced(len),
            }
        }
    }
}

/// How the echo of `data` (of `class`) is made, given the server's `reply_size`. A wirebench
/// request answered with its own bytes has its kind changed to a reply here; the size it asks
/// for is cut to [`MAX_AMPLIFICATION`] times its own (or `reply_size`, when larger).
fn reply(data: &mut [u8], class: Class, reply_size: Option<usize>) -> Reply {
    match class {
        Class::Data(h) => {
            let asked = match h.reply_size {
                0 => reply_size,
                n => Some(n as usize),
            };
            // No amplifier: at most MAX_AMPLIFICATION times the request, unless the server's
            // own --reply-size (the operator's choice) is larger.
            let ceiling = (data.len() * MAX_AMPLIFICATION).max(reply_size.unwrap_or(0));
            match asked.map(|n| n.max(HEADER_LEN).min(ceiling.max(HEADER_LEN))) {
                Some(n) if n != data.len() => Reply::Fill(n, Some(h.with_kind(Kind::Reply))),
                _ => {
                    data[4] = Kind::Reply as u8;
                    Reply::Same
                }
            }
        }
        _ => match reply_size {
            Some(n) => Reply::Fill(n, None),
            None => Reply::Same,
        },
    }
}

/// Sends one datagram through `out`; a failure is counted.
fn send(out: &Out<'_>, tally: &Tally, bytes: &[u8], peer: SocketAddr) {
    match out.send_to(bytes, peer) {
        Ok(n) => tally.sent(n),
        Err(_) => tally.send_error(),
    }
}

/// The event loop: waits until the socket is readable, then drains up to a batch of
/// datagrams; one precise timer ([`Pause`]) serves delayed replies and the held datagram.
/// Serves until `shutdown`; pending delayed replies and a held datagram are then dropped.
pub(super) async fn run_event_loop(
    mut worker: Worker,
    socket: tokio::net::UdpSocket,
    shutdown: &Shutdown,
) {
    let out = Out::new(SockRef::from(&socket), shutdown);
    let stopped = shutdown.wait();
    tokio::pin!(stopped);
    // A wait the loop leaves for a datagram is resumed by the next `until` for the same
    // deadline without re-arming the timer (see `Pause::until`).
    let mut pause = Pause::default();
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        let next = worker.next_deadline();
        tokio::select! {
            biased;
            _ = &mut stopped => return,
            _ = pause.until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                worker.on_timer(Instant::now(), &out);
            }
            ready = socket.readable() => {
                if ready.is_err() {
                    tokio::time::sleep(RECV_BACKOFF).await;
                    continue;
                }
                for _ in 0..BATCH {
                    match socket.try_recv_from(&mut buf) {
                        Ok((n, peer)) => worker.on_datagram(&mut buf[..n], peer, Instant::now(), &out),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(_) => {
                            tokio::time::sleep(RECV_BACKOFF).await;
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// A reply waiting for its due time.
struct Delayed {
    due: Instant,
    peer: SocketAddr,
    bytes: Box<[u8]>,
    copies: u8,
}

/// Delayed replies in due order (the delay is constant and `--max-rate` slots only grow, so
/// arrival order is due order),
/// bounded in count and bytes.
struct DelayQueue {
    queue: VecDeque<Delayed>,
    bytes: usize,
    max_len: usize,
    max_bytes: usize,
}

impl DelayQueue {
    fn new(max_len: usize, max_bytes: usize) -> DelayQueue {
        DelayQueue {
            queue: VecDeque::new(),
            bytes: 0,
            max_len,
            max_bytes,
        }
    }

    /// Queues a reply; false (and nothing queued) when the queue is full.
    fn push(&mut self, due: Instant, peer: SocketAddr, bytes: &[u8], copies: u8) -> bool {
        if self.queue.len() >= self.max_len || self.bytes + bytes.len() > self.max_bytes {
            return false;
        }
        self.bytes += bytes.len();
        self.queue.push_back(Delayed {
            due,
            peer,
            bytes: bytes.into(),
            copies,
        });
        true
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.front().map(|d| d.due)
    }

    /// The first reply, if it is due by `now`.
    fn pop_due(&mut self, now: Instant) -> Option<Delayed> {
        if self.queue.front()?.due > now {
            return None;
        }
        let d = self.queue.pop_front()?;
        self.bytes -= d.bytes.len();
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies() {
        let mut buf = [0u8; 40];
        let h = Header {
            kind: Kind::Data,
            reply_size: 0,
            flow: 1,
            seq: 2,
            sent_ns: 3,
        };
        h.encode(&mut buf);
        assert!(matches!(classify(&buf, false), Class::Data(_)));
        assert!(matches!(classify(&buf, true), Class::Bad));
        assert!(matches!(classify(&buf[..20], false), Class::Bad));
        assert!(matches!(classify(b"hello", false), Class::Plain));
        assert!(matches!(classify(b"", false), Class::Plain));
        for (kind, bad) in [(Kind::Reply, true), (Kind::ReportAnswer, true)] {
            h.with_kind(kind).encode(&mut buf);
            assert_eq!(matches!(classify(&buf, false), Class::Bad), bad);
        }
        h.with_kind(Kind::ReportRequest).encode(&mut buf);
        assert!(matches!(classify(&buf, false), Class::Report(_)));
        Header {
            reply_size: MAX_DATAGRAM as u32 + 1,
            ..h
        }
        .encode(&mut buf);
        assert!(matches!(classify(&buf, false), Class::Bad));
    }

    #[test]
    fn delay_queue_is_bounded() {
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let now = Instant::now();
        let mut q = DelayQueue::new(2, 10);
        assert!(q.push(now, peer, &[0; 4], 1));
        assert!(!q.push(now, peer, &[0; 7], 1), "bytes");
        assert!(q.push(now + Duration::from_secs(1), peer, &[0; 6], 1));
        assert!(!q.push(now, peer, &[], 1), "count");
        assert_eq!(q.pop_due(now).unwrap().bytes.len(), 4);
        assert!(q.pop_due(now).is_none());
        assert_eq!(q.next_due(), Some(now + Duration::from_secs(1)));
        assert!(q.push(now, peer, &[0; 4], 1));
    }
}
