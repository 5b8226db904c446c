//! One load from many generators (issue 19): a shard's own flags (`run --shard R/N`) and the
//! fleet a command runs each of its runs as (`--shards N`).

use clap::Args;

/// The shard contract (issue 19): one load from N generators, merged by `wirebench merge`.
#[derive(Debug, Args, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ShardArgs {
    /// Run as rank R of N shards of one load: R/N, or `auto` (SLURM_PROCID/SLURM_NTASKS,
    /// OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, PMI_RANK/PMI_SIZE, or JOB_COMPLETION_INDEX
    /// with --world N). -c, --rate, -n and a warm-up count stay the load's totals: each shard
    /// takes its share, remainders to the lowest ranks.
    #[arg(long, value_name = "R/N|auto", help_heading = "Shards (many machines)")]
    pub shard: Option<String>,

    /// The number of shards, where the engine gives the rank only (a Kubernetes Indexed Job's
    /// completions).
    #[arg(long, value_name = "N", help_heading = "Shards (many machines)")]
    pub world: Option<u64>,

    /// Start the run at this time: unix milliseconds, or +DURATION after $WIREBENCH_T0 (unix
    /// ms, fixed by the launcher; without it, after now), e.g. +5s.
    #[arg(
        long,
        value_name = "UNIX_MS|+DURATION",
        allow_hyphen_values = true,
        help_heading = "Shards (many machines)"
    )]
    pub start_at: Option<String>,

    /// A shard that begins later than this after --start-at marks itself late.
    #[arg(
        long,
        default_value = "10ms",
        value_name = "DURATION",
        help_heading = "Shards (many machines)"
    )]
    pub max_skew: String,

    /// Also write the result document (JSON, whole histograms) to FILE; %r is the rank.
    #[arg(long, value_name = "FILE", help_heading = "Shards (many machines)")]
    pub out: Option<String>,
}

/// `--launcher`'s default, as a plan read back without it has it.
fn local() -> String {
    "local".into()
}

/// Whether `--launcher` is its default, which a plan file leaves out (it needs `shards`).
fn is_local(launcher: &str) -> bool {
    launcher == "local"
}

/// Runs (a run, a sweep's points, a comparison's runs, a peak's steps) each run as N shards,
/// launched by the engine's own launcher and merged (issue 19, item 4).
#[derive(Debug, Args, Clone, serde::Serialize, serde::Deserialize)]
pub struct FleetArgs {
    /// Run each run (a sweep's point, a compared run, a peak step) as this many shards, each
    /// its share of the rate, connections and requests, merged and judged on the merged
    /// figures: the load of many generators.
    #[arg(long, value_name = "N", help_heading = "Shards (many machines)")]
    pub shards: Option<u64>,

    /// How each step's shards start: `local` (N processes here) or a command that starts N
    /// copies of what follows it, e.g. 'srun --ntasks=8' or 'mpirun --hostfile h -np 8'.
    #[arg(
        long,
        default_value = "local",
        value_name = "local|CMD",
        requires = "shards",
        help_heading = "Shards (many machines)"
    )]
    #[serde(skip_serializing_if = "is_local", default = "local")]
    pub launcher: String,

    /// Where each step's shard results go: shared by every node with srun or mpirun
    /// [default: a temporary directory, emptied after each step]
    #[arg(
        long,
        value_name = "DIR",
        requires = "shards",
        help_heading = "Shards (many machines)"
    )]
    pub shard_dir: Option<String>,
}
