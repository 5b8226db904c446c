//! A peak search's outcome (`wirebench peak`): each step's summary judged against the
//! objectives, and the peak. Field names are the JSON schema `schema/peak.v1.json`.

use super::slo::{Slo, Verdict};
use super::Summary;
use serde::Serialize;

/// The schema identifier of a peak document.
pub const PEAK_SCHEMA: &str = "wirebench.peak/1";

/// A generator thread this busy (% of its threads' CPU) may be the bottleneck itself.
pub const GENERATOR_BUSY_PERCENT: f64 = 90.0;

/// The whole search.
#[derive(Clone, Debug, Serialize)]
pub struct PeakStudy {
    /// Always [`PEAK_SCHEMA`].
    pub schema: &'static str,
    /// The wirebench version that searched.
    pub wirebench_version: &'static str,
    /// The target URL.
    pub target: String,
    /// The objectives, as given.
    pub objectives: Vec<String>,
    /// How long each step offered its rate, seconds.
    pub step_s: f64,
    /// The search stopped when the bracket was this close (fraction of the passing rate).
    pub tolerance: f64,
    /// The highest rate sustained within the objectives, if one was found.
    pub peak: Option<Peak>,
    /// A failing step was limited by the generator, not the target: the peak is not known.
    pub generator_limited: bool,
    /// One sentence: what was found.
    pub conclusion: String,
    /// Every step in the order run; the last is the confirmation when there is a peak.
    pub steps: Vec<Step>,
    /// Why the search ended before its conclusion (its target could not be reached; wirebench
    /// was stopped while it ran): a partial search, holding the steps finished. None: complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The peak: the confirmation run's figures (Handle.Net's table: throughput, and the mean,
/// median and p99 latency at it).
#[derive(Clone, Debug, Serialize)]
pub struct Peak {
    /// The offered rate, requests/s.
    pub offered_per_s: f64,
    /// Ok operations per second achieved at it.
    pub ops_per_s: f64,
    /// Mean latency at the peak, µs.
    pub mean_us: f64,
    /// Median latency at the peak, µs.
    pub p50_us: f64,
    /// 99th percentile latency at the peak, µs.
    pub p99_us: f64,
    /// Whether the confirmation run met the objectives too.
    pub confirmed: bool,
}

/// One step: a constant-rate run and how it fared.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Offered rate, requests/s.
    pub offered_per_s: f64,
    /// Ok replies per second.
    pub achieved_per_s: f64,
    /// Median latency (from the intended send time), µs; None when nothing completed.
    pub p50_us: Option<f64>,
    /// 99th percentile latency, µs.
    pub p99_us: Option<f64>,
    /// Failed operations, % of all.
    pub error_percent: f64,
    /// Ok replies reached 99 % of the offered rate.
    pub kept_up: bool,
    /// Every objective held and the target kept up.
    pub passed: bool,
    /// The generator, not the target, looks like the limit of this step.
    pub generator_limited: bool,
    /// What of the generator held the step back, when it did: the flag to raise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// This step re-ran the found peak.
    pub confirmation: bool,
    /// Each objective's verdict.
    pub objectives: Vec<Verdict>,
    /// The step's whole result (schema `wirebench.result/1`).
    pub result: Summary,
}

/// What held a generator-limited step back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// Its threads were busy: raise -t.
    Cpu,
    /// It could not send on time while its threads and the target had time to spare.
    Sending,
    /// Every connection waited for a reply, at the service time of a calm target: raise -c.
    Connections,
}

impl Limit {
    /// The flag that lifts this limit.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::Cpu | Limit::Sending => "-t",
            Limit::Connections => "-c",
        }
    }
}

/// A step's p99 (service time when the run has it, else latency), µs: how long the target took.
fn target_p99(s: &Summary) -> Option<f64> {
    s.service_time
        .as_ref()
        .or(s.latency.as_ref())
        .map(|d| d.p99_us)
}

/// Whether the target had time to spare in a step that fell behind. With a bounded in-flight
/// window W (connections × pipeline) and a mean service time S, a busy target holds the rate
/// near W / S (Little's law); a rate far below it means the window stood empty, so requests
/// were not sent: the generator was slow. Without a window bound (UDP), the target is idle
/// when its service p99 did not grow over the first step's (at most twice it plus 1 ms).
fn target_idle(s: &Summary, baseline: Option<&Summary>, achieved: f64) -> bool {
    let service = s.service_time.as_ref();
    if let (Some(pipeline), Some(svc)) = (s.config.pipeline, service) {
        let window = (s.config.connections * pipeline) as f64;
        return svc.mean_us > 0.0 && achieved < 0.5 * window / (svc.mean_us / 1e6);
    }
    match (baseline.and_then(target_p99), target_p99(s)) {
        (Some(base), Some(now)) => now <= 2.0 * base + 1000.0,
        _ => false,
    }
}

/// Whether the in-flight window (connections × pipeline), not the target, held a step back:
/// the window stood full (Little's law: achieved × mean service ≥ 70 % of it) while the
/// target served as fast as in `calm`, a step that passed at a lower rate (mean service at
/// most 2 × its own + 0.5 ms). A saturated target queues the window's requests, so its
/// service time grows; one that answers as fast as before had room for more connections.
fn window_limited(s: &Summary, calm: Option<&Summary>, achieved: f64) -> bool {
    let (Some(pipeline), Some(svc)) = (s.config.pipeline, s.service_time.as_ref()) else {
        return false;
    };
    let Some(base) = calm.and_then(|c| c.service_time.as_ref()) else {
        return false;
    };
    let window = (s.config.connections * pipeline) as f64;
    let full = achieved * svc.mean_us / 1e6 >= 0.7 * window;
    full && svc.mean_us <= 2.0 * base.mean_us + 500.0
}

impl Step {
    /// Whether the target answered none of the step's requests, and not for lack of time (no
    /// timeouts): it rejects the workload itself (a wrong URL, a refused port), whatever the
    /// rate.
    pub fn rejects_everything(&self) -> bool {
        let r = &self.result;
        r.ok == 0 && r.errors.total > 0 && r.errors.by_kind.iter().all(|e| e.kind != "timeout")
    }

    /// Whether the step got nothing back at all: not one reply, not one byte, not one late
    /// datagram, while its requests failed (a target frozen, gone or not reading). A step with
    /// some replies that misses its objective is not silent: the search bisects below it.
    pub fn answered_nothing(&self) -> bool {
        let r = &self.result;
        let late = r.datagrams.as_ref().map_or(0, |d| d.late);
        r.ok == 0 && r.errors.total > 0 && r.throughput.received_bytes == 0 && late == 0
    }

    /// Judges a step's summary against the objectives. A failed step was held back by the
    /// generator when its threads were [`GENERATOR_BUSY_PERCENT`] busy, or when it sent less
    /// than offered while the target had time to spare (see `target_idle`; `baseline` is the
    /// first step's summary) or while its window of connections was full at the service time
    /// of `calm`, the passed step served fastest (see `window_limited`).
    pub fn judge(
        s: Summary,
        slos: &[Slo],
        baseline: Option<&Summary>,
        calm: Option<&Summary>,
        confirmation: bool,
    ) -> Step {
        let objectives: Vec<Verdict> = slos.iter().map(|o| o.check(&s)).collect();
        let open = s.open_loop.as_ref();
        let kept_up = open.is_some_and(|o| o.kept_up);
        let passed = kept_up && objectives.iter().all(|v| v.held);
        let busy = s.generator.cpu_percent_of_threads >= GENERATOR_BUSY_PERCENT;
        let achieved = open.map_or(s.throughput.ops_per_s, |o| o.achieved_per_s);
        let idle = target_idle(&s, baseline, achieved);
        let sent_short = open.is_some_and(|o| o.sent_per_s < 0.99 * o.offered_per_s);
        let all = s.ok + s.errors.total;
        let behind = !passed && !kept_up && sent_short;
        let limit = if !passed && busy {
            Some(Limit::Cpu)
        } else if behind && window_limited(&s, calm, achieved) {
            Some(Limit::Connections)
        } else if behind && idle {
            Some(Limit::Sending)
        } else {
            None
        };
        Step {
            offered_per_s: open.map_or(0.0, |o| o.offered_per_s),
            achieved_per_s: achieved,
            p50_us: s.latency.as_ref().map(|d| d.p50_us),
            p99_us: s.latency.as_ref().map(|d| d.p99_us),
            error_percent: if all == 0 {
                0.0
            } else {
                100.0 * s.errors.total as f64 / all as f64
            },
            kept_up,
            passed,
            generator_limited: limit.is_some(),
            limit,
            confirmation,
            objectives,
            result: s,
        }
    }
}

impl Peak {
    /// The peak's figures from its confirmation step.
    pub fn of(step: &Step) -> Peak {
        let l = step.result.latency.as_ref();
        Peak {
            offered_per_s: step.offered_per_s,
            ops_per_s: step.achieved_per_s,
            mean_us: l.map_or(0.0, |d| d.mean_us),
            p50_us: l.map_or(0.0, |d| d.p50_us),
            p99_us: l.map_or(0.0, |d| d.p99_us),
            confirmed: step.passed,
        }
    }
}
