//! `wirebench diagnose URL [run flags]` (issue 11): why a target is slow.

use clap::Args;

use super::run::RunArgs;
use super::{hide, one_target};

/// `wirebench diagnose URL [run flags]`: the run is the baseline; diagnose adds the variants.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  wirebench diagnose tcp://127.0.0.1:7000            # 3 s per step\n  wirebench diagnose tcp://127.0.0.1:7000 --mode stream -d 2s\n  wirebench diagnose http://127.0.0.1:8080/ --json\n\
Looks for: Nagle's algorithm meeting delayed ACK (a latency mode near 40 or 200 ms; TcpExt DelayedACKs; \
TCP_INFO; the client's TCP_NODELAY flipped and larger buffers), socket buffers capping a bulk transfer \
(--mode stream/source: the client's buffers swept, the knee named), a saturated generator, ephemeral port \
exhaustion (--mode crr), and the latency's shape (mean above p95, several modes, stalls in the per-second series).\n\
Exit codes: 0 diagnosed, 1 the baseline saw failures, 2 bad input.",
    mut_arg("urls", one_target),
    mut_arg("duration", |a| a.help("How long each step measures, e.g. 2s [default: 3s]")),
    mut_args(|a| hide(a, &["runs", "discard", "discard_first", "db", "no_save", "tags", "yes", "deadline",
        "shards", "launcher", "shard_dir"])),
    mut_arg("fail_if", |a| a.hide(true).value_parser(|_: &str| -> Result<String, NoFailIf> {
        Err(NoFailIf)
    })),
)]
pub struct DiagnoseArgs {
    /// The run to diagnose, as for `wirebench run`; -d/--duration is each step's measuring time
    /// [default: 3s]. --json prints a `wirebench.diagnosis/1` document (schema/diagnosis.v1.json).
    #[command(flatten)]
    pub run: RunArgs,
}

/// `--fail-if` given to `diagnose`, which has no pass or fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("diagnose has no pass or fail: leave out --fail-if (thresholds go on run, compare, peak or study)")]
pub struct NoFailIf;
