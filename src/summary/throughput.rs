//! A run's rates over its measured window: operations and messages per second, bytes and
//! MB/s each way, Gbit/s; in bulk modes, what the receiver got within the window.

use super::link;
use crate::record::Recorder;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Rates over the measured time. MB is 10^6 bytes; Gbit is 10^9 bits.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Throughput {
    /// Ok operations per second; in bulk modes (stream, source), where a message is the
    /// operation, messages per second (as `messages_per_s`).
    pub ops_per_s: f64,
    /// Messages per second (bulk modes: bytes moved / message size; otherwise ok operations).
    pub messages_per_s: f64,
    /// Payload bytes sent.
    pub sent_bytes: u64,
    /// Payload bytes received.
    pub received_bytes: u64,
    /// Bytes sent on the wire, protocol heads included (HTTP: whole requests, where
    /// `sent_bytes` is their bodies); for protocols without heads, the payload.
    #[serde(default)]
    pub wire_sent_bytes: u64,
    /// Bytes received on the wire, protocol heads included (HTTP: whole responses, where
    /// `received_bytes` is their bodies); for protocols without heads, the payload.
    #[serde(default)]
    pub wire_received_bytes: u64,
    /// Payload MB/s sent.
    pub sent_mb_per_s: f64,
    /// Payload MB/s received.
    pub received_mb_per_s: f64,
    /// Payload Gbit/s, both directions added; in bulk modes `window_bytes` over the window.
    pub gbit_per_s: f64,
    /// Bulk modes: the payload bytes the receiver got within the measured window, which the
    /// bulk rates (messages/s, Gbit/s) are over `duration_s`, so that they can never exceed
    /// what the path carries: a TCP upload's bytes the receiver acknowledged (TCP_INFO) within
    /// the window, a UDP stream's datagrams sent in it that the sink received (no more than
    /// the sink's own rate carries in it), a download's bytes read in it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub window_bytes: Option<u64>,
    /// Bulk upload to a wirebench sink: the payload bytes the sink counted, when every
    /// connection reported (its final count, what drained after the window included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_bytes: Option<u64>,
    /// Bytes that arrived after the window, counted but not in the rates: of the receiver's
    /// count in a stream (drained from buffers and queues once the sender stopped), else of
    /// `received_bytes` (replies read in their --timeout after the deadline).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drained_bytes: Option<u64>,
    /// Ok replies that arrived after the measured window closed (in flight, or queued, when
    /// it did): counted in `ok`, not in `ops_per_s`, which is what was achieved within it.
    #[serde(skip_serializing_if = "super::is_zero", default)]
    pub ok_after_window: u64,
    /// Stream connections whose receiver's count is missing (they failed, or no answer).
    #[serde(skip_serializing_if = "super::is_zero", default)]
    pub receiver_unreported: u64,
    /// A UDP stream: the sender's datagrams per second (the headline's are the receiver's).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sender_messages_per_s: Option<f64>,
    /// A UDP stream: the sender's payload Gbit/s (the headline's is the receiver's).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sender_gbit_per_s: Option<f64>,
    /// With `--link`: these rates set against the link's nominal rate, payload and wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<link::Link>,
}

impl Throughput {
    /// Rates of what `rec` holds over `elapsed`; `message_bytes` converts bulk bytes to messages.
    pub fn of(rec: &Recorder, elapsed: Duration, message_bytes: Option<usize>) -> Throughput {
        let secs = elapsed.as_secs_f64().max(1e-9);
        // Replies after the window are counted (`ok_after_window`), not rated.
        let messages = match message_bytes {
            Some(_) => rec.messages,
            None => rec.ok.saturating_sub(rec.ok_after_window),
        };
        // Bytes read after the window (replies finishing in their --timeout) are counted but
        // not rated: the rates are what arrived within the window.
        let after = rec.received_after_bytes;
        let received = rec.received_bytes.saturating_sub(after);
        Throughput {
            // A message is the operation of a bulk run: its rate is the run's ops/s.
            ops_per_s: messages as f64 / secs,
            messages_per_s: messages as f64 / secs,
            sent_bytes: rec.sent_bytes,
            received_bytes: rec.received_bytes,
            wire_sent_bytes: rec.wire_sent_bytes,
            wire_received_bytes: rec.wire_received_bytes,
            sent_mb_per_s: rec.sent_bytes as f64 / secs / 1e6,
            received_mb_per_s: received as f64 / secs / 1e6,
            gbit_per_s: (rec.sent_bytes + received) as f64 * 8.0 / secs / 1e9,
            window_bytes: None,
            receiver_bytes: None,
            drained_bytes: (after > 0).then_some(after),
            ok_after_window: rec.ok_after_window,
            receiver_unreported: 0,
            sender_messages_per_s: None,
            sender_gbit_per_s: None,
            link: None,
        }
    }

    /// A TCP stream's rates as what its receiver got within the window: the bytes it
    /// acknowledged in it (TCP_INFO), else (no TCP_INFO) the sink's count, when every
    /// connection reported; with the sink's count, what drained after the window apart.
    pub fn with_receiver(mut self, rec: &Recorder, elapsed: Duration, unit: usize) -> Throughput {
        let peer = &rec.peer;
        self.receiver_unreported = peer.stream_unreported;
        let count =
            (peer.stream_reports > 0 && peer.stream_unreported == 0).then_some(peer.stream_bytes);
        self.receiver_bytes = count;
        let Some(bytes) = peer.acked_in_window().or(count) else {
            return self;
        };
        self.drained_bytes = count.map(|c| c.saturating_sub(bytes));
        self.in_window(bytes, elapsed, unit)
    }

    /// The bulk rates as `bytes` (what the receiver got within the window) over `elapsed`.
    pub fn in_window(mut self, bytes: u64, elapsed: Duration, unit: usize) -> Throughput {
        let secs = elapsed.as_secs_f64().max(1e-9);
        self.window_bytes = Some(bytes);
        self.messages_per_s = (bytes / unit.max(1) as u64) as f64 / secs;
        self.ops_per_s = self.messages_per_s;
        self.gbit_per_s = bytes as f64 * 8.0 / secs / 1e9;
        self
    }
}
