//! The test files that run the binary (or the library in process) against real servers and
//! assert what they count, parse and refuse, not how fast: one test binary instead of one per
//! file, so CI compiles tests/common and links against the library once for all of them (each
//! file was its own binary: ~6.6 s of CPU to compile and a link each), and their tests, mostly
//! waiting on sockets and child processes, share the two test threads instead of running file
//! after file. Their waits are bounded with margins for a busy machine (each passes beside a
//! CPU hog); none measures a rate, a latency, a peak or a delay. Files that do, or that need the
//! machine to themselves (`common::one_at_a_time`, a CPU hog, network namespaces), stay a
//! binary each in tests/; so do dicom.rs (1,000 images of 512 KiB stored through storescp: its
//! run failed once beside a CPU hog and these tests) and survive.rs (peak searches and
//! sweeps whose steps must offer the rate they asked).
//!
//! Run one file's tests with `cargo test --profile ci --test functional FILE::` (e.g.
//! `run_http::`).

#[path = "../common/mod.rs"]
mod common;

mod certificates;
mod deadline;
mod faults;
mod first_connection;
mod grpc_third_party;
mod history;
mod hostile;
mod run_grpc;
mod run_h2;
mod run_h3;
mod run_http;
mod run_redis;
mod run_tcp;
mod scale;
mod serve_http;
mod serve_tcp;
mod serve_udp;
mod study;
