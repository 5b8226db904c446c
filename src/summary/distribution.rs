//! A latency distribution as every document carries it: the figures in microseconds, read from
//! an HdrHistogram of nanoseconds, and the whole histogram encoded beside them so that results
//! can be merged exactly later.

use super::Name;
use crate::record::{HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIG};
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A latency distribution: the figures, in microseconds, and the whole histogram.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Distribution {
    /// Samples.
    pub count: u64,
    /// Smallest, µs.
    pub min_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Standard deviation, µs.
    pub stddev_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 95th percentile, µs.
    pub p95_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest, µs.
    pub max_us: f64,
    /// The whole histogram, so results can be merged later.
    pub histogram: EncodedHistogram,
}

/// An HdrHistogram in V2 serialization, base64-encoded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EncodedHistogram {
    /// `hdrhistogram-v2+base64`.
    pub encoding: Name,
    /// The unit of recorded values: `ns`.
    pub unit: Name,
    /// Lowest discernible value.
    pub lowest: u64,
    /// Highest trackable value.
    pub highest: u64,
    /// Significant digits.
    pub significant_digits: u8,
    /// The serialized histogram.
    pub data: String,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Distribution {
    /// The figures the reports show, in their order: min, mean, stddev, p50, p90, p95, p99,
    /// p99.9, max (µs).
    pub fn figures(&self) -> [f64; 9] {
        [
            self.min_us,
            self.mean_us,
            self.stddev_us,
            self.p50_us,
            self.p90_us,
            self.p95_us,
            self.p99_us,
            self.p999_us,
            self.max_us,
        ]
    }

    /// Summarises a histogram of nanoseconds; `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Distribution> {
        if h.is_empty() {
            return None;
        }
        // One rounding for every figure: HdrHistogram gives percentiles and the max as the
        // highest value of their bucket but the min as the lowest, so one sample would read
        // min < p50 = max. Every figure is read as its bucket's midpoint instead (as the mean
        // is), so one sample is every statistic and a multi-sample order is kept.
        let mid = |v: u64| h.median_equivalent(v);
        let (lo, hi) = (mid(h.min()), mid(h.value_at_quantile(1.0)));
        // A histogram read from a crafted document can hold counts whose total wraps, so that
        // its top quantile reads below its min (found by fuzzing): order the bounds.
        let hi = hi.max(lo);
        let q = |p: f64| us(mid(h.value_at_quantile(p)).clamp(lo, hi));
        Some(Distribution {
            count: h.len(),
            min_us: us(lo),
            mean_us: h.mean().clamp(lo as f64, hi as f64) / 1000.0,
            stddev_us: h.stdev() / 1000.0,
            p50_us: q(0.50),
            p90_us: q(0.90),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: us(hi),
            histogram: EncodedHistogram::of(h),
        })
    }
}

/// A document's histogram that does not read back.
#[derive(Debug, thiserror::Error)]
pub enum EncodedError {
    /// Its data is not base64.
    #[error("histogram is not base64: {0}")]
    Base64(base64::DecodeError),
    /// Its data is not a histogram wirebench wrote.
    #[error("histogram: {0}")]
    Histogram(crate::record::HistogramError),
}

impl EncodedHistogram {
    /// Serializes a histogram (V2, uncompressed) and base64-encodes it.
    #[allow(
        clippy::expect_used,
        reason = "serializing into a Vec cannot fail: no I/O, and every value is in range"
    )]
    pub fn of(h: &Histogram<u64>) -> EncodedHistogram {
        let mut buf = Vec::new();
        V2Serializer::new()
            .serialize(h, &mut buf)
            .expect("serializing to memory cannot fail");
        EncodedHistogram {
            encoding: "hdrhistogram-v2+base64".into(),
            unit: "ns".into(),
            lowest: HIST_LOWEST_NS,
            highest: HIST_HIGHEST_NS,
            significant_digits: HIST_SIGFIG,
            data: base64::engine::general_purpose::STANDARD.encode(buf),
        }
    }

    /// Decodes the histogram again (used to merge stored results, and by tests).
    pub fn decode(&self) -> Result<Histogram<u64>, EncodedError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(EncodedError::Base64)?;
        crate::record::decode_histogram(&bytes).map_err(EncodedError::Histogram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_histogram;

    #[test]
    fn histogram_round_trips_through_base64() {
        let mut h = new_histogram();
        for v in [1_000u64, 7_400, 95_000, 40_000_000] {
            h.record(v).unwrap();
        }
        let enc = EncodedHistogram::of(&h);
        assert_eq!(enc.decode().unwrap(), h);
        let d = Distribution::of(&h).unwrap();
        assert_eq!(d.count, 4);
        assert!((d.min_us - 1.0).abs() < 0.01);
        assert!(d.max_us >= 39_990.0);
    }

    #[test]
    fn one_sample_is_every_statistic() {
        for ns in [87_550u64, 1, 999, 40_000_123, 3_600_000_000_000] {
            let mut h = new_histogram();
            h.record(ns).unwrap();
            let d = Distribution::of(&h).unwrap();
            let all = [d.min_us, d.mean_us, d.p50_us, d.p90_us, d.p99_us, d.p999_us];
            for v in all {
                assert_eq!(v, d.max_us, "{ns} ns: {d:?}");
            }
            assert!(
                (d.min_us * 1000.0 - ns as f64).abs() <= ns as f64 * 1e-3,
                "{d:?}"
            );
        }
        // Many samples: min <= mean, percentiles <= max still.
        let mut h = new_histogram();
        for v in [87_550u64, 87_560, 87_570, 1_000_000] {
            h.record(v).unwrap();
        }
        let d = Distribution::of(&h).unwrap();
        assert!(d.min_us <= d.p50_us && d.p50_us <= d.p99_us && d.p99_us <= d.max_us);
        assert!(d.min_us <= d.mean_us && d.mean_us <= d.max_us);
    }
}
