//! Reporters: each renders a [`crate::summary::Summary`] to a writer.
//!
//! - [`table`]: the human-readable terminal report (comfy-table, no colours); its headline
//!   figures (and the open-loop, datagram and HTTP lines) are rendered by `headline`, its
//!   per-second series by `series`, and small number formats live in `format`.
//! - [`json`]: the versioned machine-readable result, described by `schema/result.v1.json`.
//! - [`demo`]: the demo's method line, tables by message size and findings.
//! - [`peak`]: the peak search's table and curve, or its `wirebench.peak/1` JSON.
//! - [`progress`]: the live one-line progress display on stderr while a run is going.
//!
//! Reporters only format: every figure they show is already in the summary, so the table and
//! the JSON never disagree.

pub mod demo;
mod format;
mod headline;
pub mod json;
pub mod peak;
pub mod progress;
mod series;
pub mod table;
