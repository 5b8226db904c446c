//! `wirebench study FILE.toml`: a study from a plan file.

use clap::Args;

use super::history::KeepArgs;

/// `wirebench study FILE.toml`: a sweep, repeated runs, a comparison or a peak search, from a
/// plan file.
#[derive(Debug, Args)]
#[command(
    after_help = "A plan file:\n  title = \"DIM: message rate by size\"\n  [targets]\n  local = \"tcp://127.0.0.1:7000\"            # or local = { url = \"...\", server = \"nginx 1.22\" }\n  [run]                                    # any `wirebench run` flag by its long name\n  size = \"4,128,512..64k\"\n  duration = \"2s\"\n  runs = 3\n  discard = 1\n\
command = \"compare\" (with baseline = \"NAME\" under [run]) or command = \"peak\" (slo = [\"p99<=50ms\"], step, start_rate, ceiling, rest; one target) makes the file stand for that command; see examples/.\n\
Example: wirebench study examples/dim.toml --dry-run; wirebench study examples/dim.toml --out results/dim\n\
Exit codes: 0 all requests ok, 1 some failed, 2 a bad plan (FILE:LINE:COL: what is wrong), \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C."
)]
pub struct StudyArgs {
    /// The plan file (TOML): a title, a targets table and a run table.
    #[arg(value_name = "FILE.toml")]
    pub file: String,

    /// Where the study is saved, its tags and its thresholds.
    #[command(flatten)]
    pub keep: KeepArgs,

    /// List the runs (target × swept values × runs) and the estimated time (for a peak search,
    /// an upper bound of its steps); run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Run a big study (more than 1,000 runs, or an estimated time over 30 min) without asking
    /// (on a terminal it asks; elsewhere it is refused without --yes).
    #[arg(long)]
    pub yes: bool,

    /// Write DIR/report.md (title, tables, methodology), DIR/study.json (schema/study.v1.json)
    /// and one CSV per table (ops_per_s.csv, p99_us.csv …) once every run is done, all or
    /// none, instead of printing the tables.
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,

    /// Let the plan's `launcher` key run its command (e.g. launcher = "srun --ntasks=8"): a
    /// plan file is data, so without this flag a study refuses a plan that would start a
    /// program other than wirebench itself.
    #[arg(long)]
    pub allow_launcher: bool,
}
