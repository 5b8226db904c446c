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
    /// Ok operations in this second.
    pub ok: u64,
    /// Failed operations in this second.
    pub errors: u64,
    /// Payload bytes sent in this second.
    pub sent_bytes: u64,
    /// Payload bytes received in this second.
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
            ok: rec.ok,
            errors: rec.errors.total(),
            sent_bytes: rec.sent_bytes,
            received_bytes: rec.received_bytes,
            wire_sent_bytes: rec.wire_sent_bytes,
            wire_received_bytes: rec.wire_received_bytes,
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
    pub fn set_lengths(series: &mut [SeriesPoint], measured: Duration) {
        let end = measured.as_secs_f64();
        for p in series {
            // Never zero, so a rate over it stays finite (work that landed at the very end).
            p.duration_s = (end - p.second as f64).clamp(1e-3, 1.0);
        }
    }

    /// `count` in this point as a rate per second of its length.
    pub fn per_s(&self, count: u64) -> f64 {
        count as f64 / self.duration_s
    }
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
