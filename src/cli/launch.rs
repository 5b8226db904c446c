//! `wirebench launch slurm|mpi|k8s -- COMMAND…` (issue 19, item 5): the arguments of the
//! launchers, which write what an engine needs to run one load as N shards and merge them.

use clap::{Args, Subcommand};

/// The engines a load can be launched on.
#[derive(Debug, Subcommand)]
pub enum LaunchCommand {
    /// An sbatch script: `srun` runs one shard per task, then `wirebench merge` adds them.
    #[command(
        after_help = "Example:\n  wirebench launch slurm -N 4 --dir /shared/wb -- run tcp://10.0.0.5:7000 -c 400 -d 30s\n\
Without --submit the script is printed (redirect it to a file); --submit writes DIR/job.sbatch and runs sbatch. \
The shards write DIR/shard-RANK.json, the merge DIR/merged.json: DIR must be on a file system every node shares.\n\
Exit codes: 0 written (or submitted), 1 sbatch failed, 2 bad input or no sbatch."
    )]
    Slurm(SlurmArgs),
    /// A shell script: `mpirun` runs one shard per process (the binary links no MPI), then
    /// `wirebench merge` adds them.
    #[command(
        after_help = "Example:\n  wirebench launch mpi --hostfile hosts -np 8 --dir /shared/wb -- run tcp://10.0.0.5:7000 -c 400 -d 30s\n\
Without --submit the script is printed; --submit writes DIR/job.sh and runs it (mpirun waits for every rank). \
Open MPI's own settings pass through its environment, e.g. OMPI_MCA_oob_tcp_if_include=10.0.0.0/24.\n\
Exit codes: 0 written (or run and merged), 1 a shard or the merge failed, 2 bad input or no mpirun."
    )]
    Mpi(MpiArgs),
    /// A Kubernetes Indexed Job manifest: one pod per node, each a shard by its
    /// JOB_COMPLETION_INDEX; results from the pods' logs (or a shared volume).
    #[command(
        after_help = "Example:\n  wirebench launch k8s --parallelism 20 --image registry.example/wirebench:0.1 -- run http://svc:8080/ -c 2000 -d 60s > job.yaml\n\
The manifest's comments say how to collect the shards' results and merge them. --submit pipes it to `kubectl apply -f -`.\n\
Exit codes: 0 written (or applied), 1 kubectl failed, 2 bad input or no kubectl."
    )]
    K8s(K8sArgs),
}

/// What every launcher takes: the command each shard runs, when they start, where results go.
#[derive(Debug, Args, Clone)]
pub struct LaunchShared {
    /// Submit (or run) what was written instead of printing it.
    #[arg(long, conflicts_with = "print")]
    pub submit: bool,

    /// Print the script or manifest and submit nothing (the default).
    #[arg(long)]
    pub print: bool,

    /// The shards start together this long after the launcher's time zero (WIREBENCH_T0, fixed
    /// once by the script before it starts them) [default: 5s; k8s: 60s after now, for pods
    /// to be scheduled and pull the image].
    #[arg(long, value_name = "DURATION")]
    pub start_in: Option<String>,

    /// The wirebench binary the nodes run [default: this one's path; k8s: the image's
    /// entrypoint].
    #[arg(long, value_name = "PATH")]
    pub binary: Option<String>,

    /// The command every shard runs, after `--`: `run URL` with the load's totals (-c, --rate,
    /// -n); each shard gets --shard auto, --start-at and --out from the launcher.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `wirebench launch slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// Nodes to allocate.
    #[arg(short = 'N', long, value_name = "N")]
    pub nodes: u64,

    /// Shards (tasks) on each node.
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub ntasks_per_node: u64,

    /// A line for the script's #SBATCH header (repeatable), e.g. --sbatch '--partition=lab'.
    #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,

    /// With --submit: wait for the job to end (sbatch --wait); the exit code is the job's.
    #[arg(long, requires = "submit")]
    pub wait: bool,

    /// Where the shards' results and the merge go (shared by every node).
    #[arg(long, default_value = "wirebench-shards", value_name = "DIR")]
    pub dir: String,

    /// What every launcher takes.
    #[command(flatten)]
    pub shared: LaunchShared,
}

/// `wirebench launch mpi`.
#[derive(Debug, Args)]
pub struct MpiArgs {
    /// The hosts mpirun starts the shards on (Open MPI's --hostfile).
    #[arg(long, value_name = "FILE")]
    pub hostfile: String,

    /// Shards (processes) in all (-np N, as mpirun spells it, works too).
    #[arg(long = "np", short = 'n', value_name = "N")]
    pub np: u64,

    /// An argument for mpirun itself (repeatable), e.g. --mpirun-arg=--map-by=node.
    #[arg(long = "mpirun-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub mpirun_args: Vec<String>,

    /// Where the shards' results and the merge go (shared by every host).
    #[arg(long, default_value = "wirebench-shards", value_name = "DIR")]
    pub dir: String,

    /// What every launcher takes.
    #[command(flatten)]
    pub shared: LaunchShared,
}

/// `wirebench launch k8s`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    /// Pods (shards), each on a node of its own.
    #[arg(long, value_name = "N")]
    pub parallelism: u64,

    /// The image holding wirebench as its entrypoint (see the Containerfile).
    #[arg(long, value_name = "IMAGE")]
    pub image: String,

    /// The Job's name.
    #[arg(long, default_value = "wirebench", value_name = "NAME")]
    pub name: String,

    /// The agreed start in unix milliseconds, instead of --start-in after now.
    #[arg(long, value_name = "UNIX_MS")]
    pub start_at: Option<u64>,

    /// Write each shard's result to this ReadWriteMany PersistentVolumeClaim (mounted at
    /// /results) instead of the pod's log.
    #[arg(long, value_name = "PVC")]
    pub claim: Option<String>,

    /// What every launcher takes.
    #[command(flatten)]
    pub shared: LaunchShared,
}
