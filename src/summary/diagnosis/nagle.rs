//! Nagle's algorithm (RFC 896) meeting delayed ACK (RFC 1122 §4.2.3.2): a side that writes one
//! message in several small writes without TCP_NODELAY holds every piece after the first until
//! the first is acknowledged, and the receiver, which has no reply to carry the ACK yet, delays
//! it (Linux: at least 40 ms, TCP_DELACK_MIN; up to 200 ms). Each exchange then takes one
//! delayed-ACK timeout: the DCMTK study (seed 003: 1000 images in 5 minutes instead of 1 s),
//! ~44 ms per exchange on the machine docs/method.md was measured on.
//!
//! Signs: the latency piles up near 40 ms (or 200 ms); `TcpExt DelayedACKs` rises about once
//! per exchange; the client's `TCP_INFO` shows the delayed-ACK timer. Which side holds the
//! segment: with the client's TCP_NODELAY on, nothing the client writes waits, so the server
//! holds its reply's later pieces; with it off, the client holds its own if turning it on
//! removes the stall.

use super::{Change, Confidence, Evidence, Finding, Variant};
use crate::summary::{Distribution, Summary};
use crate::units::format_us;

/// Latencies in these bands (µs) are as long as a delayed ACK: 40 ms and up (the minimum,
/// plus scheduling), and Linux's 200 ms maximum.
const BANDS: [(u64, u64); 2] = [(35_000, 80_000), (180_000, 260_000)];
/// The share of exchanges in the bands from which the stall is a hypothesis worth testing.
const STALL_SHARE: f64 = 0.3;
/// Below this share a variant has removed the stall.
const GONE: f64 = 0.1;
/// The client buffers the buffer variant sets (larger than DCMTK's 64 KB, which stalled).
const LARGE_BUFFERS: usize = 1 << 20;

/// The share of operations whose latency falls in a delayed-ACK band.
pub fn stall_share(d: &Distribution) -> Option<f64> {
    let h = d.histogram.decode().ok()?;
    if h.is_empty() {
        return None;
    }
    let inside: u64 = BANDS
        .iter()
        .map(|&(lo, hi)| h.count_between(lo * 1000, hi * 1000))
        .sum();
    Some(inside as f64 / h.len() as f64)
}

/// The variants that test the hypothesis: the client's TCP_NODELAY flipped, and large buffers.
pub fn variants(base: &Summary) -> Vec<(&'static str, Change)> {
    let share = base.latency.as_ref().and_then(stall_share).unwrap_or(0.0);
    if !super::is_tcp(base) || share < STALL_SHARE {
        return Vec::new();
    }
    vec![
        ("nagle_delayed_ack", Change::Nodelay(!base.config.nodelay)),
        ("nagle_delayed_ack", Change::Buffers(LARGE_BUFFERS)),
    ]
}

/// The finding, if the baseline stalls like this.
pub fn finding(base: &Summary, ev: &Evidence, variants: &[Variant]) -> Option<Finding> {
    let l = base.latency.as_ref()?;
    let share = stall_share(l)?;
    if !super::is_tcp(base) || share < STALL_SHARE {
        return None;
    }
    let mine: Vec<&Variant> = variants
        .iter()
        .filter(|v| v.hypothesis == "nagle_delayed_ack")
        .collect();
    let mut evidence = vec![format!(
        "{:.0}% of {} exchanges took as long as a delayed ACK (35-80 ms or 180-260 ms); p50 {}",
        share * 100.0,
        l.count,
        format_us(l.p50_us)
    )];
    let per = ev.delayed_acks_per_exchange;
    if let (Some(n), Some(p)) = (ev.delayed_acks, per) {
        evidence.push(format!("TcpExt DelayedACKs (/proc/net/netstat) rose by {n} during the run: {p:.2} per exchange (the counter covers this network namespace, a server here included)"));
    }
    if let Some(t) = &ev.tcp_info {
        evidence.push(format!(
            "the client's connections (TCP_INFO): rtt {}, delayed-ACK timeout (ato) {}, at most {} segment(s) unacknowledged{}",
            format_us(f64::from(t.rtt_us)),
            format_us(f64::from(t.ato_us)),
            t.unacked,
            if t.unacked == 0 { ": the client never had data waiting for an ACK" } else { "" }
        ));
    }
    if base.config.nodelay {
        evidence.push("the client's TCP_NODELAY was on: nothing it wrote waited for an ACK".into());
    }
    evidence.extend(mine.iter().map(|v| effect(v, l)));
    let side = side(base, &mine);
    let confirmed = per.is_some_and(|p| (0.5..=3.0).contains(&p));
    Some(Finding {
        id: "nagle_delayed_ack".into(),
        title: format!(
            "Nagle's algorithm meets delayed ACK: each exchange waits ~{} for an ACK; the {side} holds back part of its message",
            format_us(l.p50_us)
        ),
        confidence: if share >= 0.5 && confirmed {
            Confidence::High
        } else {
            Confidence::Medium
        },
        side: side.into(),
        evidence,
        fix: fix(side, &mine, base.protocol.name()),
        rank: 1,
    })
}

/// What a variant did to the stall.
fn effect(v: &Variant, base: &Distribution) -> String {
    let share = v.figures.stall_share.unwrap_or(0.0);
    let p50 = v.figures.p50_us.unwrap_or(0.0);
    let what = if share < GONE {
        "the stall is gone".to_string()
    } else if (p50 - base.p50_us).abs() < 0.2 * base.p50_us {
        "no change".to_string()
    } else {
        format!("p50 {} the baseline's", super::times(p50, base.p50_us))
    };
    format!(
        "with {} on the client: p50 {}, {:.0}% stalled: {what}",
        v.flags,
        format_us(p50),
        share * 100.0
    )
}

/// Who holds the segment. With the client's TCP_NODELAY on it holds nothing, so a stall is the
/// server's; with it off, the stall is the client's if turning it on removes it.
fn side(base: &Summary, mine: &[&Variant]) -> &'static str {
    let cured_by_client_nodelay = mine
        .iter()
        .any(|v| v.change == Change::Nodelay(true) && v.figures.stall_share.unwrap_or(1.0) < GONE);
    if !base.config.nodelay && cured_by_client_nodelay {
        "client"
    } else {
        "server"
    }
}

/// What to set where.
fn fix(side: &str, mine: &[&Variant], protocol: &str) -> String {
    let buffers = mine
        .iter()
        .find(|v| matches!(v.change, Change::Buffers(_)))
        .map(|v| {
            if v.figures.stall_share.unwrap_or(1.0) < GONE {
                format!(" Larger socket buffers ({}) also removed it here (the DCMTK study's TCP_BUFFER_LENGTH), but TCP_NODELAY is the cure.", v.flags)
            } else {
                " Larger socket buffers did not help.".to_string()
            }
        })
        .unwrap_or_default();
    // `wirebench serve tcp`'s flag only where the target speaks what it serves: a storescp
    // target was told serve tcp's flags (issue 40).
    let serve = match protocol {
        "tcp" => "; `wirebench serve tcp`: leave out --no-nodelay",
        _ => "",
    };
    let main = if side == "client" {
        "Set TCP_NODELAY on the client's sockets (wirebench: leave out --no-nodelay), or write each request in one write()/writev().".to_string()
    } else {
        format!("Set TCP_NODELAY on the server's sockets (setsockopt IPPROTO_TCP TCP_NODELAY 1{serve}), or have the server write each reply in one write()/writev() instead of pieces.")
    };
    // DCMTK's tools take both settings from the environment, not from flags
    // (docs/studies.md; dcmtk/config/docs/envvars.txt): the study's own cure.
    let dcmtk = if protocol == "dicom" && side == "server" {
        " A DCMTK peer (storescp, storescu, movescu …) reads it from its environment: start it with TCP_NODELAY=1 (TCP_BUFFER_LENGTH sets its buffers), as in the DCMTK study."
    } else {
        ""
    };
    format!("{main}{buffers}{dcmtk}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_histogram;

    #[test]
    fn the_stall_share_counts_the_delayed_ack_bands() {
        let mut h = new_histogram();
        for _ in 0..3 {
            h.record(44_000_000).unwrap(); // 44 ms: Linux's 40 ms minimum, plus scheduling
        }
        h.record(200_000_000).unwrap(); // the 200 ms maximum
        h.record(30_000).unwrap(); // 30 µs: a healthy exchange
        h.record(10_000_000).unwrap(); // 10 ms: neither
        let d = Distribution::of(&h).unwrap();
        assert!((stall_share(&d).unwrap() - 4.0 / 6.0).abs() < 1e-9);
    }
}
