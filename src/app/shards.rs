//! Steps run as N shards (issue 19, item 4), shared by `peak --shards`, `compare --shards`
//! and a study's `shards = N`: each step is one parallel launch of N shards (`run --shard`,
//! each its share of the step's totals), started by the launcher (N local processes, or
//! `srun`/`mpirun` …), waited for, and merged exactly; the command then judges the merge as
//! it would judge one generator's run.

use crate::error::UsageError;
use crate::summary::Summary;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How a command's steps are sharded: `--shards`, `--launcher`, `--shard-dir`.
#[derive(Clone, Debug)]
pub struct Fleet {
    /// Shards per step.
    pub n: u64,
    /// `local`, or a command that starts N copies of what follows it.
    pub launcher: String,
    /// Where each step's results go; a temporary directory (emptied after each step) if none.
    pub dir: Option<String>,
}

/// The command line the running command stands for, when it is not the process's own: a
/// study's plan is a `compare` or `peak` command line that the shards' `run` is spelt from.
static STANDS_FOR: Mutex<Option<Vec<String>>> = Mutex::new(None);

/// Records that the command being run stands for `argv` (`wirebench compare …`).
pub fn stand_for(argv: Vec<String>) {
    if let Ok(mut s) = STANDS_FOR.lock() {
        *s = Some(argv);
    }
}

/// The command line being run: a study's plan as a command line, or the process's own.
pub fn command_line() -> Vec<String> {
    let set = STANDS_FOR.lock().ok().and_then(|s| s.clone());
    set.unwrap_or_else(super::command_words)
}

/// The flags of `argv` (`wirebench COMMAND …`) that `run` takes and a shard's plan holds
/// ([`super::shard::NOT_PLAN`] left out), as given on that command line, spelt
/// `--flag=value`; without the targets (each step names its own) and without `drop`.
pub fn respell(argv: &[String], drop: &[&str]) -> Result<Vec<String>, UsageError> {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    let matches = cli
        .clone()
        .try_get_matches_from(argv)
        .map_err(|e| UsageError::flag("--shards", super::one_line(&e, "wirebench --help")))?;
    let Some((name, sub)) = matches.subcommand() else {
        return Err(UsageError::flag("--shards", "--shards needs a command"));
    };
    let (Some(command), Some(run)) = (cli.find_subcommand(name), cli.find_subcommand("run")) else {
        return Err(UsageError::flag("--shards", "--shards needs a command"));
    };
    let runs_it = |long: &str| run.get_arguments().any(|a| a.get_long() == Some(long));
    let mut words = Vec::new();
    for arg in command.get_arguments().filter(|a| !a.is_positional()) {
        let (id, Some(long)) = (arg.get_id().as_str(), arg.get_long()) else {
            continue;
        };
        let flag = format!("--{long}");
        let skip = super::shard::NOT_PLAN.contains(&flag.as_str()) || drop.contains(&flag.as_str());
        if skip
            || !runs_it(long)
            || sub.value_source(id) != Some(clap::parser::ValueSource::CommandLine)
        {
            continue;
        }
        match arg.get_action() {
            clap::ArgAction::SetTrue | clap::ArgAction::SetFalse => words.push(flag),
            clap::ArgAction::Count => {
                words.extend(std::iter::repeat_n(flag, sub.get_count(id) as usize))
            }
            _ => {
                let values = sub.try_get_raw(id).ok().flatten().into_iter().flatten();
                words.extend(values.map(|v| format!("{flag}={}", v.to_string_lossy())));
            }
        }
    }
    Ok(words)
}

/// A command's runs as shards: the fleet, and the run flags every run shares.
#[derive(Debug)]
pub struct Sharded {
    /// How each run is launched.
    pub fleet: Fleet,
    /// The run flags, spelt `--flag=value`, without the target and the swept flags.
    pub words: Vec<String>,
}

impl Sharded {
    /// The `run` command of one run: at `url`, with the swept flags at `values`.
    pub fn run_words(&self, url: &str, values: &[(&str, String)]) -> Vec<String> {
        let mut words = vec!["run".to_string(), url.to_string()];
        words.extend(self.words.iter().cloned());
        words.extend(values.iter().map(|(f, v)| format!("{f}={v}")));
        words
    }
}

/// With `--shards N`: the runs of `batch` launched as N shards each and merged, the shards'
/// `run` checked now (it parses, and its totals split into N shares). The swept flags are set
/// on each run (the point's values), and the command's `seed` if it has one.
pub fn sharded(
    a: &crate::cli::FleetArgs,
    batch: &crate::study::sweep::Points,
    seed: Option<u64>,
) -> Result<Option<std::sync::Arc<dyn crate::study::shards::Shards>>, UsageError> {
    let Some(fleet) = Fleet::of(a) else {
        return Ok(None);
    };
    check_launcher(&fleet.launcher)?;
    let n = fleet.n;
    let drop: Vec<&str> = batch
        .axes
        .iter()
        .map(|a| a.flag.as_ref())
        .chain(seed.map(|_| "--seed"))
        .collect();
    let mut words = respell(&command_line(), &drop)?;
    words.extend(seed.map(|seed| format!("--seed={seed}")));
    let sharded = Sharded { fleet, words };
    let first: Vec<_> = batch
        .axes
        .iter()
        .map(|a| (a.flag.as_ref(), a.values[0].clone()))
        .collect();
    super::launch::check_command(&sharded.run_words(&batch.targets[0].url, &first), n)?;
    Ok(Some(std::sync::Arc::new(sharded)))
}

impl crate::study::shards::Shards for Sharded {
    /// A sweep's (or a comparison's) run: its `run` command at the point, launched as N
    /// shards and merged.
    fn measure(&self, at: crate::study::shards::At<'_>) -> anyhow::Result<Summary> {
        let crate::study::shards::At::Point { url, values } = at else {
            anyhow::bail!("a sweep's shards run points, not a peak search's steps");
        };
        self.fleet.measure(&self.run_words(url, values), "runs")
    }
}

/// Refuses a `--launcher` that names no command, or holds a control character.
pub fn check_launcher(launcher: &str) -> Result<(), UsageError> {
    if launcher.trim().is_empty() {
        return Err(UsageError::flag(
            "--launcher",
            "--launcher '' names no command: give local (N processes here) or a command that starts N copies of what follows it, e.g. --launcher 'srun --ntasks=8'",
        ));
    }
    super::launch::plain("--launcher", launcher)
}

impl Fleet {
    /// The fleet `a` asks for, if `--shards` is given.
    pub fn of(a: &crate::cli::FleetArgs) -> Option<Fleet> {
        a.shards.map(|n| Fleet {
            n,
            launcher: a.launcher.clone(),
            dir: a.shard_dir.clone(),
        })
    }
}

/// Numbers each step's directory.
static STEP: AtomicU64 = AtomicU64::new(0);

impl Fleet {
    /// One step: `words` (`run URL …`, the step's totals) launched as N shards, waited for,
    /// and merged; `what` names the command in the temporary directory's name.
    pub fn measure(&self, words: &[String], what: &str) -> anyhow::Result<Summary> {
        let n = self.n;
        let local = self.launcher.trim() == "local";
        // The folder the user named, or a new one of this step's own: a random name made by
        // this call (mkdtemp-style), never one someone else made first, removed afterwards.
        let dir = match &self.dir {
            Some(d) => {
                let dir =
                    PathBuf::from(d).join(format!("step-{}", STEP.fetch_add(1, Ordering::Relaxed)));
                std::fs::create_dir_all(&dir).map_err(|e| {
                    UsageError::flag("--shard-dir", format!("--shard-dir {}: {e}", dir.display()))
                })?;
                dir
            }
            None => {
                let tmp = std::env::temp_dir();
                crate::sys::write::temp_dir(&tmp, &format!("wirebench-{what}-")).map_err(|e| {
                    UsageError::flag(
                        "--shard-dir",
                        format!(
                            "cannot make a folder in {} ({e}): give --shard-dir DIR, or set TMPDIR",
                            tmp.display()
                        ),
                    )
                })?
            }
        };
        let pattern = dir.join("shard-%r.json").display().to_string();
        // The shards start together: N local processes within a fraction of a second, a
        // launcher's across machines within a few.
        let delay = if local { 500 } else { 5_000 };
        let start = (crate::store::now_ms().max(0) as u64 + delay).to_string();
        let exe = std::env::current_exe()?;
        let mut children = Vec::new();
        let ranks: Vec<Option<u64>> = match local {
            true => (0..n).map(Some).collect(),
            false => vec![None],
        };
        for rank in ranks {
            let launcher: Vec<&str> = self.launcher.split_whitespace().collect();
            let mut c = match local {
                true => Command::new(&exe),
                false => {
                    let Some((program, rest)) = launcher.split_first() else {
                        check_launcher(&self.launcher)?;
                        anyhow::bail!("--launcher names no command");
                    };
                    let mut c = Command::new(program);
                    c.args(rest).arg(&exe);
                    c
                }
            };
            let shard = rank.map_or("auto".to_string(), |r| format!("{r}/{n}"));
            c.args(words)
                .args(["-q", "--no-save"])
                .args(["--shard", &shard, "--start-at", &start, "--out", &pattern])
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            children.push(
                c.spawn()
                    .map_err(|e| anyhow::anyhow!("--launcher '{}': {e}", self.launcher))?,
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
        if self.dir.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        result.map_err(|e| match failures.is_empty() {
            true => e,
            false => anyhow::anyhow!("{e}; the shards said: {failures}"),
        })
    }
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

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn a_commands_run_flags_are_respelt_without_its_own() {
        let peak = argv("wirebench peak tcp://h:1 --slo p99<=5ms --step=1s -c 8 -t 1 --json --shards 2 --launcher local --payload x --no-keepalive");
        assert_eq!(
            respell(&peak, &["--connections"]).unwrap(),
            ["--threads=1", "--payload=x", "--no-keepalive"]
        );
        let compare = argv("wirebench compare a=tcp://h:1 b=tcp://h:2 --baseline b -d 1s --runs 3 --size 1,2 -H x:1 -H y:2 --shards 2 -q");
        let words = respell(&compare, &["--size"]).unwrap();
        assert_eq!(words, ["--duration=1s", "--header=x:1", "--header=y:2"]);
    }
}
