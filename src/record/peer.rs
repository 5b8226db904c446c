//! What the far end and the sockets said about a run's traffic: the server's counts of the
//! client's datagrams and streamed bytes ([`PeerReport`], added into [`PeerCounts`]), and the
//! packets' sizes ([`Segment`]).

/// What the server counted of one session's datagrams, with what the session sent.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerReport {
    /// Data datagrams the session sent (warm-up included, as the server counts them).
    pub sent: u64,
    /// The server's counters.
    pub report: crate::wire::datagram::FlowReport,
    /// The session's datagrams this host's own queue toward the target refused (ENOBUFS,
    /// reported with IP_RECVERR: a qdisc full, the link slower than the rate): never sent, so
    /// neither in `sent` nor in the sender's bytes, rather than dropped unseen.
    pub held_back: u64,
}

/// What one session's packets carry, as its socket reported at the end (`TCP_INFO`'s send
/// MSS, or a datagram's size): the payload of a full packet and the transport header bytes
/// above it, options included. The IP header is the summary's to add (it knows the family).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Segment {
    /// Payload bytes of a full packet sent (TCP's send MSS; a datagram's bytes).
    pub payload: u32,
    /// Payload bytes of a full packet received (TCP's estimate of the peer's MSS,
    /// `tcpi_rcv_mss`; a reply datagram's bytes).
    pub received: u32,
    /// Transport header bytes on every packet: 20 for TCP (32 with the RFC 7323 timestamp
    /// option), 8 for UDP.
    pub header: u32,
    /// TCP: the bytes the peer had acknowledged (`tcpi_bytes_acked`) when this was read: what
    /// crossed the link, unlike bytes written, part of which wait in buffers. One session's
    /// reading; the engine adds the sessions' into [`PeerCounts::stream_acked`].
    pub acked: Option<u64>,
}

impl Segment {
    /// Two sessions' reports as one: the larger packet (a reading of acknowledged bytes
    /// belongs to one session, so the merged report keeps none).
    pub fn merge(a: Option<Segment>, b: Option<Segment>) -> Option<Segment> {
        match (a, b) {
            (Some(x), Some(y)) => {
                let big = if (y.payload, y.header) > (x.payload, x.header) {
                    y
                } else {
                    x
                };
                Some(Segment {
                    received: x.received.max(y.received),
                    acked: None,
                    ..big
                })
            }
            (x, y) => x.or(y),
        }
    }
}

/// The receiving server's counters of the client's datagrams, added over sessions (flows).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeerCounts {
    /// Sessions whose server answered the report request.
    pub reports: u64,
    /// Data datagrams those sessions sent.
    pub sent: u64,
    /// Datagrams the server received, duplicates included.
    pub received: u64,
    /// Sequence numbers the server saw more than once.
    pub duplicated: u64,
    /// Datagrams the server saw out of order.
    pub out_of_order: u64,
    /// The largest RFC 3550 jitter of any session, µs.
    pub jitter_us: f64,
    /// Stream connections whose receiving server reported the payload bytes it read.
    pub stream_reports: u64,
    /// Those bytes, added.
    pub stream_bytes: u64,
    /// Stream connections that ended without the receiver's count (a failure, no answer).
    pub stream_unreported: u64,
    /// Of those, the ones that failed (an error of its own kind was counted for each).
    pub stream_failed: u64,
    /// Flows whose server said its own window (`span_us`), and the datagrams per second each
    /// got over it, added (the flows ran side by side): a UDP stream's receiver rate.
    pub spans: u64,
    /// (See `spans`.)
    pub receiver_per_s: f64,
    /// Datagrams the host's own queue refused, never sent (see [`PeerReport::held_back`]).
    pub held_back: u64,
    /// Stream connections whose socket said what the receiver acknowledged (TCP_INFO).
    pub stream_acked_sessions: u64,
    /// Payload bytes those connections had acknowledged when they ended (at the deadline, or
    /// at their failure), preambles not counted.
    pub stream_acked: u64,
    /// Of those, the bytes already acknowledged when the measured window began (a session
    /// opened in a warm-up): what the receiver got within the window is the difference.
    pub stream_acked_before: u64,
}

impl PeerCounts {
    /// Adds one session's report.
    pub fn add(&mut self, p: &PeerReport) {
        self.reports += 1;
        self.sent += p.sent;
        self.received += p.report.received;
        self.duplicated += p.report.duplicated;
        self.out_of_order += p.report.out_of_order;
        self.jitter_us = self.jitter_us.max(p.report.jitter_us);
        self.held_back += p.held_back;
        if let Some(rate) = p.report.receiver_rate() {
            self.spans += 1;
            self.receiver_per_s += rate;
        }
    }

    /// One stream connection's end: the receiver's count of its bytes, or None without one.
    pub fn stream(&mut self, bytes: Option<u64>) {
        match bytes {
            Some(b) => {
                self.stream_reports += 1;
                self.stream_bytes += b;
            }
            None => self.stream_unreported += 1,
        }
    }

    /// Payload bytes the receivers acknowledged within the measured window, if the stream's
    /// sockets said (TCP_INFO; else `None`). A session that ended without saying (one refused
    /// at its preamble) moved nothing to count, so it can only leave the figure low, never high.
    pub fn acked_in_window(&self) -> Option<u64> {
        (self.stream_acked_sessions > 0)
            .then(|| self.stream_acked.saturating_sub(self.stream_acked_before))
    }

    /// One stream connection failed (its error counted apart): its receiver's count is missing.
    pub fn stream_failed(&mut self) {
        self.stream_unreported += 1;
        self.stream_failed += 1;
    }

    /// Datagrams sent that never arrived: sent minus distinct arrivals.
    pub fn lost(&self) -> u64 {
        self.sent
            .saturating_sub(self.received.saturating_sub(self.duplicated))
    }
}

impl std::ops::AddAssign<&PeerCounts> for PeerCounts {
    fn add_assign(&mut self, o: &PeerCounts) {
        self.reports += o.reports;
        self.sent += o.sent;
        self.received += o.received;
        self.duplicated += o.duplicated;
        self.out_of_order += o.out_of_order;
        self.jitter_us = self.jitter_us.max(o.jitter_us);
        self.spans += o.spans;
        self.receiver_per_s += o.receiver_per_s;
        self.stream_reports += o.stream_reports;
        self.stream_bytes += o.stream_bytes;
        self.stream_unreported += o.stream_unreported;
        self.stream_acked_sessions += o.stream_acked_sessions;
        self.stream_acked += o.stream_acked;
        self.stream_acked_before += o.stream_acked_before;
        self.stream_failed += o.stream_failed;
    }
}
