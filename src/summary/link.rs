//! `--link`: the measured payload rate set against the link's nominal rate, and the rate on
//! the wire once every packet's headers are counted, as RFC 6349 §3.3.1 does it: a full TCP
//! segment carries the MSS under its TCP header (and options), the IP header, and Ethernet's
//! framing: 14 bytes of header and 4 of FCS, then 8 of preamble and start delimiter and a
//! 12-byte inter-frame gap on the line. With a 1500-byte MTU, 1460 of every 1538 bytes on the
//! line are payload: at most 94.9 Mbit/s of TCP payload on a 100 Mbit/s link (94.1 with the
//! timestamp option, whose 12 bytes leave an MSS of 1448).

use crate::plan::link::Link as LinkPlan;
use crate::record::exchange::Family;
use crate::record::Segment;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Ethernet II header: destination and source MAC, EtherType (IEEE 802.3 §3.1.1).
pub const ETHERNET_HEADER: u32 = 14;
/// Ethernet frame check sequence (CRC-32).
pub const ETHERNET_FCS: u32 = 4;
/// Preamble (7 bytes) and start frame delimiter (1), sent before every frame.
pub const PREAMBLE_SFD: u32 = 8;
/// The least idle time between frames: 96 bit times, 12 bytes.
pub const INTERFRAME_GAP: u32 = 12;
/// The shortest Ethernet frame, header and FCS included; shorter ones are padded.
pub const MIN_FRAME: u32 = 64;

/// Rates set against the link's nominal rate (the result's `link` section).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Link {
    /// Where the nominal rate comes from: the flag, or the interface found by `auto`.
    pub source: String,
    /// The link's nominal rate, bits/s; absent when `auto` found none (loopback).
    pub bits_per_s: Option<f64>,
    /// What the payload rate counts, in the busier direction: `sent`, `received`, or
    /// `acknowledged` (an upload's bytes the receiver acknowledged, from TCP_INFO).
    pub direction: super::Name,
    /// Payload bits/s in that direction.
    pub payload_bits_per_s: f64,
    /// The payload rate as a % of the link's nominal rate.
    pub payload_percent: Option<f64>,
    /// The packets the estimate assumes; absent when no session reported its MSS (HTTP).
    pub packet: Option<Packet>,
    /// Estimated rate of Ethernet frames (payload and IP, transport and Ethernet headers;
    /// no FCS, preamble or gap), as Linux counts frames: its qdiscs (tbf) and interface counters.
    pub frames: Option<Rate>,
    /// Estimated rate on the line: frames with FCS, preamble, start delimiter and inter-frame gap.
    pub line: Option<Rate>,
    /// RFC 6349's maximum achievable payload rate on this link with full packets of this size.
    pub max_payload_bits_per_s: Option<f64>,
}

/// One packet as the estimate counts it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Packet {
    /// Payload bytes per packet: the MSS (or datagram) in bulk modes, a message's share of its
    /// packets in request/response.
    pub payload_bytes: f64,
    /// Transport header bytes (TCP with options, or UDP).
    pub transport_header_bytes: u32,
    /// IP header bytes: 20 (IPv4) or 40 (IPv6).
    pub ip_header_bytes: u32,
    /// Packets per second in the direction measured.
    pub per_s: f64,
}

/// A bit rate and its share of the link.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Bits per second.
    pub bits_per_s: f64,
    /// % of the link's nominal rate.
    pub percent: Option<f64>,
}

/// What the estimate is made from: the payload rate in the busier direction and how it is cut
/// into packets.
#[derive(Clone, Copy, Debug)]
pub struct Traffic {
    /// What is counted: `sent`, `received`, or `acknowledged` (an upload's bytes the
    /// receiver acknowledged, from TCP_INFO).
    pub direction: &'static str,
    /// Payload bits/s.
    pub payload_bits_per_s: f64,
    /// Payload bytes of one message (one request or reply); None for a bulk byte stream,
    /// which TCP cuts into full segments.
    pub message_bytes: Option<f64>,
}

/// How much Ethernet framing a rate counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// The Ethernet header only, as Linux counts a frame's length.
    Frames,
    /// Header, FCS, preamble and start delimiter, inter-frame gap: the line's time.
    Line,
}

/// The busier direction of `t`'s payload: in an upload, the bytes the receiver acknowledged
/// over the measured time (`acked_per_s`, from TCP_INFO: bytes still queued in buffers at the
/// end have not crossed the link); in other bulk modes the bytes moved; else the larger of
/// requests and replies, with a message's size.
pub fn traffic(t: &super::Throughput, bulk: bool, acked_per_s: Option<f64>) -> Traffic {
    let (direction, mb_per_s) = if t.sent_mb_per_s >= t.received_mb_per_s {
        ("sent", t.sent_mb_per_s)
    } else {
        ("received", t.received_mb_per_s)
    };
    if bulk {
        let (counted, bytes_per_s) = match acked_per_s {
            Some(b) => ("acknowledged", b),
            None => (direction, t.gbit_per_s * 1e9 / 8.0),
        };
        return Traffic {
            direction: counted,
            payload_bits_per_s: bytes_per_s * 8.0,
            message_bytes: None,
        };
    }
    Traffic {
        direction,
        payload_bits_per_s: mb_per_s * 8e6,
        message_bytes: Some(mb_per_s * 1e6 / t.ops_per_s.max(1e-9)),
    }
}

/// IP header bytes for the target's address family (RFC 791 without options; RFC 8200).
pub fn ip_header(addr: SocketAddr) -> u32 {
    match addr {
        SocketAddr::V4(_) => 20,
        SocketAddr::V6(_) => 40,
    }
}

/// Bytes one packet with `payload` bytes occupies, at the given framing.
pub fn packet_bytes(payload: f64, transport: u32, ip: u32, framing: Framing) -> f64 {
    let frame = (payload + f64::from(transport + ip + ETHERNET_HEADER + ETHERNET_FCS))
        .max(f64::from(MIN_FRAME));
    match framing {
        Framing::Frames => frame - f64::from(ETHERNET_FCS),
        Framing::Line => frame + f64::from(PREAMBLE_SFD + INTERFRAME_GAP),
    }
}

/// Payload bytes per packet and packets per message: a bulk stream fills segments; a message
/// takes as many as its size needs (a datagram is always one), sharing its bytes among them.
fn cut(t: &Traffic, seg: Segment, family: Family) -> (f64, f64) {
    let full = if t.direction == "received" {
        seg.received
    } else {
        seg.payload
    };
    let mss = f64::from(full.max(1));
    match t.message_bytes {
        None => (mss, 1.0),
        Some(_) if family == Family::Datagram => (mss, 1.0),
        Some(m) => {
            let k = (m / mss).ceil().max(1.0);
            (m / k, k)
        }
    }
}

/// The `link` section: `traffic` against `link`, with packets shaped as `segment` says.
pub fn of(
    link: &LinkPlan,
    traffic: Traffic,
    segment: Option<Segment>,
    family: Family,
    addr: SocketAddr,
) -> Link {
    let share = |bits: f64| link.bits_per_s.map(|l| 100.0 * bits / l);
    let ip = ip_header(addr);
    let shape = segment.map(|seg| (seg, cut(&traffic, seg, family)));
    let rate = |framing| {
        shape.map(|(seg, (p, _))| {
            let bits = traffic.payload_bits_per_s * packet_bytes(p, seg.header, ip, framing) / p;
            Rate {
                bits_per_s: bits,
                percent: share(bits),
            }
        })
    };
    Link {
        source: link.source.clone(),
        bits_per_s: link.bits_per_s,
        direction: traffic.direction.into(),
        payload_bits_per_s: traffic.payload_bits_per_s,
        payload_percent: share(traffic.payload_bits_per_s),
        packet: shape.map(|(seg, (p, _))| Packet {
            payload_bytes: p,
            transport_header_bytes: seg.header,
            ip_header_bytes: ip,
            per_s: traffic.payload_bits_per_s / 8.0 / p,
        }),
        frames: rate(Framing::Frames),
        line: rate(Framing::Line),
        max_payload_bits_per_s: shape
            .zip(link.bits_per_s)
            .map(|((seg, (p, _)), l)| l * p / packet_bytes(p, seg.header, ip, Framing::Line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: &str = "198.18.7.2:9";

    fn link(bits: f64) -> LinkPlan {
        LinkPlan {
            bits_per_s: Some(bits),
            source: "--link test".into(),
        }
    }

    fn bulk(mbit: f64) -> Traffic {
        Traffic {
            direction: "sent",
            payload_bits_per_s: mbit * 1e6,
            message_bytes: None,
        }
    }

    fn tcp(mss: u32, header: u32) -> Option<Segment> {
        Some(Segment {
            payload: mss,
            received: mss,
            header,
            acked: None,
        })
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// RFC 6349 §3.3.1: 1500-byte MTU, MSS 1460, 100 Mbit/s: (1460 / 1538) x 100 = 94.9 Mbit/s.
    #[test]
    fn rfc6349_max_tcp_throughput_at_100_mbit() {
        let l = of(
            &link(100e6),
            bulk(90.0),
            tcp(1460, 20),
            Family::Stream,
            V4.parse().unwrap(),
        );
        let max = l.max_payload_bits_per_s.unwrap();
        assert!(close(max, 94.93e6, 0.01e6), "{max}");
        // With the timestamp option (MSS 1448 under a 32-byte TCP header): 94.1 Mbit/s.
        let l = of(
            &link(100e6),
            bulk(90.0),
            tcp(1448, 32),
            Family::Stream,
            V4.parse().unwrap(),
        );
        let max = l.max_payload_bits_per_s.unwrap();
        assert!(close(max, 94.15e6, 0.01e6), "{max}");
    }

    /// At RFC 6349's maximum, the line is exactly full; the frames are 1514 of its 1538 bytes.
    #[test]
    fn the_maximum_fills_the_line() {
        let l = of(
            &link(100e6),
            bulk(94.928_478_5),
            tcp(1460, 20),
            Family::Stream,
            V4.parse().unwrap(),
        );
        let line = l.line.unwrap();
        assert!(close(line.percent.unwrap(), 100.0, 0.001), "{line:?}");
        let frames = l.frames.unwrap();
        assert!(
            close(frames.bits_per_s, 100e6 * 1514.0 / 1538.0, 1.0),
            "{frames:?}"
        );
        assert!(close(l.payload_percent.unwrap(), 94.93, 0.01));
    }

    /// The DIM seed's 11,450 of 12,500 KB/s on 100 Mbit/s Ethernet: 91.6% of the link in
    /// payload, 97.3% of it on the line with 1448-byte segments.
    #[test]
    fn dim_seed_conclusion() {
        let l = of(
            &link(100e6),
            bulk(91.6),
            tcp(1448, 32),
            Family::Stream,
            V4.parse().unwrap(),
        );
        assert!(close(l.payload_percent.unwrap(), 91.6, 1e-9));
        let line = l.line.unwrap().percent.unwrap();
        assert!(close(line, 91.6 * 1538.0 / 1448.0, 1e-6), "{line}");
    }

    /// IPv6's header is 20 bytes longer; small messages are padded to the 64-byte minimum frame.
    #[test]
    fn ipv6_and_small_messages() {
        assert_eq!(ip_header("[::1]:9".parse().unwrap()), 40);
        // A 4-byte message in its own segment: 4 + 20 + 20 + 18 = 62, padded to 64, + 20 = 84.
        assert_eq!(packet_bytes(4.0, 20, 20, Framing::Line), 84.0);
        assert_eq!(packet_bytes(4.0, 20, 20, Framing::Frames), 60.0);
        let rr = Traffic {
            direction: "sent",
            payload_bits_per_s: 8.0 * 4.0 * 1000.0,
            message_bytes: Some(4.0),
        };
        let l = of(
            &link(1e9),
            rr,
            tcp(1460, 20),
            Family::Stream,
            V4.parse().unwrap(),
        );
        assert!(close(l.line.unwrap().bits_per_s, 84.0 * 8.0 * 1000.0, 1e-6));
        assert!(close(l.packet.unwrap().per_s, 1000.0, 1e-9));
    }

    /// A 64 KiB message over 1448-byte segments takes 46 of them.
    #[test]
    fn large_messages_take_several_segments() {
        let rr = Traffic {
            direction: "received",
            payload_bits_per_s: 65536.0 * 8.0 * 100.0,
            message_bytes: Some(65536.0),
        };
        let l = of(
            &link(1e9),
            rr,
            tcp(1448, 32),
            Family::Stream,
            V4.parse().unwrap(),
        );
        let p = l.packet.unwrap();
        assert!(close(p.per_s, 4600.0, 1e-6), "{p:?}");
        let wire = (65536.0 + 46.0 * (52.0 + 38.0)) * 8.0 * 100.0;
        assert!(close(l.line.unwrap().bits_per_s, wire, 1e-3));
    }

    /// Without a nominal rate (auto on loopback) there are rates but no shares.
    #[test]
    fn no_link_speed_no_percent() {
        let none = LinkPlan {
            bits_per_s: None,
            source: "auto: lo".into(),
        };
        let l = of(
            &none,
            bulk(10.0),
            tcp(65483, 32),
            Family::Stream,
            V4.parse().unwrap(),
        );
        assert_eq!(l.payload_percent, None);
        assert_eq!(l.line.unwrap().percent, None);
        assert_eq!(l.max_payload_bits_per_s, None);
    }
}
