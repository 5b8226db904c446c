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

mod collector;
mod conn;
pub mod gate;
mod open_loop;
mod pacer;
mod timeline;
mod timer;

mod worker;

use crate::cli::{ClientMode, RunArgs};
use crate::driver::h2::H2Driver;
use crate::driver::http::HttpDriver;
use crate::driver::tcp::TcpDriver;
use crate::driver::udp::UdpDriver;
use crate::error::UsageError;
use crate::load::Schedule;
use crate::plan::http::HttpSpec;
use crate::plan::{mode_name, Plan, Protocol, Reply};
use crate::record::{ErrorKind, Recorder};
use crate::report::progress::Progress;
use crate::summary::{
    self, Datagrams, Distribution, ErrorSummary, OpenLoop, SeriesPoint, ServerCount, Summary,
    Throughput,
};
use crate::sys::usage;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use collector::Collected;

/// `wirebench run`: validate, check the target answers, run, report, exit code.
pub fn main(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::try_from(args)?;
    // One descriptor per connection, in the open loop two per worker (its timers), and spares.
    let timers = if plan.load.schedule().is_some() {
        2 * plan.threads
    } else {
        0
    };
    usage::ensure_fd_limit((plan.connections + timers) as u64 + 64)?;
    let progress = Progress::new(!args.quiet && !args.json && Progress::should_show());
    let summary = execute(&plan, progress)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        crate::report::json::write(&summary, &mut out)?;
    } else {
        crate::report::table::write(&summary, &mut out)?;
    }
    out.flush()?;
    Ok(exit_code(&summary))
}

/// 0 when every operation succeeded (and something was measured), 1 otherwise.
pub fn exit_code(s: &Summary) -> ExitCode {
    let bulk = s.throughput.sent_bytes + s.throughput.received_bytes > 0 && s.latency.is_none();
    if s.errors.total > 0 || (s.ok == 0 && !bulk) {
        ExitCode::from(crate::app::EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Whether the plan speaks HTTP/2.
fn http2(plan: &Plan) -> bool {
    plan.workload.http.as_ref().is_some_and(|h| h.http2)
}

/// Runs `plan` to completion and summarises it.
pub fn execute(plan: &Plan, progress: Progress) -> anyhow::Result<Summary> {
    let plan = Arc::new(plan.clone());
    let timeline = Arc::new(timeline::Timeline::new(&plan));
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
        handles.push(
            std::thread::Builder::new()
                .name(format!("wirebench-{w}"))
                .spawn(move || {
                    let p = &spec.plan;
                    // A worker with a single closed-loop connection blocks in its socket calls
                    // instead of waiting in epoll: a syscall less per read.
                    let blocking = spec.connections.len() == 1 && p.load.schedule().is_none();
                    match p.target.protocol {
                        Protocol::Tcp => {
                            let d = TcpDriver::new(
                                p.target.addr,
                                &p.workload,
                                p.socket,
                                p.load.in_flight(),
                            )
                            .blocking(blocking);
                            worker::run(spec, d)
                        }
                        Protocol::Http if http2(p) => {
                            let http = p.workload.http.clone().expect("http:// plans have a spec");
                            let d = H2Driver::new(
                                p.target.addr,
                                http,
                                p.socket,
                                spec.worker,
                                p.connections,
                                p.tls.clone(),
                            );
                            worker::run(spec, d)
                        }
                        Protocol::Http => {
                            let http = p.workload.http.clone().expect("http:// plans have a spec");
                            let d = HttpDriver::new(
                                p.target.addr,
                                http,
                                p.socket,
                                spec.worker,
                                p.connections,
                            )
                            .blocking(blocking)
                            .tls(p.tls.clone());
                            worker::run(spec, d)
                        }
                        Protocol::Udp => {
                            let d = UdpDriver::new(p.target.addr, &p.workload, p.socket)
                                .blocking(blocking);
                            worker::run(spec, d)
                        }
                    }
                })?,
        );
    }
    drop(tx);
    let collected = collector::collect(rx, plan.threads, progress, timeline.t0, spares);
    for h in handles {
        h.join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))??;
    }
    match gate.reason() {
        Some(gate::Abort::Usage(why)) => return Err(UsageError(why).into()),
        Some(gate::Abort::Unreachable(why)) => return Err(anyhow::anyhow!(why)),
        None => {}
    }
    let end = Instant::now();
    let start = timeline.measure_start().unwrap_or(end);
    let stop = timeline.deadline(start).map_or(end, |d| d.min(end));
    let measured = stop.saturating_duration_since(start);
    let started_unix_ms = (SystemTime::now() - end.saturating_duration_since(start))
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let warm_for = start.saturating_duration_since(timeline.t0);
    Ok(summarize(
        &plan,
        collected,
        measured,
        warm_for,
        started_unix_ms,
    ))
}

/// Builds the summary of a finished run.
fn summarize(
    plan: &Plan,
    mut c: Collected,
    measured: Duration,
    warm_for: Duration,
    started_unix_ms: u64,
) -> Summary {
    let unit = plan.workload.request.len();
    let bulk = match plan.workload.mode {
        ClientMode::Stream => Some(c.total.sent_bytes),
        ClientMode::Source => Some(c.total.received_bytes),
        _ => None,
    };
    if let Some(bytes) = bulk {
        c.total.messages = bytes / unit as u64;
    }
    let cpu_s = (c.cpu.user + c.cpu.sys).as_secs_f64();
    let mut s = Summary {
        schema: summary::SCHEMA,
        wirebench_version: env!("CARGO_PKG_VERSION"),
        started_unix_ms,
        target: plan.target.url.clone(),
        protocol: plan.target.protocol.name(),
        mode: mode_name(plan.workload.mode),
        config: config(plan),
        duration_s: measured.as_secs_f64(),
        ok: c.total.ok,
        errors: ErrorSummary::of(&c.total),
        // Only streams to a wirebench sink carry the receiver's count; elsewhere it is a no-op.
        throughput: Throughput::of(&c.total, measured, bulk.map(|_| unit))
            .with_receiver(&c.total, measured, unit),
        latency: Distribution::of(&c.total.latency),
        service_time: Distribution::of(&c.total.service),
        connect: Distribution::of(&c.total.connect),
        open_loop: plan
            .load
            .schedule()
            .map(|sched| open_loop(plan, sched, &c.total, measured)),
        datagrams: (plan.target.protocol == Protocol::Udp).then(|| datagrams(&c.total)),
        http: plan
            .workload
            .http
            .as_ref()
            .map(|spec| http_summary(spec, &c.total, measured)),
        warmup: plan.warmup.map(|_| summary::Warmup {
            duration_s: warm_for.as_secs_f64(),
            ok: c.warm.ok,
            errors: c.warm.errors.total(),
            p50_us: (!c.warm.latency.is_empty())
                .then(|| c.warm.latency.value_at_quantile(0.5) as f64 / 1000.0),
        }),
        series: with_offered(plan, c.series, measured),
        generator: summary::Generator {
            threads: plan.threads,
            cpu_user_s: c.cpu.user.as_secs_f64(),
            cpu_sys_s: c.cpu.sys.as_secs_f64(),
            cpu_percent_of_threads: 100.0 * cpu_s
                / (measured.as_secs_f64() * plan.threads as f64).max(1e-9),
            peak_rss_kib: usage::peak_rss_kib(),
        },
        notes: Vec::new(),
    };
    s.notes = crate::summary::diagnose::notes(&s);
    s
}

/// An HTTP run's statuses, first-byte times and goodput.
fn http_summary(spec: &HttpSpec, total: &Recorder, measured: Duration) -> summary::Http {
    let first = &spec.requests[0];
    summary::Http {
        method: first.method.clone(),
        path: spec_path(spec),
        requests: spec.requests.len(),
        keepalive: spec.keepalive,
        version: if spec.http2 { "2" } else { "1.1" },
        status: total
            .status
            .iter()
            .map(|(code, count)| summary::StatusCount { code, count })
            .collect(),
        status_2xx: total.status.class(2),
        status_3xx: total.status.class(3),
        status_4xx: total.status.class(4),
        status_5xx: total.status.class(5),
        body_bytes: total.received_bytes,
        goodput_mb_per_s: total.received_bytes as f64 / measured.as_secs_f64().max(1e-9) / 1e6,
        ttfb: Distribution::of(&total.ttfb),
    }
}

/// The path of the run's URL as the user wrote it.
fn spec_path(spec: &HttpSpec) -> String {
    spec.path_text.clone()
}

/// What became of a UDP run's datagrams.
fn datagrams(total: &Recorder) -> Datagrams {
    let percent = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
    let lost = total.errors.count(ErrorKind::Timeout);
    let peer = &total.peer;
    Datagrams {
        sent: total.issued,
        answered: total.ok,
        lost,
        loss_percent: percent(lost, total.ok + lost),
        late: total.late,
        duplicated: total.duplicates,
        reordered: total.reordered,
        server: (peer.reports > 0).then(|| ServerCount {
            sent: peer.sent,
            received: peer.received,
            lost: peer.lost(),
            loss_percent: percent(peer.lost(), peer.sent),
            out_of_order: peer.out_of_order,
            duplicated: peer.duplicated,
            jitter_us: peer.jitter_us,
        }),
    }
}

/// How the open loop kept to `schedule` over the measured time.
fn open_loop(plan: &Plan, schedule: &Schedule, total: &Recorder, measured: Duration) -> OpenLoop {
    let secs = measured.as_secs_f64().max(1e-9);
    let mut offered = schedule.due_before(measured);
    if let Some(n) = plan.stop.requests {
        offered = offered.min(n);
    }
    OpenLoop {
        schedule: plan.schedule_text.clone().unwrap_or_default(),
        offered,
        offered_per_s: offered as f64 / secs,
        sent: total.issued,
        sent_per_s: total.issued as f64 / secs,
        achieved_per_s: total.ok as f64 / secs,
        behind_schedule: total.behind,
        max_lag_us: total.max_lag_ns as f64 / 1000.0,
        send_lag: Distribution::of(&total.send_lag),
        kept_up: kept_up(plan.workload.mode, total, offered),
    }
}

/// Whether the run kept up with `offered`: ok replies reached 99 % of it. A stream has no
/// replies, so there it is what was sent that must reach 99 %, and of that the server (when it
/// counts) must have received 99 %.
fn kept_up(mode: ClientMode, total: &Recorder, offered: u64) -> bool {
    let enough = |n: u64, of: u64| n as f64 >= 0.99 * of as f64;
    match mode {
        ClientMode::Stream | ClientMode::Source => {
            let peer = &total.peer;
            enough(total.issued, offered)
                && (peer.reports == 0 || enough(peer.sent - peer.lost(), peer.sent))
        }
        _ => enough(total.ok, offered),
    }
}

/// Gives each second of the series its true length (the last may be partial) and, in the open
/// loop, the requests its schedule offered in that length.
fn with_offered(plan: &Plan, mut series: Vec<SeriesPoint>, measured: Duration) -> Vec<SeriesPoint> {
    SeriesPoint::set_lengths(&mut series, measured);
    if let Some(s) = plan.load.schedule() {
        for p in &mut series {
            let from = Duration::from_secs(p.second);
            let to = (from + Duration::from_secs(1)).min(measured.max(from));
            p.offered = Some(s.due_before(to) - s.due_before(from));
        }
    }
    series
}

fn config(plan: &Plan) -> summary::Config {
    summary::Config {
        connections: plan.connections,
        threads: plan.threads,
        pipeline: plan.load.in_flight_limit(),
        think_s: plan.load.think().map(|d| d.as_secs_f64()),
        request_bytes: plan.workload.request.len(),
        reply_bytes: match &plan.workload.reply {
            Reply::Size(n)
                if !matches!(plan.workload.mode, ClientMode::Stream | ClientMode::Source) =>
            {
                Some(*n)
            }
            _ => None,
        },
        reply_until: match &plan.workload.reply {
            Reply::Until(d) => Some(crate::units::escape(d)),
            Reply::Size(_) => None,
        },
        preamble: plan.workload.preamble().is_some(),
        duration_s: plan.stop.duration.map(|d| d.as_secs_f64()),
        requests: plan.stop.requests,
        timeout_s: plan.timeout.as_secs_f64(),
        nodelay: plan.socket.nodelay,
        sndbuf: plan.socket.sndbuf,
        rcvbuf: plan.socket.rcvbuf,
    }
}
