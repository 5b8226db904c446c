//! `wirebench diff OLD NEW`.

use crate::cli::DiffArgs;
use std::process::ExitCode;

/// `wirebench diff`.
pub fn main(_a: &DiffArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not yet")
}
