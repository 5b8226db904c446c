//! What the engine keeps of each measured second (the run's per-second series), and the
//! snapshot a live display is shown while the run goes on.

use super::Recorder;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One second of the measured part.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Seconds since the measured part began.
    pub second: u64,
    /// How long this point lasted, seconds: 1, or less for the last second of a run that ended
    /// between whole seconds. Its rates are its counts over this length.
    pub duration_s: f64,
    /// Ok operations in this second, within the measured window: replies that came after it
    /// closed (drained from queues once sending stopped) are in `after_window` instead.
    pub ok: u64,
    /// Ok replies that arrived after the measured window closed, folded into its last second:
    /// counted, not in the rates (absent, 0, before issue 38).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub after_window: u64,
    /// Failed operations in this second.
    pub errors: u64,
    /// Payload bytes sent in this second.
    pub sent_bytes: u64,
    /// Payload bytes received in this second (within the measured window).
    pub received_bytes: u64,
    /// Bytes written in this second, protocol heads included (HTTP: whole requests); equal to
    /// `sent_bytes` where there are no heads. Absent from results written before it was kept.
    #[serde(default)]
    pub wire_sent_bytes: u64,
    /// Bytes read in this second, protocol heads included (HTTP: whole responses).
    #[serde(default)]
    pub wire_received_bytes: u64,
    /// Requests sent in this second.
    pub sent: u64,
    /// Requests the open-loop schedule offered in this second (null in the closed loop).
    pub offered: Option<u64>,
    /// Median latency of this second, µs (exact, from the merged histogram of the second).
    pub p50_us: Option<f64>,
    /// 99th percentile of this second, µs.
    pub p99_us: Option<f64>,
    /// Largest latency of this second, µs.
    pub max_us: Option<f64>,
    /// This second's latency histogram ([`super::compact`]: compressed V2, base64), so that
    /// seconds of several results add exactly; None when nothing completed, and in results
    /// written before it was kept.
    #[serde(default)]
    pub histogram: Option<String>,
}

impl SeriesPoint {
    /// One second's point from what was recorded in it.
    pub fn of(second: u64, rec: &Recorder) -> SeriesPoint {
        let pick = |f: &dyn Fn(&Histogram<u64>) -> u64| {
            (!rec.latency.is_empty()).then(|| us(f(&rec.latency)))
        };
        SeriesPoint {
            second,
            duration_s: 1.0,
            ok: rec.ok.saturating_sub(rec.ok_after_window),
            after_window: rec.ok_after_window,
            errors: rec.errors.total(),
            sent_bytes: rec.sent_bytes,
            // What was read after the window is counted apart (the run's `drained_bytes`),
            // as the run's own rates do: a second holds what arrived within the window.
            received_bytes: rec.received_bytes.saturating_sub(rec.received_after_bytes),
            wire_sent_bytes: rec.wire_sent_bytes,
            wire_received_bytes: rec
                .wire_received_bytes
                .saturating_sub(rec.received_after_bytes),
            sent: rec.issued,
            offered: None,
            p50_us: pick(&|h| h.value_at_quantile(0.5)),
            p99_us: pick(&|h| h.value_at_quantile(0.99)),
            max_us: pick(&|h| h.max()),
            histogram: (!rec.latency.is_empty()).then(|| super::compact::encode(&rec.latency)),
        }
    }

    /// Sets p50, p99 and max (read as [`SeriesPoint::of`] reads them) and the histogram from
    /// `h`, this second's latency (a merge's sum of seconds).
    pub fn set_latency(&mut self, h: &Histogram<u64>) {
        let empty = h.is_empty();
        let pick = |v: u64| (!empty).then(|| us(v));
        self.p50_us = pick(h.value_at_quantile(0.5));
        self.p99_us = pick(h.value_at_quantile(0.99));
        self.max_us = pick(h.max());
        self.histogram = (!empty).then(|| super::compact::encode(h));
    }

    /// Gives every point its true length in a measured part of `measured`: the last second of a
    /// run that ended between whole seconds is shorter than one, and its rates must be too.
    pub fn set_lengths(series: &mut Vec<SeriesPoint>, measured: Duration) {
        SeriesPoint::fit_to_span(series, Duration::ZERO, measured);
    }

    /// Fits the series to the measured span, which begins `from` after the start of the measured
    /// part (the origin of the points' seconds) and lasts `measured`: each point's length is the
    /// part of its second inside the span, so its rates are over the time it was measured, and
    /// no point lies outside the span. A run by count is timed from its first send, which
    /// connections opening on a busy machine can put seconds after that origin: the seconds
    /// before the span (and after it: the workers' last tick) hold nothing counted (every
    /// count of a point is of work inside the span) and are dropped, and the rest renumbered
    /// from 0. Returns the whole seconds dropped from the front: point `k` is second
    /// `k + shift` from the origin.
    pub fn fit_to_span(series: &mut Vec<SeriesPoint>, from: Duration, measured: Duration) -> u64 {
        let (start, end) = (from.as_secs_f64(), (from + measured).as_secs_f64());
        let cut = start.floor() as u64;
        let before = |p: &SeriesPoint| p.second < cut;
        let shift = match series
            .iter()
            .filter(|p| before(p))
            .all(SeriesPoint::holds_nothing)
        {
            true => cut,
            false => 0,
        };
        series.retain(|p| p.second >= shift && !(p.second as f64 >= end && p.holds_nothing()));
        for p in series.iter_mut() {
            let s = p.second as f64;
            let inside = (s + 1.0).min(end) - s.max(start);
            // Never zero, so a rate over it stays finite (work that landed at the very end).
            p.duration_s = inside.clamp(1e-3, 1.0);
            p.second -= shift;
        }
        shift
    }

    /// Whether nothing was counted in this point (no reply, error, request or byte).
    fn holds_nothing(&self) -> bool {
        self.ok == 0
            && self.errors == 0
            && self.sent == 0
            && self.sent_bytes == 0
            && self.received_bytes == 0
            && self.after_window == 0
            && self.histogram.is_none()
            && self.p50_us.is_none()
    }

    /// `count` in this point as a rate per second of its length.
    pub fn per_s(&self, count: u64) -> f64 {
        count as f64 / self.duration_s
    }
}

/// For serde: a zero count is left out.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Nanoseconds as microseconds.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// What a live display shows at one moment of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Time since the run began (warm-up included).
    pub elapsed: Duration,
    /// Whether the run is still warming up.
    pub warmup: bool,
    /// Ok operations so far (of the current phase).
    pub ok: u64,
    /// Ok operations per second over the last interval.
    pub ops_per_s: f64,
    /// 99th percentile latency over the last interval, µs; `None` when nothing completed.
    pub p99_us: Option<f64>,
    /// Failed operations so far (of the current phase).
    pub errors: u64,
    /// Payload bytes sent and received so far (of the current phase).
    pub bytes: u64,
    /// Payload bytes sent and received per second over the last interval.
    pub bytes_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point of `ok` replies at `second`.
    fn point(second: u64, ok: u64) -> SeriesPoint {
        let mut rec = Recorder::new();
        for _ in 0..ok {
            rec.ok(Duration::from_micros(50));
        }
        SeriesPoint::of(second, &rec)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A run by count whose connections took 1.4 s to open (HTTPS on a busy machine), then
    /// measured 3 s: its seconds 1 to 4 hold the work. They were shown as 0, 1, 2 (1 s each)
    /// and "3 (0.00 s)", "4 (0.00 s)" after "3.00 s measured", at rates a thousand times too
    /// high; they are the parts of seconds inside the span, numbered from its start.
    #[test]
    fn a_span_that_begins_late_is_numbered_from_its_start() {
        let mut s = vec![
            point(0, 0),
            point(1, 30),
            point(2, 50),
            point(3, 50),
            point(4, 40),
        ];
        let shift = SeriesPoint::fit_to_span(&mut s, ms(1_400), ms(3_000));
        assert_eq!(shift, 1);
        let got: Vec<(u64, f64, u64)> = s.iter().map(|p| (p.second, p.duration_s, p.ok)).collect();
        let want = [(0, 0.6, 30), (1, 1.0, 50), (2, 1.0, 50), (3, 0.4, 40)];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, g.2), (w.0, w.2), "{got:?}");
            assert!((g.1 - w.1).abs() < 1e-9, "{got:?}");
        }
        let total: f64 = s.iter().map(|p| p.duration_s).sum();
        assert!((total - 3.0).abs() < 1e-9, "{total}");
    }

    /// A run by time keeps its seconds; an empty second after its end (the workers' last
    /// tick) is dropped, and a second holding work before the span is never dropped.
    #[test]
    fn seconds_outside_the_span_go_only_when_empty() {
        let mut s = vec![point(0, 10), point(1, 10), point(2, 0)];
        assert_eq!(SeriesPoint::fit_to_span(&mut s, ms(0), ms(2_000)), 0);
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|p| p.duration_s == 1.0));
        let mut s = vec![point(0, 5), point(1, 10), point(2, 10)];
        assert_eq!(SeriesPoint::fit_to_span(&mut s, ms(1_500), ms(1_000)), 0);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].second, 0);
    }

    /// Replies after the window are counted apart from the second's ok, and bytes read after
    /// it are not in its received bytes.
    #[test]
    fn a_second_counts_what_arrived_in_the_window() {
        let mut rec = Recorder::new();
        for _ in 0..10 {
            rec.ok(Duration::from_micros(50));
        }
        rec.ok_after_window = 4;
        rec.received_bytes = 1_000;
        rec.wire_received_bytes = 1_200;
        rec.received_after_bytes = 400;
        let p = SeriesPoint::of(2, &rec);
        assert_eq!((p.ok, p.after_window), (6, 4));
        assert_eq!((p.received_bytes, p.wire_received_bytes), (600, 800));
    }
}
