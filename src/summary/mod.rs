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
pub mod link;
pub mod merge;
pub mod mix;
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
mod udp_stream;
pub mod welch;

pub use build::of;

pub use crate::record::exchange::{ClientMode, ProtocolName};
use crate::record::{Recorder, SeriesPoint, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIG};
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    #[serde(skip_serializing_if = "is_zero", default)]
    pub ok_after_window: u64,
    /// Stream connections whose receiver's count is missing (they failed, or no answer).
    #[serde(skip_serializing_if = "is_zero", default)]
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A latency distribution: the figures, in microseconds, and the whole histogram.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Distribution {
    /// Samples.
    pub count: u64,
    /// Smallest, µs.
    pub min_us: f64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Standard deviation, µs.
    pub stddev_us: f64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 95th percentile, µs.
    pub p95_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest, µs.
    pub max_us: f64,
    /// The whole histogram, so results can be merged later.
    pub histogram: EncodedHistogram,
}

/// An HdrHistogram in V2 serialization, base64-encoded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EncodedHistogram {
    /// `hdrhistogram-v2+base64`.
    pub encoding: Name,
    /// The unit of recorded values: `ns`.
    pub unit: Name,
    /// Lowest discernible value.
    pub lowest: u64,
    /// Highest trackable value.
    pub highest: u64,
    /// Significant digits.
    pub significant_digits: u8,
    /// The serialized histogram.
    pub data: String,
}

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

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl Distribution {
    /// The figures the reports show, in their order: min, mean, stddev, p50, p90, p95, p99,
    /// p99.9, max (µs).
    pub fn figures(&self) -> [f64; 9] {
        [
            self.min_us,
            self.mean_us,
            self.stddev_us,
            self.p50_us,
            self.p90_us,
            self.p95_us,
            self.p99_us,
            self.p999_us,
            self.max_us,
        ]
    }

    /// Summarises a histogram of nanoseconds; `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Distribution> {
        if h.is_empty() {
            return None;
        }
        // One rounding for every figure: HdrHistogram gives percentiles and the max as the
        // highest value of their bucket but the min as the lowest, so one sample would read
        // min < p50 = max. Every figure is read as its bucket's midpoint instead (as the mean
        // is), so one sample is every statistic and a multi-sample order is kept.
        let mid = |v: u64| h.median_equivalent(v);
        let (lo, hi) = (mid(h.min()), mid(h.value_at_quantile(1.0)));
        // A histogram read from a crafted document can hold counts whose total wraps, so that
        // its top quantile reads below its min (found by fuzzing): order the bounds.
        let hi = hi.max(lo);
        let q = |p: f64| us(mid(h.value_at_quantile(p)).clamp(lo, hi));
        Some(Distribution {
            count: h.len(),
            min_us: us(lo),
            mean_us: h.mean().clamp(lo as f64, hi as f64) / 1000.0,
            stddev_us: h.stdev() / 1000.0,
            p50_us: q(0.50),
            p90_us: q(0.90),
            p95_us: q(0.95),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: us(hi),
            histogram: EncodedHistogram::of(h),
        })
    }
}

/// A document's histogram that does not read back.
#[derive(Debug, thiserror::Error)]
pub enum EncodedError {
    /// Its data is not base64.
    #[error("histogram is not base64: {0}")]
    Base64(base64::DecodeError),
    /// Its data is not a histogram wirebench wrote.
    #[error("histogram: {0}")]
    Histogram(crate::record::HistogramError),
}

impl EncodedHistogram {
    /// Serializes a histogram (V2, uncompressed) and base64-encodes it.
    #[allow(
        clippy::expect_used,
        reason = "serializing into a Vec cannot fail: no I/O, and every value is in range"
    )]
    pub fn of(h: &Histogram<u64>) -> EncodedHistogram {
        let mut buf = Vec::new();
        V2Serializer::new()
            .serialize(h, &mut buf)
            .expect("serializing to memory cannot fail");
        EncodedHistogram {
            encoding: "hdrhistogram-v2+base64".into(),
            unit: "ns".into(),
            lowest: HIST_LOWEST_NS,
            highest: HIST_HIGHEST_NS,
            significant_digits: HIST_SIGFIG,
            data: base64::engine::general_purpose::STANDARD.encode(buf),
        }
    }

    /// Decodes the histogram again (used to merge stored results, and by tests).
    pub fn decode(&self) -> Result<Histogram<u64>, EncodedError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(EncodedError::Base64)?;
        crate::record::decode_histogram(&bytes).map_err(EncodedError::Histogram)
    }
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
    use crate::record::new_histogram;

    #[test]
    fn histogram_round_trips_through_base64() {
        let mut h = new_histogram();
        for v in [1_000u64, 7_400, 95_000, 40_000_000] {
            h.record(v).unwrap();
        }
        let enc = EncodedHistogram::of(&h);
        assert_eq!(enc.decode().unwrap(), h);
        let d = Distribution::of(&h).unwrap();
        assert_eq!(d.count, 4);
        assert!((d.min_us - 1.0).abs() < 0.01);
        assert!(d.max_us >= 39_990.0);
    }

    #[test]
    fn one_sample_is_every_statistic() {
        for ns in [87_550u64, 1, 999, 40_000_123, 3_600_000_000_000] {
            let mut h = new_histogram();
            h.record(ns).unwrap();
            let d = Distribution::of(&h).unwrap();
            let all = [d.min_us, d.mean_us, d.p50_us, d.p90_us, d.p99_us, d.p999_us];
            for v in all {
                assert_eq!(v, d.max_us, "{ns} ns: {d:?}");
            }
            assert!(
                (d.min_us * 1000.0 - ns as f64).abs() <= ns as f64 * 1e-3,
                "{d:?}"
            );
        }
        // Many samples: min <= mean, percentiles <= max still.
        let mut h = new_histogram();
        for v in [87_550u64, 87_560, 87_570, 1_000_000] {
            h.record(v).unwrap();
        }
        let d = Distribution::of(&h).unwrap();
        assert!(d.min_us <= d.p50_us && d.p50_us <= d.p99_us && d.p99_us <= d.max_us);
        assert!(d.min_us <= d.mean_us && d.mean_us <= d.max_us);
    }

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
