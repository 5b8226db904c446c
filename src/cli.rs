//! Command-line definitions (clap derive): raw arguments only, validated later into a [`crate::plan::Plan`].

use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod launch;

/// wirebench: measure how many operations per second and MB/s a network service sustains, and at what latency.
#[derive(Debug, Parser)]
#[command(
    name = "wirebench",
    version,
    about,
    after_help = "Examples:\n  wirebench demo\n  wirebench serve tcp                    # prints tcp://127.0.0.1:PORT\n  wirebench run tcp://127.0.0.1:PORT -c 4 -d 10s --size 64\n  wirebench run tcp://127.0.0.1:11211 --payload 'get k\\r\\n' --until 'END\\r\\n'"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process; boxing would only add noise
pub enum Command {
    /// Generate load against a target and report throughput and latency.
    Run(RunArgs),
    /// Run a reference server to measure against.
    #[command(subcommand)]
    Serve(ServeCommand),
    /// The built-in study: message rate and kB/s by size, request/response vs server push, on loopback.
    Demo(DemoArgs),
    /// Compare targets side by side: rounds of runs in a random order, each target's change from
    /// the baseline paired by round with its 95% CI and a verdict beyond a noise threshold, and
    /// latency shape per target.
    Compare(CompareArgs),
    /// Find the highest rate a target sustains within a latency objective: open-loop steps,
    /// doubling then bisecting to 2 % (mutilate --search; RFC 2544), rates whose trials disagree
    /// measured again until a majority decides, the peak confirmed by best of three (MLRsearch).
    // Ten connections by default (wrk2's): one cannot keep an open-loop timetable for long.
    #[command(mut_arg("connections", |a| a.default_value(PEAK_CONNECTIONS)))]
    Peak(PeakArgs),
    /// Run a study written down in a plan file (TOML): named targets and the flags of `run`,
    /// `compare` or `peak` (swept values, repeated runs, objectives); --out DIR writes report.md
    /// (tables and methodology), study.json and one CSV per table.
    Study(StudyArgs),
    /// Say why a target is slow: a short baseline, the kernel's evidence, variants that test each
    /// hypothesis (Nagle and delayed ACK, socket buffers, a saturated client, port exhaustion,
    /// the latency's shape), then findings with evidence, confidence and the fix.
    Diagnose(DiagnoseArgs),
    // --- results history (issue 10, items 1-3) ---
    /// List the stored runs, newest first (every run, compare, peak and study is saved).
    History(HistoryArgs),
    /// Print a stored run's report, as `run` printed it (or its JSON document with --json).
    Show(ShowArgs),
    /// Compare two stored runs metric by metric; exit 3 when one regressed beyond --max-regression.
    Diff(DiffArgs),
    /// Write a stored run as JSON (the document as stored), CSV or Markdown.
    Export(ExportArgs),
    /// Add result documents (stored ids or FILE.json) into one, histograms added exactly.
    Merge(MergeArgs),
    // --- end results history ---
    /// File sets for web-server studies: `files make DIR --total 1G` writes a reproducible set
    /// and its manifest, for `run URL/{file} --manifest DIR`.
    #[command(subcommand)]
    Files(FilesCommand),
    /// Render a wirebench JSON document (run, compare or peak --json, a study's study.json) as
    /// one self-contained HTML page: the tables, the methodology and charts (inline SVG, no
    /// network fetch).
    Report(ReportArgs),
    /// Run one load from many machines on Slurm, MPI or Kubernetes: write (and submit) what the
    /// engine needs so each task runs a shard (`run --shard auto`), then merge the shards.
    #[command(subcommand)]
    Launch(launch::LaunchCommand),
}

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

/// `--runs`: a count, or `auto` (compare: as many rounds as the intervals need).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// This many runs of each target and point.
    Count(usize),
    /// Rounds until every verdict's interval is narrow enough (compare only).
    Auto,
}

/// A `--runs` that is neither a count nor `auto`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a number of runs: give a count, e.g. --runs 5, or --runs auto (compare)")]
pub struct RunsError(pub String);

impl serde::Serialize for Runs {
    /// As `--runs` takes it: a count, or `auto`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Runs::Count(n) => s.serialize_u64(*n as u64),
            Runs::Auto => s.serialize_str("auto"),
        }
    }
}

impl std::str::FromStr for Runs {
    type Err = RunsError;
    fn from_str(s: &str) -> Result<Runs, RunsError> {
        match s {
            "auto" => Ok(Runs::Auto),
            _ => s.parse().map(Runs::Count).map_err(|_| RunsError(s.into())),
        }
    }
}

/// `--fail-if` given to `diagnose`, which has no pass or fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("diagnose has no pass or fail: leave out --fail-if (thresholds go on run, compare, peak or study)")]
pub struct NoFailIf;

/// `wirebench compare NAME=URL NAME=URL …`: repeated runs and a verdict per metric.
#[derive(Debug, Args, serde::Serialize)]
#[command(
    after_help = "Example:\n  wirebench compare --baseline nginx nginx=http://127.0.0.1:8080/f mint=http://127.0.0.1:8081/f -d 5s --runs 6 --discard-first\n\
Every run flag applies (sizes, rates, sweeps …). Exit codes: 0 all requests ok, 1 some failed, 2 bad input, \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C.",
    mut_arg("urls", |a| a.help("The targets, two or more, each optionally named: \
        nginx=http://127.0.0.1:8080/f mint=http://127.0.0.1:8081/f"))
)]
pub struct CompareArgs {
    /// The target the others are compared to, by name [default: the first]
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// With --runs auto: the widest 95% CI allowed, as ± % of each verdict's ratio
    /// (Kalibera & Jones's relative precision) [default: 5%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub precision: Option<String>,

    /// With --runs auto: the most rounds to run, discarded ones included [default: 20]
    #[arg(long, value_name = "N", help_heading = "Repeated runs")]
    pub max_runs: Option<usize>,

    /// The noise threshold of throughput, the mean and p50: a change is called significant
    /// only when its whole 95% CI lies beyond ±this (two instances of one server differ by a
    /// few % for good on a busy machine); 0 calls every change the CI shows [default: 3%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub threshold: Option<String>,

    /// The noise threshold of p95 and p99, as --threshold [default: 10%]
    #[arg(long, value_name = "PCT", help_heading = "Repeated runs")]
    pub tail_threshold: Option<String>,

    /// The targets and the load, as for `wirebench run`.
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunArgs,
}

/// Reference servers, one per protocol.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// A TCP server that echoes, sinks or sources bytes.
    Tcp(ServeTcpArgs),
    /// A UDP server that echoes or sinks datagrams and counts loss, reordering and jitter per flow.
    Udp(ServeUdpArgs),
    /// An HTTP/1.1 server: /bytes/N, /delay/D, /status/CODE, /echo, and files with --dir.
    Http(ServeHttpArgs),
    /// An HTTP/3 server over QUIC (UDP): the routes of `serve http`; a self-signed certificate
    /// is written at start (its path printed) unless --cert and --key are given.
    Http3(ServeHttp3Args),
    /// The servers that need only a listener, as `serve` registers them.
    #[command(flatten)]
    Simple(crate::serve::SimpleCommand),
}

/// What each client connection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientMode {
    /// Request/response on persistent connections.
    Rr,
    /// Connect, request, response, close: a new connection for every request.
    Crr,
    /// Bulk send to a sink (`wirebench serve tcp --mode sink`): MB/s.
    Stream,
    /// Read what the server pushes (`wirebench serve tcp --mode source`): messages/s and MB/s.
    Source,
}

/// How open-loop requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced: request i when the rate's integral reaches i.
    Fixed,
    /// A Poisson process: exponential gaps at the same rate, seeded.
    Poisson,
}

/// The page cache's state before a run (`--cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheState {
    /// As the machine left it.
    Warm,
    /// Dropped before each run (root).
    Cold,
}

/// What the reference server does with a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServerMode {
    /// Reply to each request: the same bytes, or `--reply-size` bytes.
    Echo,
    /// Read, count and discard.
    Sink,
    /// Push `--size`-byte messages as fast as the client takes them.
    Source,
}

/// What the reference UDP server does with a datagram: `serve tcp`'s modes but `source`,
/// which `--help` does not list (a datagram server has no one to push to) and which is refused
/// with that reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UdpServerMode {
    /// Reply to each datagram: the same bytes, or `--reply-size` bytes.
    Echo,
    /// Read, count and discard.
    Sink,
    /// TCP's push mode: not offered for UDP (refused, naming `serve tcp --mode source`).
    #[value(hide = true)]
    Source,
}

impl From<UdpServerMode> for ServerMode {
    fn from(m: UdpServerMode) -> ServerMode {
        match m {
            UdpServerMode::Echo => ServerMode::Echo,
            UdpServerMode::Sink => ServerMode::Sink,
            UdpServerMode::Source => ServerMode::Source,
        }
    }
}

/// Socket options shared by client and server.
#[derive(Debug, Args, Clone, Default, serde::Serialize)]
pub struct SocketArgs {
    /// Set TCP_NODELAY (disable Nagle's algorithm). This is the default.
    #[arg(long, conflicts_with = "no_nodelay")]
    pub nodelay: bool,
    /// Leave Nagle's algorithm on (clear TCP_NODELAY), to study its interaction with delayed ACK.
    #[arg(long)]
    pub no_nodelay: bool,
    /// Set SO_SNDBUF to this many bytes (e.g. 64k); switches off the kernel's send-buffer
    /// auto-tuning. `run` sweeps a list or doubling range: --sndbuf 16k..1M.
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<String>,
    /// Set SO_RCVBUF to this many bytes (e.g. 64k); switches off the kernel's receive-buffer
    /// auto-tuning. `run` sweeps a list or doubling range: --rcvbuf 16k..1M.
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<String>,
}

/// `wirebench run URL`: the load generator.
#[derive(Debug, Args, Clone, serde::Serialize)]
#[command(
    after_help = "Duration units: ns, us, ms, s, m, h (a bare number is seconds). \
Sizes: bytes, or with k, M, G (binary). Exit codes: 0 all requests ok, 1 some failed, 2 bad input, \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C (the report covers the time measured until then)."
)]
pub struct RunArgs {
    /// The target, e.g. tcp://127.0.0.1:7000. Several targets, optionally named
    /// (local=tcp://A remote=tcp://B), are measured in turn, interleaved point by point, and
    /// reported side by side: one row per target.
    #[arg(value_name = "URL", required = true, num_args = 1..)]
    pub urls: Vec<String>,

    /// What each connection does.
    #[arg(long, value_enum, default_value_t = ClientMode::Rr)]
    pub mode: ClientMode,

    /// Concurrent connections (closed loop: each waits for its reply before the next request).
    /// A list or doubling range sweeps it: -c 1,10,100 or -c 1..64.
    #[arg(short = 'c', long, default_value = "1", value_name = "N")]
    pub connections: String,

    /// Worker threads; connections are spread over them (as wrk's -t; iperf3's -t is our -d)
    /// [default: the number of CPUs]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// How long to measure, e.g. 10s (-z as oha's and hey's) [default: 10s, unless --requests
    /// is given]
    #[arg(short = 'd', long, short_alias = 'z', value_name = "DURATION")]
    pub duration: Option<String>,

    /// Stop after this many requests in all (split evenly over the connections).
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,

    /// Warm up first, measured but kept out of the statistics: a duration (2s), a request count
    /// (1000), or auto: until the last 3 seconds' ops/s (open loop: mean latency) vary by at
    /// most 5% (CoV), for at most 30 s (auto:60s sets the cap).
    #[arg(long, value_name = "DURATION|COUNT|auto")]
    pub warmup: Option<String>,

    /// Give up on a request (or a connect) after this long; it counts as a timeout error.
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub timeout: String,

    /// The whole run's limit when it counts requests (-n, or a warm-up count), whatever the
    /// target does (as k6's maxDuration): past it the run ends, keeps what it measured and
    /// counts the requests not finished (never sent, or in flight) as errors (exit 1)
    /// [default: 2 × --timeout per request a connection owes, at most 10m; an open loop's
    /// timetable plus --timeout at least]
    #[arg(long, value_name = "DURATION")]
    pub deadline: Option<String>,

    /// Requests in flight per connection (rr mode; with --rate, the most a connection may have
    /// outstanding: a due request waits for a free slot and counts as behind schedule).
    /// A list or doubling range sweeps it: --pipeline 1,4,16.
    #[arg(long, value_name = "K")]
    pub pipeline: Option<String>,

    /// How open-loop requests arrive at --rate (or --stages): fixed, evenly spaced (wrk2's
    /// timetable), or poisson, at random with exponential gaps (mutilate's --iadist
    /// exponential; seeded by --seed); latency counts from each request's drawn time [default: fixed]
    #[arg(long, value_enum, value_name = "KIND")]
    pub arrival: Option<Arrival>,

    /// Seed of everything random: template keys ({rand:N}, {zipf:N:s}, {uuid} …), Poisson
    /// arrivals, a mix's choices and, in `compare`, the targets' order and the bootstrap; the
    /// result records it, so a run can be repeated exactly [default: drawn afresh]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Pause between a reply and the next request on the same connection, e.g. 10ms, or drawn
    /// from an exponential law of that mean, exp:10ms (seeded by --seed); a list sweeps it:
    /// --think 0ms,1ms,10ms.
    #[arg(long, value_name = "DURATION")]
    pub think: Option<String>,

    /// Open loop: the rate, a UDP stream's bandwidth, stages.
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,

    /// The protocols' own flags (what a request is, how its reply ends, HTTP's requests and
    /// TLS, DICOM's operation …), one group per protocol as the driver registry lists them.
    #[command(flatten)]
    #[serde(flatten)]
    pub protocol: crate::driver::ProtocolArgs,

    /// The page cache before each run: warm (as it is) or cold (dropped: sync, then 3 into
    /// /proc/sys/vm/drop_caches; needs root), so files come from the disk; the result records
    /// it [default: warm]
    #[arg(long, value_enum, value_name = "STATE")]
    pub cache: Option<CacheState>,

    // --- wire speed (issue 9, item 5) ---
    /// Set the rates against the link's nominal rate: the payload rate as a % of it, and the
    /// estimated wire rate with every packet's IP, TCP (or UDP) and Ethernet overhead counted
    /// (RFC 6349; the MSS from TCP_INFO). A bit rate such as 100Mbit or 1Gbit, or `auto`: the
    /// speed of the interface toward the target (/sys/class/net/IFACE/speed; loopback has none).
    #[arg(long, value_name = "BITS/S|auto")]
    pub link: Option<String>,
    // --- end wire speed ---
    /// Client socket options.
    #[command(flatten)]
    #[serde(flatten)]
    pub socket: SocketArgs,

    /// Print the result as JSON (schema: schema/result.v1.json; a sweep or several targets:
    /// schema/sweep.v1.json) instead of a table.
    #[arg(long)]
    pub json: bool,

    /// No live progress line (oha's and hey's -q, a rate, is our --rate).
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Payload throughput in the tables of a sweep, compare or study in this unit (SI, as
    /// every rate: 1 kB = 1000 B): kB, MB or GB [default: the one the largest figure calls
    /// for, the same for every table]
    #[arg(long, value_enum, value_name = "UNIT")]
    pub units: Option<crate::units::ByteUnit>,

    // Studies: repeated runs. Several targets and swept flags are `urls` and the lists above.
    /// Repeat everything (each target, each swept point) N times, in rounds that interleave
    /// the targets (A B A B …, never A A B B), and report every run with the mean, median,
    /// standard deviation and 95% confidence interval (Student t), as hyperfine's --runs
    /// [default: 1; compare: 5]. compare takes `auto`: rounds until every verdict's 95% CI is
    /// within --precision (or --max-runs ends it)
    #[arg(long, value_name = "N", help_heading = "Repeated runs")]
    pub runs: Option<Runs>,

    /// Discard the first run of each target and point (it warms caches, as in the MINT study):
    /// shown in the table, marked, kept out of the statistics. The same as --discard 1.
    #[arg(long, conflicts_with = "discard", help_heading = "Repeated runs")]
    pub discard_first: bool,

    /// Discard the first K runs of each target and point (K below --runs).
    #[arg(long, value_name = "K", help_heading = "Repeated runs")]
    pub discard: Option<usize>,

    /// Run a big sweep or study (more than 1,000 runs, or an estimated time over 30 min)
    /// without asking: on a terminal it asks first; elsewhere (a script, CI) it is refused
    /// without --yes, exit 2.
    #[arg(long, help_heading = "Repeated runs")]
    pub yes: bool,

    /// Where the result is saved, its tags and its thresholds.
    #[command(flatten)]
    #[serde(flatten)]
    pub keep: KeepArgs,

    /// Each run (a sweep's point, a compared run, a peak step) as N shards, merged.
    #[command(flatten)]
    #[serde(flatten)]
    pub fleet: FleetArgs,

    /// One shard of a load run from many machines.
    #[command(flatten)]
    #[serde(flatten)]
    pub shard: ShardArgs,
}

/// The open-loop flags of `wirebench run`: when requests are sent, whatever the replies do.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LoadArgs {
    /// Open loop: send R requests/s in all, on a fixed timetable whatever the replies do; latency
    /// counts from each request's intended send time (no coordinated omission). A linear ramp:
    /// FROM..TO/DURATION, e.g. 1000..50000/30s. A list or doubling range (no /DURATION) sweeps
    /// it, one run per rate: --rate 1000,5000 or --rate 1000..64000.
    #[arg(long, value_name = "RATE", allow_hyphen_values = true, conflicts_with_all = ["stages", "think"])]
    pub rate: Option<String>,

    /// UDP stream: send at this bit rate, e.g. 100Mbit, 1Gbit, 500k (bits per second; the
    /// datagram rate is this over --size; -b as iperf3's) [default: 1Mbit, as iperf3]
    #[arg(short = 'b', long, value_name = "BITS/S", conflicts_with_all = ["rate", "stages"])]
    pub bandwidth: Option<String>,

    /// Open loop in steps, each held for its duration: DURATION@RATE,... e.g. '10s@1000,10s@5000'.
    #[arg(long, value_name = "STAGES", conflicts_with = "think")]
    pub stages: Option<String>,
}

/// The shard contract (issue 19): one load from N generators, merged by `wirebench merge`.
#[derive(Debug, Args, Clone, Default, serde::Serialize)]
pub struct ShardArgs {
    /// Run as rank R of N shards of one load: R/N, or `auto` (SLURM_PROCID/SLURM_NTASKS,
    /// OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, PMI_RANK/PMI_SIZE, or JOB_COMPLETION_INDEX
    /// with --world N). -c, --rate, -n and a warm-up count stay the load's totals: each shard
    /// takes its share, remainders to the lowest ranks.
    #[arg(long, value_name = "R/N|auto", help_heading = "Shards (many machines)")]
    pub shard: Option<String>,

    /// The number of shards, where the engine gives the rank only (a Kubernetes Indexed Job's
    /// completions).
    #[arg(long, value_name = "N", help_heading = "Shards (many machines)")]
    pub world: Option<u64>,

    /// Start the run at this time: unix milliseconds, or +DURATION after $WIREBENCH_T0 (unix
    /// ms, fixed by the launcher; without it, after now), e.g. +5s.
    #[arg(
        long,
        value_name = "UNIX_MS|+DURATION",
        allow_hyphen_values = true,
        help_heading = "Shards (many machines)"
    )]
    pub start_at: Option<String>,

    /// A shard that begins later than this after --start-at marks itself late.
    #[arg(
        long,
        default_value = "10ms",
        value_name = "DURATION",
        help_heading = "Shards (many machines)"
    )]
    pub max_skew: String,

    /// Also write the result document (JSON, whole histograms) to FILE; %r is the rank.
    #[arg(long, value_name = "FILE", help_heading = "Shards (many machines)")]
    pub out: Option<String>,
}

/// `wirebench serve tcp`: the reference TCP server.
#[derive(Debug, Args)]
pub struct ServeTcpArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// What to do with each connection.
    #[arg(long, value_enum, default_value_t = ServerMode::Echo)]
    pub mode: ServerMode,

    /// Echo mode: reply with this many bytes instead of echoing the request, to clients that
    /// do not say their reply size (a wirebench client says its own: `run --expect-size`, else
    /// its request's size).
    #[arg(long, value_name = "BYTES")]
    pub reply_size: Option<String>,

    /// Source mode: message size pushed to clients that do not say (wirebench clients do) [default: 1024]
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,

    /// Framing for plain (non-wirebench) clients: every request is exactly this many bytes.
    #[arg(long, value_name = "BYTES", conflicts_with = "delimiter")]
    pub request_size: Option<String>,

    /// Framing for plain clients: a request ends with this delimiter (escapes allowed), e.g. '\n'.
    #[arg(long, value_name = "DELIM")]
    pub delimiter: Option<String>,

    /// Service time: wait this long before the first byte of each reply, e.g. 5ms. Waited to a
    /// few µs: as root, the server also keeps every CPU out of idle sleep while it runs
    /// (/dev/cpu_dma_latency = 0, released when it exits), so a timer wakes it on time.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Run the server's threads under SCHED_FIFO (needs root), so other processes on their
    /// CPUs do not hold up a delayed reply. A busy server then has its CPU first: the kernel
    /// still leaves others 5% of each second.
    #[arg(long)]
    pub realtime: bool,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Refuse (accept and close at once) connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Close a connection whose client sends nothing for this long (0: never); in source mode,
    /// one whose client takes nothing for this long; with --blocking too. Memory per
    /// connection is one 64 KiB read buffer plus the kernel's socket buffers.
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub idle_timeout: String,

    /// Serve each connection on its own thread with blocking socket calls (echo and sink): a
    /// syscall less per request, the lowest latency for a few connections. The default event
    /// loop scales to tens of thousands.
    #[arg(long)]
    pub blocking: bool,

    /// Test fault: hold all replies for --stall-for once every this long (e.g. 1s).
    #[arg(long, value_name = "DURATION", hide = true)]
    pub stall_every: Option<String>,

    /// Test fault: how long each stall lasts (e.g. 500ms).
    #[arg(long, value_name = "DURATION", hide = true)]
    pub stall_for: Option<String>,

    // --- misbehaving on purpose, for `wirebench diagnose` (issue 11) ---
    /// Write each echo reply in N separate write() calls, as a server that sends a header and
    /// then a body. With --no-nodelay, Nagle's algorithm holds each later piece until the client
    /// ACKs the first, and the client delays that ACK (Linux: at least 40 ms): the DCMTK
    /// stall (a reply in pieces + Nagle + delayed ACK), reproducible without DCMTK.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub reply_writes: usize,

    /// Apply --delay to every Nth request of a connection only; the rest are answered at once:
    /// a rare slow request, the tail that pulls the mean above p95.
    #[arg(long, value_name = "N", requires = "delay")]
    pub delay_every: Option<u64>,
    // --- end misbehaving ---
    /// Server threads [default: the number of CPUs]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Server socket options.
    #[command(flatten)]
    pub socket: SocketArgs,
}

/// `wirebench serve udp`: the reference UDP server.
#[derive(Debug, Args)]
#[command(
    after_help = "Wirebench datagrams (see src/wire/datagram.rs and src/wire/flow.rs) are counted per client and flow: loss, \
reordering, duplicates and RFC 3550 jitter, which a client asks for with a report request. Other \
datagrams are echoed (or counted, in sink mode) as they are."
)]
pub struct ServeUdpArgs {
    /// Address to bind; port 0 picks a free port. The bound address is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// Echo: answer each datagram; sink: count it and answer nothing.
    #[arg(long, value_enum, default_value_t = UdpServerMode::Echo)]
    pub mode: UdpServerMode,

    /// Echo mode: reply with this many bytes (at most 65507) unless a wirebench client asks
    /// for its own reply size. A client may ask for at most 10 times its datagram's size (no
    /// amplifier for spoofed requests), or this size where it is larger.
    #[arg(long, value_name = "BYTES")]
    pub reply_size: Option<String>,

    /// Echo mode, service time: send each reply this long after its request, e.g. 5ms; other
    /// datagrams are served meanwhile.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Set SO_SNDBUF to this many bytes (e.g. 1M).
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<String>,

    /// Set SO_RCVBUF to this many bytes (e.g. 4M); a small one drops bursts in the kernel.
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<String>,

    /// Server threads, each with its own socket on the same port (SO_REUSEPORT); the kernel
    /// keeps each client address on one of them.
    #[arg(short = 't', long, default_value_t = 1, value_name = "N")]
    pub threads: usize,

    /// Serve with blocking recv/send calls on each thread instead of an event loop: a syscall
    /// or two less per request, the lowest latency for a ping-pong with few clients.
    #[arg(long)]
    pub blocking: bool,

    /// Test fault: drop every Nth data datagram received, before it is counted or answered.
    #[arg(long, hide = true, value_name = "N")]
    pub drop_every: Option<u64>,

    /// Test fault: count and answer every Nth data datagram twice.
    #[arg(long, hide = true, value_name = "N")]
    pub duplicate_every: Option<u64>,

    /// Test fault: hold every Nth data datagram and serve it after the next one.
    #[arg(long, hide = true, value_name = "N")]
    pub reorder_every: Option<u64>,
}

/// `wirebench serve http`: the reference HTTP/1.1 server.
#[derive(Debug, Args)]
#[command(
    after_help = "Routes: GET /bytes/N (N bytes, k/M/G suffixes, up to 1 TiB), /delay/D (e.g. /delay/5ms), \
/status/CODE, POST|PUT /echo (the request body back); with --dir, other GET paths serve files. HEAD \
works everywhere, keep-alive and pipelining by default.\n\n\
Memory per connection is bounded whatever a client sends: a read buffer of --max-header-bytes (at \
least 16 KiB) and an output buffer of 4 KiB that grows to 128 KiB at most while large responses are \
written, plus the kernel's socket buffers; 2,000 idle connections took ~32 MB (bench/hostile.sh). \
A slow client is bounded in time by --request-timeout (a head trickled byte by byte gets 408) and \
--idle-timeout; in number by --max-connections."
)]
pub struct ServeHttpArgs {
    /// Address to listen on; port 0 picks a free port. The URL is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// Server threads [default: the number of CPUs]
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,

    /// Serve the files under this directory for paths that are not built-in routes (sendfile).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,

    /// Run under a memory limit that caps the page cache too (a cgroup v1 memory group, made
    /// for this server and removed when it stops; needs root), e.g. 64M: files beyond it are
    /// read from the disk, as on a machine with that much memory (the Flash study's large
    /// data set). Pair with `run --cache cold`, which drops what is already cached.
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: Option<String>,

    /// A request head must arrive within this long (from the connection, or its first byte),
    /// else 408 and close.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub request_timeout: String,

    /// Close a keep-alive connection after this long without a request (and give up on a body
    /// or a reply that makes no progress for this long).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub idle_timeout: String,

    /// The largest request head (request line and header fields), 256 to 1M; a larger one gets
    /// 431 and a close. The read buffer is this size, at least 16k.
    #[arg(long, default_value = "16k", value_name = "BYTES")]
    pub max_header_bytes: String,

    /// Refuse (accept and close at once) connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Service time: wait this long before every response, e.g. 5ms.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// The longest /delay/D a client may ask for; a longer one gets 400 at once. A delayed
    /// response is abandoned when its client leaves.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub max_delay: String,

    /// Capacity: serve at most this many requests per second across all threads and
    /// connections (e.g. 2000 or 2000/s); requests beyond it queue, first come first served, so
    /// latency grows when more is offered: a server whose true peak is known (see `wirebench
    /// peak`).
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,

    /// Server socket options.
    #[command(flatten)]
    pub socket: SocketArgs,
}

/// `wirebench serve http3`: HTTP/3 over QUIC.
#[derive(Debug, Args)]
pub struct ServeHttp3Args {
    /// UDP address to listen on; port 0 picks a free port. The URL is printed first.
    #[arg(short = 'l', long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub listen: String,

    /// The certificate chain to present (PEM); with --key. Without both, a self-signed
    /// certificate for 127.0.0.1, ::1 and localhost is made and written beside its key in a
    /// new temporary directory, whose path is printed (give it to clients as --cacert).
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<String>,

    /// The private key of --cert (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<String>,

    /// Serve the files under this directory for paths that are not built-in routes.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,

    /// Close a connection silent for this long (QUIC's idle timeout).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub idle_timeout: String,

    /// The largest request head (its HEADERS frame), 256 to 1M.
    #[arg(long, default_value = "16k", value_name = "BYTES")]
    pub max_header_bytes: String,

    /// Refuse connections beyond this many open at a time.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Service time: wait this long before every response, e.g. 5ms.
    #[arg(long, value_name = "DURATION")]
    pub delay: Option<String>,

    /// Capacity: serve at most this many requests per second (e.g. 2000 or 2000/s); requests
    /// beyond it queue, first come first served.
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,
}

/// `wirebench demo`: the built-in study.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Measuring time of each run; every size and workload is run 3 times (the median is shown).
    #[arg(long, default_value = "500ms", value_name = "DURATION")]
    pub time_per_size: String,
}

// ---- wirebench diagnose (issue 11) ----

/// `wirebench diagnose URL [run flags]`: the run is the baseline; diagnose adds the variants.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  wirebench diagnose tcp://127.0.0.1:7000            # 3 s per step\n  wirebench diagnose tcp://127.0.0.1:7000 --mode stream -d 2s\n  wirebench diagnose http://127.0.0.1:8080/ --json\n\
Looks for: Nagle's algorithm meeting delayed ACK (a latency mode near 40 or 200 ms; TcpExt DelayedACKs; \
TCP_INFO; the client's TCP_NODELAY flipped and larger buffers), socket buffers capping a bulk transfer \
(--mode stream/source: the client's buffers swept, the knee named), a saturated generator, ephemeral port \
exhaustion (--mode crr), and the latency's shape (mean above p95, several modes, stalls in the per-second series).\n\
Exit codes: 0 diagnosed, 1 the baseline saw failures, 2 bad input.",
    mut_arg("urls", one_target),
    mut_arg("duration", |a| a.help("How long each step measures, e.g. 2s [default: 3s]")),
    mut_args(|a| hide(a, &["runs", "discard", "discard_first", "db", "no_save", "tags", "yes", "deadline",
        "shards", "launcher", "shard_dir"])),
    mut_arg("fail_if", |a| a.hide(true).value_parser(|_: &str| -> Result<String, NoFailIf> {
        Err(NoFailIf)
    })),
)]
pub struct DiagnoseArgs {
    /// The run to diagnose, as for `wirebench run`; -d/--duration is each step's measuring time
    /// [default: 3s]. --json prints a `wirebench.diagnosis/1` document (schema/diagnosis.v1.json).
    #[command(flatten)]
    pub run: RunArgs,
}

// ---- end wirebench diagnose ----

// ---- wirebench peak (issue 9, item 4) ----

/// Connections of each peak step unless -c says otherwise (wrk2's default).
pub const PEAK_CONNECTIONS: &str = "10";

/// `wirebench peak URL --slo 'p99<=50ms'`: the peak search. Each step is `wirebench run` with
/// the other flags and `--rate` set by the search.
#[derive(Debug, Args, serde::Serialize)]
#[command(
    after_help = "Example:\n  wirebench peak http://127.0.0.1:8080/ --slo 'p99<=50ms' -c 8 --step 5s\n\
Exit codes: 0 a peak was found and confirmed (a majority of 3 trials passed), 1 no peak confirmed, 2 bad input, \
3 a --fail-if threshold failed, 130 stopped by Ctrl-C.",
    mut_arg("urls", one_target),
    mut_args(|a| hide(a, &["duration", "requests", "rate", "stages", "bandwidth", "think",
        "runs", "discard", "discard_first", "yes", "deadline"]))
)]
pub struct PeakArgs {
    /// An objective every step must meet (repeatable): METRIC<=BOUND or METRIC<BOUND, with
    /// METRIC p50, p90, p95, p99, p999, mean or max (a latency, from each request's intended
    /// send time) or errors (a percent of all requests), e.g. 'p99<=50ms', 'errors<=0.1%'.
    #[arg(long = "slo", value_name = "OBJECTIVE", required = true)]
    pub slo: Vec<String>,

    /// How long each step offers its rate (its measuring time; --warmup comes first).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub step: String,

    /// The first rate offered, requests/s; doubled until a step fails, halved if it fails.
    #[arg(long, default_value = "100", value_name = "RATE")]
    pub start_rate: String,

    /// Never offer more than this many requests/s; a pass there ends the search.
    #[arg(long, default_value = "10000000", value_name = "RATE")]
    pub ceiling: String,

    /// Pause between steps, so a queue a failed step left at the target drains first.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub rest: String,

    /// The run each step repeats (target, workload, connections, --warmup, --json ...).
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunArgs,
}

/// Whether `--launcher` is its default, which a plan file leaves out (it needs `shards`).
fn is_local(launcher: &str) -> bool {
    launcher == "local"
}

/// Runs (a run, a sweep's points, a comparison's runs, a peak's steps) each run as N shards,
/// launched by the engine's own launcher and merged (issue 19, item 4).
#[derive(Debug, Args, Clone, serde::Serialize)]
pub struct FleetArgs {
    /// Run each run (a sweep's point, a compared run, a peak step) as this many shards, each
    /// its share of the rate, connections and requests, merged and judged on the merged
    /// figures: the load of many generators.
    #[arg(long, value_name = "N", help_heading = "Shards (many machines)")]
    pub shards: Option<u64>,

    /// How each step's shards start: `local` (N processes here) or a command that starts N
    /// copies of what follows it, e.g. 'srun --ntasks=8' or 'mpirun --hostfile h -np 8'.
    #[arg(
        long,
        default_value = "local",
        value_name = "local|CMD",
        requires = "shards",
        help_heading = "Shards (many machines)"
    )]
    #[serde(skip_serializing_if = "is_local")]
    pub launcher: String,

    /// Where each step's shard results go: shared by every node with srun or mpirun
    /// [default: a temporary directory, emptied after each step]
    #[arg(
        long,
        value_name = "DIR",
        requires = "shards",
        help_heading = "Shards (many machines)"
    )]
    pub shard_dir: Option<String>,
}

/// Flags `run` takes that this command does not (`ids`): out of its help (the command refuses
/// or has no use for them).
fn hide(a: clap::Arg, ids: &[&str]) -> clap::Arg {
    let out = ids.contains(&a.get_id().as_str());
    a.hide(out)
}

/// The target of a command that measures one.
fn one_target(a: clap::Arg) -> clap::Arg {
    a.num_args(1)
        .action(clap::ArgAction::Set)
        .help("The target, e.g. tcp://127.0.0.1:7000 or http://127.0.0.1:8080/")
}

// ---- results history (issue 10, items 1-3) ----

/// Saving a result to the history, and its pass/fail thresholds: on run, compare, peak, study.
#[derive(Debug, Args, Clone, Default, serde::Serialize)]
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
