//! The wirebench UDP datagram format, shared by the UDP client and `wirebench serve udp`, and the
//! receiver-side accounting (loss, reordering, duplicates, jitter) both ends use.
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
//!   datagram in the [`FlowCounters`] of its (peer address, flow id).
//! - **Report request (2)**: the server answers with a **report answer (3)**: the request's header
//!   with the kind changed and the reply size 0, followed by the flow's [`FlowReport`] as JSON
//!   (see [`report_answer`] and [`parse_report_answer`]). A flow the server never saw reports
//!   zeros. The request must come from the same address (socket) as the flow's data.
//! - A datagram that does not start with the magic is a plain client's: an echo server echoes
//!   it, and both modes account it under flow 0, without sequence accounting.
//!
//! # The accounting ([`FlowCounters`])
//!
//! - `received`, `bytes`: every datagram accounted, duplicates included.
//! - `lost` = expected − unique, never negative, where expected = highest sequence − lowest
//!   sequence + 1 and unique = the distinct sequence numbers received. A datagram lost after the
//!   highest one that arrived cannot be seen, as with any sequence-number accounting.
//! - `out_of_order`: arrived with a sequence number below the highest seen so far, and not a
//!   duplicate.
//! - `duplicated`: a sequence number already received, detected within a sliding window of the
//!   [`WINDOW`] sequence numbers below and at the highest; an older sequence number cannot be
//!   checked and counts as out of order (late) and unique.
//! - `jitter_us`: RFC 3550 §6.4.1 / appendix A.8, over consecutive arrivals (duplicates left
//!   out): D = (arrival_i − arrival_{i−1}) − (sent_i − sent_{i−1}), J += (|D| − J) / 16. Kept in
//!   nanoseconds, reported in microseconds.
//!
//! Memory per flow is constant: counters plus a [`WINDOW`]-bit bitmap.

use serde::{Deserialize, Serialize};

/// The header's first four bytes.
pub const MAGIC: [u8; 4] = *b"WBU1";
/// Bytes in the header.
pub const HEADER_LEN: usize = 32;
/// The largest UDP payload over IPv4 (65,535 − 8 UDP − 20 IP header bytes).
pub const MAX_DATAGRAM: usize = 65_507;
/// The largest value the 24-bit reply-size field holds.
pub const MAX_REPLY_FIELD: u32 = 0xFF_FFFF;
/// Sequence numbers the duplicate detector remembers, below and at the highest one seen.
pub const WINDOW: u64 = 4096;

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

/// Words in the duplicate bitmap.
const WINDOW_WORDS: usize = (WINDOW / 64) as usize;

/// Receiver-side accounting of one flow: loss, reordering, duplicates and RFC 3550 jitter, in
/// constant memory (see the module documentation for the definitions).
#[derive(Clone, Debug)]
pub struct FlowCounters {
    received: u64,
    bytes: u64,
    /// Distinct sequence numbers received (as far as the window can tell).
    unique: u64,
    out_of_order: u64,
    duplicated: u64,
    /// Lowest and highest sequence numbers received; `None` before the first.
    range: Option<(u64, u64)>,
    /// Bit `s % WINDOW` is set when sequence number `s` in `(highest − WINDOW, highest]` arrived.
    window: [u64; WINDOW_WORDS],
    /// Send and arrival time of the previous (non-duplicate) arrival.
    last: Option<(u64, u64)>,
    /// The jitter estimate, nanoseconds.
    jitter_ns: f64,
}

impl Default for FlowCounters {
    fn default() -> Self {
        FlowCounters::new()
    }
}

impl FlowCounters {
    /// Counters of a flow that has received nothing.
    pub fn new() -> FlowCounters {
        FlowCounters {
            received: 0,
            bytes: 0,
            unique: 0,
            out_of_order: 0,
            duplicated: 0,
            range: None,
            window: [0; WINDOW_WORDS],
            last: None,
            jitter_ns: 0.0,
        }
    }

    /// Accounts one datagram with sequence number `seq`, sent at `sent_ns` on the sender's clock
    /// and arrived at `arrival_ns` on the receiver's, `bytes` long.
    pub fn on_datagram(&mut self, seq: u64, sent_ns: u64, arrival_ns: u64, bytes: usize) {
        self.received += 1;
        self.bytes += bytes as u64;
        match self.range {
            None => {
                self.range = Some((seq, seq));
                self.mark(seq);
            }
            Some((low, high)) if seq > high => {
                self.advance(high, seq);
                self.mark(seq);
                self.range = Some((low, seq));
            }
            Some((low, high)) => {
                if high - seq < WINDOW {
                    if self.is_marked(seq) {
                        self.duplicated += 1;
                        return;
                    }
                    self.mark(seq);
                }
                self.out_of_order += 1;
                self.range = Some((low.min(seq), high));
            }
        }
        self.unique += 1;
        if let Some((last_sent, last_arrival)) = self.last {
            let d = (i128::from(arrival_ns) - i128::from(last_arrival))
                - (i128::from(sent_ns) - i128::from(last_sent));
            self.jitter_ns += (d.unsigned_abs() as f64 - self.jitter_ns) / 16.0;
        }
        self.last = Some((sent_ns, arrival_ns));
    }

    /// Accounts a datagram without a sequence number (a plain client's): counted and its bytes
    /// added, nothing else.
    pub fn on_unsequenced(&mut self, bytes: usize) {
        self.received += 1;
        self.bytes += bytes as u64;
    }

    /// The counters so far.
    pub fn report(&self) -> FlowReport {
        let (lost, highest_seq) = match self.range {
            Some((low, high)) => {
                let expected = u128::from(high - low) + 1;
                let lost = expected.saturating_sub(u128::from(self.unique));
                (u64::try_from(lost).unwrap_or(u64::MAX), Some(high))
            }
            None => (0, None),
        };
        FlowReport {
            received: self.received,
            bytes: self.bytes,
            lost,
            out_of_order: self.out_of_order,
            duplicated: self.duplicated,
            jitter_us: self.jitter_ns / 1000.0,
            highest_seq,
        }
    }

    fn slot(seq: u64) -> (usize, u64) {
        let bit = seq % WINDOW;
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    fn mark(&mut self, seq: u64) {
        let (word, bit) = Self::slot(seq);
        self.window[word] |= bit;
    }

    fn is_marked(&self, seq: u64) -> bool {
        let (word, bit) = Self::slot(seq);
        self.window[word] & bit != 0
    }

    /// Slides the window from highest `high` to `new`: the slots of `high + 1 ..= new` held
    /// sequence numbers that are now out of the window.
    fn advance(&mut self, high: u64, new: u64) {
        if new - high >= WINDOW {
            self.window = [0; WINDOW_WORDS];
            return;
        }
        for seq in high + 1..=new {
            let (word, bit) = Self::slot(seq);
            self.window[word] &= !bit;
        }
    }
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

    /// Feeds sequence numbers with constant transit; returns the report.
    fn feed(seqs: &[u64]) -> FlowReport {
        let mut c = FlowCounters::new();
        for &s in seqs {
            let sent = s.wrapping_mul(1000);
            c.on_datagram(s, sent, sent.wrapping_add(50), 100);
        }
        c.report()
    }

    /// (received, lost, out of order, duplicated, highest).
    type Expect = (u64, u64, u64, u64, Option<u64>);

    #[test]
    fn loss_reordering_duplicates() {
        let range = |a: u64, b: u64| (a..b).collect::<Vec<_>>();
        let with_gaps: Vec<u64> = (0..1000).filter(|s| ![5, 500, 998].contains(s)).collect();
        let mut old_dup = range(0, 5000);
        old_dup.push(10); // older than the window: late, not a duplicate
        let mut wide = vec![1, 2, 3];
        wide.push(3 + WINDOW * 3);
        wide.push(3 + WINDOW * 3 - 1);
        // (name, sequence numbers, (received, lost, out of order, duplicated, highest))
        let cases: Vec<(&str, Vec<u64>, Expect)> = vec![
            ("empty", vec![], (0, 0, 0, 0, None)),
            ("in order", range(0, 100), (100, 0, 0, 0, Some(99))),
            (
                "starts anywhere",
                range(1_000, 1_010),
                (10, 0, 0, 0, Some(1_009)),
            ),
            ("a gap", vec![0, 1, 2, 5, 6], (5, 2, 0, 0, Some(6))),
            ("gaps", with_gaps, (997, 3, 0, 0, Some(999))),
            ("swap", vec![0, 1, 3, 2, 4], (5, 0, 1, 0, Some(4))),
            ("first late", vec![1, 0, 2], (3, 0, 1, 0, Some(2))),
            ("late fills gap", vec![0, 2, 3, 4, 1], (5, 0, 1, 0, Some(4))),
            ("duplicate", vec![0, 1, 1, 2], (4, 0, 0, 1, Some(2))),
            ("old duplicate", vec![0, 1, 2, 3, 1], (5, 0, 0, 1, Some(3))),
            ("dup of late", vec![0, 2, 1, 1], (4, 0, 1, 1, Some(2))),
            ("beyond window", old_dup, (5001, 0, 1, 0, Some(4999))),
            (
                "jump past window",
                wide,
                (5, 3 * WINDOW - 2, 1, 0, Some(3 + 3 * WINDOW)),
            ),
            (
                "top",
                vec![u64::MAX - 1, u64::MAX],
                (2, 0, 0, 0, Some(u64::MAX)),
            ),
        ];
        for (name, seqs, (received, lost, ooo, dup, highest)) in cases {
            let r = feed(&seqs);
            assert_eq!(
                (
                    r.received,
                    r.lost,
                    r.out_of_order,
                    r.duplicated,
                    r.highest_seq
                ),
                (received, lost, ooo, dup, highest),
                "{name}"
            );
            assert_eq!(r.bytes, 100 * received, "{name}");
        }
    }

    #[test]
    fn window_slides_without_false_duplicates() {
        // Every sequence number once, in order, for several window lengths, with skips: no
        // duplicates may be reported from stale bits.
        let seqs: Vec<u64> = (0..5 * WINDOW).filter(|s| s % 7 != 3).collect();
        let r = feed(&seqs);
        assert_eq!((r.duplicated, r.out_of_order), (0, 0));
        assert_eq!(r.lost, 5 * WINDOW - seqs.len() as u64);
        // A datagram 4095 below the highest is still checked; then re-sending it is a duplicate.
        let mut c = FlowCounters::new();
        c.on_datagram(0, 0, 0, 1);
        c.on_datagram(WINDOW - 1, 0, 0, 1);
        c.on_datagram(0, 0, 0, 1);
        assert_eq!(c.report().duplicated, 1);
    }

    #[test]
    fn unsequenced_counts_only() {
        let mut c = FlowCounters::new();
        c.on_unsequenced(10);
        c.on_unsequenced(20);
        assert_eq!(
            c.report(),
            FlowReport {
                received: 2,
                bytes: 30,
                ..FlowReport::default()
            }
        );
    }

    /// Transit time of datagram i, ns.
    type Transit = Box<dyn Fn(u64) -> u64>;

    #[test]
    fn jitter_follows_rfc_3550() {
        const US: u64 = 1000;
        // (name, transit time of datagram i in ns, datagrams, expected jitter µs, tolerance)
        let expected_alternating = {
            // |D| is 100 µs for every pair: J_n = 100 (1 − (15/16)^(n−1)).
            100.0 * (1.0 - (15.0f64 / 16.0).powi(99))
        };
        let cases: Vec<(&str, Transit, u64, f64)> = vec![
            ("constant transit", Box::new(|_| 500 * US), 100, 0.0),
            (
                "alternating ±100 µs",
                Box::new(|i| if i % 2 == 0 { 1000 * US } else { 1100 * US }),
                100,
                expected_alternating,
            ),
            (
                "one step of 1.6 ms",
                Box::new(|i| if i < 1 { 0 } else { 1600 * US }),
                2,
                100.0,
            ),
        ];
        for (name, transit, n, want) in cases {
            let mut c = FlowCounters::new();
            for i in 0..n {
                let sent = 1_000_000 + i * 20 * US;
                c.on_datagram(i, sent, sent + transit(i), 64);
            }
            let got = c.report().jitter_us;
            assert!((got - want).abs() < 1e-6, "{name}: {got} µs, want {want}");
        }
        // The alternating case converges to |D| itself.
        assert!((expected_alternating - 100.0).abs() < 0.2);
        // Reordered datagrams are taken in arrival order; duplicates are left out.
        let mut c = FlowCounters::new();
        c.on_datagram(0, 0, 1000, 1);
        c.on_datagram(0, 0, 900_000, 1);
        assert_eq!(c.report().jitter_us, 0.0);
        c.on_datagram(2, 2000, 3000, 1);
        c.on_datagram(1, 1000, 3500, 1);
        // D1 = 2000 − 2000 = 0; D2 = 500 − (−1000) = 1500 → J = 1500/16 ns.
        assert!((c.report().jitter_us - 1.5 / 16.0).abs() < 1e-9);
    }
}
