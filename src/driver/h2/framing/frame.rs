//! HTTP/2 frames (RFC 9113 §4, §6): the kinds and flags the client reads and writes, and the
//! frames it writes, appended to one output buffer so that many streams' frames leave in one
//! write.

/// The client's connection preface (RFC 9113 §3.4).
pub(super) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A frame header's length.
pub(super) const HEADER: usize = 9;
/// The largest frame either end may send before SETTINGS say otherwise (§4.2, §6.5.2).
pub(super) const DEFAULT_MAX_FRAME: usize = 16_384;
/// The flow-control window before SETTINGS or WINDOW_UPDATE change it (§6.9.2).
pub(super) const DEFAULT_WINDOW: i64 = 65_535;

pub(super) const DATA: u8 = 0;
pub(super) const HEADERS: u8 = 1;
pub(super) const RST_STREAM: u8 = 3;
pub(super) const SETTINGS: u8 = 4;
pub(super) const PUSH_PROMISE: u8 = 5;
pub(super) const PING: u8 = 6;
pub(super) const GOAWAY: u8 = 7;
pub(super) const WINDOW_UPDATE: u8 = 8;
pub(super) const CONTINUATION: u8 = 9;

pub(super) const END_STREAM: u8 = 0x1;
pub(super) const ACK: u8 = 0x1;
pub(super) const END_HEADERS: u8 = 0x4;
pub(super) const PADDED: u8 = 0x8;
pub(super) const PRIORITY: u8 = 0x20;

/// SETTINGS identifiers (§6.5.2).
pub(super) const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub(super) const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub(super) const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub(super) const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// Error codes (§7) the client sends.
pub(super) const CANCEL: u32 = 0x8;
pub(super) const PROTOCOL_ERROR: u32 = 0x1;

/// The name of an HTTP/2 error code (RFC 9113 §7), for error messages.
pub(crate) fn reason_name(code: u32) -> &'static str {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    NAMES
        .get(code as usize)
        .copied()
        .unwrap_or("unknown error code")
}

/// A frame's header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    /// Reads the header at the start of `b` (at least [`HEADER`] bytes).
    pub(super) fn parse(b: &[u8]) -> Head {
        Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize,
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Appends a frame header.
pub(super) fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a frame with a 4-byte payload (WINDOW_UPDATE, RST_STREAM).
pub(super) fn word(out: &mut Vec<u8>, kind: u8, stream: u32, value: u32) {
    head(out, 4, kind, 0, stream);
    out.extend_from_slice(&value.to_be_bytes());
}

/// Appends a header block as HEADERS and, past `max` bytes a frame, CONTINUATION frames.
pub(super) fn headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max: usize) {
    let mut chunks = block.chunks(max).peekable();
    let mut kind = HEADERS;
    let mut flags = if end_stream { END_STREAM } else { 0 };
    if block.is_empty() {
        return head(out, 0, kind, flags | END_HEADERS, stream);
    }
    while let Some(c) = chunks.next() {
        if chunks.peek().is_none() {
            flags |= END_HEADERS;
        }
        head(out, c.len(), kind, flags, stream);
        out.extend_from_slice(c);
        (kind, flags) = (CONTINUATION, 0);
    }
}

/// The payload of a HEADERS or DATA frame without its padding and priority fields (§6.1,
/// §6.2); None if the padding is longer than the frame.
pub(super) fn content(h: &Head, payload: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut start = 0;
    let mut pad = 0;
    if h.flags & PADDED != 0 && h.kind != CONTINUATION {
        pad = *payload.first()? as usize;
        start = 1;
    }
    if h.kind == HEADERS && h.flags & PRIORITY != 0 {
        start += 5;
    }
    let end = payload.len().checked_sub(pad)?;
    (start <= end).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_block_goes_on_in_continuation_frames() {
        let mut out = Vec::new();
        headers(&mut out, 3, &[7; 10], true, 4);
        let first = Head::parse(&out);
        assert_eq!(
            first,
            Head {
                len: 4,
                kind: HEADERS,
                flags: END_STREAM,
                stream: 3
            }
        );
        let last = Head::parse(&out[2 * (HEADER + 4)..]);
        assert_eq!(
            (last.len, last.kind, last.flags),
            (2, CONTINUATION, END_HEADERS)
        );
        assert_eq!(out.len(), 3 * HEADER + 10);
    }

    #[test]
    fn padding_and_priority_are_cut_off() {
        let h = Head {
            len: 10,
            kind: HEADERS,
            flags: PADDED | PRIORITY,
            stream: 1,
        };
        assert_eq!(content(&h, &[2, 0, 0, 0, 0, 0, 9, 9, 0, 0]), Some(6..8));
        assert_eq!(content(&h, &[9, 0]), None);
    }
}
