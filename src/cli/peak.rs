//! `wirebench peak URL --slo …`: the peak search (issue 9, item 4).

use clap::Args;

use super::run::RunArgs;
use super::{hide, one_target};

/// Connections of each peak step unless -c says otherwise (wrk2's default).
pub const PEAK_CONNECTIONS: &str = "10";

/// `wirebench peak URL --slo 'p99<=50ms'`: the peak search. Each step is `wirebench run` with
/// the other flags and `--rate` set by the search.
#[derive(Debug, Args, serde::Serialize)]
#[command(
    after_help = "Example:\n  wirebench peak http://127.0.0.1:8080/ --slo 'p99<=50ms' -c 8 --step 5s\n\
Exit codes: 0 a peak was found and confirmed (a majority of 3 trials passed), 1 no peak confirmed, 2 bad input, \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C.",
    mut_arg("urls", one_target),
    mut_args(|a| hide(a, &["duration", "requests", "rate", "stages", "bandwidth", "think",
        "runs", "discard", "discard_first", "yes", "deadline"]))
)]
pub struct PeakArgs {
    /// An objective every step must meet (repeatable): METRIC<=BOUND or METRIC<BOUND, with
    /// METRIC p50, p90, p95, p99, p999, mean or max (a latency, from each request's intended
    /// send time) or errors (a percent of all requests), e.g. 'p99<=50ms', 'errors<=0.1%'.
    #[arg(long = "slo", value_name = "OBJECTIVE", required = true)]
    pub slo: Vec<String>,

    /// How long each step offers its rate (its measuring time; --warmup comes first).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub step: String,

    /// The first rate offered, requests/s; doubled until a step fails, halved if it fails.
    #[arg(long, default_value = "100", value_name = "RATE")]
    pub start_rate: String,

    /// Never offer more than this many requests/s; a pass there ends the search.
    #[arg(long, default_value = "10000000", value_name = "RATE")]
    pub ceiling: String,

    /// Pause between steps, so a queue a failed step left at the target drains first.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub rest: String,

    /// The run each step repeats (target, workload, connections, --warmup, --json ...).
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunArgs,
}
