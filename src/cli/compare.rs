//! `wirebench compare NAME=URL NAME=URL …`: targets side by side.

use clap::Args;

use super::run::RunArgs;

/// `wirebench compare NAME=URL NAME=URL …`: repeated runs and a verdict per metric.
#[derive(Debug, Args, serde::Serialize)]
#[command(
    after_help = "Example:\n  wirebench compare --baseline nginx nginx=http://127.0.0.1:8080/f mint=http://127.0.0.1:8081/f -d 5s --runs 6 --discard-first\n\
Every run flag applies (sizes, rates, sweeps …). Exit codes: 0 all requests ok, 1 some failed, 2 bad input, \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C.",
    mut_arg("urls", |a| a.help("The targets, two or more, each optionally named: \
        nginx=http://127.0.0.1:8080/f mint=http://127.0.0.1:8081/f"))
)]
pub struct CompareArgs {
    /// The target the others are compared to, by name [default: the first]
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// With --runs auto: the widest 95% CI allowed, as ± % of each verdict's ratio
    /// (Kalibera & Jones's relative precision) [default: 5%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub precision: Option<String>,

    /// With --runs auto: the most rounds to run, discarded ones included [default: 20]
    #[arg(long, value_name = "N", help_heading = "Repeated runs")]
    pub max_runs: Option<usize>,

    /// The noise threshold of throughput, the mean and p50: a change is called significant
    /// only when its whole 95% CI lies beyond ±this (two instances of one server differ by a
    /// few % for good on a busy machine); 0 calls every change the CI shows [default: 3%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub threshold: Option<String>,

    /// The noise threshold of p95 and p99, as --threshold [default: 10%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub tail_threshold: Option<String>,

    /// The targets and the load, as for `wirebench run`.
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunArgs,
}
