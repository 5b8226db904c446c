//! `peak --shards N` (issue 19, item 4): each step of the search is one parallel launch of N
//! shards (`run --shard`, each its share of the step's rate and connections), started by the
//! launcher (N local processes, or `srun`/`mpirun` …), merged exactly, and judged on the
//! merged latency of all of them; the search then picks the next rate as for one generator.

use crate::cli::PeakArgs;
use crate::error::UsageError;
use crate::summary::Summary;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Peak's own flags that take a value: not passed on to the shards' `run`.
const PEAK_VALUED: [&str; 12] = [
    "--slo",
    "--step",
    "--start-rate",
    "--ceiling",
    "--rest",
    "--shards",
    "--launcher",
    "--shard-dir",
    "--connections",
    "--db",
    "--tag",
    "--fail-if",
];
/// Peak's own switches: not passed on either (each shard is quiet and saves nothing).
const PEAK_SWITCHES: [&str; 4] = ["--json", "-q", "--quiet", "--no-save"];

/// The `run` command (without rate and duration) of every step, from peak's command line
/// `argv` (`wirebench peak URL …`): peak's own flags left out, the connections as resolved.
pub fn run_words(argv: &[String], connections: &str) -> Result<Vec<String>, UsageError> {
    if argv.get(1).map(String::as_str) != Some("peak") {
        return Err(UsageError::flag(
            "--shards",
            "--shards runs `wirebench peak` from its command line: give it there, not in a plan file",
        ));
    }
    let mut words = vec!["run".to_string()];
    let mut it = argv[2..].iter();
    while let Some(w) = it.next() {
        let valued = PEAK_VALUED.iter().any(|f| w == f) || w == "-c";
        if valued {
            it.next();
        } else if PEAK_VALUED.iter().any(|f| w.starts_with(&format!("{f}="))) {
        } else if !PEAK_SWITCHES.contains(&w.as_str()) {
            words.push(w.clone());
        }
    }
    words.extend(["-c".into(), connections.to_string()]);
    Ok(words)
}

/// Checks `peak --shards`' flags before the first step: the shards' command parses and its
/// totals split into `n` shares.
pub fn check(args: &PeakArgs, n: u64) -> Result<(), UsageError> {
    let argv: Vec<String> = std::env::args().collect();
    let mut words = run_words(&argv, &args.run.connections)?;
    words.extend(["--rate".into(), n.to_string(), "-d".into(), "1s".into()]);
    super::launch::check_command(&words, n)
}

/// Numbers each step's directory.
static STEP: AtomicU64 = AtomicU64::new(0);

/// One step at `rate` for `step`: N shards launched, waited for, and merged.
pub fn measure(args: &PeakArgs, n: u64, rate: f64, step: Duration) -> anyhow::Result<Summary> {
    let argv: Vec<String> = std::env::args().collect();
    let mut words = run_words(&argv, &args.run.connections)?;
    words.extend([
        "--rate".into(),
        format!("{rate}"),
        "-d".into(),
        format!("{}us", step.as_micros()),
        "-q".into(),
        "--no-save".into(),
    ]);
    let local = args.launcher.trim() == "local";
    let base = match &args.shard_dir {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("wirebench-peak-{}", std::process::id())),
    };
    let dir = base.join(format!("step-{}", STEP.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&dir).map_err(|e| {
        UsageError::flag("--shard-dir", format!("--shard-dir {}: {e}", dir.display()))
    })?;
    let pattern = dir.join("shard-%r.json").display().to_string();
    // The shards start together: N local processes within a fraction of a second, a launcher's
    // across machines within a few.
    let delay = if local { 500 } else { 5_000 };
    let start = (crate::store::now_ms().max(0) as u64 + delay).to_string();
    let exe = std::env::current_exe()?;
    let mut children = Vec::new();
    let ranks: Vec<Option<u64>> = match local {
        true => (0..n).map(Some).collect(),
        false => vec![None],
    };
    for rank in ranks {
        let launcher: Vec<&str> = args.launcher.split_whitespace().collect();
        let mut c = match local {
            true => Command::new(&exe),
            false => {
                let mut c = Command::new(launcher[0]);
                c.args(&launcher[1..]).arg(&exe);
                c
            }
        };
        let shard = rank.map_or("auto".to_string(), |r| format!("{r}/{n}"));
        c.args(&words)
            .args(["--shard", &shard, "--start-at", &start, "--out", &pattern])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        children.push(
            c.spawn()
                .map_err(|e| anyhow::anyhow!("--launcher '{}': {e}", args.launcher))?,
        );
    }
    let mut failures = String::new();
    for c in children {
        let out = c.wait_with_output()?;
        if !out.status.success() {
            failures += String::from_utf8_lossy(&out.stderr).trim();
        }
    }
    let result = merge(&dir, n);
    if args.shard_dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result.map_err(|e| match failures.is_empty() {
        true => e,
        false => anyhow::anyhow!("{e}; the shards said: {failures}"),
    })
}

/// The shards' results in `dir` (ranks 0..n), merged.
fn merge(dir: &std::path::Path, n: u64) -> anyhow::Result<Summary> {
    let mut parts = Vec::new();
    let mut names = Vec::new();
    for r in 0..n {
        let file = dir.join(format!("shard-{r}.json"));
        let text = std::fs::read_to_string(&file).map_err(|e| {
            anyhow::anyhow!("shard {r} of {n} left no result ({}: {e})", file.display())
        })?;
        parts.push(super::show::summary(text)?);
        names.push(file.display().to_string());
    }
    crate::summary::shard::merge(&parts, &names).map_err(|e| anyhow::anyhow!(e))
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
            run_words(&argv, "8").unwrap(),
            ["run", "tcp://h:1", "-t", "1", "--payload", "x", "-c", "8"]
        );
        let study = vec!["wirebench".to_string(), "study".into()];
        assert!(run_words(&study, "1").is_err());
    }
}
