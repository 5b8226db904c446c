//! Ties the command line to the library and turns outcomes into exit codes:
//! 0 success, 1 the run failed or saw errors, 2 bad input (one line on stderr, no backtrace).

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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    match dispatch(cli) {
        Ok(code) => code,
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
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            let tip = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("tip: "))
                .map(|t| format!("; {t}"))
                .unwrap_or_default();
            eprintln!("error: {first}{tip} (see 'wirebench --help')");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => crate::engine::main(&args),
        Command::Serve(ServeCommand::Tcp(args)) => crate::serve::tcp::main(&args),
        Command::Serve(ServeCommand::Udp(args)) => crate::serve::udp::main(&args),
        Command::Serve(ServeCommand::Http(args)) => crate::serve::http::main(&args),
        Command::Demo(args) => crate::demo::main(&args),
    }
}
