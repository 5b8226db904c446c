//! The wirebench UDP datagram format, shared by the UDP client and `wirebench serve udp`. What a
//! receiver makes of the datagrams of a flow (loss, reordering, duplicates, jitter) is
//! [`super::flow`].
//!
//! # The header
//!
//! Every wirebench datagram starts with a 32-byte header, all integers big-endian:
//!
//! | bytes  | field        | meaning                                                              |
//! |--------|--------------|----------------------------------------------------------------------|
//! | 0..4   | magic        | `b"WBU1"`                                                            |
//! | 4      | kind         | 0 data (a request), 1 reply, 2 report request, 3 report answer       |
//! | 5..8   | reply size   | u24: the size of the reply the sender wants; 0 = the request's size   |
//! | 8..16  | flow id      | u64, chosen at random by each client run                             |
//! | 16..24 | sequence     | u64, counting from any start, one per data datagram                  |
//! | 24..32 | sent at      | u64 nanoseconds on the sender's own monotonic clock                  |
//!
//! The rest of a data datagram is filler of any content; a datagram is at most
//! [`MAX_DATAGRAM`] bytes (the IPv4 UDP payload limit), so a reply size never needs the
//! whole 24 bits.
//!
//! The send time is only ever used in differences between datagrams of one sender (RFC 3550
//! transit-time differences), so the sender's and the receiver's clocks need no common origin.
//!
//! # The exchange
//!
//! - **Data (0)**: an echo server answers with a **reply (1)** that copies flow, sequence and send
//!   time, either the same bytes back (only the kind changed) or `reply size` bytes (header, then
//!   filler) when the request's reply size (or the server's own setting) asks for it; a reply is
//!   never shorter than the header. A sink answers nothing. Either way the server accounts the
//!   datagram in the [`FlowCounters`](super::flow::FlowCounters) of its (peer address, flow id).
//! - **Report request (2)**: the server answers with a **report answer (3)**: the request's header
//!   with the kind changed and the reply size 0, followed by the flow's [`FlowReport`] as JSON
//!   (see [`report_answer`] and [`parse_report_answer`]). A flow the server never saw reports
//!   zeros. The request must come from the same address (socket) as the flow's data.
//! - A datagram that does not start with the magic is a plain client's: an echo server echoes
//!   it, and both modes account it under flow 0, without sequence accounting.

use serde::{Deserialize, Serialize};

/// The header's first four bytes.
pub const MAGIC: [u8; 4] = *b"WBU1";
/// Bytes in the header.
pub const HEADER_LEN: usize = 32;
/// The largest UDP payload over IPv4 (65,535 − 8 UDP − 20 IP header bytes).
pub const MAX_DATAGRAM: usize = 65_507;
/// The largest value the 24-bit reply-size field holds.
pub const MAX_REPLY_FIELD: u32 = 0xFF_FFFF;

/// What a datagram is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A request (echo) or a measured message (sink).
    Data = 0,
    /// An echo server's answer to a data datagram.
    Reply = 1,
    /// Asks the server for its counters of this flow.
    ReportRequest = 2,
    /// The server's counters of a flow, as JSON after the header.
    ReportAnswer = 3,
}

impl Kind {
    /// The kind with this wire value, if any.
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            0 => Kind::Data,
            1 => Kind::Reply,
            2 => Kind::ReportRequest,
            3 => Kind::ReportAnswer,
            _ => return None,
        })
    }
}

/// The 32-byte header of a wirebench datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What the datagram is.
    pub kind: Kind,
    /// The reply size the sender asks for (0 = the request's size); 24 bits on the wire.
    pub reply_size: u32,
    /// The flow (client run) the datagram belongs to.
    pub flow: u64,
    /// The sequence number.
    pub seq: u64,
    /// Send time in nanoseconds on the sender's monotonic clock.
    pub sent_ns: u64,
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`. A reply size above
    /// [`MAX_REPLY_FIELD`] is written as that maximum.
    ///
    /// # Panics
    ///
    /// If `buf` is shorter than [`HEADER_LEN`].
    pub fn encode(&self, buf: &mut [u8]) {
        let buf = &mut buf[..HEADER_LEN];
        buf[0..4].copy_from_slice(&MAGIC);
        buf[4] = self.kind as u8;
        let size = self.reply_size.min(MAX_REPLY_FIELD).to_be_bytes();
        buf[5..8].copy_from_slice(&size[1..4]);
        buf[8..16].copy_from_slice(&self.flow.to_be_bytes());
        buf[16..24].copy_from_slice(&self.seq.to_be_bytes());
        buf[24..32].copy_from_slice(&self.sent_ns.to_be_bytes());
    }

    /// Reads a header; `None` when `buf` is too short, lacks the magic, or has an unknown kind.
    pub fn decode(buf: &[u8]) -> Option<Header> {
        if buf.len() < HEADER_LEN || !has_magic(buf) {
            return None;
        }
        let u64_at = |at: usize| {
            let mut b = [0; 8];
            b.copy_from_slice(&buf[at..at + 8]);
            u64::from_be_bytes(b)
        };
        Some(Header {
            kind: Kind::from_u8(buf[4])?,
            reply_size: u32::from_be_bytes([0, buf[5], buf[6], buf[7]]),
            flow: u64_at(8),
            seq: u64_at(16),
            sent_ns: u64_at(24),
        })
    }

    /// This header as the given kind.
    pub fn with_kind(self, kind: Kind) -> Header {
        Header { kind, ..self }
    }
}

/// True when `buf` starts with the wirebench magic (it may still be too short or malformed).
pub fn has_magic(buf: &[u8]) -> bool {
    buf.starts_with(&MAGIC)
}

/// A receiver's counters of one flow, as a server sends them in a report answer.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FlowReport {
    /// Datagrams accounted, duplicates included.
    pub received: u64,
    /// Their bytes (whole datagrams, headers included).
    pub bytes: u64,
    /// Expected (highest − lowest sequence + 1) minus distinct sequence numbers received.
    pub lost: u64,
    /// Arrived below the highest sequence number seen so far (duplicates not included).
    pub out_of_order: u64,
    /// Sequence numbers received more than once (within the duplicate window).
    pub duplicated: u64,
    /// RFC 3550 interarrival jitter, microseconds.
    pub jitter_us: f64,
    /// The highest sequence number received; `None` before the first sequenced datagram.
    pub highest_seq: Option<u64>,
    /// The receiver's own window: from the first sequenced arrival to the last, µs; `None`
    /// before two (and from servers older than this field). The flow's distinct datagrams
    /// over it are the rate the path delivered, whatever the sender's window was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_us: Option<f64>,
}

impl FlowReport {
    /// Datagrams per second the receiver got over its own window (`span_us`): the intervals
    /// between the distinct arrivals, over the time from the first to the last.
    pub fn receiver_rate(&self) -> Option<f64> {
        let span = self.span_us.filter(|&s| s > 0.0)? / 1e6;
        let distinct = self.received.saturating_sub(self.duplicated);
        Some(distinct.saturating_sub(1) as f64 / span)
    }
}

/// The bytes of a report answer to `request`: its header as [`Kind::ReportAnswer`] with reply
/// size 0, then `report` as JSON.
pub fn report_answer(request: &Header, report: &FlowReport) -> Vec<u8> {
    let mut out = vec![0; HEADER_LEN];
    Header {
        kind: Kind::ReportAnswer,
        reply_size: 0,
        ..*request
    }
    .encode(&mut out);
    // Serializing plain numbers and an option cannot fail.
    out.extend_from_slice(&serde_json::to_vec(report).unwrap_or_default());
    out
}

/// Reads a report answer: its header and report; `None` when `buf` is not one.
pub fn parse_report_answer(buf: &[u8]) -> Option<(Header, FlowReport)> {
    let header = Header::decode(buf)?;
    if header.kind != Kind::ReportAnswer {
        return None;
    }
    let report = serde_json::from_slice(&buf[HEADER_LEN..]).ok()?;
    Some((header, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects() {
        let h = Header {
            kind: Kind::ReportRequest,
            reply_size: 65_507,
            flow: 0x0102_0304_0506_0708,
            seq: u64::MAX - 1,
            sent_ns: 123_456_789,
        };
        let mut buf = [0xAA; 40];
        h.encode(&mut buf);
        assert_eq!(&buf[..5], b"WBU1\x02");
        assert_eq!(&buf[5..8], &[0x00, 0xFF, 0xE3]);
        assert_eq!(&buf[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(buf[32..], [0xAA; 8]);
        assert_eq!(Header::decode(&buf), Some(h));
        assert_eq!(Header::decode(&buf[..31]), None);
        let mut bad = buf;
        bad[4] = 4;
        assert_eq!(Header::decode(&bad), None);
        bad = buf;
        bad[0] = b'X';
        assert_eq!(Header::decode(&bad), None);
        let big = Header {
            reply_size: u32::MAX,
            ..h
        };
        big.encode(&mut buf);
        assert_eq!(Header::decode(&buf).unwrap().reply_size, MAX_REPLY_FIELD);
    }

    #[test]
    fn report_answer_round_trips() {
        let request = Header {
            kind: Kind::ReportRequest,
            reply_size: 99,
            flow: 7,
            seq: 3,
            sent_ns: 5,
        };
        let report = FlowReport {
            received: 10,
            bytes: 640,
            lost: 1,
            jitter_us: 2.5,
            highest_seq: Some(10),
            ..FlowReport::default()
        };
        let bytes = report_answer(&request, &report);
        let (h, r) = parse_report_answer(&bytes).unwrap();
        assert_eq!(h.kind, Kind::ReportAnswer);
        assert_eq!((h.flow, h.seq, h.sent_ns, h.reply_size), (7, 3, 5, 0));
        assert_eq!(r, report);
        assert!(parse_report_answer(&bytes[..HEADER_LEN]).is_none());
    }
}
