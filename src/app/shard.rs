//! `run --shard`: one shard of a load run from many machines (issue 19). The load flags are
//! the study's totals; each shard runs its share ([`crate::plan::shard`]), starts at the
//! agreed `--start-at`, says how late it began, and writes its whole result to `--out`.

use crate::cli::{RunArgs, ShardArgs};
use crate::error::UsageError;
use crate::plan::shard::{self, Shard};
use crate::summary::shard::{ShardSection, Share};
use crate::summary::Summary;
use std::collections::BTreeMap;
use std::time::Duration;

/// A shard's run, prepared: its share of the load as arguments, and its section to fill.
pub struct Prepared {
    /// The run's arguments with this shard's share of the totals.
    pub args: RunArgs,
    /// The section written into its result; the skew is set once it starts.
    pub section: ShardSection,
}

/// Refuses the shard flags on a command that does not take them yet (one line, exit 2).
pub fn refuse(a: &ShardArgs, command: &str) -> Result<(), UsageError> {
    if a.shard.is_some() || a.start_at.is_some() || a.out.is_some() {
        return Err(UsageError::new(format!(
            "--shard, --start-at and --out are for `wirebench run` so far: give `{command} --shards N [--launcher CMD]` to run each step as N shards, or run each shard with `wirebench run --shard R/N` and merge them"
        )));
    }
    Ok(())
}

/// The shard `a` asks for, if any: the run's arguments with its share of the totals.
pub fn prepare(a: &RunArgs) -> Result<Option<Prepared>, UsageError> {
    let s = &a.shard;
    let Some(spec) = &s.shard else {
        if s.start_at.is_some() {
            return Err(UsageError::new(
                "--start-at starts a shard of a load: give --shard R/N too (--shard 0/1 for one process)",
            ));
        }
        return Ok(None);
    };
    let env = |k: &str| std::env::var(k).ok();
    let who = shard::resolve(spec, s.world, &env).map_err(UsageError::new)?;
    let max_skew = crate::units::parse_duration(&s.max_skew)
        .map_err(|e| UsageError::new(format!("--max-skew: {e}")))?;
    let start_at = match &s.start_at {
        Some(t) => {
            let base = env("WIREBENCH_T0")
                .map(|t0| {
                    t0.parse::<u64>().map_err(|_| {
                        UsageError::new(format!("WIREBENCH_T0='{t0}' is not unix milliseconds: the launcher sets it, e.g. $(date +%s%3N)"))
                    })
                })
                .transpose()?
                .unwrap_or_else(|| crate::store::now_ms().max(0) as u64);
            Some(shard::start_at(t, base).map_err(UsageError::new)?)
        }
        None => None,
    };
    let (args, share) = split(a, who)?;
    let plan = plan_of(a);
    let text: Vec<String> = plan.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let section = ShardSection {
        rank: who.rank,
        world: who.world,
        source: who.source.into(),
        host: crate::sys::host::label(),
        share,
        plan_hash: format!("{:016x}", shard::fnv1a(&text.join("\n"))),
        plan,
        start_at_unix_ms: start_at,
        skew_ms: None,
        max_skew_ms: max_skew.as_secs_f64() * 1000.0,
        late: false,
    };
    Ok(Some(Prepared { args, section }))
}

/// `a` with shard `who`'s share of the connections, rate, requests and warm-up count.
fn split(a: &RunArgs, who: Shard) -> Result<(RunArgs, Share), UsageError> {
    let Shard { rank, world, .. } = who;
    let zero = |what: &str, total: String| {
        UsageError::new(format!(
            "--shard {rank}/{world}: {what} {total} leaves rank {rank} none (the shares are the totals split over {world} shards): give at least {world}, or fewer shards"
        ))
    };
    let total: u64 = a.connections.trim().parse().map_err(|_| {
        UsageError::new(format!(
            "--shard: --connections '{}' must be one number, the load's total (a sweep is not split yet)",
            a.connections
        ))
    })?;
    let mut out = a.clone();
    let connections = shard::split(total, rank, world);
    if connections == 0 {
        return Err(zero("--connections", total.to_string()));
    }
    out.connections = connections.to_string();
    if a.load.stages.is_some() {
        return Err(UsageError::new(
            "--shard splits a constant --rate; --stages are not split yet: give --rate R",
        ));
    }
    let rate = match &a.load.rate {
        Some(r) => {
            let total: f64 = r.trim().parse().map_err(|_| {
                UsageError::new(format!("--shard splits a constant --rate; '{r}' (a ramp or a sweep) is not split yet: give --rate R"))
            })?;
            let mine = shard::split_rate(total, rank, world);
            if mine <= 0.0 {
                return Err(zero("--rate", r.clone()));
            }
            out.load.rate = Some(mine.to_string());
            Some(mine)
        }
        None => None,
    };
    let requests = match a.requests {
        Some(n) => {
            let mine = shard::split(n, rank, world);
            if mine == 0 {
                return Err(zero("--requests", n.to_string()));
            }
            out.requests = Some(mine);
            Some(mine)
        }
        None => None,
    };
    let warmup_requests = match a.warmup.as_deref().map(|w| w.trim().parse::<u64>()) {
        Some(Ok(n)) => {
            let mine = shard::split(n, rank, world);
            out.warmup = (mine > 0).then(|| mine.to_string());
            Some(mine)
        }
        _ => None,
    };
    Ok((
        out,
        Share {
            connections,
            rate,
            requests,
            warmup_requests,
        },
    ))
}

/// The plan a shard runs a share of, flag by flag: every flag that changes what is measured
/// (the load, the workload, the protocol, the socket), the totals as given; not the shard's
/// own flags, nor where its result goes or how it is shown ([`NOT_PLAN`]).
pub fn plan_of(a: &RunArgs) -> BTreeMap<String, String> {
    use crate::driver::plan_value as d;
    let s = &a.socket;
    let pairs: Vec<(&str, String)> = vec![
        ("url", a.urls.join(" ")),
        ("--mode", d(&a.mode)),
        ("--connections", a.connections.clone()),
        ("--threads", d(&a.threads)),
        ("--duration", d(&a.duration)),
        ("--requests", d(&a.requests)),
        ("--warmup", d(&a.warmup)),
        ("--timeout", a.timeout.clone()),
        ("--deadline", d(&a.deadline)),
        ("--pipeline", d(&a.pipeline)),
        ("--arrival", d(&a.arrival)),
        ("--seed", d(&a.seed)),
        ("--think", d(&a.think)),
        ("--rate", d(&a.load.rate)),
        ("--bandwidth", d(&a.load.bandwidth)),
        ("--stages", d(&a.load.stages)),
        ("--cache", d(&a.cache)),
        ("--link", d(&a.link)),
        ("--nodelay", d(&s.nodelay)),
        ("--no-nodelay", d(&s.no_nodelay)),
        ("--sndbuf", d(&s.sndbuf)),
        ("--rcvbuf", d(&s.rcvbuf)),
    ];
    // The protocols' flags, as each group lists its own.
    let groups = a.protocol.groups().into_iter().flat_map(|g| g.plan());
    pairs
        .into_iter()
        .chain(groups)
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// `run`'s flags that are not part of a shard's plan: the shard's own, where the result goes
/// and how it is shown, how often it repeats (a shard runs once), and `--save-example` (which
/// measures nothing). Every other flag of `run` is in [`plan_of`] (a test checks).
pub const NOT_PLAN: [&str; 21] = [
    "--shard",
    "--shards",
    "--launcher",
    "--shard-dir",
    "--world",
    "--start-at",
    "--max-skew",
    "--out",
    "--json",
    "--quiet",
    "--units",
    "--runs",
    "--discard-first",
    "--discard",
    "--yes",
    "--db",
    "--tag",
    "--fail-if",
    "--no-save",
    "--save-example",
    "--help",
];

/// Waits until the agreed start, if any, and returns how late (ms) this shard was released.
/// Sleeps to within 2 ms, then yields, so the start is not a whole timer tick late.
pub fn wait_for_start(start_at: Option<u64>) -> Option<f64> {
    let at = start_at?;
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    loop {
        let left = at as f64 - now_ms();
        if left <= 0.0 {
            return Some(-left);
        }
        if crate::app::signals::requested() {
            return Some(0.0);
        }
        match left > 2.0 {
            true => std::thread::sleep(Duration::from_secs_f64((left - 2.0).min(100.0) / 1000.0)),
            false => std::thread::yield_now(),
        }
    }
}

/// `summary` marked as this shard's part, with its skew; a late start noted.
pub fn finish(summary: &mut Summary, mut section: ShardSection, skew_ms: Option<f64>) {
    section.skew_ms = skew_ms;
    section.late = skew_ms.is_some_and(|s| s > section.max_skew_ms);
    if section.late {
        summary.notes.push(format!(
            "shard {} of {} began {:.1} ms after --start-at, later than --max-skew {:.1} ms: its load did not overlap the others' from the start",
            section.rank,
            section.world,
            skew_ms.unwrap_or(0.0),
            section.max_skew_ms
        ));
    }
    summary.shard = Some(section);
}

/// Refuses `--out`'s file (`%r`: the rank) when it exists and is not a regular file.
pub fn check_out(pattern: &str, rank: u64) -> Result<(), UsageError> {
    let path = shard::out_path(pattern, rank);
    crate::sys::write::check(std::path::Path::new(&path))
        .map(drop)
        .map_err(|e| UsageError::flag("--out", format!("--out {e}")))
}

/// Writes `document` to `--out`'s file (`%r`: the rank) whole ([`crate::sys::write`]): to a
/// temporary file beside it, then renamed, so a reader never sees half a result.
pub fn write_out(pattern: &str, rank: u64, document: &str) -> Result<(), UsageError> {
    let path = shard::out_path(pattern, rank);
    crate::sys::write::file(std::path::Path::new(&path), document.as_bytes())
        .map_err(|e| UsageError::flag("--out", format!("--out {e}: check the directory")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// A flag added to `run` must be put in the plan hash or named as not part of it: a
    /// shard that ran another workload must not merge silently.
    #[test]
    fn every_run_flag_is_in_the_plan_or_named_outside_it() {
        let cli = crate::cli::Cli::command();
        let run = cli.find_subcommand("run").expect("a run command");
        let args = crate::cli::Cli::parse_from(["wirebench", "run", "tcp://h:1"]);
        let crate::cli::Command::Run(a) = args.command else {
            panic!("run parses as run")
        };
        let plan = plan_of(&a);
        for arg in run.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let flag = format!("--{long}");
            assert!(
                plan.contains_key(&flag) || NOT_PLAN.contains(&flag.as_str()),
                "{flag} is neither in plan_of nor in NOT_PLAN"
            );
        }
    }
}
