//! `peak --shards N` (issue 19, item 4): each step of the search is one launch of N shards
//! ([`super::shards`]), each its share of the step's rate and connections, merged exactly,
//! and judged on the merged latency of all of them; the search then picks the next rate as
//! for one generator.

use super::shards::{self, Fleet};
use crate::cli::PeakArgs;
use crate::error::UsageError;
use crate::study::shards::{At, Shards};
use crate::summary::Summary;
use std::sync::Arc;

/// The `run` command (without rate and duration) of every step, from peak's command line
/// `argv` (`wirebench peak URL …`, or a study's plan as one): peak's own flags left out, the
/// connections as resolved.
pub fn run_words(argv: &[String], url: &str, connections: &str) -> Result<Vec<String>, UsageError> {
    let mut words = vec!["run".to_string(), url.to_string()];
    words.extend(shards::respell(
        argv,
        &["--connections", "--rate", "--duration"],
    )?);
    words.extend(["-c".into(), connections.to_string()]);
    Ok(words)
}

/// The fleet `args` asks for, with `n` shards, its command checked now (before the first
/// step): each step of the search is launched on it.
pub fn fleet(args: &PeakArgs, n: u64) -> Result<Arc<dyn Shards>, UsageError> {
    check(args, n)?;
    Ok(Arc::new(PeakFleet {
        words: words(args)?,
        fleet: Fleet {
            n,
            launcher: args.run.fleet.launcher.clone(),
            dir: args.run.fleet.shard_dir.clone(),
        },
    }))
}

/// A search's steps as shards: the step's `run` words (without rate and duration) and the
/// fleet that launches them.
#[derive(Debug)]
struct PeakFleet {
    words: Vec<String>,
    fleet: Fleet,
}

impl Shards for PeakFleet {
    /// One step at its rate for its time: N shards launched, waited for, and merged.
    fn measure(&self, at: At<'_>) -> anyhow::Result<Summary> {
        let At::Step { rate, step } = at else {
            anyhow::bail!("a peak search's shards run steps, not a sweep's points");
        };
        let mut words = self.words.clone();
        words.extend([
            "--rate".into(),
            format!("{rate}"),
            "-d".into(),
            format!("{}us", step.as_micros()),
        ]);
        self.fleet.measure(&words, "peak")
    }
}

/// The step's `run` words.
fn words(args: &PeakArgs) -> Result<Vec<String>, UsageError> {
    let url = args.run.urls.first().map_or("", String::as_str);
    run_words(&shards::command_line(), url, &args.run.connections)
}

/// Checks `peak --shards`' flags before the first step: the shards' command parses and its
/// totals split into `n` shares.
fn check(args: &PeakArgs, n: u64) -> Result<(), UsageError> {
    shards::check_launcher(&args.run.fleet.launcher)?;
    let mut words = words(args)?;
    words.extend(["--rate".into(), n.to_string(), "-d".into(), "1s".into()]);
    super::launch::check_command(&words, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shards_run_is_peaks_command_without_its_own_flags() {
        let argv: Vec<String> = "wirebench peak tcp://h:1 --slo p99<=5ms --step=1s -c 8 -t 1 --json --shards 2 --launcher local --payload x"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(
            run_words(&argv, "tcp://h:1", "8").unwrap(),
            ["run", "tcp://h:1", "--threads=1", "--payload=x", "-c", "8"]
        );
    }
}
