//! `wirebench demo`: the built-in study.

use clap::Args;

/// `wirebench demo`: the built-in study.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Measuring time of each run; every size and workload is run 3 times (the median is shown).
    #[arg(long, default_value = "500ms", value_name = "DURATION")]
    pub time_per_size: String,
}
