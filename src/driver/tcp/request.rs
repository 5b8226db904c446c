//! Request bytes: the synthetic pattern with the sequence number in front, or the user's
//! payload; long requests are written piece by piece, never built whole.

use super::IO_CHUNK;
use std::sync::Arc;

/// Request bytes: synthetic (pattern with the sequence number in front) or the user's payload.
#[derive(Clone, Debug)]
pub(super) enum Template {
    /// `size` bytes: the first 8 (or fewer) carry the sequence number, the rest follow
    /// `pattern`, whose byte `i` is the request's byte at every offset `i` modulo `period`.
    /// For requests over [`IO_CHUNK`] it runs [`IO_CHUNK`] bytes past one period, so any chunk
    /// of such a request past its first 8 bytes is one slice of it. Shared by all connections.
    Synthetic {
        size: usize,
        period: usize,
        pattern: Arc<[u8]>,
    },
    /// Exact bytes, shared by every connection.
    Payload(Arc<[u8]>),
}

impl Template {
    pub(super) fn len(&self) -> usize {
        match self {
            Template::Synthetic { size, .. } => *size,
            Template::Payload(p) => p.len(),
        }
    }

    /// Appends request `seq` to `out` (one no longer than [`IO_CHUNK`]).
    pub(super) fn write(&self, seq: u64, out: &mut Vec<u8>) {
        match self {
            Template::Payload(p) => out.extend_from_slice(p),
            Template::Synthetic {
                size,
                period,
                pattern,
            } => {
                let start = out.len();
                let mut left = *size;
                while left > 0 {
                    let n = left.min(*period);
                    out.extend_from_slice(&pattern[..n]);
                    left -= n;
                }
                let head = size.min(&8);
                out[start..start + head].copy_from_slice(&seq.to_le_bytes()[..*head]);
            }
        }
    }
}

/// The pattern byte at offset `p` of every synthetic request (period [`super::PATTERN_LEN`]).
pub(super) fn pattern_byte(p: usize) -> u8 {
    b'a' + (p % 26) as u8
}

/// The next bytes of the long request whose first `off` bytes are written: its sequence number
/// (`head`), then one slice of the pattern, or of the payload.
pub(super) fn big_part<'a>(request: &'a Template, head: &'a [u8; 8], off: usize) -> &'a [u8] {
    match request {
        Template::Payload(p) => &p[off..p.len().min(off + IO_CHUNK)],
        Template::Synthetic { .. } if off < 8 => &head[off..],
        Template::Synthetic {
            size,
            period,
            pattern,
        } => {
            let at = off % period;
            &pattern[at..at + IO_CHUNK.min(size - off)]
        }
    }
}
