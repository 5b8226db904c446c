//! Request bodies (Content-Length or chunked) decoded piece by piece in place, in constant
//! memory.

use super::request::BodyLen;

/// The longest chunk-size line, or trailer line, of a chunked body.
const MAX_LINE: usize = 4096;
/// The most trailer bytes a chunked body may end with.
const MAX_TRAILER: usize = 16 * 1024;

/// Decodes a request body in place: [`Decoder::step`] looks at the unread bytes and says what
/// the next ones are, so the body never needs a buffer of its own.
#[derive(Debug)]
pub(crate) enum Decoder {
    /// Content-Length: this many bytes are left.
    Length(u64),
    /// Chunked, in this state.
    Chunked(Chunk),
    /// The body is over.
    Done,
}

/// Where a chunked body is.
#[derive(Debug)]
pub(crate) enum Chunk {
    /// At a chunk-size line.
    Size,
    /// Inside a chunk, with this many bytes left.
    Data(u64),
    /// At the CRLF after a chunk's data.
    DataEnd,
    /// In the trailer section, having read this many bytes of it.
    Trailer(usize),
}

/// What the next bytes of a body are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// This many bytes of body data.
    Data(usize),
    /// This many bytes of framing, to pass over.
    Skip(usize),
    /// Not enough bytes to tell.
    NeedMore,
    /// The body ends after this many more framing bytes.
    Done(usize),
    /// Malformed chunked framing.
    Bad,
}

impl Decoder {
    /// A decoder for a body framed as `body` says.
    pub(crate) fn new(body: BodyLen) -> Decoder {
        match body {
            BodyLen::None => Decoder::Done,
            BodyLen::Length(n) => Decoder::Length(n),
            BodyLen::Chunked => Decoder::Chunked(Chunk::Size),
        }
    }

    /// Looks at the unread bytes `input` and says what comes next; the caller consumes what it
    /// is told (data, skip or done) and calls again.
    pub(crate) fn step(&mut self, input: &[u8]) -> Step {
        match self {
            Decoder::Done => Step::Done(0),
            Decoder::Length(0) => {
                *self = Decoder::Done;
                Step::Done(0)
            }
            Decoder::Length(left) => take(left, input),
            Decoder::Chunked(state) => match state {
                Chunk::Size => match httparse::parse_chunk_size(input) {
                    Ok(httparse::Status::Complete((used, 0))) => {
                        *state = Chunk::Trailer(0);
                        Step::Skip(used)
                    }
                    Ok(httparse::Status::Complete((used, size))) => {
                        *state = Chunk::Data(size);
                        Step::Skip(used)
                    }
                    Ok(httparse::Status::Partial) if input.len() < MAX_LINE => Step::NeedMore,
                    _ => Step::Bad,
                },
                Chunk::Data(left) => {
                    let step = take(left, input);
                    if *left == 0 {
                        *state = Chunk::DataEnd;
                    }
                    step
                }
                Chunk::DataEnd => match input {
                    [b'\r', b'\n', ..] => {
                        *state = Chunk::Size;
                        Step::Skip(2)
                    }
                    [] | [b'\r'] => Step::NeedMore,
                    _ => Step::Bad,
                },
                Chunk::Trailer(seen) => {
                    let Some(i) = input.windows(2).position(|w| w == b"\r\n") else {
                        return if input.len() < MAX_LINE {
                            Step::NeedMore
                        } else {
                            Step::Bad
                        };
                    };
                    if i == 0 {
                        *self = Decoder::Done;
                        return Step::Done(2);
                    }
                    *seen += i + 2;
                    if *seen > MAX_TRAILER {
                        return Step::Bad;
                    }
                    Step::Skip(i + 2)
                }
            },
        }
    }
}

/// Up to `left` bytes of data from `input`.
fn take(left: &mut u64, input: &[u8]) -> Step {
    if input.is_empty() {
        return Step::NeedMore;
    }
    let n = (*left).min(input.len() as u64);
    *left -= n;
    Step::Data(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` to a decoder in pieces of `step` bytes; returns the decoded data.
    fn decode(body: BodyLen, wire: &[u8], step: usize) -> Result<Vec<u8>, ()> {
        let mut d = Decoder::new(body);
        let (mut at, mut end, mut out) = (0, 0, Vec::new());
        loop {
            match d.step(&wire[at..end]) {
                Step::Data(n) => {
                    out.extend_from_slice(&wire[at..at + n]);
                    at += n;
                }
                Step::Skip(n) => at += n,
                Step::Done(n) => {
                    assert_eq!(at + n, wire.len(), "all of the body was used");
                    return Ok(out);
                }
                Step::NeedMore if end < wire.len() => end = (end + step).min(wire.len()),
                Step::NeedMore | Step::Bad => return Err(()),
            }
        }
    }

    #[test]
    fn bodies() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX-T: 1\r\n\r\n";
        for step in [1, 2, 7, 100] {
            assert_eq!(
                decode(BodyLen::Chunked, wire, step).unwrap(),
                b"hello world!",
                "step {step}"
            );
            assert_eq!(
                decode(BodyLen::Length(5), b"hello", step).unwrap(),
                b"hello"
            );
        }
        assert_eq!(decode(BodyLen::Chunked, b"0\r\n\r\n", 1).unwrap(), b"");
        assert!(decode(BodyLen::Chunked, b"5\r\nhelloXX", 3).is_err());
        assert!(decode(BodyLen::Chunked, b"zz\r\n", 3).is_err());
        assert!(decode(BodyLen::Chunked, b"5\r\nhel", 3).is_err());
    }
}
