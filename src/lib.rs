//! wirebench: a load generator and study writer for network services.
//!
//! It measures how many operations per second and MB/s a TCP, UDP or HTTP(S) service sustains, at what latency
//! (exact HdrHistogram percentiles, merged across workers, never averaged), and writes the
//! result as a terminal table or versioned JSON. It ships reference servers to measure against.
//!
//! # Layout
//!
//! The flow of a run is plan → load model → driver → recorder → summary → reporter:
//!
//! - [`cli`]: clap definitions, raw arguments only.
//! - [`plan`]: the validated [`plan::Plan`], built once (`TryFrom<&RunArgs>`); usage errors here
//!   ([`plan::http`] for the HTTP request shapes).
//! - [`load`]: WHEN to send: the closed loop, or an open-loop [`load::Schedule`] (constant rate,
//!   ramp, stages) as pure functions of the request index.
//! - [`driver`]: WHAT one operation is, one file per protocol ([`driver::tcp`], [`driver::udp`],
//!   [`driver::http`], [`driver::h2`] for HTTP/2, with [`driver::tls`]), behind the
//!   `Driver`/`Session` traits.
//! - [`template`]: `{seq}`, `{worker}`, `{rand:N}`, `{uuid}` placeholders in requests.
//! - [`engine`]: worker threads, each a single-threaded runtime owning its connections and its
//!   recorder; deadlines; the first-connection gate; the open-loop pacer; the collector that
//!   merges per-second intervals.
//! - [`record`]: the per-worker [`record::Recorder`] (histograms, error counters, bytes), `+=`.
//! - [`summary`]: computed once from the merged recorder; the JSON schema's shape.
//! - [`report`]: renders a summary (table, JSON) and the live progress line.
//! - [`serve`]: reference servers (tcp, udp, http), each `run(listener, options, shutdown)`.
//! - [`datagram`]: the wirebench UDP datagram header and receiver-side accounting (loss,
//!   reordering, duplicates, RFC 3550 jitter), shared by the UDP client and server.
//! - [`framing`]: the one-line preamble that tells the reference server request and reply sizes.
//! - [`diagnose`]: notes that name what a summary shows (port exhaustion, slow outliers, a saturated generator).
//! - [`demo`]: the built-in study (message rate and KB/s by size, request/response vs push).
//! - [`app`]: ties a parsed command line to the above and turns outcomes into exit codes.
//! - [`timerfd`]: the precise timer behind the open loop's pacing and the servers' `--delay`.
//! - [`units`], [`error`]: parsing of durations and sizes; usage errors.

pub mod app;
pub mod cli;
pub mod driver;
pub mod engine;
pub mod error;
pub mod load;
pub mod plan;
pub mod record;
pub mod report;
pub mod serve;
pub mod summary;
pub mod sys;
pub mod units;
pub mod wire;
