//! `wirebench run`: validate the arguments into a plan, run it, summarise, report, exit code.

use super::keep::Keep;
use crate::cli::RunArgs;
use crate::plan::Plan;
use crate::report::progress::{Goal, Progress};
use crate::store::Kind;
use crate::summary::Summary;
use std::io::Write;
use std::process::ExitCode;

/// `wirebench run`, its report written to `out`.
/// Several targets or a swept flag make a sweep ([`super::sweep`]); otherwise one plan.
pub fn main(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    // A flag that writes a file instead of measuring (DICOM's --save-example).
    if let Some(done) = crate::driver::instead(&args.protocol.groups()) {
        done?;
        return Ok(ExitCode::SUCCESS);
    }
    let sharded = super::shard::prepare(args)?;
    let args = sharded.as_ref().map_or(args, |p| &p.args);
    let mut batch = super::sweep::Batch::of(args)?;
    if !batch.is_single() && (sharded.is_some() || args.shard.out.is_some()) {
        return Err(crate::error::UsageError::new(
            "--shard and --out take one run: one target, no swept flag (run each point as its own sharded run)",
        )
        .into());
    }
    if args.fleet.shards.is_some() && (sharded.is_some() || args.shard.out.is_some()) {
        return Err(crate::error::UsageError::flag(
            "--shards",
            "--shards launches the shards itself: give it without --shard and --out",
        )
        .into());
    }
    if let Some(file) = &args.shard.out {
        // Refused before anything runs: the run would be measured and then not kept.
        let rank = sharded.as_ref().map_or(0, |p| p.section.rank);
        super::shard::check_out(file, rank)?;
    }
    batch.sharded = super::shards::sharded(&args.fleet, &batch, None)?;
    if !batch.is_single() {
        super::sweep::confirm(&batch, args.yes)?;
        return super::sweep::main(args, batch, out);
    }
    let mut keep = Keep::prepare(&args.keep, Kind::Result, args.quiet)?;
    let Some(first) = batch.runs.into_iter().next() else {
        anyhow::bail!("a single run's study holds no run: a bug, please report it");
    };
    let plan = first.plan;
    let progress = Progress::new(!args.quiet && !args.json && Progress::should_show());
    stop_on_ctrl_c()?;
    let skew =
        super::shard::wait_for_start(sharded.as_ref().and_then(|p| p.section.start_at_unix_ms));
    let mut summary = match &batch.sharded {
        Some(s) => s
            .fleet
            .measure(&s.run_words(&batch.targets[0].url, &[]), "run")?,
        None => measure(&plan, progress)?,
    };
    if let Some(p) = &sharded {
        super::shard::finish(&mut summary, p.section.clone(), skew);
    }
    let interrupted = crate::engine::stop::requested();
    let checks = keep.check(&[&summary]);
    let document = Keep::document(&summary, &checks)?;
    if let Some(file) = &args.shard.out {
        let rank = summary.shard.as_ref().map_or(0, |s| s.rank);
        super::shard::write_out(file, rank, &document)?;
    }
    if args.json {
        out.write_all(document.as_bytes())?;
    } else {
        crate::report::table::write(&summary, out)?;
        super::keep::write_checks(&checks, out)?;
        if interrupted {
            writeln!(
                out,
                "\nInterrupted ({}): the report covers the {:.1} s measured until then.",
                super::keep::stopped_by(),
                summary.duration_s
            )?;
        }
    }
    out.flush()?;
    let base = exit_code(&summary);
    keep.save(&document, super::keep::status(base, interrupted));
    if let Some(why) = summary.stopped.as_ref().filter(|_| !interrupted) {
        // Its one line (the report's first note says it too): exit 1, as its errors make it.
        super::say_err(&format!("error: {why}"));
    } else if !interrupted {
        say_failure(failure(&summary));
    }
    Ok(match interrupted {
        true => ExitCode::from(super::keep::interrupted_code()),
        false => super::keep::exit_code(&checks, base),
    })
}

/// The first Ctrl-C (SIGINT) stops the run, which then reports and saves what it measured; a
/// second one ends the process at once. Installed once per process: a program running several
/// commands in-process ([`super::execute`]) gets one watcher, not one per command.
pub(crate) fn stop_on_ctrl_c() -> anyhow::Result<()> {
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*installed {
        watch_signals()?;
        *installed = true;
    }
    Ok(())
}

/// Starts the thread that turns SIGINT and SIGTERM into a stop ([`stop_on_ctrl_c`]).
fn watch_signals() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    // SIGTERM (kill, a CI's timeout) and SIGHUP (the terminal or the ssh session gone) stop
    // as Ctrl-C does: what was measured is kept.
    let (mut int, mut term, mut hup) = {
        let _context = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
            signal(SignalKind::hangup())?,
        )
    };
    std::thread::Builder::new()
        .name("ctrl-c".into())
        .spawn(move || {
            runtime.block_on(async {
                let code = tokio::select! {
                    _ = int.recv() => super::keep::EXIT_INTERRUPTED,
                    _ = term.recv() => super::keep::EXIT_TERMINATED,
                    _ = hup.recv() => {
                        detach_terminal();
                        super::keep::EXIT_HANGUP
                    }
                };
                super::keep::interrupted_by(code);
                crate::engine::stop::request();
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
            });
            std::process::exit(i32::from(super::keep::interrupted_code()));
        })?;
    Ok(())
}

/// After a hangup, stdout and stderr that were the terminal that hung up write to /dev/null
/// instead, so that the report and the save that follow do not fail on a terminal that is gone
/// (a file or a pipe they were sent to keeps them).
fn detach_terminal() {
    // SAFETY: open, isatty and dup2 on descriptors this process owns; no memory is shared.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in [1, 2] {
            if libc::isatty(fd) == 1 {
                libc::dup2(null, fd);
            }
        }
        libc::close(null);
    }
}

/// Runs `plan` with `progress` showing it live, and summarises what it recorded.
pub fn measure(plan: &Plan, progress: Progress) -> anyhow::Result<Summary> {
    let goal = match (plan.stop.duration, plan.stop.requests) {
        (_, Some(n)) => Goal::Requests(n),
        (Some(d), None) => Goal::Time(d),
        (None, None) => Goal::Open,
    };
    let mut progress = progress.towards(goal);
    if plan.cache == Some(crate::plan::Cache::Cold) {
        // Before the warm-up too: the run starts from the disk, whatever ran before it.
        crate::sys::cgroup::drop_page_cache().map_err(|e| {
            anyhow::anyhow!("--cache cold: cannot drop the page cache ({e}): it needs root and a writable /proc/sys/vm/drop_caches")
        })?;
    }
    let stop = crate::engine::stop::process();
    let summary = crate::measure_watching(plan, stop, &mut |s| progress.show(s));
    progress.finish();
    summary.map_err(engine_error)
}

/// The engine's error as the commands handle it: a usage error exits 2 and an unreachable
/// target becomes a result of a command of several runs, so each stays its own type.
fn engine_error(e: crate::engine::Error) -> anyhow::Error {
    use crate::engine::Error;
    match e {
        Error::Usage(u) => u.into(),
        Error::Unreachable(lost) => lost.into(),
        Error::Io(e) => e.into(),
        e @ Error::Panicked => e.into(),
    }
}

/// Runs `plan` as [`measure`] does, for a command of several runs (a sweep's point, a peak
/// step): a target that cannot be reached at all is a result there too, a run of one failed
/// operation (the connection's error, named), returned with the reason, so the command keeps
/// the runs before it and records this one. Any other error stays an error.
pub fn measure_point(plan: &Plan, progress: Progress) -> anyhow::Result<(Summary, Option<String>)> {
    let began = std::time::Instant::now();
    match measure(plan, progress) {
        // A target gone mid-run ends the command as one that cannot be reached does.
        Ok(summary) => {
            let gone = summary.stopped.clone();
            Ok((summary, gone))
        }
        Err(e) => match e.downcast::<crate::engine::gate::Unreachable>() {
            Ok(lost) => Ok((unreachable(plan, &lost, began.elapsed()), Some(lost.why))),
            Err(e) => Err(e),
        },
    }
}

/// The summary of a run whose target could not be reached: no reply, one error of the
/// connection's kind, over the time the attempt took.
fn unreachable(
    plan: &Plan,
    lost: &crate::engine::gate::Unreachable,
    took: std::time::Duration,
) -> Summary {
    let mut record = crate::record::RunRecord::default();
    record
        .total
        .error(crate::record::OpError::new(lost.kind, lost.why.clone()));
    record.measured = took;
    record.started_unix_ms = crate::store::now_ms().max(0) as u64;
    let mut summary = crate::summary::of(plan, record);
    if let (Some(open), Some(schedule)) = (summary.open_loop.as_mut(), plan.load.schedule()) {
        // Its one request over the attempt's milliseconds is no rate (150/s asked read
        // "201.4/s offered" in a peak's curve): it offered what was asked.
        open.offered_per_s = schedule.rate_at(std::time::Duration::ZERO);
    }
    summary
}

/// 0 when every operation succeeded (and something was measured), 1 otherwise. An open loop
/// that sent fewer than half the requests due failed too: it did not offer the load asked for
/// (`--rate 1e12` sent 34,836/s and exited 0). A smaller shortfall is counted and noted, not
/// failed: on a shared machine a starved generator falls 10-20% behind (measured on this
/// 2-vCPU host with other builds running), which says nothing of the target.
pub fn exit_code(s: &Summary) -> ExitCode {
    match failure(s) {
        Some(_) => ExitCode::from(super::EXIT_FAILED),
        None => ExitCode::SUCCESS,
    }
}

/// Why [`exit_code`] is 1, in words (`12 of 1,012 operations failed (timeout 12)`); None when
/// it is 0. Said on stderr as the last line, so no exit 1 goes unexplained (an open loop that
/// sent under half its requests printed "errors 0" and exited 1, issue 40).
pub fn failure(s: &Summary) -> Option<String> {
    use crate::units::thousands;
    let bulk = s.throughput.sent_bytes + s.throughput.received_bytes > 0 && s.latency.is_none();
    if s.errors.total > 0 {
        let kinds: Vec<String> = (s.errors.by_kind.iter())
            .map(|e| format!("{} {}", e.kind.replace('_', " "), thousands(e.count)))
            .collect();
        return Some(format!(
            "{} of {} operations failed ({}; the report counts them by kind)",
            thousands(s.errors.total),
            thousands(s.errors.total + s.ok),
            kinds.join(", ")
        ));
    }
    if s.ok == 0 && !bulk {
        return Some(
            "no operation succeeded: nothing was measured (is the target serving what was asked?)"
                .to_string(),
        );
    }
    match s.open_loop.as_ref() {
        Some(o) if o.sent.saturating_mul(2) < o.offered => Some(format!(
            "the open loop sent {} of the {} requests due at --rate {} (under half): the load \
             asked for was not offered; add connections, --threads or --pipeline, or lower --rate",
            thousands(o.sent),
            thousands(o.offered),
            o.schedule
        )),
        _ => None,
    }
}

/// Says why the command exits 1 (`exit 1: WHY`) when it does so for a reason no line has
/// named yet.
pub(crate) fn say_failure(why: Option<String>) {
    if let Some(why) = why {
        super::say_err(&format!("exit 1: {why}"));
    }
}
