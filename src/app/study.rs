//! `wirebench study FILE.toml`: a plan file turned into the `run` arguments it stands for
//! (an argument list parsed by clap, as a command line is), then the sweep machinery
//! ([`super::sweep`]): one plan per point, each validated before anything runs. A bad plan is
//! one line `FILE:LINE:COL: what is wrong, how to fix it`, exit 2.

use super::sweep::Study;
use crate::cli::{Cli, Command, RunArgs, StudyArgs};
use crate::plan::file::{self, Flag, PlanFile, Pos};
use crate::plan::Warmup;
use crate::report::study::Methodology;
use crate::summary::sweep::Sweep;
use clap::Parser;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// A bad plan: where, and what is wrong.
struct Located(Pos, String);

/// `wirebench study`.
pub fn main(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (text, plan, args, study) = match load(&a.file) {
        Ok(loaded) => loaded,
        Err(Located(at, message)) => {
            eprintln!("{}:{}:{}: {message}", a.file, at.line, at.col);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    if a.dry_run {
        let mut out = std::io::stdout().lock();
        dry_run(&a.file, &plan, &study, &mut out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let keep =
        super::keep::Keep::prepare_merged(&a.keep, &args.keep, crate::store::Kind::Study, false)?;
    let Some(dir) = &a.out else {
        return super::sweep::finish(&args, study, keep);
    };
    // Made before anything runs, so a path that cannot be written fails at once; removed
    // again (if still empty) when the runs fail, so a failure leaves nothing behind.
    let made = !Path::new(dir).exists();
    std::fs::create_dir_all(dir).map_err(|e| {
        crate::error::UsageError(format!(
            "--out {dir}: cannot make the directory ({e}); give a writable path, e.g. --out results/dim"
        ))
    })?;
    let method = methodology(&a.file, &text, &plan);
    let sweep = super::sweep::collect(&args, study).inspect_err(|_| {
        if made {
            let _ = std::fs::remove_dir(dir);
        }
    })?;
    write_out(Path::new(dir), &plan, &sweep, &method)?;
    println!("wrote {dir}/report.md and {dir}/study.json");
    super::sweep::conclude(&sweep, keep, false, &|_| Ok(()))
}

/// Reads, parses and validates the plan file `path`.
fn load(path: &str) -> Result<(String, PlanFile, RunArgs, Study), Located> {
    let start = Pos { line: 1, col: 1 };
    let text = std::fs::read_to_string(path).map_err(|e| {
        Located(
            start,
            format!("cannot read the plan file ({e}); give the path of a .toml plan, e.g. wirebench study examples/dim.toml"),
        )
    })?;
    let plan = file::parse(&text).map_err(|e| Located(e.at, e.message))?;
    let args = run_args(&plan)?;
    let study = Study::of(&args).map_err(|e| Located(blame(&plan, &e.0), e.0))?;
    Ok((text, plan, args, study))
}

/// The command line a plan stands for: `wirebench run NAME=URL … --flag=value …`.
fn argv(plan: &PlanFile, flags: &[Flag]) -> Vec<String> {
    let mut argv = vec!["wirebench".to_string(), "run".to_string()];
    argv.extend(plan.targets.iter().map(|t| format!("{}={}", t.name, t.url)));
    for f in flags {
        match f.values.is_empty() {
            true => argv.push(f.flag.clone()),
            // `--flag=value`, so a value starting with '-' is not taken for a flag.
            false => argv.extend(f.values.iter().map(|v| format!("{}={v}", f.flag))),
        }
    }
    argv
}

/// Parses the plan's flags with clap; an error points at the first key that makes it fail.
fn run_args(plan: &PlanFile) -> Result<RunArgs, Located> {
    let parse = |flags: &[Flag]| match Cli::try_parse_from(argv(plan, flags)) {
        Ok(Cli {
            command: Command::Run(args),
        }) => Ok(args),
        Ok(_) => unreachable!("the argument list starts with 'run'"),
        Err(e) => Err(e),
    };
    let whole = match parse(&plan.flags) {
        Ok(args) => return Ok(args),
        Err(e) => e,
    };
    // The first prefix of the keys that clap refuses ends with the culprit.
    let culprit = (1..=plan.flags.len())
        .find(|&k| parse(&plan.flags[..k]).is_err())
        .map(|k| &plan.flags[k - 1]);
    let Some(key) = culprit else {
        return Err(Located(
            plan.run_at,
            super::one_line(&whole.render().to_string()),
        ));
    };
    let name = key.flag.trim_start_matches('-');
    let message = match whole.kind() {
        clap::error::ErrorKind::UnknownArgument => format!(
            "unknown key '{name}' in [run]: not a `wirebench run` flag; use a flag's long name without --, e.g. size = \"64\" (see 'wirebench run --help')"
        ),
        _ => format!("{name}: {}", super::one_line(&whole.render().to_string()))
            .replace("(see 'wirebench --help')", "(see 'wirebench run --help')"),
    };
    Err(Located(key.at, message))
}

/// Where a validation error belongs: the key whose flag it names, else the target whose URL
/// it quotes, else `[run]`.
fn blame(plan: &PlanFile, message: &str) -> Pos {
    // Where the message first names `flag` as a whole word (`--run` is not in `--runs`).
    let named_at = |flag: &str| {
        message.match_indices(flag).map(|(i, _)| i).find(|&i| {
            let next = message[i + flag.len()..].chars().next();
            !matches!(next, Some(c) if c.is_alphanumeric() || c == '-')
        })
    };
    // The flag the message names first is the one it is about.
    if let Some(f) = plan
        .flags
        .iter()
        .filter_map(|f| Some((named_at(&f.flag)?, f)))
        .min_by_key(|(i, _)| *i)
        .map(|(_, f)| f)
    {
        return f.at;
    }
    if let Some(t) = plan.targets.iter().find(|t| message.contains(&t.url)) {
        return t.at;
    }
    plan.run_at
}

/// The runs in order and the estimated time; nothing runs.
fn dry_run(path: &str, plan: &PlanFile, study: &Study, out: &mut dyn Write) -> std::io::Result<()> {
    let title = plan.title.as_deref().unwrap_or(path);
    writeln!(
        out,
        "{title}: {} runs ({} targets x {} points x {} runs)",
        study.runs.len(),
        study.targets.len(),
        study.points.len(),
        study.rounds
    )?;
    let (mut total, mut unknown) = (Duration::ZERO, 0);
    for (i, run) in study.runs.iter().enumerate() {
        let values: Vec<String> = study
            .axes
            .iter()
            .zip(&study.points[run.point])
            .map(|(x, &v)| format!("{} {}", x.flag, x.values[v]))
            .collect();
        let discarded = match run.round < study.discard {
            true => " (discarded)",
            false => "",
        };
        writeln!(
            out,
            "  {:>4}  {}  {}  run {}/{}{discarded}",
            i + 1,
            study.targets[run.target].name,
            values.join(" "),
            run.round + 1,
            study.rounds
        )?;
        match (run.plan.stop.duration, run.plan.warmup) {
            (Some(d), Some(Warmup::Duration(w))) => total += d + w,
            (Some(d), None) => total += d,
            (Some(d), Some(Warmup::Count(_))) => (total += d, unknown += 1).1,
            (None, _) => unknown += 1,
        }
    }
    let note = match unknown {
        0 => String::new(),
        n => format!(", plus {n} runs stopped or warmed up by a request count"),
    };
    writeln!(
        out,
        "estimated time: {:.1} s (durations + warm-ups{note}); --dry-run ran nothing",
        total.as_secs_f64()
    )
}

/// The methodology facts, gathered before the runs start.
fn methodology(path: &str, text: &str, plan: &PlanFile) -> Methodology {
    let (cpu, cpus) = crate::sys::host::cpu();
    let servers = plan
        .targets
        .iter()
        .filter(|t| t.server.is_some() || t.version.is_some())
        .map(|t| {
            let parts: Vec<&str> = [t.server.as_deref(), t.version.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            (t.name.clone(), format!("{} ({})", parts.join(", "), t.url))
        })
        .collect();
    Methodology {
        date: crate::sys::host::utc_now(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        file: path.to_string(),
        plan: text.to_string(),
        servers,
        version: env!("CARGO_PKG_VERSION").to_string(),
        kernel: crate::sys::host::kernel(),
        cpu,
        cpus,
    }
}

/// Writes report.md and study.json into `dir`, each whole or not at all: rendered in memory,
/// written to a hidden temporary file, then renamed.
fn write_out(dir: &Path, plan: &PlanFile, sweep: &Sweep, m: &Methodology) -> anyhow::Result<()> {
    let mut report = Vec::new();
    let title = plan.title.as_deref().unwrap_or(&m.file);
    crate::report::study::write(title, sweep, m, &mut report)?;
    let mut json = serde_json::to_vec_pretty(sweep)?;
    json.push(b'\n');
    for (name, bytes) in [("report.md", report), ("study.json", json)] {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, dir.join(name))?;
    }
    Ok(())
}
