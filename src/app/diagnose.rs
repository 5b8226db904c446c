//! `wirebench diagnose URL [run flags]`: why a target is slow. The user's run is the baseline,
//! measured while the kernel is watched (the `TcpExt` counters before and after, `TCP_INFO` of
//! the client's own connections sampled meanwhile); then each variant the baseline calls for
//! ([`crate::summary::diagnosis::variants_for`]) is the same run with one flag changed, built
//! and validated like any plan and measured with [`super::run::measure`]; the findings come
//! from [`crate::summary::diagnosis::findings`]. Any registered protocol is diagnosed: the
//! target is a URL like `wirebench run`'s.

use crate::cli::{DiagnoseArgs, RunArgs};
use crate::error::{usage, UsageError};
use crate::plan::Plan;
use crate::report::progress::Progress;
use crate::summary::diagnosis::{self as dx, Change, Diagnosis, Evidence, Figures, Variant};
use crate::summary::Summary;
use crate::sys::netstat;
use crate::sys::pressure::{self, ThreadTimes};
use crate::sys::tcpinfo::{self, TcpInfo};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Each step's measuring time unless --duration (or --requests) says otherwise.
pub const DEFAULT_STEP: &str = "3s";
/// The engine's worker threads are named `wirebench-N` (the main thread is `wirebench`).
const WORKER_PREFIX: &str = "wirebench-";
/// How often the client's connections are looked at during the baseline.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// `wirebench diagnose`.
/// Ctrl-C or SIGTERM stops the step in progress and starts no other: the diagnosis of the
/// steps measured is printed, and the exit code is the signal's (130, 143).
pub fn main(args: &DiagnoseArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    super::shard::refuse(&args.run.shard, "diagnose")?;
    let show = !args.run.quiet && !args.run.json;
    // Checked before the handler is in place, as every command checks before it measures.
    check(&args.run)?;
    crate::app::signals::stop_on_ctrl_c()?;
    let (d, code) = diagnosis(&args.run, show)?;
    if args.run.json {
        crate::report::diagnosis::write_json(&d, out)?;
    } else {
        crate::report::diagnosis::write(&d, out)?;
        if crate::app::signals::requested() {
            writeln!(
                out,
                "\nInterrupted ({}): the diagnosis covers the {} step(s) measured until then.",
                super::keep::stopped_by(),
                1 + d.variants.len()
            )?;
        }
    }
    out.flush()?;
    Ok(match crate::app::signals::requested() {
        true => ExitCode::from(super::keep::interrupted_code()),
        false => code,
    })
}

/// The diagnosis of the run `run` stands for (its baseline, the evidence, the variants, the
/// findings), with the baseline's exit code; progress on stderr when `show`. A plan file's
/// `diagnose = true` calls this for each of its targets.
pub fn diagnosis(run: &RunArgs, show: bool) -> anyhow::Result<(Diagnosis, ExitCode)> {
    let base_args = baseline_args(run)?;
    let plan = Plan::try_from(&base_args)?;
    say(show, &format!("diagnose: baseline, {}", plan.target.url));
    let (base, evidence) = observe(&plan, show)?;
    let mut variants = Vec::new();
    for (hypothesis, change) in dx::variants_for(&base, &evidence) {
        if crate::app::signals::requested() {
            break; // stopped: no further step starts
        }
        let flags = change.flags();
        say(
            show,
            &format!("diagnose: testing {hypothesis} with {flags}"),
        );
        let plan = Plan::try_from(&changed(&base_args, change))?;
        let s = super::run::measure(&plan, progress(show))?;
        variants.push(Variant {
            hypothesis: hypothesis.into(),
            flags,
            figures: Figures::of(&s),
            change,
        });
    }
    let findings = dx::findings(&base, &evidence, &variants);
    let d = Diagnosis {
        schema: dx::DIAGNOSIS_SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        target: base.target.clone(),
        protocol: base.protocol,
        mode: base.mode,
        step_s: base.duration_s,
        baseline: Figures::of(&base),
        evidence,
        variants,
        findings,
    };
    let stopped = crate::app::signals::requested();
    if let Some(why) = super::run::failure(&base).filter(|_| !stopped) {
        // Why the command exits 1: its baseline's failure (the variants' are findings).
        super::say_err(&format!("exit 1: the baseline run: {why}"));
    }
    Ok((d, super::run::exit_code(&base)))
}

/// Whether `run` can be diagnosed (one target, single values, no repeats; a valid plan).
pub fn check(run: &RunArgs) -> Result<(), UsageError> {
    let a = baseline_args(run)?;
    Plan::try_from(&a)
        .map(|_| ())
        .map_err(|e| UsageError::new(e.to_string()))
}

/// The user's run, checked: one target, no sweep, no repeats; a few seconds unless told.
fn baseline_args(run: &RunArgs) -> Result<RunArgs, UsageError> {
    if run.urls.len() != 1 {
        return usage(
            "diagnose looks at one target: give one URL (compare several with `wirebench compare`)",
        );
    }
    if run.runs.is_some() || run.discard.is_some() || run.discard_first {
        return usage("diagnose runs each step once: leave out --runs and --discard");
    }
    if !super::sweep::batch(run)?.is_single() {
        return usage(
            "diagnose sweeps what it needs itself: give single values (e.g. -c 4, not -c 1,4)",
        );
    }
    let mut a = run.clone();
    if a.duration.is_none() && a.requests.is_none() {
        a.duration = Some(DEFAULT_STEP.into());
    }
    Ok(a)
}

/// The baseline's arguments with one change.
fn changed(base: &RunArgs, change: Change) -> RunArgs {
    let mut a = base.clone();
    match change {
        Change::Nodelay(on) => {
            a.socket.nodelay = on;
            a.socket.no_nodelay = !on;
        }
        Change::Buffers(n) => {
            a.socket.sndbuf = Some(n.to_string());
            a.socket.rcvbuf = Some(n.to_string());
        }
        Change::Threads(n) => a.threads = Some(n),
    }
    a
}

/// Runs the baseline while watching the kernel: counters before and after, the client's
/// connections sampled by a thread of their own.
fn observe(plan: &Plan, show: bool) -> anyhow::Result<(Summary, Evidence)> {
    let peer = plan.target.addr;
    let before = netstat::tcp_ext("DelayedACKs");
    let (waited, started) = (pressure::cpu_waited_us(), std::time::Instant::now());
    let stop = AtomicBool::new(false);
    let (summary, (samples, busy)) = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| watch(&stop, peer));
        let summary = super::run::measure(plan, progress(show));
        stop.store(true, Ordering::Relaxed);
        (summary, sampler.join().unwrap_or_default())
    });
    let summary = summary?;
    let after = netstat::tcp_ext("DelayedACKs");
    let cpu_pressure_percent = waited.zip(pressure::cpu_waited_us()).map(|(b, a)| {
        let us = started.elapsed().as_secs_f64() * 1e6;
        (100.0 * a.saturating_sub(b) as f64 / us.max(1.0)).min(100.0)
    });
    let delayed_acks = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    let tcp = dx::is_tcp(&summary);
    let evidence = Evidence {
        delayed_acks: delayed_acks.filter(|_| tcp),
        delayed_acks_per_exchange: delayed_acks
            .filter(|_| tcp && summary.ok > 0)
            .map(|n| n as f64 / summary.ok as f64),
        tcp_info: dx::TcpEvidence::of(&samples),
        port_range: netstat::port_range().map(|(lo, hi)| [lo, hi]),
        tw_reuse: netstat::tw_reuse(),
        rmem_default: netstat::rmem_default(),
        time_wait: netstat::time_wait_to(peer),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        loopback: peer.ip().is_loopback(),
        cpu_pressure_percent,
        generator_busy_percent: busy.map(|b| b.0),
        generator_sleeps_per_s: busy.map(|b| b.1),
    };
    Ok((summary, evidence))
}

/// Samples, until `stop`, `TCP_INFO` of the client's connections to `peer` and the worker
/// threads' schedstat; returns the samples and the workers' [`busy`] figures.
fn watch(stop: &AtomicBool, peer: std::net::SocketAddr) -> Watched {
    let mut samples = Vec::new();
    let mut threads: HashMap<u32, [(Instant, ThreadTimes); 2]> = HashMap::new();
    while !stop.load(Ordering::Relaxed) {
        let found = tcpinfo::sockets_to(peer);
        if !found.is_empty() {
            samples.push(found);
        }
        let now = Instant::now();
        for (tid, t) in pressure::threads_named(WORKER_PREFIX) {
            threads.entry(tid).or_insert([(now, t); 2])[1] = (now, t);
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    (samples, busy(&threads))
}

/// The workers' share of the time they could run, %, and how often each slept per second,
/// averaged over the workers seen for at least 200 ms.
fn busy(threads: &HashMap<u32, [(Instant, ThreadTimes); 2]>) -> Option<(f64, f64)> {
    let each: Vec<(f64, f64)> = threads
        .values()
        .filter_map(|[(t0, a), (t1, b)]| {
            let wall = t1.duration_since(*t0).as_secs_f64();
            let could_run = (b.run_ns + b.wait_ns).saturating_sub(a.run_ns + a.wait_ns) as f64;
            let sleeps = b.sleeps.saturating_sub(a.sleeps) as f64;
            (wall >= 0.2).then(|| ((100.0 * could_run / 1e9 / wall).min(100.0), sleeps / wall))
        })
        .collect();
    let n = each.len() as f64;
    (n > 0.0).then(|| {
        let sum = each.iter().fold((0.0, 0.0), |s, e| (s.0 + e.0, s.1 + e.1));
        (sum.0 / n, sum.1 / n)
    })
}

/// What [`watch`] saw: `TCP_INFO` samples, and the workers' [`busy`] figures.
type Watched = (Vec<HashMap<u64, TcpInfo>>, Option<(f64, f64)>);

/// The live progress line of a step, when shown.
fn progress(show: bool) -> Progress {
    Progress::new(show && Progress::should_show())
}

/// A step announced on stderr.
fn say(show: bool, line: &str) {
    if show {
        eprintln!("{line}");
    }
}
