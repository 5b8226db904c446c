//! A diagnosis: why a target is slow, said with the evidence and the fix (issue 11; the DCMTK
//! study, seed 003, is the case no tool named). `wirebench diagnose` measures a baseline,
//! gathers the kernel's view of it ([`Evidence`]), asks here which variants would test the
//! hypotheses the baseline raises ([`variants_for`]), runs them, and hands everything back to
//! [`findings`], which names what the numbers show, most important first.
//!
//! Each hypothesis has a file: [`nagle`] (Nagle's algorithm meeting delayed ACK), [`buffers`]
//! (socket buffers capping a bulk transfer), [`client`] (a saturated generator, ephemeral
//! ports running out) and [`tail`] (the latency's shape: the mean above p95, several modes,
//! stalls in the per-second series). Nothing here knows the protocol: a target is a URL and a
//! summary, so a new driver is diagnosed without a line here.

pub mod buffers;
pub mod client;
pub mod nagle;
pub mod tail;

use super::Summary;
use crate::summary::Name;
use crate::sys::tcpinfo::TcpInfo;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The schema identifier of a diagnosis document (schema/diagnosis.v1.json).
pub const DIAGNOSIS_SCHEMA: &str = "wirebench.diagnosis/1";

/// How sure a finding is: high when the baseline's evidence and a variant agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// One weak sign.
    #[default]
    Low,
    /// The baseline shows it; no variant confirmed it (or none could).
    Medium,
    /// The baseline shows it and a variant or a kernel counter confirms it.
    High,
}

/// One thing the diagnosis found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Finding {
    /// A stable name: `nagle_delayed_ack`, `socket_buffers`, `generator_bound`,
    /// `port_exhaustion`, `mean_above_p95`, `multimodal`, `periodic_stalls`.
    pub id: Name,
    /// What it is, in one line.
    pub title: String,
    /// How sure.
    pub confidence: Confidence,
    /// Where the cause sits: `server`, `client` (the generator's own settings or limits) or
    /// `unknown`.
    pub side: Name,
    /// The measurements that show it, one per line.
    pub evidence: Vec<String>,
    /// What to set where.
    pub fix: String,
    /// Sort order among findings of equal confidence (lower first); not in the document.
    #[serde(skip)]
    pub rank: u8,
}

/// A run's headline figures, as the diagnosis compares them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Figures {
    /// Operations per second (ok).
    pub ops_per_s: f64,
    /// Payload MB/s, the larger of sent and received.
    pub mb_per_s: f64,
    /// Median latency, µs.
    pub p50_us: Option<f64>,
    /// 95th percentile, µs.
    pub p95_us: Option<f64>,
    /// 99th percentile, µs.
    pub p99_us: Option<f64>,
    /// Mean latency, µs.
    pub mean_us: Option<f64>,
    /// The share of operations that took as long as a delayed ACK (see [`nagle::stall_share`]).
    pub stall_share: Option<f64>,
    /// Failed operations.
    pub errors: u64,
    /// The generator's CPU use, % of its threads.
    pub cpu_percent_of_threads: f64,
}

impl Figures {
    /// The figures of one run.
    pub fn of(s: &Summary) -> Figures {
        let l = s.latency.as_ref();
        Figures {
            ops_per_s: s.throughput.ops_per_s,
            mb_per_s: s
                .throughput
                .sent_mb_per_s
                .max(s.throughput.received_mb_per_s),
            p50_us: l.map(|d| d.p50_us),
            p95_us: l.map(|d| d.p95_us),
            p99_us: l.map(|d| d.p99_us),
            mean_us: l.map(|d| d.mean_us),
            stall_share: l.and_then(nagle::stall_share),
            errors: s.errors.total,
            cpu_percent_of_threads: s.generator.cpu_percent_of_threads,
        }
    }
}

/// What a variant changes in the baseline's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The client's TCP_NODELAY on (true) or off.
    Nodelay(bool),
    /// The client's SO_SNDBUF and SO_RCVBUF both set to this many bytes.
    Buffers(usize),
    /// This many generator threads.
    Threads(usize),
}

/// Not written into the document: a variant read back from one says no change (its `flags`
/// say what it was).
impl Default for Change {
    fn default() -> Change {
        Change::Threads(0)
    }
}

impl Change {
    /// The `wirebench run` flags that make the change.
    pub fn flags(&self) -> String {
        match self {
            Change::Nodelay(true) => "--nodelay".into(),
            Change::Nodelay(false) => "--no-nodelay".into(),
            Change::Buffers(n) => {
                let k = size_text(*n);
                format!("--sndbuf {k} --rcvbuf {k}")
            }
            Change::Threads(n) => format!("--threads {n}"),
        }
    }
}

/// A variant of the baseline that tests one hypothesis, and what it measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Variant {
    /// The finding id it tests.
    pub hypothesis: Name,
    /// The flags added to the baseline's run.
    pub flags: String,
    /// What it measured.
    pub figures: Figures,
    /// The change, for the findings to read.
    #[serde(skip)]
    pub change: Change,
}

/// `TCP_INFO` of the client's connections during the baseline, sampled.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TcpEvidence {
    /// Connections seen.
    pub sockets: usize,
    /// Median smoothed RTT over the samples, µs.
    pub rtt_us: u32,
    /// The largest delayed-ACK timeout seen, µs (Linux's minimum is 40 ms).
    pub ato_us: u32,
    /// The most segments one connection had unacknowledged.
    pub unacked: u32,
    /// Time the connections spent sending, ms.
    pub busy_ms: f64,
    /// The share of it limited by the receiver's window (the peer's receive buffer), %.
    pub rwnd_limited_percent: f64,
    /// The share of it limited by the client's own send buffer, %.
    pub sndbuf_limited_percent: f64,
    /// The largest window the peer advertised, bytes: what its receive buffer allows.
    pub peer_window_bytes: u32,
}

impl TcpEvidence {
    /// Folds samples (each: socket inode → its `TCP_INFO`) into one view; None without any.
    pub fn of(samples: &[HashMap<u64, TcpInfo>]) -> Option<TcpEvidence> {
        let mut last: HashMap<u64, TcpInfo> = HashMap::new();
        let mut rtts = Vec::new();
        let (mut ato, mut unacked, mut window) = (0, 0, 0);
        for s in samples {
            for (inode, i) in s {
                rtts.push(i.rtt_us);
                ato = ato.max(i.ato_us);
                unacked = unacked.max(i.unacked);
                window = window.max(i.snd_wnd);
                last.insert(*inode, *i);
            }
        }
        if last.is_empty() {
            return None;
        }
        rtts.sort_unstable();
        let busy: u64 = last.values().map(|i| i.busy_us).sum();
        let pct = |f: fn(&TcpInfo) -> u64| {
            let v: u64 = last.values().map(f).sum();
            if busy == 0 {
                0.0
            } else {
                (100.0 * v as f64 / busy as f64).min(100.0)
            }
        };
        Some(TcpEvidence {
            sockets: last.len(),
            rtt_us: rtts[rtts.len() / 2],
            ato_us: ato,
            unacked,
            busy_ms: busy as f64 / 1000.0,
            rwnd_limited_percent: pct(|i| i.rwnd_limited_us),
            sndbuf_limited_percent: pct(|i| i.sndbuf_limited_us),
            peer_window_bytes: window,
        })
    }
}

/// What the kernel said about the baseline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Evidence {
    /// How much `TcpExt DelayedACKs` (/proc/net/netstat) rose during the baseline. The counter
    /// is per network namespace, so a server in the same one adds its own.
    pub delayed_acks: Option<u64>,
    /// The same per ok operation of the baseline.
    pub delayed_acks_per_exchange: Option<f64>,
    /// The client's connections, from `TCP_INFO`.
    pub tcp_info: Option<TcpEvidence>,
    /// `net.ipv4.ip_local_port_range`.
    pub port_range: Option<[u16; 2]>,
    /// `net.ipv4.tcp_rmem`'s default, bytes: where auto-tuning starts a receive buffer.
    pub rmem_default: Option<u32>,
    /// `net.ipv4.tcp_tw_reuse` (2: reuse for loopback only).
    pub tw_reuse: Option<u8>,
    /// Sockets in TIME_WAIT toward the target after the baseline.
    pub time_wait: usize,
    /// CPUs this process may use.
    pub cpus: usize,
    /// The target is on this host's loopback.
    pub loopback: bool,
    /// The share of the baseline during which some task waited for a CPU (Linux PSI), %.
    pub cpu_pressure_percent: Option<f64>,
    /// How much of the baseline the generator's worker threads could run (on a CPU or waiting
    /// for one, schedstat), %: near 100 they never waited for the target.
    pub generator_busy_percent: Option<f64>,
    /// How often each worker thread gave up its CPU to wait (for replies, for the pacer) per
    /// second: next to none when it always had work.
    pub generator_sleeps_per_s: Option<f64>,
}

impl Evidence {
    /// The host's CPUs were contended: slow requests may be the machine's, not the target's.
    pub fn contended(&self) -> bool {
        self.cpu_pressure_percent
            .is_some_and(|p| p >= CONTENDED_PERCENT)
    }
}

/// CPU pressure from which the tail is as likely the machine's as the target's, %.
const CONTENDED_PERCENT: f64 = 20.0;

/// The whole document `wirebench diagnose --json` prints.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Diagnosis {
    /// Always [`DIAGNOSIS_SCHEMA`].
    pub schema: Name,
    /// The version that diagnosed.
    pub wirebench_version: Name,
    /// The target URL.
    pub target: String,
    /// The protocol and the client mode.
    pub protocol: crate::summary::ProtocolName,
    /// See `protocol`.
    pub mode: crate::summary::ClientMode,
    /// Measuring time of each step, s.
    pub step_s: f64,
    /// The user's run as given.
    pub baseline: Figures,
    /// The kernel's view of the baseline.
    pub evidence: Evidence,
    /// The variants run, in order.
    pub variants: Vec<Variant>,
    /// What was found, most important first; empty when nothing is wrong.
    pub findings: Vec<Finding>,
}

/// Whether a summary's transport is TCP (so Nagle, delayed ACK and TCP buffers apply).
pub fn is_tcp(s: &Summary) -> bool {
    s.protocol != crate::summary::ProtocolName::Udp
}

/// The variants that would test what the baseline suggests, in the order to run them.
pub fn variants_for(base: &Summary, ev: &Evidence) -> Vec<(&'static str, Change)> {
    let mut v = Vec::new();
    v.extend(nagle::variants(base));
    v.extend(buffers::variants(base));
    v.extend(client::variants(base, ev));
    v
}

/// The findings, most important first: by confidence, then by how much each costs.
pub fn findings(base: &Summary, ev: &Evidence, variants: &[Variant]) -> Vec<Finding> {
    let mut f = Vec::new();
    let stall = nagle::finding(base, ev, variants);
    f.extend(client::port_exhaustion(base, ev));
    f.extend(buffers::finding(base, ev, variants));
    f.extend(client::generator_bound(base, ev, variants));
    f.extend(tail::findings(base, ev, stall.is_some()));
    f.extend(stall);
    f.sort_by_key(|x| (std::cmp::Reverse(x.confidence), x.rank));
    f
}

/// `x` as a multiple of `of`, e.g. "39×".
pub(crate) fn times(x: f64, of: f64) -> String {
    if of <= 0.0 {
        return "—".into();
    }
    let r = x / of;
    if r >= 10.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

/// A byte count as a size flag takes it: `64k`, `4M`, or plain bytes.
pub(crate) fn size_text(n: usize) -> String {
    const M: usize = 1 << 20;
    match n {
        n if n >= M && n % M == 0 => format!("{}M", n / M),
        n if n >= 1024 && n % 1024 == 0 => format!("{}k", n / 1024),
        n => n.to_string(),
    }
}
