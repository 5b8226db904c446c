//! How an open-loop run kept to its timetable: offered, sent and achieved rates, how far sends
//! fell behind, and what the window left owed when it closed.

use super::Distribution;
use crate::record::Recorder;
use serde::{Deserialize, Serialize};

/// How an open-loop run kept to its timetable.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpenLoop {
    /// The schedule as given (`20000/s`, `1000..50000/30s`, `10s@1000,...`).
    pub schedule: String,
    /// Requests the schedule offered during the measured time.
    pub offered: u64,
    /// Offered requests per second.
    pub offered_per_s: f64,
    /// Requests actually sent.
    pub sent: u64,
    /// Sent requests per second.
    pub sent_per_s: f64,
    /// Ok replies per second.
    pub achieved_per_s: f64,
    /// Requests sent more than 1 ms after their intended time.
    pub behind_schedule: u64,
    /// The largest lag between intended and actual send, µs.
    pub max_lag_us: f64,
    /// Every send's lag behind its intended time (one sample per request sent); None when
    /// nothing was sent.
    pub send_lag: Option<Distribution>,
    /// How late the generator woke for requests due while a connection had room, one sample
    /// per wake: its own lateness (its CPU, the host's scheduler), apart from requests that
    /// waited for a connection the target held. None when it never slept for a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_lag: Option<Distribution>,
    /// Whether ok replies reached 99 % of the offered rate.
    pub kept_up: bool,
    /// Ok replies that arrived after the measured window closed (drained from queues once
    /// sending stopped): counted apart, not in `achieved_per_s` (before issue 38 they were).
    #[serde(default)]
    pub replies_after_window: u64,
    /// Requests the window offered that were not answered (nor failed) when it closed: the
    /// queue the run left behind, plus the requests in flight.
    #[serde(default)]
    pub owed_at_end: u64,
}

impl OpenLoop {
    /// How `total` kept to `schedule`, which offered `offered` requests in `secs` measured.
    pub fn of(
        schedule: String,
        offered: u64,
        total: &Recorder,
        secs: f64,
        kept_up: bool,
    ) -> OpenLoop {
        OpenLoop {
            schedule,
            offered,
            offered_per_s: offered as f64 / secs,
            sent: total.issued,
            sent_per_s: total.issued as f64 / secs,
            achieved_per_s: total.ok.saturating_sub(total.ok_after_window) as f64 / secs,
            behind_schedule: total.behind,
            max_lag_us: total.max_lag_ns as f64 / 1000.0,
            send_lag: Distribution::of(&total.send_lag),
            wake_lag: Distribution::of(&total.wake_lag),
            kept_up,
            replies_after_window: total.ok_after_window,
            owed_at_end: owed_at_end(offered, total),
        }
    }
}

/// The requests of `offered` not completed (ok or failed) by the window's end.
fn owed_at_end(offered: u64, total: &Recorder) -> u64 {
    let ok = total.ok.saturating_sub(total.ok_after_window);
    let failed = total
        .errors
        .total()
        .saturating_sub(total.failed_after_window);
    offered.saturating_sub(ok + failed)
}
