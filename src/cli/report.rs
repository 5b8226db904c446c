//! `wirebench report FILE.json|ID`: a document as an HTML page.

use clap::Args;

use super::history::DbArg;

/// `wirebench report FILE.json [-o report.html]`: a JSON document as an HTML page.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  wirebench run tcp://127.0.0.1:7000 --size 16..64k --json > sizes.json\n  wirebench report sizes.json            # writes sizes.html\n\
The page reads wirebench.result/1, wirebench.sweep/1, wirebench.compare/1, wirebench.peak/1 and wirebench.study/1 documents; \
it holds the tables, the methodology and charts (throughput by size, latency by percentile, per-second series, the peak search's curves, comparison bars with 95% CI). \
It fetches nothing: one file, inline CSS and SVG, no script. Exit codes: 0 written, 2 bad input (nothing written)."
)]
pub struct ReportArgs {
    /// The JSON document, as written by `wirebench run|compare|peak --json`, or a study's
    /// study.json (`wirebench study --out DIR`); or a stored run's ID (see `wirebench
    /// history`), `last` or `last~N`.
    #[arg(value_name = "FILE.json|ID|last")]
    pub file: String,

    /// Where to write the page [default: FILE with the extension .html; for a stored run,
    /// ID.html].
    #[arg(short, long, value_name = "FILE.html")]
    pub output: Option<String>,

    /// The history a stored run is read from.
    #[command(flatten)]
    pub db: DbArg,
}
