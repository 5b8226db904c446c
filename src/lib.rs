//! wirebench: a load generator and study writer for network services.
//!
//! It measures how many operations per second and MB/s a TCP, UDP or HTTP(S) service sustains, at what latency
//! (exact HdrHistogram percentiles, merged across workers, never averaged), and writes the
//! result as a terminal table or versioned JSON. It ships reference servers to measure against.
//!
//! # Layout
//!
//! A run flows down this list:
//!
//! cli → app → plan → engine (load × driver) → record → summary → report / store
//!
//! The imports do not follow the flow: a room reads the types of the rooms that made its input
//! (the engine runs a [`plan::Plan`] with the drivers; a summary reads the plan, what the
//! drivers say of its operations and the record; a report lays out a sweep's points in [`load::sweep`]'s order). What
//! holds outside tests (`tests/quick/layout.rs` checks it) is one order in which each room imports
//! only rooms to its right, so no two rooms import each other:
//!
//! app → report → store → summary → engine → plan → cli → load → driver → record → wire → sys
//! → units → error
//!
//! Only `app` and the plan read `cli`; nothing imports `app`; [`record`] knows no driver. The
//! summary never imports `driver`, `engine`, `app` or `cli`, and reads nothing of the machine:
//! it is a pure function of a plan and its record, a protocol's facts reaching it as plain
//! data ([`record::exchange::Exchange`], which the drivers fill: [`plan::Plan::exchange`]) and
//! the machine's (the server's memory limit, the port range: [`record::Host`]) read by the
//! engine as the run ends. The reference servers ([`serve`]) stand alone, importing only [`wire`], [`sys`], [`units`] and
//! [`error`].
//!
//! - [`cli`]: clap definitions, raw arguments only.
//! - [`app`]: the commands: [`app::run`], [`app::compare`] (both with [`app::sweep`]: several
//!   targets, swept flags and repeated runs, each point a plan of its own), [`app::peak`] (the
//!   peak under a latency objective: the run again at the rates [`load::search`] picks),
//!   [`app::demo`] (the built-in study, a set of plans like any other), [`app::diagnose`]
//!   (a baseline, then the variants its evidence calls for, each a plan of its own),
//!   [`app::study`] (a plan file, [`plan::file`], turned into the `run`, `compare` or `peak`
//!   arguments it stands for, then that command's machinery) and `serve`; each turns
//!   arguments into a plan or server options, runs it and turns the outcome into an exit code. With the plan, the only code that sees `cli`.
//! - [`plan`]: the validated [`plan::Plan`], built once (`TryFrom<&RunArgs>`); one file per
//!   part ([`plan::workload`], [`plan::load`]; each protocol builds its own part of the
//!   workload from its flags, [`driver::Protocol::build`], holding it as a
//!   [`driver::workload::Spec`] the plan does not look into). Usage
//!   errors are found here. A misplaced protocol flag is refused through the drivers
//!   ([`driver::check_flags_fit`]), not by a list of schemes here; [`plan::write`] writes a
//!   study's typed arguments down as a plan file (serde).
//! - [`load`]: WHEN to send: the closed loop, or an open-loop [`load::Schedule`] (constant rate,
//!   ramp, stages) as pure functions of the request index; [`load::sweep`]: which values a
//!   sweep takes (lists, doubling ranges) and in which order points and targets run;
//!   [`load::search`]: the peak search's next rate.
//! - [`driver`]: WHAT one operation is. Each protocol is a module registered once in
//!   `driver/mod.rs` ([`driver::tcp`], [`driver::udp`], [`driver::http`], [`driver::h2`],
//!   [`driver::dicom`], [`driver::redis`], with [`driver::tls`]) behind the [`driver::Protocol`], [`driver::Driver`] and
//!   [`driver::Session`] traits. `run`'s flags come in groups by protocol, gathered by the
//!   registry into [`driver::ProtocolArgs`] (flattened into [`cli::RunArgs`]), each defined
//!   beside the driver that reads it
//!   ([`driver::tcp::flags`], [`driver::http::flags`], [`driver::dicom::flags`]); a protocol
//!   names the groups it reads ([`driver::Protocol::FLAGS`]) and checks its workload at plan
//!   time ([`driver::Protocol::check`]) and builds its part of it ([`driver::Protocol::build`]:
//!   [`driver::http::plan`], [`driver::dicom::plan`]); [`driver::workload`] and
//!   [`driver::target`] say what a protocol is asked to do, and where ([`driver::url`] parses a
//!   target's URL); [`driver::files`]: file sets (`files make`, a
//!   manifest, `{file}` drawn by popularity within a data-set size).
//! - [`engine`]: runs a plan: worker threads, each a single-threaded runtime owning its
//!   connections and its recorder; the connection loops (`engine/conn/`: closed loop, open loop,
//!   bulk transfer, and the steps they share); deadlines; the first-connection gate; the
//!   open-loop pacer; the collector that merges per-second intervals. Returns a
//!   [`record::RunRecord`]; it builds no summary and writes no report.
//! - [`record`]: the per-worker [`record::Recorder`] (histograms, error counters, bytes), merged
//!   with `+=`; the per-second series; what a finished run recorded; [`record::exchange`]:
//!   what its operations were (protocol, family, mode, a protocol's own facts), as the drivers
//!   describe them to the summary.
//! - [`summary`]: computed once from a plan and its record ([`summary::of`]); the JSON schema's
//!   shape; [`summary::check`] checks a document read back against its schema and ranges;
//!   [`summary::diagnose`] names what a summary shows; [`summary::sweep`] holds a
//!   sweep's summaries, [`summary::stats`] the statistics of repeated runs (Student t),
//!   [`summary::compare`] the verdicts of a comparison and the latency shape per
//!   target, [`summary::paired`] their statistics (per-round ratios, one interval for
//!   interval and verdict, outlier rounds, the seeded order); [`summary::link`] sets the rates against `--link` (RFC 6349's per-packet
//!   overhead); [`summary::slo`] checks objectives and [`summary::peak`] judges a peak
//!   search's steps; [`summary::study`] is a plan file's whole outcome (study.json);
//!   [`summary::diagnosis`] turns a baseline, the kernel's evidence and the variants into
//!   findings (Nagle and delayed ACK, buffers, the client's limits, the tail).
//! - [`report`]: renders a summary (table, JSON, the demo's study table), a sweep's tables
//!   ([`report::sweep`], [`report::repeat`]), the peak search ([`report::peak`]), a diagnosis
//!   ([`report::diagnosis`]), a study's report.md ([`report::study`]) and CSV tables
//!   ([`report::csv`]), the live progress (line and bars), and [`report::html`]: any JSON
//!   document, read into its type ([`report::html::Doc`]), as one self-contained HTML page
//!   (tables, methodology, inline SVG charts) for `wirebench report` ([`app::report`]).
//! - [`store`]: the results history in SQLite: every result document kept whole (histograms
//!   and per-second series inside), with the command line, the machine, tags and a status,
//!   read back into its kind's type ([`store::Typed`]);
//!   [`app::keep`] saves to it and checks `--fail-if` ([`summary::threshold`]); `history`,
//!   `show`, `diff` ([`summary::diff`]: Welch's t on per-second figures), `export` and
//!   `merge` ([`summary::merge`]: histograms added exactly) read it. Ctrl-C stops a run
//!   through [`engine::stop`].
//! - Many machines: [`plan::shard`] (rank and world from `--shard` or the engine's environment,
//!   the totals split, `--start-at`), [`app::shard`] (`run --shard`: its share, its start skew,
//!   `--out`), [`summary::shard`] (a shard's section; `merge` checks every rank once, one plan);
//!   each second of a result carries its histogram ([`record::compact`]), so merges stay exact;
//!   [`app::launch`] writes (and submits) what Slurm, MPI or Kubernetes needs to run the shards
//!   and merge them; [`app::peak_shards`]: `peak --shards N`, each step one launch, merged.
//! - [`serve`]: reference servers (tcp, udp, http, redis), each `run(listener, options,
//!   shutdown)`, with their shared plumbing (listening, threads, counters, `--delay`,
//!   `--max-rate`); a server that needs only its listener ([`serve::Simple`], as
//!   [`serve::redis`]) gets its address line and signal handling from `serve` itself.
//!
//!   A new protocol, as `redis://` shows, is `driver/NAME` (its [`driver::Protocol`], its flag
//!   group, its [`driver::workload::Spec`]) and `serve/NAME`, each declared (`pub mod NAME;`)
//!   and registered by one line: its protocol and flag group in `driver/mod.rs`'s `registry!`
//!   (which makes `run`'s flags, [`driver::ProtocolArgs::groups`] and the plan's checks), its
//!   server in `serve/mod.rs`'s `servers!` (which makes its `serve` subcommand,
//!   [`serve::SimpleCommand`], and its dispatch); nothing in cli, app, plan, engine, summary or
//!   report.
//! - [`wire`]: formats the client and the servers share: the framing preamble, the datagram
//!   header and flow accounting, the delimiter search.
//! - [`sys`]: what is asked of the operating system: the precise timer, resource use and
//!   limits, the outgoing interface's speed and a TCP socket's MSS; the host's kernel, CPU and
//!   date for a study's methodology ([`sys::host`]); a diagnosis's evidence: the kernel's TCP
//!   counters ([`sys::netstat`]), `TCP_INFO` of this process's connections ([`sys::tcpinfo`]),
//!   CPU pressure and thread schedstat ([`sys::pressure`]); CPU affinity ([`sys::pin`], the
//!   demo pins its client and server together); memory cgroups, a listener's memory limit and
//!   dropping the page cache ([`sys::cgroup`], disk-bound studies).
//! - [`random`]: seeded randomness (`--seed`): the generator, counter-based draws, Zipf and
//!   exponential laws, shared by the templates' keys and the Poisson arrivals.
//! - [`units`], [`error`]: parsing of durations and sizes; usage errors.
//! - [`measure`]: the library's entry point: a plan run in this process with its own
//!   [`Stop`] handle, summarised; the commands run their plans through it. A whole command
//!   line runs in this process through [`app::execute`], its report written to any writer
//!   and its exit code returned; the binary is that call on its own stdout and stderr.
// Outside tests a panic on bad data is a bug: invariants that cannot fail say why with an
// #[allow] and its reason (issue 16).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod app;
pub mod cli;
pub mod driver;
pub mod engine;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod load;
pub mod plan;
pub mod random;
pub mod record;
pub mod report;
pub mod serve;
pub mod store;
pub mod study;
pub mod summary;
pub mod sys;
pub mod units;
pub mod wire;

pub use engine::stop::Stop;

/// Runs `plan` until it ends or `stop` is requested, and summarises what it recorded: the
/// library's entry point, what `wirebench run` does without its live progress and its report
/// (render the summary with [`report::table::write`] or [`report::json::write`] to any writer).
/// Each call has its own stop: a stopped run does not stop the next one given another handle.
pub fn measure(plan: &plan::Plan, stop: &Stop) -> Result<summary::Summary, engine::Error> {
    measure_watching(plan, stop, &mut |_| {})
}

/// [`measure`], handing each second's snapshot to `watch` as the run goes (the live progress).
pub fn measure_watching(
    plan: &plan::Plan,
    stop: &Stop,
    watch: &mut dyn FnMut(&record::Snapshot),
) -> Result<summary::Summary, engine::Error> {
    engine::execute(plan, stop, watch).map(|record| summary::of(plan, record))
}
