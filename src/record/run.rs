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
    /// `--warmup auto`: how its warm-up ended.
    pub settled: Option<Settled>,
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
