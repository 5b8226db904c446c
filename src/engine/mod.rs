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

use crate::driver::h2::H2Driver;
use crate::driver::http::HttpDriver;
use crate::driver::tcp::TcpDriver;
use crate::driver::udp::UdpDriver;
use crate::error::UsageError;
use crate::plan::{Plan, Protocol};
use crate::record::{RunRecord, Snapshot};
use crate::sys::usage;
use std::sync::{mpsc, Arc};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Whether the plan speaks HTTP/2.
fn http2(plan: &Plan) -> bool {
    plan.workload.http.as_ref().is_some_and(|h| h.http2)
}

/// Runs `plan` to completion and returns what it recorded. Each closed second of the
/// measured part (and the warm-up's progress) is shown to `watch` as the run goes on.
pub fn execute(plan: &Plan, watch: &mut dyn FnMut(&Snapshot)) -> anyhow::Result<RunRecord> {
    // One descriptor per connection, in the open loop two per worker (its timers), and spares.
    let timers = if plan.load.schedule().is_some() {
        2 * plan.threads
    } else {
        0
    };
    usage::ensure_fd_limit((plan.connections + timers) as u64 + 64)?;
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
    let mut record = collector::collect(rx, plan.threads, watch, timeline.t0, spares);
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
    record.measured = stop.saturating_duration_since(start);
    record.warm_for = start.saturating_duration_since(timeline.t0);
    record.started_unix_ms = (SystemTime::now() - end.saturating_duration_since(start))
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    record.peak_rss_kib = usage::peak_rss_kib();
    Ok(record)
}
