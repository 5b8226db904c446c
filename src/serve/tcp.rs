//! The reference TCP server (to be written).

use crate::cli::ServeTcpArgs;
use std::process::ExitCode;

/// `wirebench serve tcp`.
pub fn main(_args: &ServeTcpArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
