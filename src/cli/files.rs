//! `wirebench files make DIR --total SIZE`: file sets for web-server studies.

use clap::{Args, Subcommand};

/// `wirebench files ...`: file sets.
#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// Write a file set: files whose sizes follow --sizes, adding up to --total, the same bytes
    /// for the same --seed, and DIR/manifest.tsv listing them most popular first.
    Make(FilesMakeArgs),
}

/// `wirebench files make DIR --total SIZE`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  wirebench files make /tmp/set --total 1G --sizes specweb --seed 1\n  wirebench run 'http://127.0.0.1:8080/{file}' --manifest /tmp/set --popularity zipf:1.0 --dataset 100M,1G\n\
Exit codes: 0 written, 2 bad input (nothing written), 1 a write failed."
)]
pub struct FilesMakeArgs {
    /// Where to write the set: a new or empty directory.
    #[arg(value_name = "DIR")]
    pub dir: String,

    /// The set's size in all, e.g. 100M or 3G.
    #[arg(long, value_name = "BYTES")]
    pub total: String,

    /// How many files (their drawn sizes scaled to add up to --total) [default: as many as
    /// the sizes drawn take to reach --total]
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,

    /// The size law: specweb (SPECweb99's classes, 0.1 KB to 900 KB), lognormal:MEDIAN:SIGMA
    /// (e.g. lognormal:8k:1.0) or fixed:SIZE [default: specweb]
    #[arg(long, value_name = "LAW")]
    pub sizes: Option<String>,

    /// The seed of the sizes and the bytes: the same seed writes the same set [default: 1]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}
