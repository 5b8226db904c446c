//! The built-in study (to be written).

use crate::cli::DemoArgs;
use std::process::ExitCode;

/// `wirebench demo`.
pub fn main(_args: &DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
