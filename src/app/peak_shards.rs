//! `peak --shards N` (issue 19, item 4): each step of the search is one launch of N shards
//! ([`super::shards`]), each its share of the step's rate and connections, merged exactly,
//! and judged on the merged latency of all of them; the search then picks the next rate as
//! for one generator.

use super::shards::{self, Fleet};
use crate::cli::PeakArgs;
use crate::error::UsageError;
use crate::summary::Summary;
use std::time::Duration;

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

/// The fleet `args` asks for, with `n` shards.
fn fleet(args: &PeakArgs, n: u64) -> Fleet {
    Fleet {
        n,
        launcher: args.run.fleet.launcher.clone(),
        dir: args.run.fleet.shard_dir.clone(),
    }
}

/// The step's `run` words.
fn words(args: &PeakArgs) -> Result<Vec<String>, UsageError> {
    let url = args.run.urls.first().map_or("", String::as_str);
    run_words(&shards::command_line(), url, &args.run.connections)
}

/// Checks `peak --shards`' flags before the first step: the shards' command parses and its
/// totals split into `n` shares.
pub fn check(args: &PeakArgs, n: u64) -> Result<(), UsageError> {
    shards::check_launcher(&args.run.fleet.launcher)?;
    let mut words = words(args)?;
    words.extend(["--rate".into(), n.to_string(), "-d".into(), "1s".into()]);
    super::launch::check_command(&words, n)
}

/// One step at `rate` for `step`: N shards launched, waited for, and merged.
pub fn measure(args: &PeakArgs, n: u64, rate: f64, step: Duration) -> anyhow::Result<Summary> {
    let mut words = words(args)?;
    words.extend([
        "--rate".into(),
        format!("{rate}"),
        "-d".into(),
        format!("{}us", step.as_micros()),
    ]);
    fleet(args, n).measure(&words, "peak")
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
