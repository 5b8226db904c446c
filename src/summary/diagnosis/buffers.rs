//! Socket buffers capping a bulk transfer. A connection moves at most one window per round
//! trip, and the window is bounded by the receiver's SO_RCVBUF and the sender's SO_SNDBUF;
//! setting either explicitly switches off the kernel's auto-tuning (docs/method.md). Two views
//! together say which side: the client's `TCP_INFO` tells how long its sending waited on the
//! peer's window (`tcpi_rwnd_limited`) or on its own send buffer (`tcpi_sndbuf_limited`), and a
//! sweep of the client's buffers shows what the client's side can change, with the knee: the
//! smallest size within 10% of the best.

use super::{size_text, Change, Confidence, Evidence, Figures, Finding, Variant};
use crate::summary::{ClientMode, ProtocolName, Summary};

/// The client buffer sizes swept (both SO_SNDBUF and SO_RCVBUF), around DCMTK's 64 KB.
const SIZES: [usize; 5] = [16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
/// A sender waiting on a window this share of its busy time is capped by it, %.
const LIMITED_PERCENT: f64 = 25.0;
/// A window at most this share of the auto-tuning start (tcp_rmem's default) is set small by
/// hand: no auto-tuned buffer advertises so little. Then waiting on it [`TINY_LIMITED_PERCENT`]
/// of the time is enough (on a loaded host the sender waits on its CPU too, which hides part
/// of the window's share).
const TINY_WINDOW_SHARE: u32 = 8;
/// See [`TINY_WINDOW_SHARE`], %.
const TINY_LIMITED_PERCENT: f64 = 10.0;
/// A client setting that beats the baseline by this factor names the client's buffers.
const CLIENT_GAIN: f64 = 2.0;
/// Linux's default `net.ipv4.tcp_rmem` middle value, when it cannot be read.
const DEFAULT_RMEM: u32 = 131_072;
/// The knee: the smallest size within this fraction of the best.
const KNEE: f64 = 0.9;

/// Whether the run is a bulk transfer (whose rate buffers bound).
fn bulk(s: &Summary) -> bool {
    super::is_tcp(s) && s.mode.bulk()
}

/// The sweep of the client's buffers, for a bulk transfer.
pub fn variants(base: &Summary) -> Vec<(&'static str, Change)> {
    if !bulk(base) {
        return Vec::new();
    }
    SIZES
        .iter()
        .map(|&n| ("socket_buffers", Change::Buffers(n)))
        .collect()
}

/// The baseline's label in the sweep: auto-tuned, or the sizes the user set.
fn baseline_label(base: &Summary) -> String {
    match (base.config.sndbuf, base.config.rcvbuf) {
        (None, None) => "auto".into(),
        (s, r) => format!(
            "as given (sndbuf {}, rcvbuf {})",
            s.map_or("auto".into(), size_text),
            r.map_or("auto".into(), size_text)
        ),
    }
}

/// The sweep's best rate, its knee, and the table as a line of evidence.
fn sweep(base: &Summary, own: f64, variants: &[Variant]) -> (f64, Option<usize>, String) {
    let sweep: Vec<(usize, f64)> = variants
        .iter()
        .filter_map(|v| match v.change {
            Change::Buffers(n) if v.hypothesis == "socket_buffers" => Some((n, v.figures.mb_per_s)),
            _ => None,
        })
        .collect();
    let best = sweep.iter().map(|s| s.1).fold(own, f64::max);
    let knee = sweep.iter().find(|s| s.1 >= KNEE * best).map(|s| s.0);
    let mut table = format!(
        "MB/s by the client's buffers: {} {own:.0}",
        baseline_label(base)
    );
    for (n, mb) in &sweep {
        table += &format!(", {} {mb:.0}", size_text(*n));
    }
    if let Some(k) = knee {
        table += &format!(" (knee: {})", size_text(k));
    }
    (best, knee, table)
}

/// The finding, if buffers cap the transfer.
pub fn finding(base: &Summary, ev: &Evidence, variants: &[Variant]) -> Option<Finding> {
    if !bulk(base) {
        return None;
    }
    let own = Figures::of(base).mb_per_s;
    let (best, knee, table) = sweep(base, own, variants);
    let mut evidence = vec![table];
    let tcp = ev.tcp_info.as_ref();
    let rwnd = tcp.map_or(0.0, |t| t.rwnd_limited_percent);
    let sndbuf = tcp.map_or(0.0, |t| t.sndbuf_limited_percent);
    if let Some(t) = tcp {
        evidence.push(format!(
            "the client's connections (TCP_INFO): busy {:.0} ms, of which {rwnd:.0}% limited by the receiver's window and {sndbuf:.0}% by the client's send buffer; largest window the peer advertised {} bytes; rtt {} µs",
            t.busy_ms, t.peer_window_bytes, t.rtt_us
        ));
    }
    let gain = best / own.max(1e-9);
    // Waiting on the peer's window means a small receive buffer only if the window never grew
    // past the size auto-tuning starts from: a slow reader with an auto-tuned buffer fills a
    // large window too (the sender then waits on it just as long).
    let rmem = ev.rmem_default.unwrap_or(DEFAULT_RMEM);
    let window = tcp.map_or(u32::MAX, |t| t.peer_window_bytes);
    let capped = rwnd >= LIMITED_PERCENT
        || (rwnd >= TINY_LIMITED_PERCENT && window <= rmem / TINY_WINDOW_SHARE);
    if base.mode == ClientMode::Stream && capped && window < rmem {
        evidence.push(format!("the peer's window never exceeded {window} bytes, below the {rmem} bytes auto-tuning starts a receive buffer with (net.ipv4.tcp_rmem): the server set a small SO_RCVBUF"));
        let flat = gain < 1.5;
        if flat {
            evidence
                .push("no client buffer size raised the rate: the cap is the receiver's".into());
        }
        return Some(Finding {
            id: "socket_buffers".into(),
            title: format!("the server's receive buffer caps throughput at {own:.0} MB/s: the client waited on its window {rwnd:.0}% of the time"),
            confidence: if flat { Confidence::High } else { Confidence::Medium },
            side: "server".into(),
            evidence,
            fix: format!(
                "Raise SO_RCVBUF on the server to at least the bandwidth × RTT, or leave it unset so the kernel auto-tunes it (net.ipv4.tcp_rmem){}.",
                match base.protocol {
                    ProtocolName::Tcp => "; `wirebench serve tcp`: leave out --rcvbuf",
                    _ => "",
                }
            ),
            rank: 2,
        });
    }
    // Only buffers the user fixed are blamed: an auto-tuned baseline beaten by a fixed size on
    // one short run is more likely noise than auto-tuning falling short.
    let fixed = base.config.sndbuf.is_some() || base.config.rcvbuf.is_some();
    if fixed && (gain >= CLIENT_GAIN || sndbuf >= LIMITED_PERCENT) {
        let k = knee.map_or("a larger size".into(), size_text);
        return Some(Finding {
            id: "socket_buffers".into(),
            title: format!("the client's socket buffers cap throughput: {own:.0} MB/s as run, {best:.0} MB/s with buffers of {k}"),
            confidence: if gain >= CLIENT_GAIN { Confidence::High } else { Confidence::Medium },
            side: "client".into(),
            evidence,
            fix: format!("Set the client's buffers to at least the knee (--sndbuf {k} --rcvbuf {k}), or leave them unset so the kernel auto-tunes them."),
            rank: 2,
        });
    }
    None
}
