//! `wirebench run`: validate the arguments into a plan, run it, summarise, report, exit code.

use super::keep::Keep;
use crate::cli::RunArgs;
use crate::plan::Plan;
use crate::report::progress::Progress;
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
    let mut batch = super::sweep::batch(args)?;
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
    super::signals::stop_on_ctrl_c()?;
    let skew =
        super::shard::wait_for_start(sharded.as_ref().and_then(|p| p.section.start_at_unix_ms));
    let mut summary = match &batch.sharded {
        Some(s) => s.measure(crate::study::shards::At::Point {
            url: &batch.targets[0].url,
            values: &[],
        })?,
        None => measure(&plan, progress)?,
    };
    if let Some(p) = &sharded {
        super::shard::finish(&mut summary, p.section.clone(), skew);
    }
    let interrupted = crate::app::signals::requested();
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

/// Runs `plan` with `progress` showing it live, on the process's stop, and summarises what it
/// recorded.
pub fn measure(plan: &Plan, progress: Progress) -> anyhow::Result<Summary> {
    let mut progress = progress.towards(super::watch::goal(plan));
    let stop = super::signals::process();
    let summary = crate::study::point::run(plan, stop, &mut |s| progress.show(s));
    progress.finish();
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
