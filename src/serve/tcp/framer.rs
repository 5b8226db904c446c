//! Finding request boundaries in a byte stream without buffering requests.
//!
//! The server never holds a whole request (they may be up to 1 GiB): it looks at each chunk as
//! it arrives, and a framer only remembers where in the current request the stream is.

use crate::wire::delimiter::Delimiter;

/// A client sent something that cannot be framed; the connection is closed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadFrame;

/// The longest delimited request (delimiter included) before it counts as a bad frame; without a
/// limit a client that never sends the delimiter would be "one request" forever.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// How one connection's requests are delimited.
#[derive(Debug)]
pub(crate) enum Framer {
    /// Every request is exactly this many bytes; `pos` bytes of the current one have arrived.
    Sized {
        /// Bytes per request (at least 1).
        size: u64,
        /// Bytes of the current request seen so far, below `size`.
        pos: u64,
    },
    /// A request ends with a delimiter.
    Delimited(Delimited),
    /// No framing: every read is one request.
    PerRead,
}

impl Framer {
    /// Fixed-size requests of `size` bytes (`size` ≥ 1).
    pub(crate) fn sized(size: u64) -> Framer {
        Framer::Sized {
            size: size.max(1),
            pos: 0,
        }
    }

    /// Requests that end with `delimiter` (non-empty).
    pub(crate) fn delimited(delimiter: &[u8]) -> Framer {
        Framer::Delimited(Delimited::new(delimiter))
    }

    /// Consumes a whole chunk and says how many requests it completed. Sized framing is pure
    /// arithmetic, which keeps tiny pipelined requests cheap.
    pub(crate) fn count(&mut self, chunk: &[u8]) -> Result<u64, BadFrame> {
        match self {
            Framer::Sized { size, pos } => {
                let total = *pos + chunk.len() as u64;
                *pos = total % *size;
                Ok(total / *size)
            }
            Framer::Delimited(d) => {
                let mut rest = chunk;
                let mut done = 0;
                while let Some(end) = d.split(rest)? {
                    done += 1;
                    rest = &rest[end..];
                }
                Ok(done)
            }
            Framer::PerRead => Ok(u64::from(!chunk.is_empty())),
        }
    }

    /// Consumes `chunk` up to the end of the current request: `Some(end)` if the request ends
    /// with `chunk[end - 1]`, `None` if the whole chunk belongs to it.
    pub(crate) fn split(&mut self, chunk: &[u8]) -> Result<Option<usize>, BadFrame> {
        if chunk.is_empty() {
            return Ok(None);
        }
        match self {
            Framer::Sized { size, pos } => {
                let need = *size - *pos;
                if chunk.len() as u64 >= need {
                    *pos = 0;
                    Ok(Some(need as usize))
                } else {
                    *pos += chunk.len() as u64;
                    Ok(None)
                }
            }
            Framer::Delimited(d) => d.split(chunk),
            Framer::PerRead => Ok(Some(chunk.len())),
        }
    }

    /// True when no byte of the next request has arrived yet, i.e. the next byte starts one.
    pub(crate) fn at_start(&self) -> bool {
        match self {
            Framer::Sized { pos, .. } => *pos == 0,
            Framer::Delimited(d) => d.line == 0,
            Framer::PerRead => true,
        }
    }
}

/// A delimited request's progress: the delimiter search and how long the request is so far.
#[derive(Debug)]
pub(crate) struct Delimited {
    delimiter: Delimiter,
    /// Delimiter bytes matched at the end of what has been consumed.
    matched: usize,
    /// Bytes of the current request consumed so far.
    line: usize,
}

impl Delimited {
    fn new(delimiter: &[u8]) -> Delimited {
        let delimiter: &[u8] = if delimiter.is_empty() {
            b"\n"
        } else {
            delimiter
        };
        Delimited {
            delimiter: Delimiter::new(delimiter),
            matched: 0,
            line: 0,
        }
    }

    fn split(&mut self, chunk: &[u8]) -> Result<Option<usize>, BadFrame> {
        let Some(end) = self.delimiter.find(&mut self.matched, chunk) else {
            self.line += chunk.len();
            if self.line > MAX_LINE {
                return Err(BadFrame);
            }
            return Ok(None);
        };
        let line = self.line + end;
        self.line = 0;
        if line > MAX_LINE {
            Err(BadFrame)
        } else {
            Ok(Some(end))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `data` in chunks of `step` bytes and returns the request end offsets in `data`.
    fn ends(framer: &mut Framer, data: &[u8], step: usize) -> Vec<usize> {
        let mut out = vec![];
        let mut base = 0;
        for chunk in data.chunks(step) {
            let mut rest = chunk;
            let mut off = base;
            while let Some(end) = framer.split(rest).unwrap() {
                out.push(off + end);
                off += end;
                rest = &rest[end..];
            }
            base += chunk.len();
        }
        out
    }

    #[test]
    fn sized_counts_and_splits() {
        let mut f = Framer::sized(4);
        assert_eq!(f.count(&[0; 10]).unwrap(), 2);
        assert!(!f.at_start());
        assert_eq!(f.count(&[0; 2]).unwrap(), 1);
        assert!(f.at_start());
        for step in 1..12 {
            assert_eq!(ends(&mut Framer::sized(4), &[0; 12], step), [4, 8, 12]);
        }
    }

    #[test]
    fn delimiter_split_across_reads() {
        let data = b"ab\r\n\r\ncd\r\n\r\n\r\n\r\nx";
        for step in 1..data.len() {
            let mut f = Framer::delimited(b"\r\n\r\n");
            assert_eq!(ends(&mut f, data, step), [6, 12, 16], "step {step}");
            assert!(!f.at_start());
        }
        let mut f = Framer::delimited(b"aab");
        assert_eq!(ends(&mut f, b"aaab-aab", 3), [4, 8]);
        let mut f = Framer::delimited(b"\n");
        assert_eq!(f.count(b"a\nb\n\nc").unwrap(), 3);
    }

    #[test]
    fn long_line_is_bad() {
        let mut f = Framer::delimited(b"\n");
        let block = vec![b'x'; 64 * 1024];
        let mut result = Ok(None);
        for _ in 0..=(MAX_LINE / block.len()) {
            result = f.split(&block);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(BadFrame));
    }
}
