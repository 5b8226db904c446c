//! Command-line definitions (clap derive): raw arguments only, validated later into a [`crate::plan::Plan`].
//!
//! One file per command's arguments (`run`, `serve`, `compare`, `peak`, `diagnose`, `study`,
//! `files`, `report`, `demo`, `launch`, the history's commands), and the groups several commands
//! flatten in: `socket` (client and server), `shards` (many generators), `history::KeepArgs`
//! (saving and thresholds). Every type is re-exported here, so `cli::RunArgs` names it.

use clap::{Parser, Subcommand};

pub mod compare;
pub mod demo;
pub mod diagnose;
pub mod files;
pub mod history;
pub mod launch;
pub mod peak;
pub mod report;
pub mod run;
pub mod serve;
pub mod shards;
pub mod socket;
pub mod study;

pub use compare::CompareArgs;
pub use demo::DemoArgs;
pub use diagnose::{DiagnoseArgs, NoFailIf};
pub use files::{FilesCommand, FilesMakeArgs};
pub use history::{
    DbArg, DiffArgs, ExportArgs, ExportFormat, HistoryArgs, KeepArgs, MergeArgs, ShowArgs,
};
pub use peak::{PeakArgs, PEAK_CONNECTIONS};
pub use report::ReportArgs;
pub use run::{Arrival, CacheState, ClientMode, LoadArgs, RunArgs, Runs, RunsError};
pub use serve::{
    ServeCommand, ServeHttp3Args, ServeHttpArgs, ServeTcpArgs, ServeUdpArgs, ServerMode,
    UdpServerMode,
};
pub use shards::{FleetArgs, ShardArgs};
pub use socket::SocketArgs;
pub use study::StudyArgs;

/// wirebench: measure how many operations per second and MB/s a network service sustains, and at what latency.
#[derive(Debug, Parser)]
#[command(
    name = "wirebench",
    version,
    about,
    after_help = "Examples:\n  wirebench demo\n  wirebench serve tcp                    # prints tcp://127.0.0.1:PORT\n  wirebench run tcp://127.0.0.1:PORT -c 4 -d 10s --size 64\n  wirebench run tcp://127.0.0.1:11211 --payload 'get k\\r\\n' --until 'END\\r\\n'"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing would only add noise
pub enum Command {
    /// Generate load against a target and report throughput and latency.
    Run(RunArgs),
    /// Run a reference server to measure against.
    #[command(subcommand)]
    Serve(ServeCommand),
    /// The built-in study: message rate and kB/s by size, request/response vs server push, on loopback.
    Demo(DemoArgs),
    /// Compare targets side by side: rounds of runs in a random order, each target's change from
    /// the baseline paired by round with its 95% CI and a verdict beyond a noise threshold, and
    /// latency shape per target.
    Compare(CompareArgs),
    /// Find the highest rate a target sustains within a latency objective: open-loop steps,
    /// doubling then bisecting to 2 % (mutilate --search; RFC 2544), rates whose trials disagree
    /// measured again until a majority decides, the peak confirmed by best of three (MLRsearch).
    // Ten connections by default (wrk2's): one cannot keep an open-loop timetable for long.
    #[command(mut_arg("connections", |a| a.default_value(PEAK_CONNECTIONS)))]
    Peak(PeakArgs),
    /// Run a study written down in a plan file (TOML): named targets and the flags of `run`,
    /// `compare` or `peak` (swept values, repeated runs, objectives); --out DIR writes report.md
    /// (tables and methodology), study.json and one CSV per table.
    Study(StudyArgs),
    /// Say why a target is slow: a short baseline, the kernel's evidence, variants that test each
    /// hypothesis (Nagle and delayed ACK, socket buffers, a saturated client, port exhaustion,
    /// the latency's shape), then findings with evidence, confidence and the fix.
    Diagnose(DiagnoseArgs),
    // --- results history (issue 10, items 1-3) ---
    /// List the stored runs, newest first (every run, compare, peak and study is saved).
    History(HistoryArgs),
    /// Print a stored run's report, as `run` printed it (or its JSON document with --json).
    Show(ShowArgs),
    /// Compare two stored runs metric by metric; exit 3 when one regressed beyond --max-regression.
    Diff(DiffArgs),
    /// Write a stored run as JSON (the document as stored), CSV or Markdown.
    Export(ExportArgs),
    /// Add result documents (stored ids or FILE.json) into one, histograms added exactly.
    Merge(MergeArgs),
    // --- end results history ---
    /// File sets for web-server studies: `files make DIR --total 1G` writes a reproducible set
    /// and its manifest, for `run URL/{file} --manifest DIR`.
    #[command(subcommand)]
    Files(FilesCommand),
    /// Render a wirebench JSON document (run, compare or peak --json, a study's study.json) as
    /// one self-contained HTML page: the tables, the methodology and charts (inline SVG, no
    /// network fetch).
    Report(ReportArgs),
    /// Run one load from many machines on Slurm, MPI or Kubernetes: write (and submit) what the
    /// engine needs so each task runs a shard (`run --shard auto`), then merge the shards.
    #[command(subcommand)]
    Launch(launch::LaunchCommand),
}

/// Flags `run` takes that this command does not (`ids`): out of its help (the command refuses
/// or has no use for them).
fn hide(a: clap::Arg, ids: &[&str]) -> clap::Arg {
    let out = ids.contains(&a.get_id().as_str());
    a.hide(out)
}

/// The target of a command that measures one.
fn one_target(a: clap::Arg) -> clap::Arg {
    a.num_args(1)
        .action(clap::ArgAction::Set)
        .help("The target, e.g. tcp://127.0.0.1:7000 or http://127.0.0.1:8080/")
}
