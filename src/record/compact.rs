//! The per-second histogram's text form: HdrHistogram's compressed V2 serialization
//! (V2 + zlib deflate), base64-encoded, as HdrHistogram's own interval logs write it
//! (`HISTFAAA…`). Each point of a result's series carries one, so a merge of several results
//! (shards of one load) adds seconds exactly and keeps each second's p50/p99 exact.
//!
//! The compressed form costs a fraction of the uncompressed one on the sparse histograms of
//! one second; `bench/series_cost.sh` measures it per second of result.

use super::damage::MAX_INFLATED;
use super::histogram::{v2_header, Counts};
use super::{check_v2, decode_histogram, HistogramError, HIST_LOWEST_NS, HIST_SIGFIG};
use base64::Engine as _;
use flate2::{Decompress, FlushDecompress, Status};
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::cell::RefCell;

/// The compressed V2 cookie (`0x1c849304 | 0x10`), as the HdrHistogram spec fixes it.
const COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// `h` as base64 of its compressed V2 serialization.
#[allow(
    clippy::expect_used,
    reason = "serializing into a Vec cannot fail: no I/O, and every value is in range"
)]
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// The histogram `text` holds, checked as [`decode_histogram`] checks an uncompressed one:
/// inflated here within [`MAX_INFLATED`] bytes, never by a length the input claims.
pub fn decode(text: &str) -> Result<Histogram<u64>, HistogramError> {
    decode_histogram(&inflate(text)?)
}

/// Checks that `text` holds a histogram wirebench wrote, without building it (a document's
/// check reads thousands: the counts of one that grew to an hour are 270 KB).
pub fn check(text: &str) -> Result<(), HistogramError> {
    check_v2(&inflate(text)?).map(|_| ())
}

/// Adds the histogram `text` holds into `total`.
pub fn add_into(total: &mut Histogram<u64>, text: &str) -> Result<(), HistogramError> {
    let mut sum = Sum::default();
    sum.add(text)?;
    total
        .add(sum.into_histogram()?)
        .map_err(HistogramError::Add)
}

/// A sum of many histograms' texts, kept as plain counts by bucket (the layout of
/// wirebench's bounds): a merge of thousands of seconds adds each one's counts in one pass,
/// without building a histogram for each (up to 270 KB of counts, for one that grew to an hour).
/// Another layout is decoded and added apart.
#[derive(Debug, Default)]
pub struct Sum {
    counts: Vec<u64>,
    other: Option<Histogram<u64>>,
}

impl Sum {
    /// Adds the histogram `text` holds, checked as [`decode`] checks it.
    /// On an error the sum is left partly added: drop it (a merge stops there).
    pub fn add(&mut self, text: &str) -> Result<(), HistogramError> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let Scratch { inflater, bytes } = &mut *scratch;
            inflate_into(text, inflater, bytes)?;
            self.add_v2(bytes)
        })
    }

    /// Adds an uncompressed V2 serialization, checking its counts as it reads them.
    fn add_v2(&mut self, bytes: &[u8]) -> Result<(), HistogramError> {
        let ((digits, low), counts) = v2_header(bytes)?;
        if digits != u64::from(HIST_SIGFIG) || low != HIST_LOWEST_NS {
            let h = decode_histogram(bytes)?;
            let other = self.other.get_or_insert_with(super::new_histogram);
            return other.add(h).map_err(HistogramError::Add);
        }
        let mut index = 0usize;
        for count in Counts::new(counts) {
            let count = count?;
            // Counts bounds a run of zeros to 2^32 buckets, so no index here is out of
            // reach; one beyond the hour's is refused below.
            if count < 0 {
                index += count.unsigned_abs() as usize;
                continue;
            }
            if count > 0 {
                if index >= MAX_BUCKETS {
                    return Err(HistogramError::Bucket(index));
                }
                if self.counts.len() <= index {
                    self.counts.resize(index + 1, 0);
                }
                self.counts[index] = self.counts[index].saturating_add(count as u64);
            }
            index += 1;
        }
        Ok(())
    }

    /// The histogram of everything added.
    pub fn into_histogram(self) -> Result<Histogram<u64>, HistogramError> {
        let mut h = self.other.unwrap_or_else(super::new_histogram);
        for (index, &count) in self.counts.iter().enumerate() {
            if count > 0 {
                h.record_n(value_at(index as u64), count)
                    .map_err(|e| HistogramError::Record(index, e))?;
            }
        }
        Ok(h)
    }
}

/// Buckets of a histogram of wirebench's bounds (1 ns .. 1 h at 3 digits: 2048 sub-buckets,
/// then 1024 more per doubling up to 2^42 ns), with room for the top one's rounding.
const MAX_BUCKETS: usize = 2048 + 1024 * 32;

/// The lowest value of bucket `index` in a histogram of wirebench's bounds (lowest 1 ns, so
/// unit magnitude 0; 3 digits, so 2048 sub-buckets), as HdrHistogram's `value_for` computes it.
fn value_at(index: u64) -> u64 {
    const HALF_MAGNITUDE: u32 = 10;
    const HALF: u64 = 1 << HALF_MAGNITUDE;
    let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
    let sub = (index & (HALF - 1)) + HALF;
    match bucket {
        b if b < 0 => sub - HALF,
        b => sub.checked_shl(b as u32).unwrap_or(u64::MAX),
    }
}

/// What inflating needs, kept per thread: setting up an inflater zeroes tens of KB, which a
/// merge of 12,000 seconds paid 12,000 times.
struct Scratch {
    inflater: Decompress,
    bytes: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        inflater: Decompress::new(true),
        bytes: Vec::new(),
    });
}

/// The uncompressed V2 serialization `text` holds, inflated within [`MAX_INFLATED`] bytes.
fn inflate(text: &str) -> Result<Vec<u8>, HistogramError> {
    let mut bytes = Vec::new();
    inflate_into(text, &mut Decompress::new(true), &mut bytes)?;
    Ok(bytes)
}

/// [`inflate`] into `out` with `inflater` (reset here): never by a length the input claims.
fn inflate_into(
    text: &str,
    inflater: &mut Decompress,
    out: &mut Vec<u8>,
) -> Result<(), HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(HistogramError::Base64)?;
    if bytes.len() < 8 {
        return Err(HistogramError::Short(bytes.len()));
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if word(0) != COMPRESSED_COOKIE {
        return Err(HistogramError::NotCompressed);
    }
    let claimed = word(4) as usize;
    let body = &bytes[8..];
    if claimed != body.len() {
        return Err(HistogramError::CompressedLength {
            claimed,
            holds: body.len(),
        });
    }
    let broken = |why: String| HistogramError::Inflate(std::io::Error::other(why));
    inflater.reset(true);
    out.clear();
    loop {
        if out.len() as u64 > MAX_INFLATED {
            return Err(HistogramError::Inflates);
        }
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(8192));
        }
        let before = (inflater.total_in(), out.len());
        let input = &body[(inflater.total_in() as usize).min(body.len())..];
        let status = inflater
            .decompress_vec(input, out, FlushDecompress::None)
            .map_err(|e| broken(e.to_string()))?;
        match status {
            Status::StreamEnd => break,
            // No progress with room to write: the stream ends before its end.
            _ if (inflater.total_in(), out.len()) == before && out.len() < out.capacity() => {
                return Err(broken("the stream ends early".into()))
            }
            _ => {}
        }
    }
    match out.len() as u64 > MAX_INFLATED {
        true => Err(HistogramError::Inflates),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_histogram;

    #[test]
    fn round_trips_and_reads_as_hdrhistogram_logs_write_it() {
        let mut h = new_histogram();
        for v in [1_000u64, 7_400, 95_000, 40_000_000, 40_000_000] {
            h.record(v).unwrap();
        }
        let text = encode(&h);
        // The interval logs' histograms start so: the compressed cookie in base64.
        assert!(text.starts_with("HISTF"), "{text}");
        assert_eq!(decode(&text).unwrap(), h);
        assert_eq!(decode(&encode(&new_histogram())).unwrap().len(), 0);
    }

    #[test]
    fn adding_in_place_equals_decoding_and_adding() {
        let mut h = new_histogram();
        let mut x = 1u64;
        for _ in 0..5_000 {
            // A spread over every magnitude, 1 ns .. 1 h.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            h.record((x >> 20) % crate::record::HIST_HIGHEST_NS + 1)
                .unwrap();
        }
        h.record(crate::record::HIST_HIGHEST_NS).unwrap();
        let text = encode(&h);
        let mut total = new_histogram();
        total.record(77).unwrap();
        let mut expected = total.clone();
        add_into(&mut total, &text).unwrap();
        expected.add(decode(&text).unwrap()).unwrap();
        assert_eq!(total, expected);
        check(&text).unwrap();
    }

    #[test]
    fn corrupt_text_is_an_error_not_a_panic() {
        let good = encode(&new_histogram());
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&good)
            .unwrap();
        let mut cut = raw.clone();
        cut.truncate(raw.len() - 3);
        let mut flipped = raw.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        for bad in ["", "!!", "AAAAAAAAAAAA", &b64(&cut), &b64(&flipped)] {
            assert!(decode(bad).is_err(), "{bad:?} decoded");
            assert!(check(bad).is_err(), "{bad:?} checked");
            assert!(
                add_into(&mut new_histogram(), bad).is_err(),
                "{bad:?} added"
            );
        }
        // A zip bomb: a valid stream inflating to more than any histogram wirebench writes.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &vec![0u8; 4 << 20]).unwrap();
        let body = z.finish().unwrap();
        let mut bomb = COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bomb.extend((body.len() as u32).to_be_bytes());
        bomb.extend(body);
        let e = decode(&b64(&bomb)).unwrap_err().to_string();
        assert!(e.contains("inflates beyond"), "{e}");
    }
}
