//! The validated plan of a run, built once from the command line; nothing downstream sees raw
//! flags. Each part has its file: the [`workload`] (each protocol builds its own part from its
//! flags, [`crate::driver::Protocol::build`]), the [`load`] model; the target's URL is parsed by
//! [`crate::driver::url`]; what concerns the run as a whole is checked here.

pub mod file;
pub mod link;
pub mod load;
pub mod shard;
pub mod workload;
pub mod write;

use crate::cli::{RunArgs, SocketArgs};
use crate::driver::target::Target;
use crate::driver::tls::TlsOptions;
use crate::driver::workload::{ClientMode, Workload};
use crate::error::{usage, usage_of, UsageError};
use crate::load::LoadModel;
use crate::sys::socket::SocketOptions;
use crate::units::{parse_duration, parse_message_size};
use std::time::Duration;

/// Measuring time when neither `--duration` nor `--requests` is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Where the load goes.
    pub target: Target,
    /// What one operation is.
    pub workload: Workload,
    /// When operations are issued.
    pub load: LoadModel,
    /// Concurrent connections.
    pub connections: usize,
    /// Worker threads (never more than connections).
    pub threads: usize,
    /// When the measured part of the run ends.
    pub stop: Stop,
    /// The warm-up before it, if any.
    pub warmup: Option<Warmup>,
    /// Per request (and per connect) time limit.
    pub timeout: Duration,
    /// The whole run's limit (warm-up included) when it counts requests; None when its
    /// duration bounds it.
    pub deadline: Option<Duration>,
    /// Client socket options.
    pub socket: SocketOptions,
    /// The open-loop schedule as the user wrote it, for reports.
    pub schedule_text: Option<String>,
    /// How to trust an `https://` target.
    pub tls: TlsOptions,
    /// The link's nominal rate to set the measured rates against (`--link`).
    pub link: Option<link::Link>,
    /// The seed of everything random in the run (`--seed`, or one drawn afresh).
    pub seed: u64,
    /// The page cache before the run (`--cache`): dropped when cold; None when not asked.
    pub cache: Option<Cache>,
    /// The typed arguments this plan was validated from, its seed written in: what the plan
    /// is as data ([`Plan::plan_file`], [`serde::Serialize`]), and what another machine
    /// validates again to get the same plan.
    pub args: Box<RunArgs>,
}

impl serde::Serialize for Plan {
    /// A plan serializes as its typed arguments (the plan file's `[run]` table and its
    /// target): the validated parts (driver specs, schedules) are rebuilt from them by the one
    /// validation, so a plan read back is checked as the command line's is.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.args.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Plan {
    /// A plan reads back from its typed arguments, validated again as the command line's are
    /// (the seed is among them, so the plan read back draws what the first one drew).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Plan, D::Error> {
        let args = RunArgs::deserialize(d)?;
        Plan::try_from(&args).map_err(serde::de::Error::custom)
    }
}

impl Plan {
    /// The plan written as a plan file (`command = "run"`, its target, its flags under
    /// `[run]`), which `wirebench study` and [`crate::app::study::read::plan_from_text`] read
    /// back into the same plan.
    pub fn plan_file(&self, title: Option<&str>) -> Result<String, write::WriteError> {
        write::plan_file(title, "run", &*self.args)
    }
}

impl Plan {
    /// Whether the run draws random numbers (template keys, Poisson arrivals, think times),
    /// so that its seed is worth recording.
    pub fn is_random(&self) -> bool {
        self.workload.is_random()
            || self.load.schedule().is_some_and(|s| s.is_random())
            || self.load.thinking().is_some_and(|t| t.exp_seed.is_some())
    }

    /// What the run's operations are, as the summary reads them (the drivers fill it).
    pub fn exchange(&self) -> crate::record::exchange::Exchange {
        self.workload.exchange(&self.target)
    }
}

/// When the measured part ends: after a duration, a request count, or whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Measuring time.
    pub duration: Option<Duration>,
    /// Requests in all, over every connection.
    pub requests: Option<u64>,
}

/// A warm-up, kept out of the statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// For this long.
    Duration(Duration),
    /// For this many requests in all.
    Count(u64),
    /// Until the run is in steady state (`--warmup auto`), for at most this long.
    Auto(Duration),
}

impl TryFrom<&SocketArgs> for SocketOptions {
    type Error = UsageError;

    fn try_from(a: &SocketArgs) -> Result<Self, UsageError> {
        let buf = |flag: &'static str, v: &Option<String>| -> Result<Option<usize>, UsageError> {
            v.as_deref()
                .map(|t| parse_message_size(flag, t).map_err(|e| UsageError::flag(flag, e)))
                .transpose()
        };
        Ok(SocketOptions {
            nodelay: !a.no_nodelay,
            sndbuf: buf("--sndbuf", &a.sndbuf)?,
            rcvbuf: buf("--rcvbuf", &a.rcvbuf)?,
        })
    }
}

/// Parses a duration flag into a usage error naming the flag.
pub fn duration_flag(flag: &'static str, text: &str) -> Result<Duration, UsageError> {
    parse_duration(text).map_err(|e| UsageError::flag(flag, format!("{flag}: {e}")))
}

impl TryFrom<&RunArgs> for Plan {
    type Error = UsageError;

    fn try_from(a: &RunArgs) -> Result<Plan, UsageError> {
        let [url] = a.urls.as_slice() else {
            return usage("a plan measures one target: run several through `wirebench run A B` (the sweep), not Plan::try_from");
        };
        // Every error of the URL is about the target, so a plan file's points at it.
        let target =
            crate::driver::url::parse_target(url).map_err(|e| UsageError::target(url, e.0))?;
        let seed = a.seed.unwrap_or_else(crate::random::fresh_seed);
        let (workload, tls) = workload::of(a, &target, seed)?;
        let connections = connections_of(a)?;
        check_concurrency(a, workload.mode)?;
        let think = a.think.as_deref().map(|t| think_of(t, seed)).transpose()?;
        if think.is_some() && workload.mode.bulk() {
            return usage_of(
                &["--think"],
                "--think applies to request/response modes (rr, crr), not to bulk transfer",
            );
        }
        let duration = measured_duration(a, workload.mode)?;
        let unit = workload.request.len();
        let pacing = crate::driver::pacing(target.scheme.name, workload.mode);
        let (load, schedule_text) = load::model(a, pacing, unit, think, seed)?;
        // Without -d or -n a run lasts as long as its schedule (a ramp, stages), else 10 s.
        let natural = load.schedule().and_then(|s| s.length());
        let stop = Stop {
            duration: duration
                .or_else(|| (a.requests.is_none()).then_some(natural.unwrap_or(DEFAULT_DURATION))),
            requests: a.requests,
        };
        let timeout = duration_flag("--timeout", &a.timeout)?;
        if timeout.is_zero() {
            return usage_of(
                &["--timeout"],
                "--timeout 0 would fail every request: give a limit such as 2s",
            );
        }
        let warmup = load::warmup_of(a, workload.mode)?;
        let deadline = load::deadline_of(a, &load, stop, warmup, timeout, connections)?;
        let link = a
            .link
            .as_deref()
            .map(|t| link::of(t, &target))
            .transpose()?;
        Ok(Plan {
            link,
            target,
            workload,
            load,
            connections,
            threads: threads(a, connections)?,
            stop,
            warmup,
            timeout,
            deadline,
            socket: SocketOptions::try_from(&a.socket)?,
            tls,
            schedule_text,
            seed,
            cache: cache_of(a)?,
            args: Box::new(RunArgs {
                seed: Some(seed),
                ..a.clone()
            }),
        })
    }
}

/// The page cache's state before a run (`--cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// As the machine left it.
    Warm,
    /// Dropped before the run.
    Cold,
}

impl Cache {
    /// The flag's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Cache::Warm => "warm",
            Cache::Cold => "cold",
        }
    }
}

/// `--cache`: cold needs root, to drop the page cache before each run.
fn cache_of(a: &RunArgs) -> Result<Option<Cache>, UsageError> {
    use crate::cli::CacheState;
    if a.cache == Some(CacheState::Cold) && !crate::sys::cgroup::is_root() {
        return usage_of(&["--cache"], "--cache cold drops the page cache (/proc/sys/vm/drop_caches), which needs root: run as root, or leave --cache out (warm)");
    }
    Ok(a.cache.map(|c| match c {
        CacheState::Warm => Cache::Warm,
        CacheState::Cold => Cache::Cold,
    }))
}

/// The stream of the run's seed that exponential think times are drawn from.
const THINK_STREAM: u64 = 0x0074_6869_6e6b;

/// `--think 10ms` (every pause) or `--think exp:10ms` (exponential pauses of that mean).
fn think_of(text: &str, seed: u64) -> Result<crate::load::Think, UsageError> {
    let (exp, t) = match text.trim().split_once(':') {
        Some(("exp", t)) => (true, t),
        Some((law, _)) => {
            return usage_of(&["--think"], format!(
                "--think '{text}': '{law}' is not a think-time law: give a pause (10ms) or exp:MEAN (exp:10ms)"
            ))
        }
        None => (false, text),
    };
    Ok(crate::load::Think {
        mean: duration_flag("--think", t)?,
        exp_seed: exp.then(|| crate::random::mix(seed, THINK_STREAM)),
    })
}

/// Parses a whole-number flag (`--connections`, `--pipeline`); a list there is a sweep, which
/// `wirebench run` expands before a plan is made.
fn count_flag(flag: &'static str, text: &str) -> Result<usize, UsageError> {
    text.trim().parse().map_err(|_| {
        UsageError::flag(flag, format!(
            "{flag} '{text}' is not a whole number: give e.g. {flag} 4 (or a sweep, {flag} 1,10,100)"
        ))
    })
}

/// `--connections`, parsed.
fn connections_of(a: &RunArgs) -> Result<usize, UsageError> {
    count_flag("--connections", &a.connections)
}

/// The most requests in flight on one connection (`--pipeline`): each holds a few hundred
/// bytes of state, and `--pipeline 1e9` tried to allocate 5 GB before this ceiling.
pub const MAX_PIPELINE: usize = 65_536;
/// The most requests in flight over all connections (`-c` x `--pipeline`).
pub const MAX_IN_FLIGHT: usize = 1 << 22;

/// `--pipeline`, parsed, if given; at most [`MAX_PIPELINE`].
pub(crate) fn pipeline_of(a: &RunArgs) -> Result<Option<usize>, UsageError> {
    let Some(text) = a.pipeline.as_deref() else {
        return Ok(None);
    };
    match count_flag("--pipeline", text)? {
        n if n > MAX_PIPELINE => usage_of(
            &["--pipeline"],
            format!("--pipeline {text} is over the ceiling of {MAX_PIPELINE} requests in flight per connection: give fewer, or more connections (-c)"),
        ),
        n => Ok(Some(n)),
    }
}

/// Connections and requests in flight: at least one each, and several in flight only in rr.
fn check_concurrency(a: &RunArgs, mode: ClientMode) -> Result<(), UsageError> {
    if connections_of(a)? == 0 {
        return usage_of(
            &["--connections"],
            "--connections 0: give at least one connection, e.g. -c 1",
        );
    }
    let pipeline = pipeline_of(a)?;
    let total = connections_of(a)?.saturating_mul(pipeline.unwrap_or(1));
    if total > MAX_IN_FLIGHT {
        return usage_of(
            &["--connections", "--pipeline"],
            format!("-c x --pipeline is {total} requests in flight, over the ceiling of {MAX_IN_FLIGHT}: give fewer"),
        );
    }
    if pipeline == Some(0) {
        return usage_of(
            &["--pipeline"],
            "--pipeline 0: give at least one request in flight, e.g. --pipeline 1",
        );
    }
    if pipeline.is_some_and(|p| p > 1) && mode != ClientMode::Rr {
        return usage_of(
            &["--pipeline", "--mode"],
            format!(
                "--pipeline applies to --mode rr only, not --mode {}",
                mode.name()
            ),
        );
    }
    Ok(())
}

/// `--duration`, if given; neither it nor `--requests` may be zero, and a request count needs
/// request/response.
fn measured_duration(a: &RunArgs, mode: ClientMode) -> Result<Option<Duration>, UsageError> {
    let duration = a
        .duration
        .as_deref()
        .map(|t| duration_flag("--duration", t))
        .transpose()?;
    if duration == Some(Duration::ZERO) {
        return usage_of(
            &["--duration"],
            "--duration 0 measures nothing: give a duration such as 10s",
        );
    }
    if a.requests == Some(0) {
        return usage_of(
            &["--requests"],
            "--requests 0 measures nothing: give a count such as -n 1000",
        );
    }
    if a.requests.is_some() && mode.bulk() {
        return usage_of(&["--requests", "--duration", "--mode"], "--requests counts request/response operations: use --duration with --mode stream or source");
    }
    Ok(duration)
}

/// Worker threads: `--threads`, else one per CPU; never more than connections.
fn threads(a: &RunArgs, connections: usize) -> Result<usize, UsageError> {
    let n = match a.threads {
        Some(0) => return usage_of(&["--threads"], "--threads 0: give at least one thread"),
        Some(n) => n,
        None => cpus(),
    };
    Ok(n.min(connections))
}

/// The CPUs this process may use, asked once: each ask reads the cgroup's files (three opens),
/// and a study of 10,000 targets validates 10,000 plans.
fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::driver::workload::{Reply, Request, DEFAULT_SIZE};
    use crate::wire::framing::Preamble;
    use clap::Parser;

    fn plan(args: &[&str]) -> Result<Plan, UsageError> {
        let mut argv = vec!["wirebench", "run"];
        argv.extend_from_slice(args);
        let Command::Run(run) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        Plan::try_from(&run)
    }

    #[test]
    fn a_run_by_count_has_a_deadline() {
        let secs = |args: &[&str]| plan(args).unwrap().deadline.map(|d| d.as_secs_f64());
        let url = "tcp://127.0.0.1:9";
        // Bounded by time alone: none needed.
        assert_eq!(secs(&[url]), None);
        // 10 requests on one connection, each its connect and reply within 2 s, and 1 s to start.
        assert_eq!(secs(&[url, "-n", "10"]), Some(41.0));
        assert_eq!(
            secs(&[url, "-n", "10", "-c", "5", "--timeout", "1s"]),
            Some(5.0)
        );
        // A warm-up count is owed too; a warm-up time comes first.
        assert_eq!(secs(&[url, "-n", "10", "--warmup", "10"]), Some(81.0));
        assert_eq!(secs(&[url, "-n", "10", "--warmup", "2s"]), Some(43.0));
        // At most k6's 10 minutes, unless an open loop's timetable is longer.
        assert_eq!(secs(&[url, "-n", "300000", "--timeout", "1s"]), Some(601.0));
        assert_eq!(secs(&[url, "-n", "2001", "--rate", "1"]), Some(2003.0));
        assert_eq!(secs(&[url, "-n", "5", "--deadline", "3s"]), Some(3.0));
        assert!(plan(&[url, "-n", "5", "--deadline", "0"]).is_err());
        assert!(plan(&[url, "-d", "5s", "--deadline", "3s"]).is_err());
        assert_eq!(
            secs(&[url, "--warmup", "10", "--deadline", "3s"]),
            Some(3.0)
        );
    }

    #[test]
    fn defaults() {
        let p = plan(&["tcp://127.0.0.1:9"]).unwrap();
        assert_eq!(p.stop.duration, Some(DEFAULT_DURATION));
        assert_eq!(p.workload.reply, Reply::Size(DEFAULT_SIZE));
        assert_eq!(
            p.workload.preamble(),
            Some(Preamble::Exchange {
                request: 64,
                reply: 64
            })
        );
        assert!(p.socket.nodelay);
        assert_eq!(p.threads, 1);
    }

    #[test]
    fn rejects_bad_input() {
        for args in [
            &["udpx://127.0.0.1:9"][..],
            &["tcp://127.0.0.1"],
            &["tcp://no-such-host.invalid:9"],
            &["tcp://127.0.0.1:9", "--size", "0"],
            &["tcp://127.0.0.1:9", "--size", "2G"],
            &["tcp://127.0.0.1:9", "-d", "ten"],
            &["tcp://127.0.0.1:9", "--mode", "stream", "--pipeline", "2"],
            &["tcp://127.0.0.1:9", "--size", "8", "--until", "\\n"],
            &["tcp://127.0.0.1:9", "--payload", "@/no/such/file"],
            &["tcp://127.0.0.1:9", "--link", "fast"],
            &["tcp://127.0.0.1:9", "--link", "0"],
            &["tcp://127.0.0.1:9", "--link", "100"],
        ] {
            let err = plan(args).expect_err(&format!("{args:?}"));
            assert!(!err.0.contains('\n'), "one line: {}", err.0);
        }
    }

    #[test]
    fn each_port_fault_has_its_own_message() {
        let message = |url: &str| plan(&[url]).expect_err(url).0;
        for url in [
            "tcp://127.0.0.1:99999",
            "udp://127.0.0.1:65536",
            "tcp://127.0.0.1:0",
        ] {
            let e = message(url);
            assert!(
                e.contains("out of range") && e.contains("1 to 65535"),
                "{e}"
            );
            assert!(!e.contains("lacks"), "{e}");
        }
        for url in ["tcp://127.0.0.1", "tcp://127.0.0.1:", "tcp://[::1]"] {
            assert!(message(url).contains("lacks a port"), "{url}");
        }
        assert!(message("tcp://127.0.0.1:http").contains("not a number"));
        assert!(plan(&["tcp://127.0.0.1:65535"]).is_ok());
        assert!(plan(&["tcp://[::1]:7000"]).is_ok());
    }

    #[test]
    fn payload_and_until() {
        let p = plan(&[
            "tcp://127.0.0.1:9",
            "--payload",
            "get k\\r\\n",
            "--until",
            "END\\r\\n",
        ])
        .unwrap();
        assert!(matches!(&p.workload.request, Request::Payload(b) if b == b"get k\r\n"));
        assert_eq!(p.workload.reply, Reply::Until(b"END\r\n".to_vec()));
        assert_eq!(p.workload.preamble(), None);
    }

    #[test]
    fn open_loop_schedules() {
        let p = plan(&["tcp://127.0.0.1:9", "--rate", "20000"]).unwrap();
        assert!(p.load.schedule().is_some());
        assert_eq!(p.stop.duration, Some(DEFAULT_DURATION));
        let p = plan(&["tcp://127.0.0.1:9", "--stages", "1s@10,2s@20"]).unwrap();
        assert_eq!(p.stop.duration, Some(Duration::from_secs(3)));
        let p = plan(&["tcp://127.0.0.1:9", "--rate", "1..10/5s", "-d", "2s"]).unwrap();
        assert_eq!(p.stop.duration, Some(Duration::from_secs(2)));
        for bad in [
            &["tcp://127.0.0.1:9", "--rate", "0"][..],
            &["tcp://127.0.0.1:9", "--rate", "-5"],
            &["tcp://127.0.0.1:9", "--rate", "500..100/1s"],
            &["tcp://127.0.0.1:9", "--stages", "1s@"],
            &["tcp://127.0.0.1:9", "--rate", "10", "--mode", "stream"],
        ] {
            assert!(plan(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_targets_protocol_paces_an_open_loop_and_owns_the_tls_flags() {
        let in_flight = |args: &[&str]| plan(args).unwrap().load.in_flight();
        assert_eq!(in_flight(&["tcp://127.0.0.1:9", "--rate", "100"]), 1);
        assert_eq!(in_flight(&["http://127.0.0.1:9/", "--rate", "100"]), 1);
        let udp = in_flight(&["udp://127.0.0.1:9", "--rate", "100"]);
        assert_eq!(udp, crate::load::UNLIMITED);
        // A UDP stream is paced by bit rate: iperf3's 1 Mbit/s, or -b's, over the datagram.
        let rate = |args: &[&str]| match plan(args).unwrap().load.schedule() {
            Some(crate::load::Schedule::Constant { rate }) => *rate,
            other => panic!("{args:?}: {other:?}"),
        };
        let udp = ["udp://127.0.0.1:9", "--mode", "stream", "--size", "1000"];
        assert_eq!(rate(&udp), 125.0);
        assert_eq!(rate(&[&udp[..], &["-b", "8Mbit"]].concat()), 1000.0);
        let tcp = ["tcp://127.0.0.1:9", "--mode", "stream", "-b", "8Mbit"];
        assert!(plan(&tcp)
            .unwrap_err()
            .to_string()
            .contains("paces a UDP stream"));
        // The TLS flags: on https:// they set how the server is trusted, elsewhere refused.
        let p = plan(&["https://127.0.0.1:9/", "--insecure", "--no-tls-resume"]).unwrap();
        assert!(p.tls.insecure && p.tls.no_resume && p.tls.cacert.is_none());
        assert_eq!(
            plan(&["https://127.0.0.1:9/"]).unwrap().tls,
            TlsOptions::default()
        );
        for url in ["http://127.0.0.1:9/", "tcp://127.0.0.1:9"] {
            let e = plan(&[url, "--insecure"]).unwrap_err().to_string();
            assert!(e.contains("apply to https:// targets"), "{url}: {e}");
        }
    }

    #[test]
    fn link_rate_or_auto() {
        let p = plan(&["tcp://127.0.0.1:9", "--link", "100Mbit"]).unwrap();
        assert_eq!(p.link.unwrap().bits_per_s, Some(100e6));
        let p = plan(&["tcp://127.0.0.1:9", "--link", "auto"]).unwrap();
        let link = p.link.unwrap();
        assert_eq!(link.bits_per_s, None);
        assert!(link.source.contains("loopback"), "{}", link.source);
        assert!(plan(&["tcp://127.0.0.1:9"]).unwrap().link.is_none());
    }

    #[test]
    fn warmup_by_count_or_duration() {
        let p = plan(&["tcp://127.0.0.1:9", "--warmup", "1000"]).unwrap();
        assert_eq!(p.warmup, Some(Warmup::Count(1000)));
        let p = plan(&["tcp://127.0.0.1:9", "--warmup", "2s"]).unwrap();
        assert_eq!(p.warmup, Some(Warmup::Duration(Duration::from_secs(2))));
    }
}
