//! `wirebench study FILE.toml`: a plan file turned into the command line it stands for
//! (`wirebench run|compare|peak …`, an argument list parsed by clap, as a command line is), then
//! that command's machinery: [`super::sweep`] for runs, [`super::compare`], [`super::peak`].
//! Every point is validated before anything runs. A bad plan is one line
//! `FILE:LINE:COL: what is wrong, how to fix it`, exit 2.
//!
//! [`read`] reads and validates a plan, [`dry`] lists what it would run, [`out`] writes a
//! finished study's files.

mod dry;
mod out;
pub mod read;

use super::keep::Keep;
use crate::cli::{RunArgs, StudyArgs};
use crate::plan::file::PlanFile;
use crate::store::Kind;
use crate::summary::diagnosis::Diagnosis;
use crate::summary::study::Document;
use read::Checked;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `checked`, once a big batch of runs is confirmed ([`super::sweep::confirm`]); a comparison
/// is marked confirmed, so that it does not ask again.
fn confirm(checked: Checked, yes: bool) -> Result<Checked, crate::error::UsageError> {
    Ok(match checked {
        Checked::Run(args, batch) => {
            super::sweep::confirm(&batch, yes || args.yes)?;
            Checked::Run(args, batch)
        }
        Checked::Compare(mut args, prepared) => {
            super::sweep::confirm(&prepared.rounds.points, yes || args.run.yes)?;
            args.run.yes = true;
            Checked::Compare(args, prepared)
        }
        peak => peak,
    })
}

/// `wirebench study`, its report written to `out` (a plan file's errors to stderr).
pub fn main(a: &StudyArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let (text, plan, checked) = match read::read(&a.file) {
        Ok(checked) => checked,
        Err(read::Located(at, message)) => {
            super::say_err(&format!("{}:{}:{}: {message}", a.file, at.line, at.col));
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    let diagnose = match diagnose_args(&plan, checked.run_args()) {
        Ok(d) => d,
        Err(read::Located(at, message)) => {
            super::say_err(&format!("{}:{}:{}: {message}", a.file, at.line, at.col));
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    if a.dry_run {
        dry::write(&a.file, &plan, &checked, out)?;
        if !diagnose.is_empty() {
            let step = diagnose[0]
                .duration
                .as_deref()
                .unwrap_or(super::diagnose::DEFAULT_STEP);
            writeln!(out, "then diagnose on each of the {} target(s): a {step} baseline, then the variants its evidence calls for, {step} each", diagnose.len())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Someone else's plan is data, not code: its launcher runs only when the command line says so.
    if let Some((at, cmd)) = launcher_of(&plan).filter(|_| !a.allow_launcher) {
        super::say_err(&format!(
            "{}:{}:{}: the plan's launcher '{}' would run a command: a plan file runs none unless the command line says so; check it, then give --allow-launcher (or remove the key)",
            a.file,
            at.line,
            at.col,
            escaped(&cmd)
        ));
        return Ok(ExitCode::from(super::EXIT_USAGE));
    }
    // A big study asks (or, in a script, wants --yes) before anything runs, --out or not.
    let checked = confirm(checked, a.yes)?;
    let Some(dir) = &a.out else {
        // The command line's --db, --tag and --fail-if join the plan's own.
        let code = match checked {
            Checked::Run(args, batch) => {
                let keep = Keep::prepare_merged(&a.keep, &args.keep, Kind::Study, false)?;
                super::sweep::finish(&args, *batch, keep, out)
            }
            Checked::Compare(mut args, _) => {
                args.run.keep = super::keep::merged(&a.keep, &args.run.keep);
                super::compare::main_as(&args, "study", out)
            }
            Checked::Peak(mut args, _) => {
                args.run.keep = super::keep::merged(&a.keep, &args.run.keep);
                super::peak::main(&args, out)
            }
        }?;
        if crate::app::signals::requested() {
            return Ok(code); // stopped: no diagnosis starts
        }
        for (d, t) in diagnosed(&diagnose)?.iter().zip(&plan.targets) {
            writeln!(out, "\nDiagnosis of {} ({}):\n", t.name, t.url)?;
            crate::report::diagnosis::write(d, out)?;
        }
        return Ok(code);
    };
    to_dir(a, dir, &text, &plan, checked, &diagnose, out)
}

/// The first `launcher` of `plan` (under `[run]` or a target's own flags) that starts a
/// command (anything but `local`), and where its key is.
fn launcher_of(plan: &PlanFile) -> Option<(crate::plan::file::Pos, String)> {
    let flags = plan
        .flags
        .iter()
        .chain(plan.targets.iter().flat_map(|t| &t.flags));
    flags.filter(|f| f.flag == "--launcher").find_map(|f| {
        let cmd = f.values.join(" ");
        (cmd.trim() != "local").then_some((f.at, cmd))
    })
}

/// `s` with its control characters escaped (`\n`), for one line of an error.
fn escaped(s: &str) -> String {
    s.chars().flat_map(char::escape_debug).collect()
}

/// `study --out DIR`: the study run, saved as it goes, written into DIR (or, when DIR cannot
/// be written, printed instead), and saved whole.
fn to_dir(
    a: &StudyArgs,
    dir: &str,
    text: &str,
    plan: &PlanFile,
    checked: Checked,
    diagnose: &[RunArgs],
    out: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    // Made before anything runs, so a path that cannot be written fails at once; removed
    // again (if still empty) when the runs fail, so a failure leaves nothing behind.
    let made = !Path::new(dir).exists();
    if !made && !Path::new(dir).is_dir() {
        return Err(crate::error::UsageError::new(format!(
            "--out {dir} exists and is not a directory: give a directory, or a new path, e.g. --out results/dim"
        ))
        .into());
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        crate::error::UsageError::new(format!(
            "--out {dir}: cannot make the directory ({e}); give a writable path, e.g. --out results/dim"
        ))
    })?;
    let unmake = || {
        if made {
            let _ = std::fs::remove_dir(dir);
        }
    };
    let keep = Keep::prepare_merged(&a.keep, &checked.run_args().keep, Kind::Study, false)
        .inspect_err(|_| unmake())?;
    let method = out::methodology(&a.file, text, checked.run_args(), plan);
    // Ctrl-C (or SIGTERM) stops the run in progress and starts no other, as without --out:
    // the study of what was measured is written, marked interrupted, and saved as such.
    crate::app::signals::stop_on_ctrl_c()?;
    // Saved after each run, so a wirebench killed mid-study leaves the runs finished.
    let keep = std::cell::RefCell::new(keep);
    let mut save = |doc: &Document| {
        let so_far = out::study(&a.file, plan, method.clone(), doc.clone(), Vec::new());
        keep.borrow_mut().progress(&so_far);
    };
    let (done, failed) = run(checked, &mut save).inspect_err(|_| unmake())?;
    let mut keep = keep.into_inner();
    let code = exit_code(&done);
    let interrupted = crate::app::signals::requested();
    let stopped = done.stopped().is_some();
    // A target gone or a stop: the diagnoses would measure nothing worth their time.
    let diagnose = if interrupted || stopped {
        &[][..]
    } else {
        diagnose
    };
    let diagnoses = diagnosed(diagnose).inspect_err(|_| unmake())?;
    let study = out::study(&a.file, plan, method, done, diagnoses);
    keep.mark_partial(stopped && !interrupted);
    let written = out::write(Path::new(dir), &study);
    match &written {
        Ok(csvs) => {
            if interrupted {
                writeln!(
                    out,
                    "Interrupted: {}; the study holds them, marked interrupted.",
                    measured(&study.document)
                )?;
            }
            writeln!(
                out,
                "wrote {dir}/report.md, {dir}/report.html, {dir}/study.json and {csvs} CSV tables in {dir}"
            )?;
        }
        // The files could not be written: the report goes to the terminal instead, and the
        // study to the history, so nothing measured is lost with them.
        Err(_) => {
            unmake();
            crate::report::study::write(&study, out)?;
        }
    }
    // Thresholds and the history read the study whole; its report is in DIR already.
    let runs = kept(&study.document);
    keep.name_points(points(&study.document));
    let code = keep.finish(&study, &runs, code, false, &|_| Ok(()), out)?;
    if let Err(e) = written {
        return Err(e.context(format!(
            "--out {dir}: the study's files were not written (the report is printed above and the study saved in the history)"
        )));
    }
    outcome(&study.document, failed, code)
}

/// The exit code of a study written and saved: `code`, unless it stopped early (not by a
/// signal): then the error naming why.
fn outcome(
    doc: &Document,
    failed: Option<anyhow::Error>,
    code: ExitCode,
) -> anyhow::Result<ExitCode> {
    match (failed, doc.stopped()) {
        (Some(e), _) => Err(e.context(format!(
            "the study stopped early: {} (reported and saved)",
            measured(doc)
        ))),
        (None, Some(why)) if !crate::app::signals::requested() => Err(anyhow::anyhow!(
            "the study stopped early, {}: {why} (reported and saved)",
            measured(doc)
        )),
        _ => {
            if code == ExitCode::from(super::EXIT_FAILED) && !crate::app::signals::requested() {
                super::run::say_failure(match doc {
                    Document::Run(sweep) => super::sweep::failure(sweep),
                    Document::Compare(c) => super::sweep::failure(&c.sweep),
                    Document::Peak(p) => super::peak::failure(p),
                });
            }
            Ok(code)
        }
    }
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
fn diagnose_args(plan: &PlanFile, run: &RunArgs) -> Result<Vec<RunArgs>, read::Located> {
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
                .map_err(|e| read::Located(at, format!("diagnose = true: {e}")))
        })
        .collect()
}

/// Each target's diagnosis, in order.
fn diagnosed(args: &[RunArgs]) -> anyhow::Result<Vec<Diagnosis>> {
    args.iter()
        .map(|a| Ok(super::diagnose::diagnosis(a, !a.quiet)?.0))
        .collect()
}

/// Runs the study, showing its document so far to `save` after each run: its command's
/// document, and the error that stopped it early, if a run could not run (an error when
/// nothing was measured).
fn run(
    checked: Checked,
    save: &mut dyn FnMut(&Document),
) -> anyhow::Result<(Document, Option<anyhow::Error>)> {
    let (design, show, total) = match checked {
        Checked::Run(args, batch) => {
            let total = batch.runs.len();
            (
                crate::study::Design::Sweep(*batch),
                !args.quiet && !args.json,
                Some(total),
            )
        }
        Checked::Compare(args, prepared) => {
            let total = prepared.rounds.points.runs.len();
            let show = !args.run.quiet && !args.run.json;
            (
                crate::study::Design::Compare(prepared.rounds),
                show,
                Some(total),
            )
        }
        Checked::Peak(args, bounds) => {
            let show = !args.run.quiet && !args.run.json;
            (crate::study::Design::Peak(bounds), show, None)
        }
    };
    let mut live = super::watch::Live::new(total, show, save);
    let done = crate::study::execute(&design, crate::app::signals::process(), &mut live);
    super::sweep::measured(done)
}

/// The exit code the command itself would give.
fn exit_code(doc: &Document) -> ExitCode {
    match doc {
        Document::Run(sweep) => super::sweep::exit_code(sweep),
        Document::Compare(c) => super::sweep::exit_code(&c.sweep),
        Document::Peak(p) => super::peak::exit_code(p),
    }
}
