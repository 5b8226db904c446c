//! What is wrong with a histogram read back from a document: each a check that keeps a crafted
//! or damaged histogram from reaching hdrhistogram's decoder, or a sum beyond the bounds.

use super::{HIST_LOWEST_NS, HIST_SIGFIG, HIST_TOP_NS};

/// The most samples a histogram read back may hold: 2^48, far beyond any run (a million a
/// second for nine years), and low enough that thousands of them add up without overflowing
/// the i64 counts of the V2 format.
pub const MAX_SAMPLES: u64 = 1 << 48;

/// The largest uncompressed serialization inflating may produce: a histogram of wirebench's
/// bounds (1 ns .. 1 h, 3 digits) has about 33 k buckets of at most 9 bytes each, so anything
/// larger is not one wirebench wrote, and a crafted "zip bomb" stops here.
pub const MAX_INFLATED: u64 = 1 << 20;

/// A histogram that wirebench did not write, or that does not add.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    /// Fewer bytes than the header takes.
    #[error("{0} bytes, shorter than a header")]
    Short(usize),
    /// Not the uncompressed V2 cookie.
    #[error("not an uncompressed HdrHistogram V2 serialization")]
    NotV2,
    /// A payload length beyond the bytes given.
    #[error("claims {claimed} bytes of counts, holds {holds}")]
    Truncated {
        /// The length the header claims.
        claimed: usize,
        /// The bytes after the header.
        holds: usize,
    },
    /// Bounds or precision beyond wirebench's.
    #[error("bounds {low}..{high} ns at {digits} digits, beyond wirebench's ({HIST_LOWEST_NS}..{HIST_TOP_NS} ns, {HIST_SIGFIG} digits)")]
    Bounds {
        /// The lowest value tracked.
        low: u64,
        /// The highest value tracked.
        high: u64,
        /// Significant digits.
        digits: u64,
    },
    /// A varint cut off by the end of the payload.
    #[error("its counts end inside a number")]
    CutNumber,
    /// A run of empty buckets longer than any histogram of wirebench's bounds has.
    #[error("a run of {0} empty buckets")]
    LongRun(u64),
    /// More than [`MAX_SAMPLES`] samples.
    #[error("more than {MAX_SAMPLES} samples")]
    TooMany,
    /// Checked, and still refused by hdrhistogram's decoder.
    #[error("does not decode ({0:?})")]
    Decode(hdrhistogram::serialization::DeserializeError),
    /// A compressed histogram's text that is not base64.
    #[error("not base64 ({0})")]
    Base64(base64::DecodeError),
    /// Not the compressed V2 cookie.
    #[error("not a compressed HdrHistogram V2 serialization")]
    NotCompressed,
    /// A compressed length other than the bytes given.
    #[error("claims {claimed} compressed bytes, holds {holds}")]
    CompressedLength {
        /// The length the header claims.
        claimed: usize,
        /// The bytes after the header.
        holds: usize,
    },
    /// Not zlib's deflate.
    #[error("does not inflate ({0})")]
    Inflate(std::io::Error),
    /// More than [`MAX_INFLATED`] bytes once inflated.
    #[error("inflates beyond {MAX_INFLATED} bytes")]
    Inflates,
    /// Histograms of bounds that do not add.
    #[error("does not add ({0:?})")]
    Add(hdrhistogram::AdditionError),
    /// A count in a bucket beyond wirebench's bounds.
    #[error("bucket {0} is beyond wirebench's bounds")]
    Bucket(usize),
    /// A bucket hdrhistogram does not record.
    #[error("bucket {0} is beyond wirebench's bounds ({1:?})")]
    Record(usize, hdrhistogram::RecordError),
}
