//! Ties the command line to the library and turns outcomes into exit codes:
//! 0 success, 1 the run failed or saw errors, 2 bad input (one line on stderr, no backtrace),
//! 3 a `--fail-if` threshold failed or `diff` found a regression, 130 a run stopped by Ctrl-C.

mod clap_text;
mod clash;
pub mod compare;
pub mod demo;
pub mod diagnose;
pub mod files;
pub mod peak;
pub mod peak_shards;
mod pipe;
pub mod report;
pub mod run;
mod serve;
pub mod shard;
pub mod shards;
pub mod signals;
pub mod study;
pub mod sweep;
pub mod watch;
// --- results history (issue 10, items 1-3) ---
pub mod diff;
pub mod export;
pub mod history;
pub mod keep;
pub mod knob;
pub mod launch;
pub mod merge;
pub mod show;
// --- end results history ---

use crate::cli::{Cli, Command, ServeCommand};
use crate::error::UsageError;
use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// Exit code for a run that measured but saw failures, or could not run.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input.
pub const EXIT_USAGE: u8 = 2;

/// Entry point of the binary: [`execute`] on the process's arguments, stdout and stderr.
pub fn main() -> ExitCode {
    pipe::install();
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    // Every argument is text: one that is not UTF-8 (a file name in another encoding) is
    // named, not a panic.
    let mut args = Vec::new();
    for (i, a) in std::env::args_os().enumerate() {
        match a.into_string() {
            Ok(a) => args.push(a),
            Err(a) => {
                eprintln!(
                    "error: argument {i} ('{}') is not valid UTF-8: give it as UTF-8 text (rename a file whose name is in another encoding)",
                    a.to_string_lossy().escape_debug()
                );
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    execute_on(args, &mut out, &mut err, Streams::Process)
}

/// Runs one command line in this process, as the binary does: `args` are the words of the
/// command line (the program's name first), the reports (tables, JSON documents) go to `out`
/// and the lines the binary says on stderr (errors, warnings, a failed threshold) to `err`,
/// once the command ends; returns the exit code the binary would exit with. The live
/// progress (and `diagnose`'s steps) stays on the process's stderr, and a `serve` or `launch`
/// command writes to the process's stdout.
pub fn execute(
    args: impl IntoIterator<Item = String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    execute_on(args.into_iter().collect(), out, err, Streams::Given)
}

thread_local! {
    /// The lines a command run by [`execute`] with given writers said on its err writer as it
    /// went (warnings, a threshold that failed, a plan file's error), written there when it
    /// ends; `None` when the command writes to the process's stderr.
    static SAID: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
    /// The command line [`execute`] runs on this thread: what the history's `command` column
    /// records and what `--shards` spells its shards' command lines from.
    static COMMAND: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// The words of the command line being run on this thread: the one given to [`execute`],
/// else the process's.
pub(crate) fn command_words() -> Vec<String> {
    COMMAND.with(|c| c.borrow().clone()).unwrap_or_else(|| {
        std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    })
}

/// Says `line` on the command's err stream: the process's stderr at once (the binary), or the
/// writer given to [`execute`] when the command ends.
pub(crate) fn say_err(line: &str) {
    let kept = SAID.with(|s| match s.borrow_mut().as_mut() {
        Some(lines) => {
            lines.push(line.to_string());
            true
        }
        None => false,
    });
    if !kept {
        eprintln!("{line}");
    }
}

/// [`command_words`] joined by spaces.
pub(crate) fn command_line() -> String {
    command_words().join(" ")
}

/// Whose streams a command line writes to.
#[derive(Clone, Copy, PartialEq)]
enum Streams {
    /// The process's stdout and stderr (the binary): clap prints its help itself (in colour
    /// on a terminal), and a closed stream ends the process by SIGPIPE.
    Process,
    /// Writers a caller gave ([`execute`]): help as plain text, a closed writer an error.
    Given,
}

/// [`execute`] with `streams` saying whose `out` and `err` are.
fn execute_on(
    args: Vec<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    streams: Streams,
) -> ExitCode {
    let args = clash::implied_run(&args, &command_names()).unwrap_or(args);
    if let Some(hint) = clash::hint(&args) {
        say(err, streams, &format!("error: {hint}"));
        return ExitCode::from(EXIT_USAGE);
    }
    let words = args.clone();
    let cli = match Cli::try_parse_from(launch::mpi_spelling(args)) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e, out, err, streams),
    };
    COMMAND.with(|c| *c.borrow_mut() = Some(words));
    if streams == Streams::Given {
        SAID.with(|s| *s.borrow_mut() = Some(Vec::new()));
    }
    // A flag left by an earlier command on this thread is cleared.
    let _ = keep::save_failed();
    // The process's stdout gone (`run … | head -1`, a closed terminal) must not lose what was
    // measured: the command goes on to its save, its output dropped, and ends by SIGPIPE after.
    let mut kept = pipe::Kept::new(&mut *out);
    let outcome = match streams {
        Streams::Process => dispatch(cli, &mut kept),
        Streams::Given => dispatch(cli, kept.inner()),
    };
    let lost = kept.lost();
    COMMAND.with(|c| *c.borrow_mut() = None);
    for line in SAID.with(|s| s.borrow_mut().take()).unwrap_or_default() {
        let _ = writeln!(err, "{line}");
    }
    let _ = out.flush();
    let outcome = match (outcome, lost) {
        (Ok(_), Some(e)) if pipe::closed_by(&e) => pipe::die(),
        (Ok(_), Some(e)) => Err(anyhow::anyhow!(
            "cannot write the report to stdout ({e}); what was measured is saved (see wirebench history)"
        )),
        // A save that failed (one line said why) fails a command that would have succeeded.
        (Ok(code), None) if code == ExitCode::SUCCESS && keep::save_failed() => {
            Ok(ExitCode::from(EXIT_FAILED))
        }
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(code) => code,
        Err(e) if streams == Streams::Process && pipe::is_closed_output(&e) => pipe::die(),
        Err(e) => {
            let code = match e.downcast_ref::<UsageError>() {
                Some(u) => {
                    say(err, streams, &format!("error: {u}"));
                    EXIT_USAGE
                }
                None => {
                    say(err, streams, &format!("error: {e:#}"));
                    EXIT_FAILED
                }
            };
            ExitCode::from(code)
        }
    }
}

/// The names (and aliases) of wirebench's commands, and `help`.
fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    let mut names = vec!["help".to_string()];
    for sub in Cli::command().get_subcommands() {
        names.push(sub.get_name().to_string());
        names.extend(sub.get_all_aliases().map(str::to_string));
    }
    names
}

/// Clap's errors span several lines; wirebench prints one line naming the problem and the fix.
/// Help and the version are printed whole (to stdout; the help a missing subcommand calls for
/// to stderr, as clap prints it).
fn clap_error(
    e: clap::Error,
    out: &mut dyn Write,
    err: &mut dyn Write,
    streams: Streams,
) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = match (streams, e.use_stderr()) {
                (Streams::Process, _) => e.print(),
                (Streams::Given, false) => write!(out, "{}", e.render()),
                (Streams::Given, true) => write!(err, "{}", e.render()),
            };
            ExitCode::SUCCESS
        }
        _ => {
            say(
                err,
                streams,
                &format!("error: {}", one_line(&e, "wirebench --help")),
            );
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Writes `line` to `err`: on the process's stderr as `eprintln!` does (a closed stderr ends
/// the process by SIGPIPE, through [`pipe::install`]'s hook); to a given writer, best effort.
fn say(err: &mut dyn Write, streams: Streams, line: &str) {
    match streams {
        Streams::Process => eprintln!("{line}"),
        Streams::Given => {
            let _ = writeln!(err, "{line}");
        }
    }
}

/// Clap's error as one line, built from its kind and context (not from its rendered text):
/// the problem with what it names (the missing arguments, the possible values), the last tip,
/// the usage, and where to read more: the usage's subcommand with `--help`, else `fallback`.
pub(crate) fn one_line(e: &clap::Error, fallback: &str) -> String {
    use clap::error::ContextKind;
    let (head, subjects) = clap_text::problem(e);
    let mut out = head;
    if !subjects.is_empty() {
        out = format!("{} {}", out.trim_end(), subjects.join(", "));
    }
    if let Some(t) = clap_text::tip(e) {
        out += &format!("; {t}");
    }
    let usage = e.get(ContextKind::Usage).map(|u| u.to_string());
    let usage = usage
        .as_deref()
        .map(|u| u.trim().trim_start_matches("Usage: "))
        .and_then(|u| u.lines().next());
    let help = match usage {
        Some(u) => {
            out += &format!("; usage: {}", u.trim());
            // "wirebench run [OPTIONS] <URL>" → "wirebench run --help" (the command's words).
            let words: Vec<&str> = u
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            Some(format!("{} --help", words.join(" ")))
        }
        None => None,
    };
    let help = help
        .filter(|h| h != "wirebench --help")
        .unwrap_or_else(|| fallback.to_string());
    format!("{out} (see '{help}')")
}

/// Runs the command `cli` names, its reports written to `out`.
fn dispatch(cli: Cli, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::main(&args, out),
        Command::Serve(ServeCommand::Tcp(args)) => serve::tcp::main(&args),
        Command::Serve(ServeCommand::Udp(args)) => serve::udp::main(&args),
        Command::Serve(ServeCommand::Http(args)) => serve::http::main(&args),
        Command::Serve(ServeCommand::Http3(args)) => serve::http3::main(&args),
        Command::Serve(ServeCommand::Simple(server)) => server.run(serve::Simple),
        Command::Demo(args) => demo::main(&args, out),
        Command::Compare(args) => compare::main(&args, out),
        Command::Peak(args) => peak::main(&args, out),
        Command::Study(args) => study::main(&args, out),
        Command::Diagnose(args) => diagnose::main(&args, out),
        Command::History(args) => history::main(&args, out),
        Command::Show(args) => show::main(&args, out),
        Command::Diff(args) => diff::main(&args, out),
        Command::Export(args) => export::main(&args, out),
        Command::Merge(args) => merge::main(&args, out),
        Command::Report(args) => report::main(&args, out),
        Command::Files(c) => files::main(&c, out),
        Command::Launch(cmd) => launch::main(&cmd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one line of `args`' error.
    fn folded(args: &[&str]) -> String {
        let e = Cli::try_parse_from(args).expect_err("bad arguments");
        one_line(&e, "wirebench --help")
    }

    #[test]
    fn a_missing_url_is_named_with_where_it_goes() {
        let line = folded(&["wirebench", "run"]);
        assert!(
            line.contains("required arguments were not provided: <URL>"),
            "{line}"
        );
        assert!(line.contains("usage: wirebench run"), "{line}");
        assert!(line.contains("(see 'wirebench run --help')"), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn an_unknown_flag_keeps_its_tip() {
        let line = folded(&["wirebench", "run", "tcp://127.0.0.1:9", "--conections", "4"]);
        assert!(
            line.contains("unexpected argument '--conections'"),
            "{line}"
        );
        assert!(
            line.contains("tip:") || line.contains("--connections"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
    }
}
