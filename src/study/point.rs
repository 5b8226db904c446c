//! One run of a study: the engine's run of one plan, with the study's stop. A target that
//! cannot be reached at all is a result here, a run of one failed operation (the
//! connection's error, named), returned with the reason, so the study keeps the runs before it
//! and records this one.

use crate::engine::stop::Stop;
use crate::plan::Plan;
use crate::record::Snapshot;
use crate::summary::Summary;

/// Runs `plan` until its end or `stop`, each second's snapshot shown to `second`, and
/// summarises what it recorded. With `--cache cold` the page cache is dropped first (before
/// the warm-up too: the run starts from the disk, whatever ran before it).
pub fn run(plan: &Plan, stop: &Stop, second: &mut dyn FnMut(&Snapshot)) -> anyhow::Result<Summary> {
    if plan.cache == Some(crate::plan::Cache::Cold) {
        crate::sys::cgroup::drop_page_cache().map_err(|e| {
            anyhow::anyhow!("--cache cold: cannot drop the page cache ({e}): it needs root and a writable /proc/sys/vm/drop_caches")
        })?;
    }
    crate::measure_watching(plan, stop, second).map_err(engine_error)
}

/// The engine's error as the commands handle it: a usage error exits 2 and an unreachable
/// target becomes a result of a study, so each stays its own type.
fn engine_error(e: crate::engine::Error) -> anyhow::Error {
    use crate::engine::Error;
    match e {
        Error::Usage(u) => u.into(),
        Error::Unreachable(lost) => lost.into(),
        Error::Io(e) => e.into(),
        e @ Error::Panicked => e.into(),
    }
}

/// [`run`] for a study's run (a sweep's point, a peak's step): a target gone mid-run, or one
/// that could not be reached at all, is a result, returned with the reason the study ends.
/// Any other error stays an error.
pub fn measure(
    plan: &Plan,
    stop: &Stop,
    second: &mut dyn FnMut(&Snapshot),
) -> anyhow::Result<(Summary, Option<String>)> {
    let began = std::time::Instant::now();
    match run(plan, stop, second) {
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

/// A study's run of `plan`, shown to `watch` as it goes (named `what`).
pub(super) fn watched(
    plan: &Plan,
    what: &str,
    stop: &Stop,
    watch: &mut dyn super::Watch,
) -> anyhow::Result<(Summary, Option<String>)> {
    watch.run_starts(what, plan);
    let measured = measure(plan, stop, &mut |s| watch.second(s));
    watch.run_ends();
    measured
}
