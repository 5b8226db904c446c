//! What every measuring command does with its result besides printing it: check the
//! `--fail-if` thresholds (exit 3 when one fails) and save the document in the history
//! ([`crate::store`]). Both are prepared before anything runs, so a threshold that does not
//! parse or a `--db` file that is not a history is bad input (exit 2) with nothing measured.
//! A history file that does not exist yet is made by the first save, never before: bad input
//! found after the flags (a document that does not read, an unknown ID) leaves no empty file.
//! A save that fails after the run (a full disk) is one line, and fails the command (exit 1)
//! once it has printed what it measured ([`save_failed`]).

use crate::cli::KeepArgs;
use crate::error::UsageError;
use crate::store::{self, Env, Kind, Status, Store, StoreError};
use crate::summary::threshold::{Checked, Threshold};
use crate::summary::Summary;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code when a `--fail-if` threshold failed (k6 uses its own code for this too).
pub const EXIT_THRESHOLD: u8 = 3;
/// Exit code of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit code for a run stopped by SIGTERM (128 + 15, as a shell reports it).
pub const EXIT_TERMINATED: u8 = 143;
/// Exit code for a run stopped by SIGHUP (128 + 1: its terminal or session went away).
pub const EXIT_HANGUP: u8 = 129;

/// The exit code of the signal that stopped the run: Ctrl-C's unless SIGTERM came first.
static STOPPED_BY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(EXIT_INTERRUPTED);

/// Records which signal stopped the run, as its exit code.
pub fn interrupted_by(code: u8) {
    STOPPED_BY.store(code, std::sync::atomic::Ordering::Relaxed);
}

/// The exit code of a run stopped by a signal: 130 (SIGINT) or 143 (SIGTERM).
pub fn interrupted_code() -> u8 {
    STOPPED_BY.load(std::sync::atomic::Ordering::Relaxed)
}

/// The signal that stopped the run, as a person names it: `Ctrl-C` or `SIGTERM`.
pub fn stopped_by() -> &'static str {
    match interrupted_code() {
        EXIT_TERMINATED => "SIGTERM",
        EXIT_HANGUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// A command's saving and thresholds, prepared before it runs.
pub struct Keep {
    kind: Kind,
    store: Option<Store>,
    /// The history file to make on the first save, when it did not exist yet.
    pending: Option<PathBuf>,
    quiet: bool,
    tags: Vec<(String, String)>,
    thresholds: Vec<Threshold>,
    /// Names of the runs thresholds read, when there are several (a sweep's points).
    points: Vec<String>,
    /// The history row this command's document was saved to so far, once it has been.
    row: Option<String>,
    /// The command ended before its last run (its target could not be reached).
    partial: bool,
}

/// A document with its threshold verdicts appended (only when there are thresholds), so the
/// `--json` output is the command's own schema plus an optional `thresholds` list.
#[derive(Serialize)]
struct WithChecks<'a, T: Serialize> {
    #[serde(flatten)]
    doc: &'a T,
    #[serde(skip_serializing_if = "<[Checked]>::is_empty")]
    thresholds: &'a [Checked],
}

/// Parses `KEY=VALUE` labels.
pub fn parse_tags(texts: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    texts
        .iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(UsageError::new(format!(
                "--tag '{t}' is not KEY=VALUE: write e.g. --tag commit=3f2a"
            ))),
        })
        .collect()
}

/// The history file `--db` names, or the default one.
pub fn db_path(db: Option<&str>) -> Result<PathBuf, UsageError> {
    match db {
        Some(p) => Ok(PathBuf::from(p)),
        None => store::default_path().ok_or_else(|| {
            UsageError::new("no history file: HOME and XDG_DATA_HOME are unset; give --db PATH")
        }),
    }
}

/// Opens the history for reading commands: every failure is bad input. A history file that is
/// not there is not created (a typo, or `show zzzz` before any run, would otherwise make an
/// empty history): only a save makes one.
pub fn open_for_reading(db: Option<&str>) -> Result<Store, UsageError> {
    open_existing(db)?.ok_or_else(|| {
        let path = db_path(db).map(|p| p.display().to_string()).unwrap_or_default();
        match db {
            Some(_) => UsageError::new(format!(
                "--db {path}: no such file, so no history there: check the path (runs save to the --db they are given)"
            )),
            None => UsageError::new(format!(
                "no history yet ({path} does not exist): runs are saved there as they finish; give --db PATH for another"
            )),
        }
    })
}

/// [`open_for_reading`], with `None` for a history file that does not exist.
pub fn open_existing(db: Option<&str>) -> Result<Option<Store>, UsageError> {
    let path = db_path(db)?;
    if !path.exists() {
        return Ok(None);
    }
    regular(&path)?;
    Store::open(&path)
        .map(Some)
        .map_err(|e| UsageError::new(e.to_string()))
}

/// `store`'s errors that are the user's to fix become usage errors (exit 2).
pub fn usage_of(e: StoreError) -> anyhow::Error {
    match e {
        StoreError::Refused(_) | StoreError::NotFound(_) => UsageError::new(e.to_string()).into(),
        e => e.into(),
    }
}

impl Keep {
    /// The command the user typed, as a report's header names it: study, compare or run.
    pub fn command(&self) -> &'static str {
        match self.kind {
            Kind::Study => "study",
            Kind::Compare => "compare",
            Kind::Peak => "peak",
            Kind::Result | Kind::Sweep => "run",
        }
    }

    /// Parses the thresholds and tags and opens the history. A history given with `--db` that
    /// cannot be used is bad input; the default one only warns (saving never stops a run).
    pub fn prepare(a: &KeepArgs, kind: Kind, quiet: bool) -> Result<Keep, UsageError> {
        let thresholds = a
            .fail_if
            .iter()
            .map(|t| Threshold::parse(t).map_err(|e| UsageError::flag("--fail-if", e)))
            .collect::<Result<Vec<_>, _>>()?;
        let tags = parse_tags(&a.tags)?;
        let (store, pending) = match (a.no_save, &a.db) {
            (true, _) => (None, None),
            (false, Some(p)) => {
                let path = PathBuf::from(p);
                regular(&path)?;
                match path.exists() {
                    true => (
                        Some(Store::open(&path).map_err(|e| UsageError::new(e.to_string()))?),
                        None,
                    ),
                    false => {
                        probe(&path).map_err(UsageError::new)?;
                        (None, Some(path))
                    }
                }
            }
            (false, None) => match db_path(None)
                .map_err(|e| e.0)
                .and_then(|p| match p.exists() {
                    true => Store::open(&p)
                        .map(|s| (Some(s), None))
                        .map_err(|e| e.to_string()),
                    false => probe(&p).map(|()| (None, Some(p))),
                }) {
                Ok(kept) => kept,
                Err(e) => {
                    super::say_err(&format!("warning: not saving this result: {e}"));
                    (None, None)
                }
            },
        };
        Ok(Keep {
            kind,
            store,
            pending,
            quiet,
            tags,
            thresholds,
            points: Vec::new(),
            row: None,
            partial: false,
        })
    }

    /// The same, with a study's plan file's own tags and thresholds added to the command line's.
    pub fn prepare_merged(
        cli: &KeepArgs,
        plan: &KeepArgs,
        kind: Kind,
        quiet: bool,
    ) -> Result<Keep, UsageError> {
        Keep::prepare(&merged(cli, plan), kind, quiet)
    }

    /// Checks every threshold against `runs` (a run's summary; a sweep's kept runs).
    pub fn check(&self, runs: &[&Summary]) -> Vec<Checked> {
        self.thresholds
            .iter()
            .map(|t| t.check(runs, &self.points))
            .collect()
    }

    /// Names the runs the thresholds will read, in their order (a sweep's kept points), so a
    /// verdict says at which one its worst value was measured.
    pub fn name_points(&mut self, points: Vec<String>) {
        self.points = points;
    }

    /// The JSON document as `--json` prints it: pretty, with the verdicts, and a newline.
    pub fn document<T: Serialize>(doc: &T, checks: &[Checked]) -> anyhow::Result<String> {
        let mut text = serde_json::to_string_pretty(&WithChecks {
            doc,
            thresholds: checks,
        })?;
        text.push('\n');
        Ok(text)
    }

    /// Marks the command as ended before its last run (stored as `partial`, not `errors`).
    pub fn mark_partial(&mut self, partial: bool) {
        self.partial = partial;
    }

    /// Saves the document so far of a command of several runs, after each one, marked
    /// `partial`: each save is one transaction replacing the last, so a wirebench killed at any
    /// moment leaves every run finished before it in the history. A failure is a warning, once.
    pub fn progress<T: Serialize>(&mut self, doc: &T) {
        if self.store.is_none() && self.pending.is_none() {
            return;
        }
        match serde_json::to_string_pretty(doc) {
            Ok(text) => {
                if !self.put(&text, Status::Partial) {
                    // Said once; the run goes on unsaved, and the command fails at its end.
                    self.store = None;
                    self.pending = None;
                }
            }
            Err(e) => failed_to_save(&format!("the runs so far were not saved: {e}")),
        }
    }

    /// Saves `document` with `status` (replacing the document saved so far, if any); a failure
    /// is a warning, never an error.
    pub fn save(&mut self, document: &str, status: Status) {
        let saved = self.put(document, status);
        if let (true, Some(store), Some(id), false) =
            (saved, self.store.as_ref(), self.row.as_ref(), self.quiet)
        {
            super::say_err(&format!(
                "saved as {} in {} (wirebench show {})",
                store::short(id),
                store.path().display(),
                store::short(id)
            ));
        }
    }

    /// Writes `document` to this command's row (made on the first call); false, with a
    /// warning, when it could not be written.
    fn put(&mut self, document: &str, status: Status) -> bool {
        if let Some(path) = self.pending.take() {
            // The history's first save makes its file.
            match Store::open(&path) {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    failed_to_save(&format!("the result was not saved: {e}"));
                    return false;
                }
            }
        }
        let Some(store) = self.store.as_mut() else {
            return false;
        };
        let (cpu, cpus) = crate::sys::host::cpu();
        let env = Env {
            host: crate::sys::host::hostname(),
            kernel: crate::sys::host::kernel(),
            cpu: format!("{cpu} ({cpus} CPUs)"),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let command = super::command_line();
        let entry = store::Entry {
            kind: self.kind,
            document,
            command: &command,
            env: &env,
            tags: &self.tags,
            status,
        };
        let saved = match &self.row {
            Some(id) => store.replace(id, &entry).map(|()| id.clone()),
            None => store.insert(&entry),
        };
        match saved {
            Ok(id) => {
                self.row = Some(id);
                true
            }
            Err(e) => {
                failed_to_save(&format!("the result was not saved: {e}"));
                false
            }
        }
    }
}

impl Keep {
    /// The end of a measuring command: checks the thresholds against `runs`, prints `doc` to `out`
    /// (with `--json`, the document and its verdicts; else `render`'s report and the
    /// verdicts), saves the document, and returns the exit code (`base` unless a threshold
    /// failed).
    pub fn finish<T: Serialize>(
        &mut self,
        doc: &T,
        runs: &[&Summary],
        base: ExitCode,
        json: bool,
        render: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
        out: &mut dyn Write,
    ) -> anyhow::Result<ExitCode> {
        let checks = self.check(runs);
        let document = Keep::document(doc, &checks)?;
        if json {
            out.write_all(document.as_bytes())?;
        } else {
            render(out)?;
            write_checks(&checks, out)?;
        }
        out.flush()?;
        let interrupted = crate::app::signals::requested();
        let status = match (interrupted, self.partial) {
            (false, true) => Status::Partial,
            _ => status(base, interrupted),
        };
        self.save(&document, status);
        Ok(match interrupted {
            // Stopped by Ctrl-C: what was measured is printed and saved, marked interrupted.
            true => ExitCode::from(interrupted_code()),
            false => exit_code(&checks, base),
        })
    }
}

thread_local! {
    /// Whether a save of this thread's command failed: the command then fails (exit 1).
    static SAVE_FAILED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Says why a save failed (one line) and marks the command failed.
fn failed_to_save(why: &str) {
    SAVE_FAILED.with(|f| f.set(true));
    super::say_err(&format!("error: {why}"));
}

/// Whether a save of the command running on this thread failed; cleared by reading it.
pub fn save_failed() -> bool {
    SAVE_FAILED.with(|f| f.replace(false))
}

/// Refuses a history path that exists and is not a regular file (a device, a pipe, a folder).
fn regular(path: &std::path::Path) -> Result<(), UsageError> {
    crate::sys::write::check(path)
        .map(drop)
        .map_err(|e| UsageError::new(format!("--db {e}")))
}

/// Checks that the history file `path`, which does not exist, can be made (a full disk, a
/// folder that is not writable are bad input before anything runs) by making one beside it
/// under a name of its own and removing it again, with the folders made for it: the file
/// itself is made by the first save (never removed here: another wirebench may be saving
/// into it already).
fn probe(path: &std::path::Path) -> Result<(), String> {
    let mut missing = Vec::new();
    let mut at = path.parent();
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    let name = path
        .file_name()
        .map_or("history.db".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.probe-{}", std::process::id()));
    let opened = Store::open(&tmp).map(drop);
    for end in ["", "-wal", "-shm", "-journal"] {
        let mut p = tmp.as_os_str().to_owned();
        p.push(end);
        let _ = std::fs::remove_file(p);
    }
    for d in missing {
        let _ = std::fs::remove_dir(d);
    }
    opened.map_err(|e| {
        e.to_string()
            .replace(&tmp.display().to_string(), &path.display().to_string())
    })
}

/// The command line's keep flags with a plan file's added: both sets of tags and thresholds;
/// `--no-save` from either; the command line's `--db` first.
pub fn merged(cli: &KeepArgs, plan: &KeepArgs) -> KeepArgs {
    let mut a = cli.clone();
    a.tags.extend(plan.tags.iter().cloned());
    a.fail_if.extend(plan.fail_if.iter().cloned());
    a.no_save |= plan.no_save;
    if a.db.is_none() && !a.no_save {
        a.db = plan.db.clone();
    }
    a
}

/// Prints each threshold's verdict under the report.
pub fn write_checks(checks: &[Checked], out: &mut dyn Write) -> std::io::Result<()> {
    if checks.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nThresholds (--fail-if):")?;
    for c in checks {
        writeln!(out, "  {}", crate::summary::threshold::verdict_line(c))?;
    }
    Ok(())
}

/// The exit code: 3 when a threshold failed, else `base` (0, or 1 for failed operations).
pub fn exit_code(checks: &[Checked], base: ExitCode) -> ExitCode {
    if checks.iter().any(|c| !c.passed) {
        let failed: Vec<String> = checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| match &c.at {
                Some(at) => format!("{} (at {at})", c.fail_if),
                None => c.fail_if.clone(),
            })
            .collect();
        super::say_err(&format!("threshold failed: {}", failed.join(", ")));
        ExitCode::from(EXIT_THRESHOLD)
    } else {
        base
    }
}

/// The status a result is stored with.
pub fn status(base: ExitCode, interrupted: bool) -> Status {
    match (interrupted, base == ExitCode::SUCCESS) {
        (true, _) => Status::Interrupted,
        (false, true) => Status::Ok,
        (false, false) => Status::Errors,
    }
}
