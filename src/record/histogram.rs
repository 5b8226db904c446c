//! The record's histograms: wirebench's bounds (1 ns to 1 h, three significant digits), a
//! histogram that grows to what it holds, and the checked decoding of a stored one (a V2
//! serialization whose header and counts are checked before hdrhistogram sees them).

use super::damage::{self, HistogramError};
use hdrhistogram::Histogram;
use std::time::Duration;

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
