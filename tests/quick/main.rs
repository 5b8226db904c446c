//! The test files that finish in seconds and assert nothing about timing, as one test binary:
//! one compile of tests/common and one link instead of one per file (each link is ~4 s of CPU;
//! CI builds on 2 cores). Files that measure rates, latency or timing stay a binary each in
//! tests/, so they share the machine only with their own file's tests.
//!
//! Run one file's tests with `cargo test --profile ci --test quick FILE::` (e.g. `golden::`).

#[path = "../common/mod.rs"]
mod common;

mod golden_common;

mod bad_input_writes_nothing;
mod bounded_input;
mod closed_output;
mod demo;
mod document_checks;
mod escaped_output;
mod execute;
mod exits;
mod files;
mod flags;
mod fuzz_corpus;
mod golden;
mod golden_shards;
mod golden_studies;
mod headers;
mod history_damage;
mod input_checks;
mod isolation;
mod launch;
mod layout;
mod measure;
mod no_clobber;
mod output;
mod plan_commands;
mod schema;
mod shard;
mod stands_alone;
mod stops_keep;
mod study_bounds;
mod unit_sizes;
mod units;
