//! `wirebench run URL`: the load generator's flags, which compare, peak, diagnose and a plan
//! file's `[run]` table take too, and the values they name (modes, arrivals, `--runs`).

use clap::{Args, ValueEnum};

use super::history::KeepArgs;
use super::shards::{FleetArgs, ShardArgs};
use super::socket::SocketArgs;

/// `wirebench run URL`: the load generator.
#[derive(Debug, Args, Clone, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// What each client connection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced: request i when the rate's integral reaches i.
    Fixed,
    /// A Poisson process: exponential gaps at the same rate, seeded.
    Poisson,
}

/// The page cache's state before a run (`--cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheState {
    /// As the machine left it.
    Warm,
    /// Dropped before each run (root).
    Cold,
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

impl<'de> serde::Deserialize<'de> for Runs {
    /// As [`Runs`] serializes: a count, or `auto`.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Runs, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Given {
            Count(usize),
            Word(String),
        }
        match Given::deserialize(d)? {
            Given::Count(n) => Ok(Runs::Count(n)),
            Given::Word(w) => w.parse().map_err(serde::de::Error::custom),
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
