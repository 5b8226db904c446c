//! The built-in study, shaped like the DIM publish/subscribe measurements (seed 004): messages/s
//! and kB/s by message size, for request/response and for server push, on loopback against the
//! reference server started in-process. One row per workload, one column per size.
//!
//! Each run is a plan like any other: typed as `wirebench run` arguments and validated by
//! [`Plan::try_from`]; `report::demo` renders the results.

use crate::cli::{Cli, Command, DemoArgs};
use crate::error::usage;
use crate::plan::{duration_flag, Plan};
use crate::report::demo::{write_method, write_study, Row};
use crate::report::progress::Progress;
use crate::serve::tcp::{spawn, ServerHandle, TcpServerOptions};
use crate::serve::Mode as ServerMode;
use crate::summary::Summary;
use crate::sys::pin;
use clap::Parser;
use std::io::Write;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

/// The message sizes of the DIM study, in bytes.
pub const SIZES: [usize; 10] = [4, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];

/// Runs at each point; the figure printed is their median.
pub const REPEATS: usize = 3;

/// The two workloads of the study: label, client mode (as `--mode` is typed), server mode.
const WORKLOADS: [(&str, &str, ServerMode); 2] = [
    ("request/response", "rr", ServerMode::Echo),
    ("server push", "source", ServerMode::Source),
];

/// `wirebench demo`.
pub fn main(args: &DemoArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let per_size = duration_flag("--time-per-size", &args.time_per_size)?;
    if per_size.is_zero() {
        usage("--time-per-size 0 measures nothing: give a duration such as 500ms")?;
    }
    let placement = pin::Placement::choose();
    let described = placement.describe();
    write_method(&described, per_size, warmup(per_size), REPEATS, out)?;
    out.flush()?;
    // Ctrl-C or SIGTERM stops the run in progress and starts no other: the tables of the runs
    // measured are printed (a dash where none was), with the signal's exit code (130, 143).
    crate::app::signals::stop_on_ctrl_c()?;
    let rows = study(&placement, per_size)?;
    write_study(&SIZES, &rows, out)?;
    if crate::app::signals::requested() {
        writeln!(
            out,
            "\nInterrupted ({}): the tables cover the runs measured until then (— where none was).",
            super::keep::stopped_by()
        )?;
        return Ok(ExitCode::from(super::keep::interrupted_code()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The warm-up before each run.
fn warmup(per_size: Duration) -> Duration {
    per_size / 6
}

/// Measures both workloads at every size, [`REPEATS`] rounds, against in-process servers, the
/// threads of both placed as `placement` says (and put back after).
fn study(placement: &pin::Placement, per_size: Duration) -> anyhow::Result<Vec<Row>> {
    let _restore = pin::Restore::current()?;
    let mut servers = Vec::new();
    placement.apply()?;
    for (_, _, mode) in WORKLOADS {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let options = TcpServerOptions {
            mode,
            ..TcpServerOptions::default()
        };
        servers.push(spawn(listener, options)?);
    }
    let plans = plans(&servers, per_size)?;
    // runs[workload][size]: (messages/s, kB/s in one direction) of each round.
    let mut runs = vec![vec![Vec::new(); SIZES.len()]; WORKLOADS.len()];
    'rounds: for _ in 0..REPEATS {
        for (w, (label, _, _)) in WORKLOADS.iter().enumerate() {
            for (i, &size) in SIZES.iter().enumerate() {
                if crate::app::signals::requested() {
                    break 'rounds; // stopped: the runs so far are the study
                }
                let s = measure(&plans[w][i])?;
                if crate::app::signals::requested() {
                    break 'rounds; // a run cut short is not one of the study's
                }
                anyhow::ensure!(
                    s.errors.total == 0,
                    "{label} at {size} B saw {} errors: {:?}",
                    s.errors.total,
                    s.errors.by_kind.first().map(|e| &e.sample)
                );
                // One direction (report::demo::THROUGHPUT): rr echoes what it sends, push only
                // receives; SI kB, as every rate wirebench prints.
                let bytes = s.throughput.sent_bytes.max(s.throughput.received_bytes) as f64;
                let kb = bytes / s.duration_s.max(1e-9) / 1000.0;
                runs[w][i].push((s.throughput.messages_per_s, kb));
            }
        }
    }
    for server in servers {
        let _ = server.stop();
    }
    Ok(WORKLOADS
        .iter()
        .zip(runs)
        .map(|((label, _, _), runs)| row(label, &runs))
        .collect())
}

/// The plans of the study, `[workload][size]`, against `servers` (one per workload).
fn plans(servers: &[ServerHandle], per_size: Duration) -> anyhow::Result<Vec<Vec<Plan>>> {
    let mut plans = Vec::new();
    for ((_, mode, _), server) in WORKLOADS.iter().zip(servers) {
        let url = format!("tcp://{}", server.addr);
        let of_size = |&size| plan(&url, mode, size, per_size);
        plans.push(SIZES.iter().map(of_size).collect::<anyhow::Result<_>>()?);
    }
    Ok(plans)
}

/// One run of the study, built as `run` builds it from its arguments: one connection on one
/// thread, `size`-byte messages in wirebench framing, `per_size` measured after the warm-up.
fn plan(url: &str, mode: &str, size: usize, per_size: Duration) -> anyhow::Result<Plan> {
    // Durations go in as whole nanoseconds, which read back exactly.
    let (duration, warmup) = (per_size.as_nanos(), warmup(per_size).as_nanos());
    let line = format!(
        "wirebench run {url} --mode {mode} -c 1 -t 1 --size {size} -d {duration}ns --warmup {warmup}ns"
    );
    let Command::Run(args) = Cli::try_parse_from(line.split_whitespace())?.command else {
        unreachable!("the arguments name the run command")
    };
    Ok(Plan::try_from(&args)?)
}

/// One run of a plan, without a progress line.
fn measure(plan: &Plan) -> anyhow::Result<Summary> {
    super::run::measure(plan, Progress::new(false))
}

/// A row from each size's runs: medians and the spread of messages/s.
fn row(label: &'static str, runs: &[Vec<(f64, f64)>]) -> Row {
    let mut r = Row {
        label,
        messages_per_s: Vec::new(),
        kb_per_s: Vec::new(),
        spread: Vec::new(),
    };
    for size_runs in runs {
        if size_runs.is_empty() {
            // Not measured (the demo was stopped): shown as a dash, never as a zero.
            r.messages_per_s.push(f64::NAN);
            r.spread.push(0.0);
            r.kb_per_s.push(f64::NAN);
            continue;
        }
        let (m, spread) = median_spread(size_runs.iter().map(|x| x.0).collect());
        r.messages_per_s.push(m);
        r.spread.push(spread);
        r.kb_per_s
            .push(median_spread(size_runs.iter().map(|x| x.1).collect()).0);
    }
    r
}

/// The median of `v` (the mean of the middle two for an even count), and the largest distance
/// of a value from it as a fraction of it.
pub fn median_spread(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = (v[(n - 1) / 2] + v[n / 2]) / 2.0;
    let far = (v[n - 1] - median).max(median - v[0]);
    (median, if median > 0.0 { far / median } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Typed as arguments and validated, the plans are the ones the demo once built by hand.
    #[test]
    fn plans_are_one_framed_connection_per_run() {
        use crate::driver::tls::TlsOptions;
        use crate::driver::workload::{ClientMode, Reply, Request};
        use crate::load::LoadModel;
        use crate::plan::{Stop, Warmup};
        use crate::sys::socket::SocketOptions;
        for per_size in [40, 500, 1000].map(Duration::from_millis) {
            for (mode, client) in [("rr", ClientMode::Rr), ("source", ClientMode::Source)] {
                let p = plan("tcp://127.0.0.1:9", mode, 512, per_size).unwrap();
                let t = &p.target;
                assert_eq!(
                    (t.scheme.name, t.url.as_str()),
                    ("tcp", "tcp://127.0.0.1:9")
                );
                assert_eq!(
                    (t.addr, t.host.as_str()),
                    (([127, 0, 0, 1], 9).into(), "127.0.0.1:9")
                );
                assert_eq!((t.path.as_str(), t.tls()), ("/", false));
                let w = &p.workload;
                assert_eq!(w.mode, client);
                assert!(matches!(
                    w.request,
                    Request::Sized {
                        size: 512,
                        preamble: true
                    }
                ));
                assert_eq!(w.reply, Reply::Size(512));
                assert!(w.spec.is_none());
                assert!(
                    matches!(
                        p.load,
                        LoadModel::Closed {
                            pipeline: 1,
                            think: None
                        }
                    ),
                    "{:?}",
                    p.load
                );
                assert_eq!((p.connections, p.threads), (1, 1));
                let stop = Stop {
                    duration: Some(per_size),
                    requests: None,
                };
                assert_eq!(p.stop, stop);
                assert_eq!(p.warmup, Some(Warmup::Duration(per_size / 6)));
                assert_eq!(p.timeout, Duration::from_secs(2));
                let nodelay = SocketOptions {
                    nodelay: true,
                    ..SocketOptions::default()
                };
                assert_eq!(p.socket, nodelay);
                assert!(p.schedule_text.is_none() && p.tls == TlsOptions::default());
            }
        }
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median_spread(vec![3850.0, 6794.0, 5000.0]).0, 5000.0);
        let (m, s) = median_spread(vec![110.0, 100.0, 80.0]);
        assert_eq!((m, s), (100.0, 0.2));
        assert_eq!(median_spread(vec![4.0, 2.0]), (3.0, 1.0 / 3.0));
        assert_eq!(median_spread(vec![7.0]), (7.0, 0.0));
        assert_eq!(median_spread(vec![0.0, 0.0, 0.0]), (0.0, 0.0));
    }
}
