//! A peak search's outcome (`wirebench peak`): each step's summary judged against the
//! objectives, and the peak. Field names are the JSON schema `schema/peak.v1.json`.

use super::slo::{Slo, Verdict};
use super::{Name, Summary};
use serde::{Deserialize, Serialize};

/// The schema identifier of a peak document.
pub const PEAK_SCHEMA: &str = "wirebench.peak/1";

/// A generator thread this busy (% of its threads' CPU) may be the bottleneck itself.
pub const GENERATOR_BUSY_PERCENT: f64 = 90.0;

/// The share of a latency objective that the generator's own lateness may take before a step
/// that missed it is the generator's failure, not the target's: with half the budget spent
/// before a request even left, what the target added cannot be told from the machine's delay.
pub const LAG_SHARE: f64 = 0.5;

/// The whole search. Its parts read with defaults for the fields an older document lacks
/// (trial counts, contradictions, backlogs).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PeakSearch {
    /// Always [`PEAK_SCHEMA`].
    pub schema: Name,
    /// The wirebench version that searched.
    pub wirebench_version: Name,
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
    /// Every step in the order run; the trials at the peak rate are its confirmation.
    pub steps: Vec<Step>,
    /// Every rate whose trials disagreed (it both passed and failed), or that passed above a
    /// rate whose failure held, and what decided.
    pub contradictions: Vec<Contradiction>,
    /// Why the search ended before its conclusion (its target could not be reached; wirebench
    /// was stopped while it ran): a partial search, holding the steps finished. None: complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// A rate the search saw both pass and fail (or pass above a failure), and what decided.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Contradiction {
    /// The rate, requests/s.
    pub rate_per_s: f64,
    /// Its trials that passed.
    pub passed: usize,
    /// Its trials that failed.
    pub failed: usize,
    /// What decided, in words ("passed by majority (2 of 3)").
    pub decided: String,
}

/// The peak: the figures of its last passed trial (Handle.Net's table: throughput, and the
/// mean, median and p99 latency at it), and the spread over all its trials.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
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
    /// Whether a majority of at least three trials at this rate met the objectives.
    pub confirmed: bool,
    /// Trials run at this rate.
    pub trials: usize,
    /// Those that met the objectives.
    pub passed_trials: usize,
    /// The lowest and highest ok operations per second of the trials (within each window).
    pub ops_per_s_range: [f64; 2],
    /// The lowest and highest p99 latency of the trials, µs.
    pub p99_us_range: [f64; 2],
}

/// One step: a constant-rate run and how it fared.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Step {
    /// Offered rate, requests/s.
    pub offered_per_s: f64,
    /// Ok replies per second that arrived within the step's window (those after it are late).
    pub achieved_per_s: f64,
    /// Ok replies that arrived after the window closed (drained from queues): not achieved.
    pub late_replies: u64,
    /// Requests the step offered that were still owed (not answered) when its window closed.
    pub owed_at_end: u64,
    /// The owed requests were more than the step's latency keeps in flight (Little's law)
    /// plus 1 % of those offered: a queue grew, the target did not keep up.
    pub backlog: bool,
    /// Median latency (from the intended send time), µs; None when nothing completed.
    pub p50_us: Option<f64>,
    /// 99th percentile latency, µs.
    pub p99_us: Option<f64>,
    /// Failed operations, % of all.
    pub error_percent: f64,
    /// Ok replies reached 99 % of the offered rate, and no backlog was left at the end.
    pub kept_up: bool,
    /// Every objective held and the target kept up.
    pub passed: bool,
    /// The generator, not the target, looks like the limit of this step.
    pub generator_limited: bool,
    /// What of the generator held the step back, when it did: the flag to raise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// This step re-ran the found peak.
    pub confirmation: bool,
    /// Why this rate was measured again, if it was: `contradiction`, `below_pass`,
    /// `recheck` or `confirmation` (see `load::search::Why`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Name>,
    /// Each objective's verdict.
    pub objectives: Vec<Verdict>,
    /// The step's whole result (schema `wirebench.result/1`); an older or partial one reads
    /// with defaults for what it lacks ([`Summary::tolerant`]).
    #[serde(deserialize_with = "super::read::tolerant_summary")]
    pub result: Summary,
}

/// What held a generator-limited step back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// Its threads were busy: raise -t.
    Cpu,
    /// It could not send on time while its threads and the target had time to spare.
    Sending,
    /// Every connection waited for a reply, at the service time of a calm target: raise -c.
    Connections,
    /// It woke late for its own requests (a busy machine took its CPU): its send lag alone
    /// used up [`LAG_SHARE`] of a latency objective or more.
    Lag,
}

impl Limit {
    /// The flag that lifts this limit.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::Cpu | Limit::Sending | Limit::Lag => "-t",
            Limit::Connections => "-c",
        }
    }
}

/// The generator's own lateness against the objectives: of the latency objectives `slos`, the
/// one whose figure of the step's wake lag (the generator's send lag while a connection had
/// room, `OpenLoop::wake_lag`) takes the largest share of its bound, with that figure (µs),
/// when the share reaches [`LAG_SHARE`]. A step that missed an objective so is
/// generator-limited ([`Limit::Lag`]).
pub fn generator_lag<'a>(s: &Summary, slos: &'a [Slo]) -> Option<(&'a Slo, f64)> {
    let lag = s.open_loop.as_ref()?.wake_lag.as_ref()?;
    slos.iter()
        .filter_map(|o| Some((o, o.of(lag)?)))
        .filter(|(o, v)| o.bound > 0.0 && *v >= LAG_SHARE * o.bound)
        .max_by(|a, b| (a.1 / a.0.bound).total_cmp(&(b.1 / b.0.bound)))
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

/// Whether more than 1 % of a step's operations failed because the target refused, reset or
/// closed their connection (it was killed, or turned them away): the connections then wait to
/// reconnect, and a step that fell behind so was not held back by the generator.
fn connections_lost(s: &Summary) -> bool {
    let lost: u64 = s
        .errors
        .by_kind
        .iter()
        .filter(|e| {
            use crate::record::ErrorKind::{Refused, Reset, ShortReply};
            [Refused, Reset, ShortReply]
                .iter()
                .any(|k| k.name() == e.kind)
        })
        .map(|e| e.count)
        .sum();
    lost as f64 > 0.01 * (s.ok + s.errors.total) as f64
}

/// Whether a step left a queue behind: more requests owed when its window closed than its
/// mean latency keeps in flight in a steady state (Little's law: the rate answered within the
/// window × the mean latency), with 1 % of the offered requests (the 99 % a step must achieve)
/// and two requests of slack. A queue that grew all step long holds twice what its mean
/// latency explains at the rate it was served, whatever the overload, so a target overloaded by
/// more than ~2 % fails the step however short, where its replies, drained after the window,
/// would have made "achieved" equal "offered".
fn backlog(o: &super::OpenLoop, s: &Summary) -> bool {
    let mean_s = s.latency.as_ref().map_or(0.0, |d| d.mean_us / 1e6);
    let served = s.ok.saturating_sub(o.replies_after_window) as f64 / s.duration_s.max(1e-9);
    let steady = served * mean_s;
    o.owed_at_end as f64 > 0.01 * o.offered as f64 + steady + 2.0
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
    /// generator when its own send lag took [`LAG_SHARE`] of a latency objective or more
    /// ([`generator_lag`]), when its threads were [`GENERATOR_BUSY_PERCENT`] busy, or when it sent less
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
        let backlog = open.is_some_and(|o| backlog(o, &s));
        let kept_up = open.is_some_and(|o| o.kept_up) && !backlog;
        let passed = kept_up && objectives.iter().all(|v| v.held);
        let busy = s.generator.cpu_percent_of_threads >= GENERATOR_BUSY_PERCENT;
        let achieved = open.map_or(s.throughput.ops_per_s, |o| o.achieved_per_s);
        let idle = target_idle(&s, baseline, achieved);
        let sent_short = open.is_some_and(|o| o.sent_per_s < 0.99 * o.offered_per_s);
        let all = s.ok + s.errors.total;
        // Connections the target refused, reset or closed wait out their back-off: a window
        // that stood empty then says nothing of the generator.
        let behind = !passed && !kept_up && sent_short && !connections_lost(&s);
        let limit = if !passed && generator_lag(&s, slos).is_some() {
            Some(Limit::Lag)
        } else if !passed && busy {
            Some(Limit::Cpu)
        } else if behind && window_limited(&s, calm, achieved) {
            Some(Limit::Connections)
        } else if behind && idle {
            Some(Limit::Sending)
        } else {
            None
        };
        let late = open.map_or(0, |o| o.replies_after_window);
        let secs = s.duration_s.max(1e-9);
        Step {
            offered_per_s: open.map_or(0.0, |o| o.offered_per_s),
            achieved_per_s: open.map_or(achieved, |_| s.ok.saturating_sub(late) as f64 / secs),
            late_replies: late,
            owed_at_end: open.map_or(0, |o| o.owed_at_end),
            backlog,
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
            retry: None,
            objectives,
            result: s,
        }
    }
}

impl Peak {
    /// The peak from its trials (`at`, in the order run): the last passed trial's figures and
    /// the spread of all; None without a trial.
    pub fn of(at: &[&Step], confirmed: bool) -> Option<Peak> {
        let step = at.iter().rev().find(|s| s.passed).or(at.last())?;
        let l = step.result.latency.as_ref();
        let range = |v: &dyn Fn(&Step) -> Option<f64>| {
            let vs = at.iter().filter_map(|s| v(s));
            let lo = vs.clone().fold(f64::INFINITY, f64::min);
            let hi = vs.fold(f64::NEG_INFINITY, f64::max);
            match lo <= hi {
                true => [lo, hi],
                false => [0.0, 0.0],
            }
        };
        Some(Peak {
            offered_per_s: step.offered_per_s,
            ops_per_s: step.achieved_per_s,
            mean_us: l.map_or(0.0, |d| d.mean_us),
            p50_us: l.map_or(0.0, |d| d.p50_us),
            p99_us: l.map_or(0.0, |d| d.p99_us),
            confirmed,
            trials: at.len(),
            passed_trials: at.iter().filter(|s| s.passed).count(),
            ops_per_s_range: range(&|s| Some(s.achieved_per_s)),
            p99_us_range: range(&|s| s.p99_us),
        })
    }
}
