//! `wirebench merge`.

use crate::cli::MergeArgs;
use std::process::ExitCode;

/// `wirebench merge`.
pub fn main(_a: &MergeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
