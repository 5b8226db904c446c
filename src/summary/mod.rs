//! The summary of a run, computed once from the merged recorder and rendered by every reporter.
//!
//! Field names here are the JSON schema (`schema/result.v1.json`); change them only with the
//! schema version.

pub mod auto_runs;
mod build;
pub mod busy;
pub mod check;
pub mod compare;
pub mod diagnose;
pub mod diagnosis;
pub mod diff;
mod distribution;
pub mod link;
pub mod merge;
pub mod mix;
mod open_loop;
pub mod paired;
pub mod peak;
pub mod read;
pub mod serial;
pub mod shard;
pub mod slo;
pub mod stats;
pub mod study;
pub mod sweep;
pub mod threshold;
mod throughput;
mod udp_stream;
pub mod welch;

pub use build::of;
pub use distribution::{Distribution, EncodedError, EncodedHistogram};
pub use open_loop::OpenLoop;
pub use throughput::Throughput;

pub use crate::record::exchange::{ClientMode, ProtocolName};
use crate::record::{Recorder, SeriesPoint};
use serde::{Deserialize, Serialize};

/// The schema identifier written into every JSON result.
pub const SCHEMA: &str = "wirebench.result/1";

/// One run, summarised.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`SCHEMA`].
    pub schema: Name,
    /// The wirebench version that measured.
    pub wirebench_version: Name,
    /// When the measured part began, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The target URL as given.
    pub target: String,
    /// `tcp`, `udp`, `http` …: the protocol as its driver names itself.
    pub protocol: ProtocolName,
    /// `rr`, `crr`, `stream` or `source`.
    pub mode: ClientMode,
    /// The settings that shaped the load.
    pub config: Config,
    /// Measured time in seconds (warm-up excluded).
    pub duration_s: f64,
    /// Operations that completed correctly; in bulk modes, messages moved (the receiver's
    /// count when it gave one).
    pub ok: u64,
    /// Failed operations.
    pub errors: ErrorSummary,
    /// Rates over the measured time.
    pub throughput: Throughput,
    /// Latency of ok operations (from the intended start); absent in bulk modes.
    pub latency: Option<Distribution>,
    /// Service time from the actual send; present only in open-loop runs, where it differs.
    pub service_time: Option<Distribution>,
    /// Connection set-up time; present when connections were made.
    pub connect: Option<Distribution>,
    /// Open loop: offered vs sent vs achieved rate, and how far sends fell behind schedule.
    pub open_loop: Option<OpenLoop>,
    /// UDP: what became of the datagrams, as the client saw it and as the server counted it.
    pub datagrams: Option<Datagrams>,
    /// HTTP: requests, statuses, time to first byte and body goodput.
    pub http: Option<Http>,
    /// A mix's kinds (`--mix`), each with its share, counts, errors and latency; absent
    /// without a mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Vec<mix::MixKind>>,
    /// The warm-up, reported on its own and kept out of everything above.
    pub warmup: Option<Warmup>,
    /// One entry per second of the measured part.
    pub series: Vec<SeriesPoint>,
    /// What the generator itself used.
    pub generator: Generator,
    /// Diagnoses and caveats, in plain words.
    pub notes: Vec<String>,
    /// A shard's part of a load (`run --shard`): its rank, share, plan hash and start skew;
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<shard::ShardSection>,
    /// A merge of shards (`wirebench merge`): each rank's figures and skew; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<shard::Shards>,
    /// Why the run stopped before its count was done, if it did: its target stopped answering
    /// (every connection failing, nothing back for the grace); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The run's settings, echoed into the result so it can be read alone.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Config {
    /// Concurrent connections.
    pub connections: usize,
    /// Worker threads.
    pub threads: usize,
    /// Requests in flight per connection; None when any number may be (the UDP open loop).
    pub pipeline: Option<usize>,
    /// Pause between requests per connection, seconds.
    pub think_s: Option<f64>,
    /// The mean pause as waited, seconds (timer wake-ups make it a little longer than asked);
    /// None when no pause was taken. Absent from results written before it was measured.
    #[serde(default)]
    pub think_achieved_s: Option<f64>,
    /// Bytes per request (or message).
    pub request_bytes: usize,
    /// Bytes per reply, when replies are sized.
    pub reply_bytes: Option<usize>,
    /// Reply delimiter (escaped), when replies are delimited.
    pub reply_until: Option<String>,
    /// Whether connections open with the wirebench preamble.
    pub preamble: bool,
    /// Requested measuring time, seconds.
    pub duration_s: Option<f64>,
    /// Requested request count.
    pub requests: Option<u64>,
    /// Per-request time limit, seconds.
    pub timeout_s: f64,
    /// TCP_NODELAY on the client's sockets.
    pub nodelay: bool,
    /// SO_SNDBUF, if set.
    pub sndbuf: Option<usize>,
    /// SO_RCVBUF, if set.
    pub rcvbuf: Option<usize>,
    /// The seed of the run's random draws (`--seed` repeats them); absent when it drew none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `exp` when the think times were drawn from an exponential law of mean `think_s`
    /// (`--think exp:10ms`); absent for a fixed pause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_law: Option<String>,
    /// The data set `{file}` drew from (`--manifest`, `--dataset`): its bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_bytes: Option<u64>,
    /// How many files that data set holds (the most popular of the manifest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_files: Option<u64>,
    /// How popular each file was: `zipf:S` or `uniform`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popularity: Option<String>,
    /// The page cache before the run (`--cache`): `cold` (dropped) or `warm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// The memory limit of the cgroup of the process listening on the target's port (on
    /// this machine), page cache included; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_memory_limit_bytes: Option<u64>,
}

/// Errors by kind.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// All failed operations.
    pub total: u64,
    /// One entry per kind that occurred.
    pub by_kind: Vec<ErrorEntry>,
}

/// One kind of error.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorEntry {
    /// refused, reset, timeout, short_reply, mismatch, port_exhausted, other.
    pub kind: Name,
    /// How many.
    pub count: u64,
    /// The first message of this kind.
    pub sample: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An HTTP run's own figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Http {
    /// The request's method; with several requests (`--targets`), theirs if they share one,
    /// else `mixed`.
    pub method: String,
    /// The request's path, as templated; with several, the list as `GET /a, POST /b, …`.
    pub path: String,
    /// Distinct request shapes cycled through (`--targets`).
    pub requests: usize,
    /// Whether connections were kept alive.
    pub keepalive: bool,
    /// The HTTP version spoken: "1.1" or "2".
    pub version: Name,
    /// Replies by status code (code 0: no valid status).
    pub status: Vec<StatusCount>,
    /// Replies by class.
    pub status_2xx: u64,
    /// Replies by class.
    pub status_3xx: u64,
    /// Replies by class.
    pub status_4xx: u64,
    /// Replies by class.
    pub status_5xx: u64,
    /// Response body bytes received (headers excluded).
    pub body_bytes: u64,
    /// Body goodput, MB/s (10^6 bytes).
    pub goodput_mb_per_s: f64,
    /// Time to the first byte of each response, from its intended send.
    pub ttfb: Option<Distribution>,
    /// Connections the server ended in good order mid-run (HTTP/2 GOAWAY with NO_ERROR, as
    /// nginx sends at `keepalive_requests`; HTTP/1.1 `Connection: close` on a kept-alive
    /// connection), each replaced by a new one.
    #[serde(default)]
    pub server_closes: u64,
    /// Requests the server had not processed when it ended their connection, sent again on
    /// the new one (not errors: each still ends as one ok or one error).
    #[serde(default)]
    pub resent: u64,
}

/// One status code and how many replies had it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatusCount {
    /// The code.
    pub code: u16,
    /// Replies with it.
    pub count: u64,
}

/// What became of a UDP run's datagrams.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Datagrams {
    /// Datagrams sent in the measured time.
    pub sent: u64,
    /// Requests answered (rr).
    pub answered: u64,
    /// Requests with no reply within --timeout (rr).
    pub lost: u64,
    /// Lost as a share of sent requests, percent (rr).
    pub loss_percent: f64,
    /// Replies that came after their request's timeout (rr).
    pub late: u64,
    /// Replies received more than once (rr).
    pub duplicated: u64,
    /// Replies that overtook the reply to an earlier request (rr).
    pub reordered: u64,
    /// The receiving server's own counters (wirebench servers only).
    pub server: Option<ServerCount>,
    /// A stream: datagrams this host's own queue toward the target refused, full (ENOBUFS:
    /// the link is slower than the offered rate); never sent, not in `sent` nor in the
    /// sender's rate; absent when none (issue 38).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub host_queue_full: u64,
}

/// The receiving server's counters of the client's datagrams, over the whole run (warm-up
/// included) and all sessions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerCount {
    /// Datagrams the client sent, warm-up included.
    pub sent: u64,
    /// Datagrams the server received, duplicates included.
    pub received: u64,
    /// Sent but never received.
    pub lost: u64,
    /// Lost as a share of sent, percent.
    pub loss_percent: f64,
    /// Received out of order.
    pub out_of_order: u64,
    /// Received more than once.
    pub duplicated: u64,
    /// RFC 3550 interarrival jitter (the largest of the sessions), µs.
    pub jitter_us: f64,
}

/// The warm-up's own line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Warmup {
    /// Warm-up time, seconds.
    pub duration_s: f64,
    /// Ok operations during warm-up.
    pub ok: u64,
    /// Failed operations during warm-up.
    pub errors: u64,
    /// Median latency during warm-up, µs.
    pub p50_us: Option<f64>,
    /// `--warmup auto`: how it ended (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
}

/// How a warm-up until steady state (`--warmup auto`) ended (Georges et al., OOPSLA 2007: the
/// CoV of the last k measurements under a bound).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Steady {
    /// Whether its last `window_s` seconds were steady (false: its cap or a stop ended it).
    pub steady: bool,
    /// Their coefficient of variation, percent (None: too few seconds, or a silent one).
    pub cov_pct: Option<f64>,
    /// The figure judged: `ops/s` (closed loop) or `mean latency` (open loop).
    pub judged: String,
    /// The seconds judged together.
    pub window_s: u32,
    /// The CoV at or below which they are steady, percent.
    pub bound_pct: f64,
}

/// The generator's own resource use, to tell whether it, not the target, was the bottleneck.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Generator {
    /// Worker threads.
    pub threads: usize,
    /// User CPU seconds.
    pub cpu_user_s: f64,
    /// System CPU seconds.
    pub cpu_sys_s: f64,
    /// (user + sys) / (elapsed × threads), in percent.
    pub cpu_percent_of_threads: f64,
    /// Peak resident set size of the process, KiB.
    pub peak_rss_kib: u64,
    /// The machine's CPU pressure over the run: % of the time at least one runnable task
    /// waited for a CPU (`/proc/pressure/cpu`, `some`); None where the kernel has no PSI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_percent: Option<f64>,
    /// % of the CPUs' time over the run taken by the hypervisor for other guests
    /// (`/proc/stat` steal); None where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
}

impl Generator {
    /// The machine's state in words, `CPU pressure 62%, steal 3%`; None when neither was read.
    pub fn machine_words(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(p) = self.cpu_pressure_percent {
            parts.push(format!("CPU pressure {p:.0}%"));
        }
        if let Some(s) = self.steal_percent {
            parts.push(format!("steal {s:.0}%"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// A name fixed when wirebench measures (`tcp`, `rr`, `timeout` …): borrowed from the
/// program's text when measured, owned when read back from a stored document.
pub type Name = std::borrow::Cow<'static, str>;

impl ErrorSummary {
    /// Errors of a recorder, by kind.
    pub fn of(rec: &Recorder) -> ErrorSummary {
        ErrorSummary::of_counts(&rec.errors)
    }

    /// Errors counted by kind.
    pub fn of_counts(errors: &crate::record::ErrorCounts) -> ErrorSummary {
        ErrorSummary {
            total: errors.total(),
            by_kind: errors
                .iter()
                .map(|(kind, count, sample)| ErrorEntry {
                    kind: kind.name().into(),
                    count,
                    sample: sample.to_string(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_partial_last_second_has_its_true_length() {
        let mut rec = Recorder::new();
        for _ in 0..90 {
            rec.ok(Duration::from_micros(50));
        }
        let mut series = vec![SeriesPoint::of(0, &rec), SeriesPoint::of(1, &rec)];
        SeriesPoint::set_lengths(&mut series, Duration::from_millis(1_090));
        assert_eq!(series[0].duration_s, 1.0);
        assert!((series[1].duration_s - 0.09).abs() < 1e-9);
        // 90 in a whole second is 90/s; 90 in 0.09 s is 1,000/s, not 90/s.
        assert_eq!(series[0].per_s(90), 90.0);
        assert!((series[1].per_s(90) - 1_000.0).abs() < 1e-6);
    }
}
