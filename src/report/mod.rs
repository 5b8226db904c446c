//! Reporters: each renders a [`crate::summary::Summary`] to a writer.
//!
//! - [`table`]: the human-readable terminal report (comfy-table, no colours); its headline
//!   figures (and the open-loop, datagram and HTTP lines) are rendered by `headline`, its
//!   per-second series by `series`, the `--link` lines by `link`, and small number formats
//!   live in `format`.
//! - [`html`]: the self-contained HTML report of any JSON document (`wirebench report`): tables,
//!   methodology and inline SVG charts.
//! - [`json`]: the versioned machine-readable result, described by `schema/result.v1.json`.
//! - [`demo`]: the demo's method line, tables by message size and findings.
//! - [`sweep`]: a sweep's tables, one per metric: a row per target, a column per swept value.
//! - [`compare`]: a comparison's verdicts (Welch's t) and the Flash study's latency-shape table.
//! - [`repeat`]: repeated runs, the MINT table: Run 1 … Run N, mean, median, stddev, 95% CI.
//! - [`diagnosis`]: `wirebench diagnose`'s findings, or its `wirebench.diagnosis/1` JSON.
//! - [`peak`]: the peak search's table and curve, or its `wirebench.peak/1` JSON.
//! - [`study`], [`csv`]: a study's report.md (tables and methodology) and its tables as CSV.
//! - [`shards`]: the per-rank table of a merged result (terminal and HTML).
//! - [`progress`]: the live one-line progress display on stderr while a run is going.
//! - [`history`]: the `wirebench history` table; [`export`]: a stored document's results as
//!   CSV or Markdown.
//!
//! Reporters only format: every figure they show is already in the summary, so the table and
//! the JSON never disagree.

pub mod compare;
pub mod csv;
pub mod demo;
pub mod diagnosis;
pub mod export;
mod format;
mod headline;
pub mod history;
pub mod html;
pub mod json;
mod link;
mod mix;
pub mod peak;
pub mod progress;
pub mod repeat;
mod series;
pub mod shards;
pub mod study;
pub mod sweep;
pub mod table;
