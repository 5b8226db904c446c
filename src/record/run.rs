//! What a finished run recorded: the engine's result, from which the summary is computed.

use super::{Recorder, SeriesPoint};
use crate::sys::usage::CpuTimes;
use std::time::{Duration, Instant};

/// Everything one run recorded, merged over its workers.
#[derive(Debug, Default)]
pub struct RunRecord {
    /// The measured part, all workers.
    pub total: Recorder,
    /// The warm-up, all workers.
    pub warm: Recorder,
    /// One point per second of the measured part.
    pub series: Vec<SeriesPoint>,
    /// Worker CPU time over the measured part.
    pub cpu: CpuTimes,
    /// How long the measured part lasted (to its deadline, or to its last reply if sooner).
    pub measured: Duration,
    /// How long after the start of the measured part (the origin of the series' seconds) the
    /// measured time begins: zero for a run by time; for a run by count, timed from its first
    /// send, the time its connections took to open.
    pub measured_from: Duration,
    /// How long the warm-up lasted.
    pub warm_for: Duration,
    /// When the measured part began, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The process's peak resident set size at the end, KiB.
    pub peak_rss_kib: u64,
    /// The measured work's span: its first send and its last completion, all workers.
    pub active: Option<(Instant, Instant)>,
    /// The run's overall deadline (`--deadline`) passed before it finished: the deadline, and
    /// the requests still owed then (never sent, or in flight), counted as errors.
    pub deadline_passed: Option<(Duration, u64)>,
    /// The run stopped because its target was gone (every connection failing, nothing back
    /// for this long): see `engine::vitals`.
    pub gone: Option<Duration>,
    /// `--warmup auto`: how its warm-up ended.
    pub settled: Option<Settled>,
    /// The host's CPU pressure and steal over the run: how contended the machine was.
    pub machine: crate::sys::pressure::MachineLoad,
    /// What the summary states about this machine, read by the engine as the run ended.
    pub host: Host,
}

/// Facts of the machine a run's result states, read from the operating system by the engine
/// when the run ends (only those its result speaks to), so the summary reads nothing itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Host {
    /// The memory limit of the server listening on the target's port, when it runs on this
    /// machine, for a run whose data set or cache state it bears on.
    pub server_memory_limit_bytes: Option<u64>,
    /// The local port range (`net.ipv4.ip_local_port_range`), for a run whose connects ran
    /// out of ports.
    pub port_range: Option<(u16, u16)>,
}

/// How a warm-up until steady state (`--warmup auto`) ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settled {
    /// Whether its last seconds were steady (false: its cap, or a stop, ended it).
    pub steady: bool,
    /// Their coefficient of variation (None: too few seconds, or one without a reply).
    pub cov: Option<f64>,
    /// The figure judged: `ops/s` (closed loop) or `mean latency` (open loop).
    pub judged: &'static str,
    /// The seconds judged together.
    pub window: usize,
    /// The CoV at or below which they are steady.
    pub bound: f64,
}
