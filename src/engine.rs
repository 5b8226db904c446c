//! Workers, deadlines and the collector (to be written).

use crate::cli::RunArgs;
use std::process::ExitCode;

/// `wirebench run`.
pub fn main(_args: &RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
