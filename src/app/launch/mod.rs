//! `wirebench launch slurm|mpi|k8s -- COMMAND…` (issue 19, item 5): one load run as N shards
//! by the engine a lab already has. Each launcher writes what its engine needs (an sbatch
//! script, an mpirun script, an Indexed Job manifest) around the same shard command: the
//! user's `run` with `--shard auto`, one agreed `--start-at` and `--out`; the scripts then
//! `wirebench merge` the shards. wirebench itself links no MPI and manages no cluster.

mod k8s;
mod mpi;
mod slurm;

use crate::cli::launch::{LaunchCommand, LaunchShared};
use crate::cli::{Cli, Command};
use crate::error::UsageError;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `wirebench launch`.
pub fn main(cmd: &LaunchCommand) -> anyhow::Result<ExitCode> {
    for (flag, value) in embedded(cmd) {
        plain(flag, value)?;
    }
    match cmd {
        LaunchCommand::Slurm(a) => slurm::main(a),
        LaunchCommand::Mpi(a) => mpi::main(a),
        LaunchCommand::K8s(a) => k8s::main(a),
    }
}

/// Every value of `cmd` a script or manifest embeds, with the flag that gave it.
fn embedded(cmd: &LaunchCommand) -> Vec<(&'static str, &str)> {
    let (shared, mut v): (&LaunchShared, Vec<(&'static str, &str)>) = match cmd {
        LaunchCommand::Slurm(a) => (
            &a.shared,
            a.sbatch
                .iter()
                .map(|s| ("--sbatch", s.as_str()))
                .chain([("--dir", a.dir.as_str())])
                .collect(),
        ),
        LaunchCommand::Mpi(a) => (
            &a.shared,
            a.mpirun_args
                .iter()
                .map(|s| ("--mpirun-arg", s.as_str()))
                .chain([
                    ("--dir", a.dir.as_str()),
                    ("--hostfile", a.hostfile.as_str()),
                ])
                .collect(),
        ),
        LaunchCommand::K8s(a) => (
            &a.shared,
            [("--name", a.name.as_str()), ("--image", a.image.as_str())]
                .into_iter()
                .chain(a.claim.as_deref().map(|c| ("--claim", c)))
                .collect(),
        ),
    };
    v.extend(shared.binary.as_deref().map(|b| ("--binary", b)));
    v.extend(shared.start_in.as_deref().map(|s| ("--start-in", s)));
    v.extend(
        shared
            .command
            .iter()
            .map(|w| ("the command after --", w.as_str())),
    );
    v
}

/// Refuses a value holding a control character (a newline, a tab, an escape): written into a
/// script or manifest it would become a line (or a command) of its own.
pub fn plain(flag: &str, value: &str) -> Result<(), UsageError> {
    match value.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(UsageError::new(format!(
            "{flag} '{}' holds a control character ({}): it would break the lines of the script or manifest; give it without",
            value.chars().flat_map(char::escape_debug).collect::<String>(),
            c.escape_debug()
        ))),
    }
}

/// `launch mpi -np N` as mpirun spells it: clap has no short flag of two letters, so `-np`
/// before the `--` is read as `--np`.
pub fn mpi_spelling(mut argv: Vec<String>) -> Vec<String> {
    if argv.get(1).map(String::as_str) == Some("launch")
        && argv.get(2).map(String::as_str) == Some("mpi")
    {
        let end = argv.iter().position(|w| w == "--").unwrap_or(argv.len());
        for w in &mut argv[3..end] {
            if w == "-np" {
                *w = "--np".into();
            } else if let Some(n) = w.strip_prefix("-np=") {
                *w = format!("--np={n}");
            }
        }
    }
    argv
}

/// The flags a launcher sets on every shard itself: the user gives none of them.
const SET_BY_LAUNCHER: [&str; 7] = [
    "--shard",
    "--start-at",
    "--out",
    "--world",
    "--shards",
    "--launcher",
    "--shard-dir",
];

/// `-- peak URL …`: a peak search run once, on the first node, whose every step is one launch
/// of the `world` shards through the engine; checked as the run of its steps would be.
fn check_peak(words: &[String], world: u64) -> Result<(), UsageError> {
    let n = world.to_string();
    let argv: Vec<String> = ["wirebench"]
        .into_iter()
        .chain(words.iter().map(String::as_str))
        .chain(["--shards", &n])
        .map(String::from)
        .collect();
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        UsageError::new(format!(
            "the command after --: {}",
            super::one_line(&e, "wirebench --help")
        ))
    })?;
    let Command::Peak(p) = cli.command else {
        return Err(UsageError::new(
            "launch runs `wirebench peak` or `wirebench run`",
        ));
    };
    let url = p.run.urls.first().map_or("", String::as_str);
    let mut run = super::peak_shards::run_words(&argv, url, &p.run.connections)?;
    run.extend(["--rate".into(), n, "-d".into(), "1s".into()]);
    check_command(&run, world)
}

/// The lines every launch script starts with after its own header: what each shard does, the
/// binary and result directory (`$WIREBENCH` and `$dir`), and the time all shards start from.
pub fn preamble(wirebench: &str, dir: &str) -> String {
    let mut s = String::from(
        "# shard of the load below (its share of the totals), all released at WIREBENCH_T0 + the\n",
    );
    s += "# delay; each writes $dir/shard-RANK.json, then `wirebench merge` adds them exactly.\n";
    s += "set -uo pipefail\n";
    s += &format!("wirebench=${{WIREBENCH:-{}}}\n", quote(wirebench));
    s += &format!("dir={}\n", quote(dir));
    s += "mkdir -p \"$dir\"\nrm -f \"$dir\"/shard-*.json \"$dir/merged.json\"\n";
    s += "export WIREBENCH_T0=$(date +%s%3N)\n";
    s
}

/// What a shell launcher runs once the time zero is fixed: for `run`, `launcher` starting the
/// shards, then the merge; for `peak`, the search, each of its steps through `launcher`.
pub fn body(command: &[String], start_in_ms: u64, launcher: &str, world: u64) -> String {
    if command.first().map(String::as_str) == Some("peak") {
        let mut tail: String = quiet_flags(command)
            .iter()
            .map(|f| format!(" {f}"))
            .collect();
        if !command.iter().any(|w| w == "--json") {
            tail += " --json";
        }
        return format!(
            "\"$wirebench\" {} \\\n  --shards {world} --launcher {} --shard-dir \"$dir/steps\"{tail} > \"$dir/peak.json\"\nstatus=$?\necho \"wirebench: the peak search is in $dir/peak.json\" >&2\nexit \"$status\"\n",
            quote_all(command),
            quote(launcher)
        );
    }
    format!(
        "{launcher} {}\nstatus=$?\n{}",
        shard_line(command, start_in_ms),
        merge_lines(world)
    )
}

/// Checks the command after `--` for a load of `world` shards: a `run` whose flags parse and
/// whose totals split into `world` non-empty shares. `Err` names the problem and the fix.
pub fn check_command(words: &[String], world: u64) -> Result<(), UsageError> {
    if world == 0 || world > crate::plan::shard::MAX_WORLD {
        return Err(UsageError::new(format!(
            "a launch of {world} shards: give 1 to {}",
            crate::plan::shard::MAX_WORLD
        )));
    }
    let peak = words.first().map(String::as_str) == Some("peak");
    if words.first().map(String::as_str) != Some("run") && !peak {
        return Err(UsageError::new(format!(
            "launch runs `wirebench run` on every shard (or a `wirebench peak` whose steps it launches): write `-- run URL …` or `-- peak URL …` after the launcher's flags (got '{}')",
            words.join(" ")
        )));
    }
    if let Some(flag) = words.iter().find(|w| {
        SET_BY_LAUNCHER
            .iter()
            .any(|f| w.as_str() == *f || w.starts_with(&format!("{f}=")))
    }) {
        return Err(UsageError::new(format!(
            "{flag} is set by the launcher on every shard: leave it out of the command after --"
        )));
    }
    if peak {
        return check_peak(words, world);
    }
    // The last rank gets the smallest share: if it has one, every rank has.
    let last = format!("{}/{world}", world - 1);
    let tail = quiet_flags(words);
    let argv = ["wirebench"]
        .into_iter()
        .chain(words.iter().map(String::as_str))
        .chain(tail.iter().copied())
        .chain(["--shard", &last]);
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        UsageError::new(format!(
            "the command after --: {}",
            super::one_line(&e, "wirebench --help")
        ))
    })?;
    let Command::Run(args) = cli.command else {
        return Err(UsageError::new(
            "launch runs `wirebench run` on every shard",
        ));
    };
    super::shard::prepare(&args)?;
    Ok(())
}

/// `-q` and `--no-save` unless the command has them: a shard prints no progress and keeps its
/// result in its --out file, not in the node's history.
pub fn quiet_flags(words: &[String]) -> Vec<&'static str> {
    let has = |long: &str, short: Option<&str>| {
        words.iter().any(|w| w == long || Some(w.as_str()) == short)
    };
    let mut tail = Vec::new();
    if !has("--quiet", Some("-q")) {
        tail.push("-q");
    }
    if !has("--no-save", None) && !has("--db", None) {
        tail.push("--no-save");
    }
    tail
}

/// The shard command of a shell launcher: `"$wirebench" COMMAND` with the shard flags, its
/// result to `$dir/shard-RANK.json`.
pub fn shard_line(command: &[String], start_in_ms: u64) -> String {
    let tail: String = quiet_flags(command)
        .iter()
        .map(|f| format!(" {f}"))
        .collect();
    format!(
        "\"$wirebench\" {} \\\n  --shard auto --start-at +{start_in_ms}ms --out \"$dir/shard-%r.json\"{tail}",
        quote_all(command)
    )
}

/// `word` as one shell word: as it is when it holds nothing the shell reads, else in single
/// quotes (a quote inside written '\'').
pub fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,^".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Words as one shell command line.
pub fn quote_all<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--start-in`'s delay in milliseconds (`default` when not given).
pub fn start_in_ms(shared: &LaunchShared, default: &str) -> Result<u64, UsageError> {
    let text = shared.start_in.as_deref().unwrap_or(default);
    let d = crate::units::parse_duration(text)
        .map_err(|e| UsageError::flag("--start-in", format!("--start-in: {e}")))?;
    Ok(d.as_millis() as u64)
}

/// The binary the nodes run: `--binary`, else this process's own path (the nodes share it).
pub fn binary(shared: &LaunchShared) -> Result<String, UsageError> {
    if let Some(b) = &shared.binary {
        return Ok(b.clone());
    }
    let b = std::env::current_exe()
        .map(|p| p.display().to_string())
        .map_err(|e| {
            UsageError::new(format!(
                "cannot tell this binary's path ({e}): give --binary PATH"
            ))
        })?;
    plain("this binary's path (give --binary PATH)", &b)?;
    Ok(b)
}

/// `dir` made absolute (the script runs elsewhere: on the first node, in the job's directory).
pub fn absolute(dir: &str) -> Result<String, UsageError> {
    let p = Path::new(dir);
    let abs = match p.is_absolute() {
        true => p.to_path_buf(),
        false => std::env::current_dir()
            .map_err(|e| UsageError::new(format!("--dir {dir}: {e}: give an absolute path")))?
            .join(p),
    };
    let abs = abs.display().to_string();
    plain("--dir (made absolute: give an absolute path)", &abs)?;
    Ok(abs)
}

/// Where `program` is on $PATH, if it is: a launcher checks before it writes anything.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// `program`, which `--submit` needs, or the one-line usage error that it is missing.
pub fn need(program: &str, engine: &str) -> Result<PathBuf, UsageError> {
    which(program).ok_or_else(|| {
        UsageError::flag(
            "--submit",
            format!("--submit needs {program} ({engine}), which is not on PATH: install it, or leave out --submit and run the printed script where it is"),
        )
    })
}

/// Writes `text` to `path` whole (a temporary file renamed), creating its directory.
pub fn write_file(path: &Path, text: &str, executable: bool) -> Result<(), UsageError> {
    let fail = |e: std::io::Error| {
        UsageError::new(format!(
            "cannot write {} ({e}): check --dir",
            path.display()
        ))
    };
    let options = crate::sys::write::Options {
        mode: if executable { 0o777 } else { 0o666 },
        make_dir: true,
    };
    crate::sys::write::file_with(path, text.as_bytes(), options).map_err(|e| match e {
        crate::sys::write::WriteError::Io(_, e) => fail(e),
        e => UsageError::new(format!("{e}: check --dir")),
    })
}

/// The script lines every shell launcher ends with: merge the shards the engine left, report.
/// `$dir`, `$wirebench` and `$status` (the engine's exit code) are the script's variables.
pub fn merge_lines(world: u64) -> String {
    format!(
        r#"files=$(seq -f "$dir/shard-%g.json" 0 {last})
if "$wirebench" merge $files > "$dir/merged.json.tmp"; then
  mv "$dir/merged.json.tmp" "$dir/merged.json"
  echo "wirebench: {world} shards merged into $dir/merged.json" >&2
else
  rm -f "$dir/merged.json.tmp"
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
"#,
        last = world - 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(quote("tcp://10.0.0.1:7000"), "tcp://10.0.0.1:7000");
        assert_eq!(quote("p99<=5ms"), "'p99<=5ms'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote_all(&["a b", "c"]), "'a b' c");
    }

    #[test]
    fn the_command_is_a_run_whose_totals_split() {
        assert!(check_command(&words("run tcp://127.0.0.1:9 -c 4"), 4).is_ok());
        for (cmd, world, says) in [
            ("run tcp://127.0.0.1:9 -c 3", 4, "leaves rank 3 none"),
            ("diff a b", 2, "launch runs `wirebench run`"),
            ("peak tcp://127.0.0.1:9 -c 2", 2, "the command after --"),
            (
                "peak tcp://127.0.0.1:9 --slo p99<=1ms -c 2",
                4,
                "leaves rank 3 none",
            ),
            (
                "run tcp://127.0.0.1:9 --shard 0/2",
                2,
                "set by the launcher",
            ),
            ("run tcp://127.0.0.1:9 --out=x", 2, "set by the launcher"),
            (
                "run tcp://127.0.0.1:9 --conections 2",
                2,
                "the command after --",
            ),
            ("run tcp://127.0.0.1:9", 0, "give 1 to"),
        ] {
            let e = check_command(&words(cmd), world).unwrap_err().to_string();
            assert!(e.contains(says), "{cmd}: {e}");
        }
    }
}
