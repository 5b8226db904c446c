//! Receiver-side accounting of one flow of wirebench datagrams (see [`super::datagram`]): loss,
//! reordering, duplicates and RFC 3550 jitter, kept by the UDP server per (peer address, flow
//! id) and sent to the client as a [`FlowReport`] when it asks.
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

use super::datagram::FlowReport;

/// Sequence numbers the duplicate detector remembers, below and at the highest one seen.
pub const WINDOW: u64 = 4096;

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
    /// Arrival time of the first sequenced datagram: the receiver's window starts there.
    first_arrival_ns: Option<u64>,
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
            first_arrival_ns: None,
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
        self.first_arrival_ns.get_or_insert(arrival_ns);
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
            span_us: match (self.first_arrival_ns, self.last) {
                (Some(first), Some((_, last))) if self.unique > 1 => {
                    Some(last.saturating_sub(first) as f64 / 1000.0)
                }
                _ => None,
            },
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
    fn the_receivers_window_is_first_to_last_arrival() {
        // One datagram every 1 ms on the sender's clock; the path delivers one every 2 ms
        // (a queue in front of a slower link), so the receiver's rate is 500/s, not 1000/s.
        let mut c = FlowCounters::new();
        assert_eq!(c.report().span_us, None);
        c.on_datagram(0, 0, 7_000_000, 100);
        assert_eq!(c.report().span_us, None, "one arrival has no window");
        for s in 1..=10 {
            c.on_datagram(s, s * 1_000_000, 7_000_000 + s * 2_000_000, 100);
        }
        c.on_datagram(10, 10_000_000, 30_000_000, 100); // a duplicate: not a new arrival
        let r = c.report();
        assert_eq!(r.span_us, Some(20_000.0));
        assert_eq!(r.receiver_rate(), Some(500.0));
        // A report from a server without the field: no rate, and the JSON round trip holds.
        let old: FlowReport = serde_json::from_str(
            r#"{"received":3,"bytes":9,"lost":0,"out_of_order":0,"duplicated":0,"jitter_us":0.0,"highest_seq":2}"#,
        )
        .unwrap();
        assert_eq!(old.receiver_rate(), None);
    }

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
