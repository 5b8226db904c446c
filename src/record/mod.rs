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
pub mod histogram;
pub mod kinds;
pub mod peer;
pub mod run;
pub mod series;
pub mod status;

pub use damage::HistogramError;
pub use errors::{ErrorCounts, ErrorKind, OpError};
pub use histogram::{
    check_v2, decode_histogram, new_histogram, record_duration, HIST_HIGHEST_NS, HIST_LOWEST_NS,
    HIST_SIGFIG, HIST_TOP_NS,
};
pub use peer::{PeerCounts, PeerReport, Segment};
pub use run::{Host, RunRecord, Settled};
pub use series::{SeriesPoint, Snapshot};
pub use status::{reason, StatusCounts};

use hdrhistogram::Histogram;
use std::time::Duration;

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
