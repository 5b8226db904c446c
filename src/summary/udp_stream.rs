//! A UDP stream to a wirebench sink: the receiver's count is the result. The sink reports,
//! per flow, what it received; the rates become what arrived within the measured window, the
//! sender's are kept beside them, datagrams the sink reports lost are errors (`lost`), and a
//! flow whose count never came is an error of the run (`no_receiver_count`), as iperf3 prints a
//! receiver line and a missing one is no success.

use super::{ErrorEntry, Summary};
use crate::record::Recorder;
use std::time::Duration;

/// Makes `s` (a UDP stream's summary) the receiver's: `sessions` flows were started, each of
/// `unit` payload bytes per datagram, over the `measured` window.
pub(super) fn apply(
    s: &mut Summary,
    total: &Recorder,
    measured: Duration,
    unit: usize,
    sessions: u64,
) {
    let secs = measured.as_secs_f64().max(1e-9);
    let unit = unit.max(1) as u64;
    let (all, sent) = sender(&mut s.throughput, total, secs, unit);
    let peer = &total.peer;
    let missing = sessions.saturating_sub(peer.reports);
    if peer.reports == 0 || missing > 0 {
        unreported(s, missing.max(1), sessions);
        return;
    }
    let t = &mut s.throughput;
    // The sink counts the whole flow (warm-up included); loss is charged to the measured
    // part, so what arrived there is what was sent in it less what never arrived.
    let lost = peer.lost();
    let count = all.saturating_sub(lost);
    // Datagrams queued on the path when the sender stopped arrive after the window: a sender
    // above the link's rate has a full queue then. So the window holds no more than the
    // receiver's own rate (its datagrams over its first-to-last arrival) carries in it.
    // (A window of `secs` holds at most rate × secs + 1 arrivals at that rate: fence posts.)
    let carried = (peer.reports > 0 && peer.spans == peer.reports)
        .then(|| (peer.receiver_per_s * secs).floor() as u64 + 1);
    // Nor more than was sent in it.
    let received = carried.map_or(count, |c| c.min(count)).min(sent);
    t.receiver_unreported = 0;
    t.receiver_bytes = Some(count * unit);
    t.drained_bytes = carried.map(|_| (count - received) * unit);
    t.window_bytes = Some(received * unit);
    t.messages_per_s = received as f64 / secs;
    t.ops_per_s = t.messages_per_s;
    t.gbit_per_s = (received * unit) as f64 * 8.0 / secs / 1e9;
    s.ok = received;
    if lost > 0 {
        add_error(
            s,
            "lost",
            lost,
            format!(
                "the server received {} of the {} datagrams sent",
                peer.sent - lost,
                peer.sent
            ),
        );
    }
}

/// The sender's figures: datagrams written in the measured window (those of a batch written
/// after it are counted, not rated: before issue 38 they made a sender rate of 101-106 Mbit/s
/// over a 100 Mbit/s link). Returns the datagrams written in all, and within the window.
fn sender(t: &mut super::Throughput, total: &Recorder, secs: f64, unit: u64) -> (u64, u64) {
    let all = t.sent_bytes / unit;
    let sent = all.saturating_sub(total.sent_after_bytes / unit);
    t.sender_messages_per_s = Some(sent as f64 / secs);
    t.sender_gbit_per_s = Some((sent * unit) as f64 * 8.0 / secs / 1e9);
    t.sent_mb_per_s = (sent * unit) as f64 / secs / 1e6;
    (all, sent)
}

/// Without every flow's count the received figures are unknown: the rates stay the sender's,
/// the headline says so (`missing` of `sessions` flows unreported), and the run fails.
fn unreported(s: &mut Summary, missing: u64, sessions: u64) {
    s.throughput.receiver_bytes = None;
    s.throughput.receiver_unreported = missing;
    add_error(
        s,
        "no_receiver_count",
        missing,
        format!(
            "the server did not report what it received for {missing} of {sessions} flow(s) (is it `wirebench serve udp --mode sink`, and running?)"
        ),
    );
}

/// Adds `count` errors of `kind` to the summary's error section.
pub(super) fn add_error(s: &mut Summary, kind: &'static str, count: u64, sample: String) {
    s.errors.total += count;
    s.errors.by_kind.push(ErrorEntry {
        kind: kind.into(),
        count,
        sample,
    });
}
