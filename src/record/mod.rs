//! Per-worker recording: histograms, error counters and byte counts, merged exactly with `+=`.
//!
//! Each worker owns one [`Recorder`] and never shares it on the hot path. Once a second it ships
//! what it recorded as an [`Interval`] to the collector, which adds intervals up into the run's
//! total and its per-second series. Histograms are HdrHistograms (Gil Tene), which add exactly,
//! so percentiles of the merged total are right; percentiles are never averaged. Nothing is kept
//! per request, so memory does not grow with the length of a run.

pub mod compact;
pub mod damage;
pub mod errors;
pub mod exchange;
pub mod kinds;
pub mod run;
pub mod series;
pub mod status;

pub use damage::HistogramError;
pub use errors::{ErrorCounts, ErrorKind, OpError};
pub use run::{Host, RunRecord, Settled};
pub use series::{SeriesPoint, Snapshot};
pub use status::{reason, StatusCounts};

use hdrhistogram::Histogram;
use std::time::Duration;

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

/// Histogram values are nanoseconds.
pub const HIST_LOWEST_NS: u64 = 1;
/// The largest value a histogram tracks exactly: one hour, in nanoseconds.
pub const HIST_HIGHEST_NS: u64 = 3_600_000_000_000;
/// Relative precision of every histogram: three significant digits (0.1 %).
pub const HIST_SIGFIG: u8 = 3;
/// The highest value a histogram of wirebench's bounds can claim to track: a histogram that
/// grew to hold an hour covers the whole top bucket, 2^42 - 1 ns.
pub const HIST_TOP_NS: u64 = (1 << 42) - 1;

/// Decodes a histogram as wirebench writes it: an uncompressed HdrHistogram V2 serialization
/// within wirebench's bounds. Header and counts are checked before hdrhistogram's decoder sees
/// them: a crafted document could otherwise make it allocate what its header claims (up to
/// 4 GiB, or a histogram of any range) or negate i64::MIN in a run of zeros (found by fuzzing).
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, HistogramError> {
    let (_, payload) = check_v2(bytes)?;
    let mut h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..40 + payload.len()])
        .map_err(HistogramError::Decode)?;
    // Grows as wirebench's own do, so that a wider histogram can be added into it.
    h.auto(true);
    Ok(h)
}

/// Checks an uncompressed V2 serialization as [`decode_histogram`] does, without building the
/// histogram; returns its significant digits and lowest value, and its counts' bytes.
pub fn check_v2(bytes: &[u8]) -> Result<((u64, u64), &[u8]), HistogramError> {
    let (layout, counts) = v2_header(bytes)?;
    check_counts(counts)?;
    Ok((layout, counts))
}

/// [`check_v2`]'s checks of the header only: the counts' bytes are for the caller to check
/// ([`Counts`] does as it reads them).
pub(crate) fn v2_header(bytes: &[u8]) -> Result<((u64, u64), &[u8]), HistogramError> {
    const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
    const HEADER: usize = 40;
    let be = |at: usize, n: usize| -> u64 {
        bytes
            .get(at..at + n)
            .map_or(0, |b| b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    };
    if bytes.len() < HEADER {
        return Err(HistogramError::Short(bytes.len()));
    }
    if be(0, 4) != u64::from(V2_COOKIE) {
        return Err(HistogramError::NotV2);
    }
    let payload = be(4, 4) as usize;
    if payload > bytes.len() - HEADER {
        return Err(HistogramError::Truncated {
            claimed: payload,
            holds: bytes.len() - HEADER,
        });
    }
    let (digits, low, high) = (be(12, 4), be(16, 8), be(24, 8));
    if digits > u64::from(HIST_SIGFIG) || low < HIST_LOWEST_NS || high > HIST_TOP_NS {
        return Err(HistogramError::Bounds { low, high, digits });
    }
    Ok(((digits, low), &bytes[HEADER..HEADER + payload]))
}

/// The counts of a V2 payload: LEB128 varints (at most 9 bytes, the 9th whole), zig-zag coded;
/// a negative one is a run of zero counts, which no histogram of wirebench's bounds has more
/// than 2^32 of. The counts add up to at most [`damage::MAX_SAMPLES`].
fn check_counts(payload: &[u8]) -> Result<(), HistogramError> {
    Counts::new(payload).try_for_each(|c| c.map(|_| ()))
}

/// The counts of a V2 payload one by one, each checked as [`check_counts`] says: a merge adds
/// them as it checks them, in one pass.
pub(crate) struct Counts<'a> {
    rest: &'a [u8],
    samples: u64,
}

impl<'a> Counts<'a> {
    /// The counts of `payload`.
    pub(crate) fn new(payload: &'a [u8]) -> Self {
        Counts {
            rest: payload,
            samples: 0,
        }
    }

    /// The next varint and the bytes it took; most counts of a second take one byte.
    fn varint(&self) -> Result<(u64, usize), HistogramError> {
        let bytes = self.rest;
        if bytes[0] < 0x80 {
            return Ok((u64::from(bytes[0]), 1));
        }
        let mut value = 0u64;
        for (i, &b) in bytes.iter().take(9).enumerate() {
            if i == 8 {
                return Ok((value | u64::from(b) << 56, 9));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok((value, i + 1));
            }
        }
        Err(HistogramError::CutNumber)
    }

    /// The next count, checked.
    fn step(&mut self) -> Result<i64, HistogramError> {
        let (value, used) = self.varint()?;
        self.rest = &self.rest[used..];
        let decoded = ((value >> 1) as i64) ^ -((value & 1) as i64);
        if decoded < -(1i64 << 32) {
            return Err(HistogramError::LongRun(decoded.unsigned_abs()));
        }
        self.samples = self.samples.saturating_add(decoded.max(0) as u64);
        if self.samples > damage::MAX_SAMPLES {
            return Err(HistogramError::TooMany);
        }
        Ok(decoded)
    }
}

impl Iterator for Counts<'_> {
    /// A count (negative: a run of that many empty buckets), or what is wrong (the last item).
    type Item = Result<i64, HistogramError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let step = self.step();
        if step.is_err() {
            self.rest = &[];
        }
        Some(step)
    }
}

/// A latency histogram of wirebench's bounds (1 ns .. 1 h, 3 significant digits) that starts
/// small and grows to the largest value recorded or added: the counts of the whole hour are
/// 270 KB, and a recorder has five histograms (a run makes ten recorders or more), so a run
/// that made them all whole zeroed ~13 MB (~3,000 page faults, ~7 ms of a trivial run's
/// 14 ms of CPU) for histograms mostly left empty (a closed loop records no send lag or
/// service time). The layout of counts by value is the same at any size.
#[allow(
    clippy::expect_used,
    reason = "the bounds are constants that hdrhistogram accepts (checked by every test)"
)]
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(HIST_LOWEST_NS, 2 * HIST_LOWEST_NS, HIST_SIGFIG)
        .expect("constant histogram bounds are valid");
    h.auto(true);
    h
}

/// Records a duration in nanoseconds; values past one hour count as one hour.
#[inline]
pub fn record_duration(hist: &mut Histogram<u64>, d: Duration) {
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let ns = ns.clamp(HIST_LOWEST_NS, HIST_HIGHEST_NS);
    // Grows the histogram when `ns` is past its counts (`saturating_record` would clamp
    // instead); it fails only where a usize cannot count the buckets, never on 64 bits.
    if hist.record(ns).is_err() {
        hist.saturating_record(ns);
    }
}

/// Everything one worker measured over some span of time.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Operations that completed correctly.
    pub ok: u64,
    /// Operations that failed, by kind.
    pub errors: ErrorCounts,
    /// Payload bytes written to the target (framing preambles excluded).
    pub sent_bytes: u64,
    /// Payload bytes read from the target.
    pub received_bytes: u64,
    /// Bytes written, protocol heads included (HTTP: whole requests); payload elsewhere.
    pub wire_sent_bytes: u64,
    /// Bytes read, protocol heads included (HTTP: whole responses); payload elsewhere.
    pub wire_received_bytes: u64,
    /// Of `received_bytes`, those read after the measured window (the rest of replies that
    /// finished in their --timeout after the deadline, such as a long HTTP body): counted, but
    /// not in the rates, which are what arrived within the window.
    pub received_after_bytes: u64,
    /// Of `sent_bytes`, those written after the measured window (the rest of a batch taken
    /// before its end): counted, but not in the sender's rate, which is the window's.
    pub sent_after_bytes: u64,
    /// Whole messages moved in bulk modes (stream, source), where there is no per-request latency.
    pub messages: u64,
    /// Latency of each ok operation, from its intended start (equal to the actual send in a closed loop).
    pub latency: Histogram<u64>,
    /// Service time from the actual send; recorded only when a load model schedules sends
    /// (open loop), where it differs from `latency`.
    pub service: Histogram<u64>,
    /// Time to establish each new connection.
    pub connect: Histogram<u64>,
    /// Time to the first byte of each reply, from the intended send (HTTP).
    pub ttfb: Histogram<u64>,
    /// Replies by status code (HTTP).
    pub status: StatusCounts,
    /// Requests sent (attempts, whatever became of them).
    pub issued: u64,
    /// Requests sent more than [`BEHIND_SLACK`] after their intended time (open loop).
    pub behind: u64,
    /// The largest lag between a request's intended and actual send time, ns (open loop).
    pub max_lag_ns: u64,
    /// Lag of each send behind its intended time (open loop): how well the generator kept to
    /// its timetable, apart from what the target did.
    pub send_lag: Histogram<u64>,
    /// How late the pacer's timer woke the worker for a request due while a connection had
    /// room (open loop), one sample per wake: the generator's own lateness (its CPU, the
    /// host's scheduler), apart from requests that waited for a connection the target held.
    pub wake_lag: Histogram<u64>,
    /// Replies that came after their request had timed out (datagrams).
    pub late: u64,
    /// Replies to requests already answered (datagrams).
    pub duplicates: u64,
    /// Replies that overtook the reply to an earlier request (datagrams).
    pub reordered: u64,
    /// What the receiving server counted of our datagrams, added over sessions.
    pub peer: PeerCounts,
    /// The largest packet any session reported at its end, and the bytes TCP peers
    /// acknowledged, added (for `--link`).
    pub segment: Option<Segment>,
    /// Connections the server ended in good order mid-run (an HTTP/2 GOAWAY with NO_ERROR, an
    /// HTTP/1.1 `Connection: close`), each replaced by a new one.
    pub server_closes: u64,
    /// Requests those servers had not processed, sent again on the new connection (not
    /// counted as issued twice).
    pub resent: u64,
    /// Think pauses taken between requests (closed loop with `--think`).
    pub thinks: u64,
    /// Their summed length as waited, ns: the achieved think time is `think_ns / thinks`.
    pub think_ns: u64,
    /// Ok replies that arrived after the measured window of a run by time had closed (drained
    /// from queues): counted in `ok`, but not achieved within the window.
    pub ok_after_window: u64,
    /// Operations that failed after the window had closed (counted in `errors`).
    pub failed_after_window: u64,
    /// A mix's kinds, each recorded apart as well (empty without a mix).
    pub kinds: kinds::Kinds,
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

/// How late a send may be before it counts as behind schedule: timer and scheduling jitter
/// of a millisecond is normal on a busy host and says nothing about the target.
pub const BEHIND_SLACK: Duration = Duration::from_millis(1);

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder {
            ok: 0,
            errors: ErrorCounts::default(),
            sent_bytes: 0,
            received_bytes: 0,
            wire_sent_bytes: 0,
            wire_received_bytes: 0,
            received_after_bytes: 0,
            sent_after_bytes: 0,
            messages: 0,
            latency: new_histogram(),
            service: new_histogram(),
            connect: new_histogram(),
            ttfb: new_histogram(),
            status: StatusCounts::default(),
            issued: 0,
            behind: 0,
            max_lag_ns: 0,
            send_lag: new_histogram(),
            wake_lag: new_histogram(),
            late: 0,
            duplicates: 0,
            reordered: 0,
            peer: PeerCounts::default(),
            segment: None,
            server_closes: 0,
            resent: 0,
            thinks: 0,
            think_ns: 0,
            ok_after_window: 0,
            failed_after_window: 0,
            kinds: kinds::Kinds::default(),
        }
    }

    /// Empties the recorder for reuse, keeping its histograms' memory: a fresh recorder costs
    /// its histograms' allocation and first-touch page faults (most of a millisecond on a VM),
    /// which a worker must not pay at a second's boundary while requests are due.
    pub fn clear(&mut self) {
        let Recorder {
            ok,
            errors,
            sent_bytes,
            received_bytes,
            wire_sent_bytes,
            wire_received_bytes,
            received_after_bytes,
            sent_after_bytes,
            messages,
            latency,
            service,
            connect,
            ttfb,
            status,
            issued,
            behind,
            max_lag_ns,
            send_lag,
            wake_lag,
            late,
            duplicates,
            reordered,
            peer,
            segment,
            server_closes,
            resent,
            thinks,
            think_ns,
            ok_after_window,
            failed_after_window,
            kinds,
        } = self;
        kinds.clear();
        for n in [
            ok,
            sent_bytes,
            received_bytes,
            wire_sent_bytes,
            wire_received_bytes,
            received_after_bytes,
            sent_after_bytes,
            messages,
            issued,
            behind,
            max_lag_ns,
            late,
            duplicates,
            reordered,
            server_closes,
            resent,
            thinks,
            think_ns,
            ok_after_window,
            failed_after_window,
        ] {
            *n = 0;
        }
        // A histogram's counts reach 270 KB once it has grown to an hour: zeroing them can cost
        // more than a second's requests at a low rate, and one that recorded nothing this
        // interval is zero already.
        for h in [latency, service, connect, ttfb, send_lag, wake_lag] {
            if !h.is_empty() {
                h.reset();
            }
        }
        *errors = ErrorCounts::default();
        *status = StatusCounts::default();
        *peer = PeerCounts::default();
        *segment = None;
    }

    /// Counts one successful operation and its latency.
    #[inline]
    pub fn ok(&mut self, latency: Duration) {
        self.ok += 1;
        record_duration(&mut self.latency, latency);
    }

    /// Counts one failed operation.
    pub fn error(&mut self, err: OpError) {
        self.errors.add(err);
    }

    /// Counts one request sent `lag` after its intended time.
    #[inline]
    pub fn issued(&mut self, lag: Duration) {
        self.issued += 1;
        if lag > BEHIND_SLACK {
            self.behind += 1;
        }
        self.max_lag_ns = self.max_lag_ns.max(lag.as_nanos() as u64);
    }

    /// Counts one wake of the pacer's timer, `lag` after the request it slept for was due.
    #[inline]
    pub fn woke(&mut self, lag: Duration) {
        record_duration(&mut self.wake_lag, lag);
    }

    /// Records the time a connection took to establish.
    #[inline]
    pub fn connected(&mut self, took: Duration) {
        record_duration(&mut self.connect, took);
    }

    /// True when nothing at all was recorded.
    pub fn is_empty(&self) -> bool {
        self.ok == 0
            && self.errors.total() == 0
            && self.sent_bytes == 0
            && self.received_bytes == 0
            && self.connect.is_empty()
            && self.issued == 0
            && self.peer.reports == 0
            && self.peer.stream_reports + self.peer.stream_unreported == 0
    }
}

impl std::ops::AddAssign<&Recorder> for Recorder {
    #[allow(
        clippy::expect_used,
        reason = "every recorder's histograms come from new_histogram, with the same bounds"
    )]
    fn add_assign(&mut self, other: &Recorder) {
        self.ok += other.ok;
        self.errors += &other.errors;
        self.sent_bytes += other.sent_bytes;
        self.received_bytes += other.received_bytes;
        self.wire_sent_bytes += other.wire_sent_bytes;
        self.wire_received_bytes += other.wire_received_bytes;
        self.received_after_bytes += other.received_after_bytes;
        self.sent_after_bytes += other.sent_after_bytes;
        self.messages += other.messages;
        self.issued += other.issued;
        self.behind += other.behind;
        self.max_lag_ns = self.max_lag_ns.max(other.max_lag_ns);
        self.late += other.late;
        self.duplicates += other.duplicates;
        self.reordered += other.reordered;
        self.server_closes += other.server_closes;
        self.resent += other.resent;
        self.thinks += other.thinks;
        self.think_ns += other.think_ns;
        self.ok_after_window += other.ok_after_window;
        self.failed_after_window += other.failed_after_window;
        self.peer += &other.peer;
        self.segment = Segment::merge(self.segment, other.segment);
        // Same bounds everywhere, so adding cannot fail.
        self.latency
            .add(&other.latency)
            .expect("same histogram bounds");
        self.service
            .add(&other.service)
            .expect("same histogram bounds");
        self.connect
            .add(&other.connect)
            .expect("same histogram bounds");
        self.ttfb.add(&other.ttfb).expect("same histogram bounds");
        self.send_lag
            .add(&other.send_lag)
            .expect("same histogram bounds");
        self.wake_lag
            .add(&other.wake_lag)
            .expect("same histogram bounds");
        self.status += &other.status;
        self.kinds += &other.kinds;
    }
}

/// Which part of a run an interval belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Measured but kept out of the statistics.
    Warmup,
    /// Counted in the statistics.
    Measure,
}

/// What one worker recorded during one second of the run, shipped to the collector.
#[derive(Debug)]
pub struct Interval {
    /// Whole seconds since the start of the run (warm-up included) when the interval began.
    pub second: u64,
    /// Warm-up or measured.
    pub phase: Phase,
    /// The measurements.
    pub rec: Recorder,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Merging per-worker histograms equals one histogram of all values.
        #[test]
        fn merged_workers_equal_one_histogram(
            workers in proptest::collection::vec(
                proptest::collection::vec(1u64..HIST_HIGHEST_NS, 0..200), 1..8)
        ) {
            let mut merged = Recorder::new();
            let mut single = new_histogram();
            for values in &workers {
                let mut w = Recorder::new();
                for &v in values {
                    w.ok(Duration::from_nanos(v));
                    single.record(v).unwrap();
                }
                merged += &w;
            }
            prop_assert_eq!(merged.ok, single.len());
            prop_assert_eq!(&merged.latency, &single);
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(merged.latency.value_at_quantile(q), single.value_at_quantile(q));
            }
            prop_assert_eq!(merged.latency.mean(), single.mean());
        }
    }

    #[test]
    fn a_cleared_recorder_is_empty_and_adds_nothing() {
        let mut r = Recorder::new();
        r.ok(Duration::from_micros(7));
        r.issued(Duration::from_millis(3));
        r.send_lag.record(3_000_000).unwrap();
        r.connected(Duration::from_micros(40));
        r.error(OpError::new(ErrorKind::Timeout, "late"));
        r.status.add(200);
        r.sent_bytes = 64;
        r.clear();
        assert!(r.is_empty());
        assert_eq!((r.behind, r.max_lag_ns, r.errors.total()), (0, 0, 0));
        let mut total = Recorder::new();
        total.ok(Duration::from_micros(9));
        let before = total.clone();
        total += &r;
        assert_eq!(total.ok, before.ok);
        assert_eq!(total.latency, before.latency);
        assert!(total.send_lag.is_empty() && total.status.iter().next().is_none());
    }

    /// Histograms start small and grow: one that grew to an hour still round-trips through a
    /// document (its serialized top is the top bucket's end, past the hour), a small one adds
    /// into a grown one and a grown one into a small one, and empty ones stay small.
    #[test]
    fn growing_histograms_round_trip_and_merge_either_way() {
        let empty = new_histogram();
        let mut small = new_histogram();
        record_duration(&mut small, Duration::from_micros(80));
        let mut hour = new_histogram();
        record_duration(&mut hour, Duration::from_secs(7200)); // counted as one hour
        assert!(hour.max() >= HIST_HIGHEST_NS / 1001 * 1000);
        let back = compact::decode(&compact::encode(&hour)).expect("a grown histogram decodes");
        assert_eq!(back, hour);
        let mut a = small.clone();
        a.add(&hour)
            .expect("a small histogram grows to take an hour");
        let mut b = back;
        b.add(&small)
            .expect("a decoded histogram takes a small one");
        assert_eq!((a.len(), a.max(), a.min()), (b.len(), b.max(), b.min()));
        assert_eq!(a.value_at_quantile(0.5), b.value_at_quantile(0.5));
        // The counts an empty histogram holds: a few KB, not the hour's 270 KB.
        assert!(
            empty.distinct_values() < 4096,
            "{}",
            empty.distinct_values()
        );
    }

    #[test]
    fn send_lag_merges_exactly() {
        let mut merged = Recorder::new();
        let mut single = new_histogram();
        for w in 0..3u64 {
            let mut r = Recorder::new();
            for i in 0..500u64 {
                let lag = 1_000 + i * 997 + w * 13;
                r.issued(Duration::from_nanos(lag));
                record_duration(&mut r.send_lag, Duration::from_nanos(lag));
                single.record(lag).unwrap();
            }
            merged += &r;
        }
        assert_eq!(merged.send_lag, single);
        assert_eq!(merged.issued, merged.send_lag.len());
        assert_eq!(merged.max_lag_ns, 1_000 + 499 * 997 + 2 * 13);
    }

    #[test]
    fn long_values_saturate_at_one_hour() {
        let mut r = Recorder::new();
        r.ok(Duration::from_secs(7200));
        assert_eq!(r.latency.len(), 1);
        assert!(r.latency.max() >= HIST_HIGHEST_NS / 1001 * 1000);
    }
}
