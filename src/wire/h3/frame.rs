//! HTTP/3 frames (RFC 9114 §7): QUIC variable-length integers, frame heads, and a reader that
//! turns a stream's bytes into events as they arrive. A DATA frame's payload is handed on in
//! the pieces it arrives in, never gathered (a 64 MiB body costs no memory); a HEADERS frame's
//! field section is gathered up to a bound; other frames (SETTINGS, GOAWAY, unknown and
//! reserved types) are gathered up to the same bound or skipped.

/// DATA: a piece of the body.
pub const DATA: u64 = 0x00;
/// HEADERS: a QPACK field section.
pub const HEADERS: u64 = 0x01;
/// SETTINGS, first on a control stream.
pub const SETTINGS: u64 = 0x04;
/// GOAWAY: the last stream the sender will process.
pub const GOAWAY: u64 = 0x07;
/// A unidirectional stream's type: the control stream.
pub const CONTROL_STREAM: u64 = 0x00;
/// H3_NO_ERROR: a graceful close.
pub const NO_ERROR: u64 = 0x100;
/// H3_GENERAL_PROTOCOL_ERROR.
pub const PROTOCOL_ERROR: u64 = 0x101;
/// H3_FRAME_UNEXPECTED.
pub const FRAME_UNEXPECTED: u64 = 0x105;
/// H3_REQUEST_CANCELLED: a request given up.
pub const REQUEST_CANCELLED: u64 = 0x10c;
/// H3_MESSAGE_ERROR: a malformed request or response.
pub const MESSAGE_ERROR: u64 = 0x10e;

/// The largest value of a variable-length integer (RFC 9000 §16).
pub const VARINT_MAX: u64 = (1 << 62) - 1;

/// The name of an HTTP/3 error code (RFC 9114 §8.1), or None for codes outside the list.
pub fn error_name(code: u64) -> Option<&'static str> {
    const NAMES: [&str; 17] = [
        "H3_NO_ERROR",
        "H3_GENERAL_PROTOCOL_ERROR",
        "H3_INTERNAL_ERROR",
        "H3_STREAM_CREATION_ERROR",
        "H3_CLOSED_CRITICAL_STREAM",
        "H3_FRAME_UNEXPECTED",
        "H3_FRAME_ERROR",
        "H3_EXCESSIVE_LOAD",
        "H3_ID_ERROR",
        "H3_SETTINGS_ERROR",
        "H3_MISSING_SETTINGS",
        "H3_REQUEST_REJECTED",
        "H3_REQUEST_CANCELLED",
        "H3_REQUEST_INCOMPLETE",
        "H3_MESSAGE_ERROR",
        "H3_CONNECT_ERROR",
        "H3_VERSION_FALLBACK",
    ];
    code.checked_sub(NO_ERROR)
        .and_then(|i| NAMES.get(i as usize))
        .copied()
}

/// Appends `v` (at most [`VARINT_MAX`]) as a variable-length integer, in its shortest form.
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    if v < 1 << 6 {
        out.push(v as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes());
    } else {
        out.extend_from_slice(&((v & VARINT_MAX) | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// The variable-length integer at the start of `buf` and its length; None if `buf` ends first.
pub fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let len = 1usize << (first >> 6);
    let bytes = buf.get(..len)?;
    let mut v = u64::from(first & 0x3f);
    for &b in &bytes[1..] {
        v = v << 8 | u64::from(b);
    }
    Some((v, len))
}

/// Appends a frame head: its type and payload length.
pub fn put_head(out: &mut Vec<u8>, ty: u64, len: u64) {
    put_varint(out, ty);
    put_varint(out, len);
}

/// Appends a whole frame.
pub fn put_frame(out: &mut Vec<u8>, ty: u64, payload: &[u8]) {
    put_head(out, ty, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// What a stream's bytes bring, as [`FrameReader::feed`] hands them on.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A whole HEADERS frame: its field section.
    Headers(&'a [u8]),
    /// A piece of a DATA frame's payload.
    Data(&'a [u8]),
    /// A whole frame of another type that is gathered (SETTINGS, GOAWAY): type and payload.
    Other(u64, &'a [u8]),
}

/// A stream that breaks the framing: a frame larger than the reader's bound.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("HTTP/3: a frame of type {ty:#x} and {len} bytes is larger than {limit} bytes")]
pub struct TooLarge {
    /// The frame's type.
    pub ty: u64,
    /// Its payload length.
    pub len: u64,
    /// The bound.
    pub limit: usize,
}

/// Turns one stream's bytes into [`Event`]s as they arrive, in pieces of any size.
#[derive(Debug)]
pub struct FrameReader {
    /// A frame head not yet whole (at most two 8-byte integers).
    head: [u8; 16],
    head_len: usize,
    /// The frame being read: its type and payload bytes still to come.
    ty: u64,
    left: u64,
    /// Whether a frame's head has been read and its payload is being read.
    in_frame: bool,
    /// The payload of a gathered frame so far.
    gathered: Vec<u8>,
    /// The largest gathered frame.
    limit: usize,
}

impl FrameReader {
    /// A reader that gathers HEADERS and other frames up to `limit` bytes.
    pub fn new(limit: usize) -> FrameReader {
        FrameReader {
            head: [0; 16],
            head_len: 0,
            ty: 0,
            left: 0,
            in_frame: false,
            gathered: Vec::new(),
            limit,
        }
    }

    /// Whether the bytes so far end at a frame boundary (a stream may end only there).
    pub fn at_boundary(&self) -> bool {
        !self.in_frame && self.head_len == 0
    }

    /// Reads `input`, handing each event to `on`; an error if a gathered frame is too large.
    pub fn feed(
        &mut self,
        mut input: &[u8],
        mut on: impl FnMut(Event<'_>),
    ) -> Result<(), TooLarge> {
        while !input.is_empty() || (self.in_frame && self.left == 0) {
            if !self.in_frame {
                let take = input.len().min(self.head.len() - self.head_len);
                self.head[self.head_len..self.head_len + take].copy_from_slice(&input[..take]);
                let have = &self.head[..self.head_len + take];
                let Some((ty, a)) = varint(have) else {
                    self.head_len += take;
                    return Ok(());
                };
                let Some((len, b)) = varint(&have[a..]) else {
                    self.head_len += take;
                    return Ok(());
                };
                // Of this input, the bytes that belonged to the head.
                input = &input[a + b - self.head_len..];
                self.head_len = 0;
                (self.ty, self.left, self.in_frame) = (ty, len, true);
                if ty != DATA && len > self.limit as u64 {
                    return Err(TooLarge {
                        ty,
                        len,
                        limit: self.limit,
                    });
                }
                self.gathered.clear();
            }
            let take = (self.left.min(input.len() as u64)) as usize;
            let (piece, rest) = input.split_at(take);
            input = rest;
            self.left -= take as u64;
            if self.ty == DATA {
                if !piece.is_empty() {
                    on(Event::Data(piece));
                }
            } else {
                self.gathered.extend_from_slice(piece);
            }
            if self.left == 0 {
                self.in_frame = false;
                match self.ty {
                    DATA => {}
                    HEADERS => on(Event::Headers(&self.gathered)),
                    ty => on(Event::Other(ty, &self.gathered)),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_in_their_shortest_form() {
        for (v, len) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (16383, 2),
            (16384, 4),
            (1 << 30, 8),
            (VARINT_MAX, 8),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), len, "{v}");
            assert_eq!(varint(&out), Some((v, len)));
            assert_eq!(varint(&out[..len - 1]), None);
        }
        // RFC 9000 §A.1's examples.
        assert_eq!(varint(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(varint(&[0x7b, 0xbd]), Some((15_293, 2)));
    }

    /// Frames cut anywhere come out as the same events: DATA in pieces, HEADERS whole.
    #[test]
    fn frames_in_any_pieces() {
        let mut stream = Vec::new();
        put_frame(&mut stream, HEADERS, b"abc");
        put_frame(&mut stream, 0x21, b"grease");
        put_frame(&mut stream, DATA, &[7u8; 300]);
        put_frame(&mut stream, DATA, b"");
        put_frame(&mut stream, HEADERS, b"trailer");
        for cut in 1..stream.len() {
            let mut r = FrameReader::new(100);
            let (mut headers, mut data, mut other) = (Vec::new(), 0, Vec::new());
            for piece in stream.chunks(cut) {
                r.feed(piece, |e| match e {
                    Event::Headers(h) => headers.push(h.to_vec()),
                    Event::Data(d) => data += d.len(),
                    Event::Other(t, p) => other.push((t, p.to_vec())),
                })
                .unwrap();
            }
            assert!(r.at_boundary());
            assert_eq!(headers, [b"abc".to_vec(), b"trailer".to_vec()], "cut {cut}");
            assert_eq!(data, 300);
            assert_eq!(other, [(0x21, b"grease".to_vec())]);
        }
    }

    #[test]
    fn a_gathered_frame_past_the_bound_is_refused() {
        let mut stream = Vec::new();
        put_head(&mut stream, HEADERS, 1 << 20);
        let mut r = FrameReader::new(1000);
        assert!(r.feed(&stream, |_| {}).is_err());
        assert_eq!(error_name(0x10c), Some("H3_REQUEST_CANCELLED"));
        assert_eq!(error_name(0x99), None);
    }
}
