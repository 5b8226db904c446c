//! The per-second histogram's text form: HdrHistogram's compressed V2 serialization
//! (V2 + zlib deflate), base64-encoded, as HdrHistogram's own interval logs write it
//! (`HISTFAAA…`). Each point of a result's series carries one, so a merge of several results
//! (shards of one load) adds seconds exactly and keeps each second's p50/p99 exact.
//!
//! The compressed form costs a fraction of the uncompressed one on the sparse histograms of
//! one second; `bench/series_cost.sh` measures it per second of result.

use super::decode_histogram;
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::io::Read as _;

/// The compressed V2 cookie (`0x1c849304 | 0x10`), as the HdrHistogram spec fixes it.
const COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// The largest uncompressed serialization inflating may produce: a histogram of wirebench's
/// bounds (1 ns .. 1 h, 3 digits) has about 33 k buckets of at most 9 bytes each, so anything
/// larger is not one wirebench wrote, and a crafted "zip bomb" stops here.
const MAX_INFLATED: u64 = 1 << 20;

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
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("not base64 ({e})"))?;
    if bytes.len() < 8 {
        return Err(format!("{} bytes, shorter than a header", bytes.len()));
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    if word(0) != COMPRESSED_COOKIE {
        return Err("not a compressed HdrHistogram V2 serialization".into());
    }
    let claimed = word(4) as usize;
    let body = &bytes[8..];
    if claimed != body.len() {
        return Err(format!(
            "claims {claimed} compressed bytes, holds {}",
            body.len()
        ));
    }
    let mut inflated = Vec::new();
    flate2::read::ZlibDecoder::new(body)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut inflated)
        .map_err(|e| format!("does not inflate ({e})"))?;
    if inflated.len() as u64 > MAX_INFLATED {
        return Err(format!("inflates beyond {MAX_INFLATED} bytes"));
    }
    decode_histogram(&inflated)
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
        }
        // A zip bomb: a valid stream inflating to more than any histogram wirebench writes.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &vec![0u8; 4 << 20]).unwrap();
        let body = z.finish().unwrap();
        let mut bomb = COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bomb.extend((body.len() as u32).to_be_bytes());
        bomb.extend(body);
        let e = decode(&b64(&bomb)).unwrap_err();
        assert!(e.contains("inflates beyond"), "{e}");
    }
}
