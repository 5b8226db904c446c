//! The results history (issue 10, items 1-3): saving a result and its thresholds (`--db`,
//! `--tag`, `--fail-if` on run, compare, peak and study), and the commands that read it back
//! (history, show, diff, export, merge).

use clap::{Args, ValueEnum};

/// Saving a result to the history, and its pass/fail thresholds: on run, compare, peak, study.
#[derive(Debug, Args, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct KeepArgs {
    /// The history database [default: $XDG_DATA_HOME/wirebench/history.db, else
    /// ~/.local/share/wirebench/history.db]
    #[arg(long, value_name = "PATH", help_heading = "History and thresholds")]
    pub db: Option<String>,

    /// Do not save this result in the history.
    #[arg(long, conflicts_with = "db", help_heading = "History and thresholds")]
    pub no_save: bool,

    /// A label stored with the result, to find it again (repeatable): --tag commit=3f2a --tag
    /// host=ci (`wirebench history --tag commit=3f2a`).
    #[arg(
        long = "tag",
        value_name = "KEY=VALUE",
        help_heading = "History and thresholds"
    )]
    #[serde(rename = "tag")]
    pub tags: Vec<String>,

    /// Fail (exit 3) if this holds (repeatable; all are checked and each printed pass or fail),
    /// as k6's thresholds: 'p99>20ms' (p50 p90 p95 p99 p999 mean max: a latency), 'errors>0.1%'
    /// (or a count, 'errors>0'), 'ops<5000' (ok operations per second); > >= < <=. With several
    /// runs (sweeps, compare, study) every kept run must pass; peak checks its confirmation runs.
    #[arg(
        long = "fail-if",
        value_name = "CONDITION",
        help_heading = "History and thresholds"
    )]
    pub fail_if: Vec<String>,
}

/// `--db PATH` for the commands that read the history.
#[derive(Debug, Args, Clone, Default)]
pub struct DbArg {
    /// The history database [default: $XDG_DATA_HOME/wirebench/history.db, else
    /// ~/.local/share/wirebench/history.db]
    #[arg(long, value_name = "PATH")]
    pub db: Option<String>,
}

/// `wirebench history`: the stored runs.
#[derive(Debug, Args)]
#[command(
    after_help = "Example: wirebench history --target 127.0.0.1 --tag commit=3f2a --since 7d --limit 20"
)]
pub struct HistoryArgs {
    /// Only runs whose target URL contains this text.
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only runs with this label (repeatable: all must match).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only runs stored within this long, e.g. 7d, 12h, 30m.
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// At most this many runs, newest first.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: usize,
    /// Print the rows as JSON (schema/history.v1.json).
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub db: DbArg,
}

/// `wirebench show ID`: a stored run's report.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: an id (or its first digits) from `wirebench history`, last, or last~N.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Print the stored JSON document instead of the report.
    #[arg(long)]
    pub json: bool,
    /// The history file.
    #[command(flatten)]
    pub db: DbArg,
}

/// `wirebench diff OLD NEW`: a regression check between two stored runs.
#[derive(Debug, Args)]
#[command(
    after_help = "Example: wirebench diff last~1 last --max-regression 5%\n\
Exit codes: 0 no metric regressed beyond the bound, 3 one did, 2 bad input."
)]
pub struct DiffArgs {
    /// The run compared against (the baseline): an id, last or last~N.
    #[arg(value_name = "OLD")]
    pub old: String,
    /// The run checked: an id, last or last~N.
    #[arg(value_name = "NEW")]
    pub new: String,
    /// A metric regressed when it is worse by more than this, e.g. 5%, and the difference is
    /// significant.
    #[arg(long, default_value = "5%", value_name = "PERCENT")]
    pub max_regression: String,
    /// Print the diff as JSON (schema/diff.v1.json).
    #[arg(long)]
    pub json: bool,
    /// Count last and last~N among the runs of targets whose URL contains this (as `history
    /// --target`), so another program's runs in the same history are not taken for yours.
    #[arg(long, value_name = "URL-PART")]
    pub target: Option<String>,
    /// Compare runs of different tests anyway (another target, protocol, mode, load shape,
    /// connections, pipeline, think time or request size), which diff otherwise refuses.
    #[arg(long)]
    pub force: bool,
    /// The history file.
    #[command(flatten)]
    pub db: DbArg,
}

/// How `wirebench export` writes a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The stored document, byte for byte.
    Json,
    /// One line per result: target, ok, errors, rates and latency percentiles.
    Csv,
    /// A Markdown table of the same.
    Md,
}

/// `wirebench export ID --format json|csv|md`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run: an id, last or last~N.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// The history file.
    #[command(flatten)]
    pub db: DbArg,
}

/// `wirebench merge ID|FILE.json …`: one result from several.
#[derive(Debug, Args)]
#[command(
    after_help = "The results are taken as measured at the same time (several generators against one target): \
counts and histograms add exactly, rates are the sum over the longest duration. Example: wirebench merge a.json b.json > all.json"
)]
pub struct MergeArgs {
    /// Results to add: stored ids (last, last~N) or files holding a wirebench.result/1 document.
    #[arg(value_name = "ID|FILE.json", required = true, num_args = 1..)]
    pub inputs: Vec<String>,
    /// The results ran one after another, not at the same time: add them anyway, with rates
    /// over their summed measured time (without it, results whose measured windows do not
    /// overlap are refused).
    #[arg(long)]
    pub sequential: bool,
    /// Print the merged result as JSON: what merge always prints (taken, as every other
    /// command takes it).
    #[arg(long)]
    pub json: bool,
    /// The history file the ids are read from.
    #[command(flatten)]
    pub db: DbArg,
}
