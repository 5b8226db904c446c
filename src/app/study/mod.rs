//! `wirebench study FILE.toml`: a plan file turned into the command line it stands for
//! (`wirebench run|compare|peak …`, an argument list parsed by clap, as a command line is), then
//! that command's machinery: [`super::sweep`] for runs, [`super::compare`], [`super::peak`].
//! Every point is validated before anything runs. A bad plan is one line
//! `FILE:LINE:COL: what is wrong, how to fix it`, exit 2.
//!
//! [`load`] reads and validates a plan, [`dry`] lists what it would run, [`out`] writes a
//! finished study's files.

mod dry;
mod load;
mod out;

use super::keep::Keep;
use crate::cli::{RunArgs, StudyArgs};
use crate::plan::file::PlanFile;
use crate::store::Kind;
use crate::summary::diagnosis::Diagnosis;
use crate::summary::study::Document;
use load::Loaded;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `loaded`, once a big study of runs is confirmed ([`super::sweep::confirm`]); a comparison
/// is marked confirmed, so that it does not ask again.
fn confirm(loaded: Loaded, yes: bool) -> Result<Loaded, crate::error::UsageError> {
    Ok(match loaded {
        Loaded::Run(args, study) => {
            super::sweep::confirm(&study, yes || args.yes)?;
            Loaded::Run(args, study)
        }
        Loaded::Compare(mut args, prepared) => {
            super::sweep::confirm(&prepared.study, yes || args.run.yes)?;
            args.run.yes = true;
            Loaded::Compare(args, prepared)
        }
        peak => peak,
    })
}

/// `wirebench study`.
pub fn main(a: &StudyArgs) -> anyhow::Result<ExitCode> {
    let (text, plan, loaded) = match load::load(&a.file) {
        Ok(loaded) => loaded,
        Err(load::Located(at, message)) => {
            eprintln!("{}:{}:{}: {message}", a.file, at.line, at.col);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    let diagnose = match diagnose_args(&plan, loaded.run_args()) {
        Ok(d) => d,
        Err(load::Located(at, message)) => {
            eprintln!("{}:{}:{}: {message}", a.file, at.line, at.col);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    if a.dry_run {
        let mut out = std::io::stdout().lock();
        dry::write(&a.file, &plan, &loaded, &mut out)?;
        if !diagnose.is_empty() {
            let step = diagnose[0]
                .duration
                .as_deref()
                .unwrap_or(super::diagnose::DEFAULT_STEP);
            writeln!(out, "then diagnose on each of the {} target(s): a {step} baseline, then the variants its evidence calls for, {step} each", diagnose.len())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    // A big study asks (or, in a script, wants --yes) before anything runs, --out or not.
    let loaded = confirm(loaded, a.yes)?;
    let Some(dir) = &a.out else {
        // The command line's --db, --tag and --fail-if join the plan's own.
        let code = match loaded {
            Loaded::Run(args, study) => {
                let keep = Keep::prepare_merged(&a.keep, &args.keep, Kind::Study, false)?;
                super::sweep::finish(&args, *study, keep)
            }
            Loaded::Compare(mut args, _) => {
                args.run.keep = super::keep::merged(&a.keep, &args.run.keep);
                super::compare::main_as(&args, "study")
            }
            Loaded::Peak(mut args, _) => {
                args.run.keep = super::keep::merged(&a.keep, &args.run.keep);
                super::peak::main(&args)
            }
        }?;
        let mut out = std::io::stdout().lock();
        for (d, t) in diagnosed(&diagnose)?.iter().zip(&plan.targets) {
            writeln!(out, "\nDiagnosis of {} ({}):\n", t.name, t.url)?;
            crate::report::diagnosis::write(d, &mut out)?;
        }
        return Ok(code);
    };
    // Made before anything runs, so a path that cannot be written fails at once; removed
    // again (if still empty) when the runs fail, so a failure leaves nothing behind.
    let made = !Path::new(dir).exists();
    std::fs::create_dir_all(dir).map_err(|e| {
        crate::error::UsageError(format!(
            "--out {dir}: cannot make the directory ({e}); give a writable path, e.g. --out results/dim"
        ))
    })?;
    let mut keep = Keep::prepare_merged(&a.keep, &loaded.run_args().keep, Kind::Study, false)?;
    let method = out::methodology(&a.file, &text, loaded.run_args());
    // Ctrl-C (or SIGTERM) stops the run in progress and starts no other, as without --out:
    // the study of what was measured is written, marked interrupted, and saved as such.
    super::run::stop_on_ctrl_c()?;
    let done = run(loaded).inspect_err(|_| {
        if made {
            let _ = std::fs::remove_dir(dir);
        }
    })?;
    let code = exit_code(&done);
    let interrupted = crate::engine::stop::requested();
    let diagnose = if interrupted { &[][..] } else { &diagnose[..] };
    let diagnoses = diagnosed(diagnose).inspect_err(|_| {
        if made {
            let _ = std::fs::remove_dir(dir);
        }
    })?;
    let study = out::study(&a.file, &plan, method, done, diagnoses);
    let csvs = out::write(Path::new(dir), &study)?;
    if interrupted {
        println!(
            "Interrupted: {}; the study holds them, marked interrupted.",
            measured(&study.document)
        );
    }
    println!(
        "wrote {dir}/report.md, {dir}/report.html, {dir}/study.json and {csvs} CSV tables in {dir}"
    );
    // Thresholds and the history read the study whole; its report is in DIR already.
    let runs = kept(&study.document);
    keep.name_points(points(&study.document));
    keep.finish(&study, &runs, code, false, &|_| Ok(()))
}

/// The measurements thresholds are checked against: a sweep's or comparison's kept runs, a
/// peak search's passed confirmation.
fn kept(doc: &Document) -> Vec<&crate::summary::Summary> {
    match doc {
        Document::Run(sweep) => super::sweep::kept(sweep),
        Document::Compare(c) => super::sweep::kept(&c.sweep),
        Document::Peak(p) => super::peak::at_peak(p),
    }
}

/// The names of [`kept`]'s runs, for the verdicts of thresholds (none for a peak's one run).
fn points(doc: &Document) -> Vec<String> {
    match doc {
        Document::Run(sweep) => super::sweep::kept_points(sweep),
        Document::Compare(c) => super::sweep::kept_points(&c.sweep),
        Document::Peak(_) => Vec::new(),
    }
}

/// What an interrupted study measured, in words: `3 runs measured`, `4 peak steps run`.
fn measured(doc: &Document) -> String {
    match doc {
        Document::Run(sweep) => format!("{} run(s) measured", sweep.points.len()),
        Document::Compare(c) => format!("{} run(s) measured", c.sweep.points.len()),
        Document::Peak(p) => format!("{} peak step(s) run, no peak claimed", p.steps.len()),
    }
}

/// The runs `diagnose = true` asks for, one per target: the plan's flags against that target
/// alone, each step as long as the plan's `duration` or diagnose's own (a request count is
/// dropped: a diagnosis runs several steps), checked before anything runs. None without the
/// key.
fn diagnose_args(plan: &PlanFile, run: &RunArgs) -> Result<Vec<RunArgs>, load::Located> {
    let Some((true, at)) = plan.diagnose else {
        return Ok(Vec::new());
    };
    plan.targets
        .iter()
        .map(|t| {
            let mut a = run.clone();
            a.urls = vec![t.url.clone()];
            (a.runs, a.discard, a.discard_first) = (None, None, false);
            a.requests = None;
            super::diagnose::check(&a)
                .map(|()| a)
                .map_err(|e| load::Located(at, format!("diagnose = true: {e}")))
        })
        .collect()
}

/// Each target's diagnosis, in order.
fn diagnosed(args: &[RunArgs]) -> anyhow::Result<Vec<Diagnosis>> {
    args.iter()
        .map(|a| Ok(super::diagnose::diagnosis(a, !a.quiet)?.0))
        .collect()
}

/// Runs the study, returning its command's document.
fn run(loaded: Loaded) -> anyhow::Result<Document> {
    Ok(match loaded {
        Loaded::Run(args, study) => Document::Run(super::sweep::collect(&args, *study)?),
        Loaded::Compare(_, prepared) => {
            Document::Compare(Box::new(super::compare::collect(*prepared)?))
        }
        Loaded::Peak(args, setup) => {
            let show = !args.run.quiet && !args.run.json;
            Document::Peak(Box::new(super::peak::search(&args, &setup, show)?))
        }
    })
}

/// The exit code the command itself would give.
fn exit_code(doc: &Document) -> ExitCode {
    match doc {
        Document::Run(sweep) => super::sweep::exit_code(sweep),
        Document::Compare(c) => super::sweep::exit_code(&c.sweep),
        Document::Peak(p) => super::peak::exit_code(p),
    }
}
