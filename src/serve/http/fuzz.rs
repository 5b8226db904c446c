//! The request-head parser, router and body decoder driven with arbitrary bytes, for the fuzz
//! target `http_request` (fuzz/). Not part of the API.

use super::body::{Decoder, Step};
use super::request::{parse, Parse};

/// Parses `buf` as a request head (with and without `--dir`), then decodes the bytes after it
/// as that request's body, fed in pieces of `piece` bytes; panics if an invariant breaks (a
/// head longer than the buffer, a decoder that stalls or runs past its input).
pub fn request(buf: &[u8], piece: usize) {
    for files in [false, true] {
        let (head, used) = match parse(buf, files) {
            Parse::Complete(head, used) => (head, used),
            Parse::Partial | Parse::Bad(..) => continue,
        };
        assert!(used <= buf.len(), "head of {used} bytes in {}", buf.len());
        decode(Decoder::new(head.body), &buf[used..], piece.max(1));
    }
}

/// Feeds `wire` to `d` as it would arrive, `piece` bytes at a time.
fn decode(mut d: Decoder, wire: &[u8], piece: usize) {
    let (mut at, mut end) = (0, 0);
    // Each step consumes bytes or asks for more, so this bounds the steps.
    for _ in 0..=2 * wire.len() + 8 {
        let step = d.step(&wire[at..end]);
        match step {
            Step::Data(n) | Step::Skip(n) => {
                assert!(n > 0 && at + n <= end, "{step:?} at {at}..{end}");
                at += n;
            }
            Step::Done(n) => {
                assert!(at + n <= end, "{step:?} at {at}..{end}");
                return;
            }
            Step::NeedMore if end < wire.len() => end = (end + piece).min(wire.len()),
            Step::NeedMore | Step::Bad => return,
        }
    }
    panic!("the body decoder made no progress");
}
