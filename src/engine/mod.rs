//! The engine: workers = load model × driver, deadlines, shutdown, and the collector.
//!
//! `plan.threads` worker threads each run a single-threaded runtime that owns its share of the
//! connections and its own recorder (a shared-nothing design: no locks or shared atomics on the
//! hot path). Workers ship per-second intervals to the collector on the calling thread, which
//! merges them exactly. A run ends at its deadline whatever the target does: no request goes out
//! after it, and those in flight get their `--timeout` to finish, so every request sent is an ok
//! or an error. The run's first connection is its reachability check, and a fatal error stops
//! every worker at once ([`gate`]); in the open loop each worker paces its share of the
//! timetable over its connections (`pacer`).

mod clock;
mod collector;
mod conn;
mod crowd;
pub mod gate;
mod pacer;
mod steady;
pub mod stop;
mod timeline;
mod timer;
pub mod vitals;
mod worker;

/// Runs a future to its end on a current-thread runtime with time and I/O (the engine's unit tests).
#[cfg(test)]
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

use crate::driver::{self, Placement, Protocol, Visit};
use crate::error::UsageError;
use crate::plan::Plan;
use crate::record::{RunRecord, Snapshot};
use crate::sys::usage;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
pub use stop::Stop;

/// Why a run did not complete.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input must change: the driver refused the plan, too few file descriptors, or the
    /// server refused what the plan asks (exit 2).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The target could not be reached at all.
    #[error(transparent)]
    Unreachable(#[from] gate::Unreachable),
    /// The operating system refused a thread or a socket.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A worker thread panicked (a bug).
    #[error("a worker thread panicked")]
    Panicked,
}

/// Runs `plan` to completion and returns what it recorded. Each closed second of the
/// measured part (and the warm-up's progress) is shown to `watch` as the run goes on. The
/// plan's protocol is prepared first: what it rejects is bad input.
pub fn execute(
    plan: &Plan,
    stop: &Stop,
    watch: &mut dyn FnMut(&Snapshot),
) -> Result<RunRecord, Error> {
    let job = driver::Job {
        target: plan.target.clone(),
        workload: plan.workload.clone(),
        socket: plan.socket,
        connections: plan.connections,
        in_flight: plan.load.in_flight(),
        tls: plan.tls.clone(),
    };
    let run = Run {
        plan: Arc::new(plan.clone()),
        job: Arc::new(job),
        stop: stop.clone(),
        watch,
    };
    let job = run.job.clone();
    // What a protocol refuses is bad input: exit 2, its message as it is.
    driver::visit(&job, run).map_err(|e| UsageError::new(e.to_string()))?
}

/// A run about to start, waiting for its prepared protocol.
struct Run<'w> {
    plan: Arc<Plan>,
    job: Arc<driver::Job>,
    stop: Stop,
    watch: &'w mut dyn FnMut(&Snapshot),
}

impl Visit for Run<'_> {
    type Output = Result<RunRecord, Error>;

    fn visit<P: Protocol>(self, protocol: Arc<P>) -> Result<RunRecord, Error> {
        self.start(protocol)
    }
}

impl Run<'_> {
    /// Spawns the workers, each with its driver of `protocol`, collects what they record until
    /// the last one ends, and times the run.
    fn start<P: Protocol>(self, protocol: Arc<P>) -> Result<RunRecord, Error> {
        let plan = self.plan;
        usage::ensure_fd_limit(descriptors(&plan))?;
        let timeline = Arc::new(timeline::Timeline::new(&plan, self.stop.clone()));
        let machine = crate::sys::pressure::Snapshot::now();
        let gate = Arc::new(gate::Gate::new());
        let (tx, rx) = mpsc::channel();
        // A spare recorder per worker, and one for the collector's second in progress.
        let spares = Arc::new(collector::Spares::new(plan.threads + 1));
        let mut handles = Vec::with_capacity(plan.threads);
        for w in 0..plan.threads {
            let spec = worker::WorkerSpec {
                worker: w,
                connections: (w..plan.connections).step_by(plan.threads).collect(),
                plan: plan.clone(),
                timeline: timeline.clone(),
                tx: tx.clone(),
                gate: gate.clone(),
                spares: spares.clone(),
            };
            let (protocol, job) = (protocol.clone(), self.job.clone());
            handles.push(
                std::thread::Builder::new()
                    .name(format!("wirebench-{w}"))
                    .spawn(move || {
                        // A worker with a single closed-loop connection blocks in its socket
                        // calls instead of waiting in epoll: a syscall less per read.
                        let blocking =
                            spec.connections.len() == 1 && spec.plan.load.schedule().is_none();
                        let at = Placement {
                            worker: w,
                            blocking,
                        };
                        worker::run(spec, protocol.driver(&job, at))
                    })?,
            );
        }
        drop(tx);
        let open_loop = plan.load.schedule().is_some();
        let record = collector::collect(rx, plan.threads, self.watch, &timeline, open_loop, spares);
        for h in handles {
            h.join().map_err(|_| Error::Panicked)??;
        }
        match gate.reason() {
            Some(gate::Abort::Usage(why)) => return Err(UsageError::new(why).into()),
            Some(gate::Abort::Unreachable(lost)) => return Err(lost.into()),
            None => {}
        }
        let mut record = timed(record, &timeline, planned_span(&plan));
        record.machine = machine.since();
        if timeline.vitals.gone() {
            record.gone = timeline.vitals.grace;
        }
        if timeline.expired() {
            unfinished(&mut record, &plan, &timeline);
        }
        record.host = host(&plan, &record);
        Ok(record)
    }
}

/// What the run's result states about this machine, read now that the run has ended, and
/// only what it speaks to: the server's memory limit for a run of a data set or a cache state
/// (finding the listener walks every process's open files, ~300 readlink calls on a quiet
/// machine and thousands on a busy one, which a plain run's client would pay for in its CPU
/// time and its end), the local port range for a run that ran out of ports.
fn host(plan: &Plan, record: &RunRecord) -> crate::record::Host {
    use crate::sys::cgroup;
    let addr = plan.target.addr;
    let data_bound = plan.cache.is_some() || plan.exchange().files.is_some();
    let out_of_ports = record
        .total
        .errors
        .count(crate::record::ErrorKind::PortExhausted)
        > 0;
    crate::record::Host {
        server_memory_limit_bytes: (data_bound && addr.ip().is_loopback())
            .then(|| cgroup::listener_of(addr.port()).and_then(cgroup::memory_limit_of))
            .flatten(),
        port_range: out_of_ports.then(crate::sys::netstat::port_range).flatten(),
    }
}

/// The span an open loop's timetable gives its measured part: its duration, or the time its
/// `-n` requests are due in (`n / rate` at a constant rate), whichever ends first.
fn planned_span(plan: &Plan) -> Option<Duration> {
    let schedule = plan.load.schedule()?;
    let by_count = plan
        .stop
        .requests
        .and_then(|n| schedule.time_of(n).or(schedule.length()));
    match (plan.stop.duration, by_count) {
        (Some(d), Some(c)) => Some(d.min(c)),
        (d, c) => d.or(c),
    }
}

/// The run's overall limit passed: the requests it still owed (never sent, or sent and not
/// answered) count as errors, so ok + errors is the count asked for and the run fails.
fn unfinished(record: &mut RunRecord, plan: &Plan, timeline: &timeline::Timeline) {
    let Some(limit) = timeline.overall else {
        return;
    };
    let done = record.total.ok + record.total.errors.total();
    let owed = plan.stop.requests.map_or(0, |n| n.saturating_sub(done));
    let message = format!(
        "not finished by the run's deadline ({}): never sent, or sent and not answered",
        crate::units::format_us(limit.as_secs_f64() * 1e6)
    );
    record.total.errors.add_many(
        crate::record::OpError::new(crate::record::ErrorKind::Timeout, message),
        owed,
    );
    record.deadline_passed = Some((limit, owed));
}

/// The open files `plan` needs: one descriptor per connection, in the open loop two per
/// worker (its timers), with think time one timer per connection, and spares. A sweep checks
/// every point's before its first runs.
pub fn descriptors(plan: &Plan) -> u64 {
    let timers = if plan.load.schedule().is_some() {
        2 * plan.threads
    } else if plan.load.think().is_some() {
        plan.connections
    } else {
        0
    };
    (plan.connections + timers) as u64 + 64
}

/// `record` with the run's timings from `timeline`, read now that the run has ended.
///
/// A run by count is timed from its first send to its last completion: timed from the start
/// of the measured part to now, it would count the worker threads' spawn and join, which on a
/// short run (one 10 MB download) is a third of the time. A run by time ends at its deadline,
/// or, stopped before it, at its last completion (not at the join that follows).
///
/// An open loop is measured from its timetable's start, over it (`planned`) at least: it sends its last request
/// before the deadline and may be done a moment later, and timed to that last reply, its
/// rates would be over a shorter span than the one its requests were due in (`--rate 10 -d
/// 200ms` sent 2 in 103 ms: "offered 19.4/s"). Not when stopped early (Ctrl-C, `--deadline`,
/// a target gone).
fn timed(
    mut record: RunRecord,
    timeline: &timeline::Timeline,
    planned: Option<Duration>,
) -> RunRecord {
    let end = Instant::now();
    let start = timeline.measure_start().unwrap_or(end);
    let (from, to) = match (timeline.deadline(start), record.active) {
        // An open loop's timetable begins at the start: its span is measured from there.
        (None, Some((_, last))) if planned.is_some() => (start, last.max(start)),
        (None, Some((first, last))) => (first.max(start), last),
        (None, None) => (start, end),
        (Some(deadline), _) if end >= deadline => (start, deadline),
        (Some(_), active) => (start, active.map_or(end, |(_, last)| last.min(end))),
    };
    record.measured = to.saturating_duration_since(from);
    record.measured_from = from.saturating_duration_since(start);
    let early = timeline.stop.requested() || timeline.expired() || timeline.vitals.gone();
    if let Some(p) = planned.filter(|_| !early) {
        record.measured = record.measured.max(p);
    }
    record.warm_for = start.saturating_duration_since(timeline.t0);
    record.started_unix_ms = (SystemTime::now() - end.saturating_duration_since(from))
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    record.peak_rss_kib = usage::peak_rss_kib();
    record
}
