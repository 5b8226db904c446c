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
pub mod study;
pub mod sweep;
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
use std::process::ExitCode;

/// Exit code for a run that measured but saw failures, or could not run.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input.
pub const EXIT_USAGE: u8 = 2;

/// Entry point of the binary.
pub fn main() -> ExitCode {
    pipe::install();
    if let Some(hint) = clash::hint(&std::env::args().collect::<Vec<_>>()) {
        eprintln!("error: {hint}");
        return ExitCode::from(EXIT_USAGE);
    }
    let cli = match Cli::try_parse_from(launch::mpi_spelling(std::env::args().collect())) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if pipe::is_closed_output(&e) => pipe::die(),
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("error: {u}");
                ExitCode::from(EXIT_USAGE)
            } else {
                eprintln!("error: {e:#}");
                ExitCode::from(EXIT_FAILED)
            }
        }
    }
}

/// Clap's errors span several lines; wirebench prints one line naming the problem and the fix.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("error: {}", one_line(&e, "wirebench --help"));
            ExitCode::from(EXIT_USAGE)
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

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::main(&args),
        Command::Serve(ServeCommand::Tcp(args)) => serve::tcp::main(&args),
        Command::Serve(ServeCommand::Udp(args)) => serve::udp::main(&args),
        Command::Serve(ServeCommand::Http(args)) => serve::http::main(&args),
        Command::Serve(ServeCommand::Redis(args)) => serve::simple(&args),
        Command::Demo(args) => crate::app::demo::main(&args),
        Command::Compare(args) => compare::main(&args),
        Command::Peak(args) => peak::main(&args),
        Command::Study(args) => study::main(&args),
        Command::Diagnose(args) => diagnose::main(&args),
        Command::History(args) => history::main(&args),
        Command::Show(args) => show::main(&args),
        Command::Diff(args) => diff::main(&args),
        Command::Export(args) => export::main(&args),
        Command::Merge(args) => merge::main(&args),
        Command::Report(args) => report::main(&args),
        Command::Files(c) => files::main(&c),
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
