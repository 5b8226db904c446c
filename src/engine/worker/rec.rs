//! A worker's recorder ([`WorkerRec`]): what its connections measured, sorted into the warm-up
//! and the current second by when it happened, each second shipped to the collector as it
//! completes, and the span of the measured work and the target's last answer kept beside.

use super::{Active, Msg, WorkerSpec};
use crate::driver::{ReadOutcome, Sent, Waited};
use crate::engine::collector::Spares;
use crate::engine::timeline::Timeline;
use crate::record::{Interval, OpError, Phase, Recorder};
use crate::sys::usage::{thread_cpu, CpuTimes};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The worker's recorder: warm-up and the current second, shipped as they complete.
#[derive(Debug)]
pub struct WorkerRec {
    worker: usize,
    tx: Sender<Msg>,
    warm: Recorder,
    cur: Recorder,
    start: Option<Instant>,
    /// When the measured window ends (a run by time): bytes read later are not in the rates.
    end: Option<Instant>,
    second: u64,
    /// When the current second ends (the worker's tick sleeps until it), once started.
    pub(super) next_boundary: Option<Instant>,
    last_second: Option<u64>,
    cpu_at_start: Option<CpuTimes>,
    /// Open loop: service time (from the actual send) differs from latency and is recorded too.
    open_loop: bool,
    /// Where the next second's recorder comes from.
    spares: Arc<Spares>,
    /// The span of the measured work so far.
    active: Option<Active>,
    /// How long the measured window lasts (a run by time): what completes after it closes
    /// is counted apart, as drained rather than achieved.
    window: Option<Duration>,
    /// When the measured window closes, once its start is known.
    window_end: Option<Instant>,
    /// `--warmup auto`: the timeline whose tally the warm-up's replies go to.
    auto: Option<Arc<Timeline>>,
    /// When the target last answered (a reply, ok or not, or bytes), and the operations that
    /// failed since: what [`crate::engine::vitals`] judges a target gone by.
    last_answer: Instant,
    failed_since_answer: u64,
}

impl WorkerRec {
    pub(super) fn new(spec: &WorkerSpec, open_loop: bool) -> WorkerRec {
        let (worker, tx, timeline) = (spec.worker, spec.tx.clone(), &spec.timeline);
        let mut rec = WorkerRec {
            worker,
            tx,
            warm: Recorder::new(),
            cur: Recorder::new(),
            start: None,
            end: None,
            second: 0,
            next_boundary: None,
            last_second: timeline.last_second(),
            cpu_at_start: None,
            open_loop,
            spares: spec.spares.clone(),
            active: None,
            window: timeline.duration,
            window_end: None,
            auto: timeline.auto.is_some().then(|| timeline.clone()),
            last_answer: Instant::now(),
            failed_since_answer: 0,
        };
        if let Some(start) = timeline.measure_start() {
            rec.start = Some(start);
            rec.next_boundary = Some(start + Duration::from_secs(1));
            rec.window_end = rec.window.map(|d| start + d);
        }
        rec
    }

    /// Measuring has started at `start`: ship the warm-up and note the CPU used so far.
    pub fn mark_start(&mut self, start: Instant) {
        if self.cpu_at_start.is_some() {
            return;
        }
        self.cpu_at_start = Some(thread_cpu());
        self.start = Some(start);
        self.next_boundary = Some(start + Duration::from_secs(1));
        self.window_end = self.window.map(|d| start + d);
        if !self.warm.is_empty() {
            let warm = std::mem::replace(&mut self.warm, self.spares.take());
            self.ship(0, Phase::Warmup, warm);
        }
    }

    /// The measured window ends at `end` (the deadline), if the run is bounded by time.
    pub fn mark_end(&mut self, end: Option<Instant>) {
        self.end = end;
    }

    fn ship(&mut self, second: u64, phase: Phase, rec: Recorder) {
        if rec.is_empty() && phase == Phase::Warmup {
            return;
        }
        // The collector outlives every worker; a failed send means it is gone and the run is over.
        let _ = self.tx.send(Msg::Interval {
            worker: self.worker,
            interval: Box::new(Interval { second, phase, rec }),
        });
    }

    /// Ships the current second if `now` has passed its end. Inline, the check only: every
    /// event recorded asks it (a call per event was ~150 instructions per reply; callgrind).
    #[inline]
    pub fn rotate(&mut self, now: Instant) {
        if self.next_boundary.is_some_and(|b| now >= b) {
            self.rotate_past(now);
        }
    }

    /// [`WorkerRec::rotate`] once `now` is past the current second's end.
    #[inline(never)]
    fn rotate_past(&mut self, now: Instant) {
        let (Some(start), Some(boundary)) = (self.start, self.next_boundary) else {
            return;
        };
        if now < boundary {
            return;
        }
        let mut second = (now - start).as_secs();
        if let Some(last) = self.last_second {
            second = second.min(last);
        }
        if second == self.second {
            // Past the last second: keep folding stragglers into it.
            self.next_boundary = Some(now + Duration::from_secs(3600));
            return;
        }
        let done = std::mem::replace(&mut self.cur, self.spares.take());
        let shipped = self.second;
        self.second = second;
        self.next_boundary = Some(start + Duration::from_secs(second + 1));
        self.ship(shipped, Phase::Measure, done);
    }

    /// Work of the measured part (an event at `at`) spanned `from..to`: widens the run's span.
    #[inline]
    fn span(&mut self, at: Instant, from: Instant, to: Instant) {
        if self.start.is_some_and(|start| at >= start) {
            // Active::merge, in place: asked four times per reply.
            match &mut self.active {
                Some(a) => {
                    if from < a.first {
                        a.first = from;
                    }
                    if to > a.last {
                        a.last = to;
                    }
                }
                None => {
                    self.active = Some(Active {
                        first: from,
                        last: to,
                    })
                }
            }
        }
    }

    /// The target answered at `now`.
    #[inline]
    fn answered(&mut self, now: Instant) {
        self.last_answer = now;
        self.failed_since_answer = 0;
    }

    /// Whether, at `now`, nothing has come back for `grace` while operations kept failing.
    pub fn silent_for(&self, grace: Duration, now: Instant) -> bool {
        self.failed_since_answer > 0 && now.saturating_duration_since(self.last_answer) >= grace
    }

    /// Whether an operation completing at `now` does so after the measured window closed.
    #[inline]
    fn after_window(&self, now: Instant) -> bool {
        self.window_end.is_some_and(|end| now > end)
    }

    /// The recorder for an event at `at` (measured if at or after the start).
    fn slot(&mut self, at: Instant, now: Instant) -> &mut Recorder {
        match self.start {
            Some(start) if at >= start => {
                self.rotate(now);
                &mut self.cur
            }
            _ => &mut self.warm,
        }
    }

    /// A reply to a request sent at `sent` arrived at `now`, after `waited`. Latency counts from
    /// the intended send time; in the open loop the service time from the actual send is
    /// recorded beside it. Returns the recorder it went to.
    #[inline]
    pub fn ok(&mut self, sent: Sent, now: Instant, waited: Waited) -> &mut Recorder {
        let open = self.open_loop;
        self.answered(now);
        self.span(sent.intended, sent.at, now);
        let after = self.after_window(now);
        if let Some((_, tally)) = self.auto.as_ref().and_then(|t| t.auto.as_ref()) {
            if self.start.is_none_or(|s| sent.intended < s) {
                tally.add(waited.latency);
            }
        }
        let slot = self.slot(sent.intended, now);
        slot.ok(waited.latency);
        slot.ok_after_window += after as u64;
        if open {
            crate::record::record_duration(&mut slot.service, waited.service);
        }
        slot
    }

    /// A reply completed at `now`, after `waited` (`d.sent.waited(now)`): ok if accepted, else
    /// an error of its status; first-byte time and status code recorded where the protocol has
    /// them. A request that failed on its own (an HTTP/2 stream reset) is an error of its kind
    /// and nothing else.
    #[inline]
    pub fn done(&mut self, d: &crate::driver::Done, now: Instant, waited: Waited) {
        if d.kind > 0 {
            self.kind_done(d, now, waited);
        }
        if let Some(f) = &d.failure {
            let err = OpError::new(f.kind, f.message());
            return self.error(d.sent.intended, now, err, 1);
        }
        let slot = if d.accepted {
            self.ok(d.sent, now, waited)
        } else {
            // A refusal is an answer: the target is there.
            self.answered(now);
            let code = d.status.unwrap_or(0);
            let err = OpError::new(
                crate::record::ErrorKind::Status,
                format!("HTTP {code} {}", crate::record::reason(code)),
            );
            self.error(d.sent.intended, now, err, 1);
            self.slot(d.sent.intended, now)
        };
        if let Some(fb) = d.first_byte {
            // A reply read whole in one read began when it ended (the read's time).
            let ttfb = if fb == now {
                waited.latency
            } else {
                fb.saturating_duration_since(d.sent.intended)
            };
            crate::record::record_duration(&mut slot.ttfb, ttfb);
        }
        if let Some(code) = d.status {
            slot.status.add(code);
        }
    }

    /// A reply of a mix's kind: recorded with its kind too (the totals are recorded apart).
    fn kind_done(&mut self, d: &crate::driver::Done, now: Instant, waited: Waited) {
        let slot = self.slot(d.sent.intended, now);
        let err = match (&d.failure, d.accepted) {
            (None, true) => return slot.kinds.ok(d.kind, waited.latency),
            (Some(f), _) => OpError::new(f.kind, f.message()),
            (None, false) => {
                let code = d.status.unwrap_or(0);
                let reason = crate::record::reason(code);
                OpError::new(
                    crate::record::ErrorKind::Status,
                    format!("HTTP {code} {reason}"),
                )
            }
        };
        slot.kinds.error(d.kind, err);
    }

    /// A reply of kind `kind` (a mix's, from 1) came after its `--timeout`: a timeout of its
    /// kind too.
    pub fn kind_error(&mut self, kind: u8, sent: Instant, now: Instant, err: OpError) {
        if kind > 0 {
            self.slot(sent, now).kinds.error(kind, err);
        }
    }

    /// A request went out (possibly behind its intended time); in the open loop its lag goes
    /// into the send-lag histogram too.
    #[inline]
    pub fn issued(&mut self, sent: Sent) {
        let open = self.open_loop;
        // A closed loop's request goes out when meant to: no subtraction for its zero lag.
        let lag = if sent.at == sent.intended {
            Duration::ZERO
        } else {
            sent.at.saturating_duration_since(sent.intended)
        };
        self.span(sent.intended, sent.at, sent.at);
        let slot = self.slot(sent.intended, sent.at);
        slot.issued(lag);
        if open {
            crate::record::record_duration(&mut slot.send_lag, lag);
        }
    }

    /// The pacer's timer woke this worker `lag` late for a request due while a connection had
    /// room: the generator's own lateness, counted with that request's phase.
    pub fn woke(&mut self, lag: Duration) {
        let now = Instant::now();
        let due = now.checked_sub(lag).unwrap_or(now);
        self.slot(due, now).woke(lag);
    }

    /// Counts what a read brought besides completed replies: bytes and datagram anomalies.
    /// The bytes are counted with the request sent at `at` (warm-up or measured, as its
    /// operation is).
    #[inline]
    pub fn read_at(&mut self, at: Instant, now: Instant, r: &ReadOutcome) {
        if r.bytes > 0 {
            self.answered(now);
        }
        self.span(at, now, now);
        let end = self.end;
        let slot = self.slot(at, now);
        slot.received_bytes += r.bytes as u64;
        slot.wire_received_bytes += r.wire.max(r.bytes) as u64;
        if end.is_some_and(|e| now > e) {
            slot.received_after_bytes += r.bytes as u64;
        }
        slot.late += r.late;
        slot.duplicates += r.duplicates;
        slot.reordered += r.reordered;
    }

    /// A think pause ran from `from` to `to` (counted with the operations of its start).
    pub fn thought(&mut self, from: Instant, to: Instant) {
        let slot = self.slot(from, to);
        slot.thinks += 1;
        slot.think_ns += to.saturating_duration_since(from).as_nanos() as u64;
    }

    /// `n` operations failed with `err`, the oldest sent at `sent`.
    pub fn error(&mut self, sent: Instant, now: Instant, err: OpError, n: usize) {
        self.failed_since_answer += n as u64;
        self.span(sent, sent.min(now), now);
        let after = self.after_window(now);
        let slot = self.slot(sent, now);
        if after {
            slot.failed_after_window += n as u64;
        }
        let kind = err.kind;
        slot.error(err);
        for _ in 1..n {
            slot.error(OpError::new(kind, String::new()));
        }
    }

    /// Payload bytes written at `now`.
    #[inline]
    pub fn sent(&mut self, now: Instant, bytes: usize) {
        self.sent_wire(now, bytes, bytes)
    }

    /// Bytes written at `now`: `payload` of them (HTTP: bodies) in `wire` (heads included).
    #[inline]
    pub fn sent_wire(&mut self, now: Instant, payload: usize, wire: usize) {
        self.span(now, now, now);
        let after = self.end.is_some_and(|e| now > e);
        let slot = self.slot(now, now);
        if after {
            slot.sent_after_bytes += payload as u64;
        }
        slot.sent_bytes += payload as u64;
        slot.wire_sent_bytes += wire.max(payload) as u64;
    }

    /// The server's report of one session's datagrams.
    pub fn peer(&mut self, now: Instant, report: &crate::record::PeerReport) {
        self.slot(now, now).peer.add(report);
    }

    /// A session ended with packets of this shape (its socket's MSS, or its datagram size).
    pub fn segment(&mut self, now: Instant, segment: crate::record::Segment) {
        let slot = self.slot(now, now);
        slot.segment = crate::record::Segment::merge(slot.segment, Some(segment));
    }

    /// A stream connection ended: what its receiver counted, if it said.
    pub fn receiver(&mut self, now: Instant, bytes: Option<u64>) {
        self.slot(now, now).peer.stream(bytes);
    }

    /// A stream connection's payload bytes its receiver had acknowledged (TCP_INFO): at the
    /// start of the measured window (`at_start`, a session opened in a warm-up), or at its end.
    pub fn acked(&mut self, now: Instant, bytes: u64, at_start: bool) {
        let peer = &mut self.slot(now, now).peer;
        if at_start {
            peer.stream_acked_before += bytes;
        } else {
            peer.stream_acked_sessions += 1;
            peer.stream_acked += bytes;
        }
    }

    /// A stream connection failed (its error is recorded apart): no receiver's count for it.
    pub fn receiver_failed(&mut self, now: Instant) {
        self.slot(now, now).peer.stream_failed();
    }

    /// Payload bytes read at `now` (bulk download).
    #[inline]
    pub fn received(&mut self, now: Instant, bytes: usize) {
        self.answered(now);
        self.span(now, now, now);
        let slot = self.slot(now, now);
        slot.received_bytes += bytes as u64;
        slot.wire_received_bytes += bytes as u64;
    }

    /// The server ended a connection in good order at `now`, leaving `resent` requests to go
    /// out again on a new one.
    pub fn server_closed(&mut self, now: Instant, resent: usize) {
        let slot = self.slot(now, now);
        slot.server_closes += 1;
        slot.resent += resent as u64;
    }

    /// A connection started at `began` took `took` to establish.
    pub fn connected(&mut self, began: Instant, now: Instant, took: Duration) {
        self.slot(began, now).connected(took);
    }

    /// Ships whatever is left and reports the worker's CPU time.
    pub(super) fn finish(&mut self) {
        let cpu = self
            .cpu_at_start
            .map_or(CpuTimes::default(), |c| thread_cpu() - c);
        let warm = std::mem::take(&mut self.warm);
        self.ship(0, Phase::Warmup, warm);
        let cur = std::mem::take(&mut self.cur);
        let second = self.second;
        self.ship(second, Phase::Measure, cur);
        let _ = self.tx.send(Msg::Done {
            worker: self.worker,
            cpu,
            active: self.active,
        });
    }
}
