//! `serve … --delay D` (and HTTP's `/delay/D`) answers D after the request, not a timer tick
//! later: the reference servers run the real binary, the wirebench client measures them
//! (`run … --json`), and p50 and p99 must lie near D.
//!
//! tokio's millisecond timer gave, on an idle machine: 200 µs → p50 1.14 ms, 1 ms → p50 2.16 ms,
//! 5 ms → p50 6.25 ms and p99 8.4–10.6 ms. The median is the sharp check here: p50 within
//! [D, D + max(10%, 300 µs)], which that timer misses at every D. The p99 bound, 2·D + 10 ms, only
//! catches gross lateness: with two CPU hogs on a 2-core machine even a bare timerfd wakes its
//! thread up to 4 ms late at p99, and a 1 s run at 5 ms holds only ~190 requests. Other load
//! only ever adds latency, so a case that misses is measured again, up to [`ATTEMPTS`] times; a
//! server that is late by itself misses every time.

mod common;

use common::{first_line_addr, run_json, serve_process, stdout_lines, usage_error};
use std::process::Child;
use std::time::Duration;

/// The delays measured, in µs.
const DELAYS_US: [u64; 3] = [200, 1_000, 5_000];
/// Measurements of one case before it counts as failed.
const ATTEMPTS: usize = 3;

/// A `wirebench serve` child, killed by its PID when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start(kind: &str, args: &[&str]) -> Served {
        let mut child = serve_process(kind, args);
        let lines = stdout_lines(&mut child);
        let addr = first_line_addr(&mut child, &lines, kind, Duration::from_secs(10));
        Served {
            child,
            url: format!("{kind}://{addr}"),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One closed-loop connection for a second; returns p50 and p99 in µs, and whether the run
/// measured its machine busy (over 10% CPU pressure or steal).
fn measure(url: &str) -> (f64, f64, bool) {
    let args = [
        url,
        "-c",
        "1",
        "--threads",
        "1",
        "-d",
        "1s",
        "--warmup",
        "20",
    ];
    let (json, code) = run_json(&args, Duration::from_secs(20));
    assert_eq!(code, 0, "wirebench run {url}: {json}");
    assert_eq!(json["errors"]["total"], 0, "errors against {url}: {json}");
    let latency = &json["latency"];
    let p = |key: &str| {
        latency[key]
            .as_f64()
            .unwrap_or_else(|| panic!("no {key}: {json}"))
    };
    (p("p50_us"), p("p99_us"), common::busy(&json))
}

/// Whether p50 and p99 (µs) fit a delay of `d_us`. The p50 bound is the test of precision (the
/// old tokio-timer delay measured 6.28 ms at 5 ms); the p99 bound only catches a delay gone
/// wrong, generous because a busy 2-CPU machine (CI, compiles beside it) stalls the odd wake-up
/// for several ms (seen: p99 5.5 ms at 200 µs while p50 held at 245 µs). On a machine the run
/// measured busy (CPU pressure or steal over 10%: beside a CPU hog and builds, p99 12 ms at
/// 200 µs while p50 held at 239-268 µs) the p99 is the machine's, not the server's, and is not
/// judged; and the p50 is judged by what the delay added to the same server's p50 without one
/// (`base_p50`, measured beside it): at 25% steal every wake-up of the guest came late, and a
/// 200 µs delay measured p50 540-580 µs on CI while the server answered in ~300 µs without it.
fn fits(d_us: u64, p50: f64, p99: f64, busy: Option<f64>) -> bool {
    let d = d_us as f64;
    let slack = (0.1 * d).max(300.0);
    match busy {
        None => p50 >= d && p50 <= d + slack && p99 <= 2.0 * d + 10_000.0,
        Some(base_p50) => p50 >= d && p50 - base_p50 <= d + slack,
    }
}

/// The tests of this file measure one at a time: run side by side, their servers and clients
/// would share the two CPUs and measure each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Measures `url` until p50 and p99 fit `d_us`, at most [`ATTEMPTS`] times; on a busy machine,
/// beside `base_url`: the same server, or its twin, answering without the delay.
fn check(what: &str, url: &str, d_us: u64, base_url: &str) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = Vec::new();
    for _ in 0..ATTEMPTS {
        let (p50, p99, busy) = measure(url);
        let base = busy.then(|| measure(base_url).0);
        if fits(d_us, p50, p99, base) {
            return;
        }
        let busy = base.map_or(String::new(), |b| {
            format!(" (busy machine; {b:.0} µs without the delay)")
        });
        seen.push(format!("p50 {p50:.0} µs, p99 {p99:.0} µs{busy}"));
    }
    panic!(
        "{what} with a {d_us} µs delay: want p50 in [D, D + max(10%, 300 µs)] and p99 ≤ 2·D + 10 ms \
         (busy: p50 ≥ D and no more than D + max(10%, 300 µs) over the p50 without the delay); \
         measured {}",
        seen.join("; ")
    );
}

/// A fresh server per delay, started as `serve KIND ARGS --delay Dus`, beside its twin without
/// the delay.
fn check_flag(kind: &str, args: &[&str]) {
    let mut plain = vec!["--threads", "1"];
    plain.extend_from_slice(args);
    let twin = Served::start(kind, &plain);
    for d in DELAYS_US {
        let delay = format!("{d}us");
        let mut all = vec!["--threads", "1", "--delay", delay.as_str()];
        all.extend_from_slice(args);
        let server = Served::start(kind, &all);
        check(
            &format!("serve {kind} {}", all.join(" ")),
            &server.url,
            d,
            &twin.url,
        );
    }
}

#[test]
fn tcp_delay_is_exact() {
    check_flag("tcp", &[]);
}

#[test]
fn tcp_blocking_delay_is_exact() {
    check_flag("tcp", &["--blocking"]);
}

#[test]
fn http_delay_is_exact() {
    let twin = Served::start("http", &["--threads", "1"]);
    for d in DELAYS_US {
        let delay = format!("{d}us");
        let server = Served::start("http", &["--threads", "1", "--delay", &delay]);
        let url = format!("{}/status/200", server.url);
        let base = format!("{}/status/200", twin.url);
        check(&format!("serve http --delay {delay}"), &url, d, &base);
    }
}

#[test]
fn http_delay_route_is_exact() {
    let server = Served::start("http", &["--threads", "1"]);
    for d in DELAYS_US {
        let url = format!("{}/delay/{d}us", server.url);
        let base = format!("{}/status/200", server.url);
        check(&format!("GET /delay/{d}us"), &url, d, &base);
    }
}

#[test]
fn udp_delay_is_exact() {
    check_flag("udp", &[]);
}

#[test]
fn udp_blocking_delay_is_exact() {
    check_flag("udp", &["--blocking"]);
}

#[test]
fn tcp_realtime_delay_is_exact() {
    if may_run_fifo() {
        check_flag("tcp", &["--realtime"]);
        check_flag("tcp", &["--realtime", "--blocking"]);
    }
}

/// Whether this test runs as root, the one user allowed the CPU latency request and SCHED_FIFO.
fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this machine lets this test's user hold a CPU latency request, as the server
/// tries to: root, and a /dev/cpu_dma_latency to open (a container may have none).
fn may_hold_cpu_latency() -> bool {
    root()
        && std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .is_ok()
}

/// Whether this machine lets this test's user run a thread SCHED_FIFO, as `--realtime` does:
/// root, and a scheduler that grants it (a container's cgroup may give real-time threads no
/// CPU time). util-linux's chrt asks the same system call.
fn may_run_fifo() -> bool {
    root()
        && std::process::Command::new("chrt")
            .args(["-f", "10", "true"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Whether process `pid` has `/dev/cpu_dma_latency` open (a PM QoS request held).
fn holds_cpu_latency(pid: u32) -> bool {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the server's descriptors");
    fds.map_while(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target == std::path::Path::new("/dev/cpu_dma_latency"))
}

/// The scheduling policy of each thread of `pid` (0 SCHED_OTHER, 1 SCHED_FIFO): the 41st field
/// of /proc/PID/task/TID/stat, counted after the command name's closing parenthesis.
fn thread_policies(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads");
    tasks
        .map_while(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .map(|stat| {
            let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
            after.split(' ').nth(38).expect("policy").parse().unwrap()
        })
        .collect()
}

#[test]
fn a_delay_server_keeps_the_cpus_awake_as_root_and_only_with_a_delay() {
    for kind in ["tcp", "http", "udp"] {
        let delayed = Served::start(kind, &["--threads", "1", "--delay", "1ms"]);
        let plain = Served::start(kind, &["--threads", "1"]);
        assert_eq!(
            holds_cpu_latency(delayed.child.id()),
            may_hold_cpu_latency(),
            "serve {kind} --delay 1ms"
        );
        assert!(
            !holds_cpu_latency(plain.child.id()),
            "serve {kind} without --delay"
        );
    }
}

#[test]
fn realtime_runs_every_server_thread_under_sched_fifo_or_is_refused() {
    let args = ["tcp", "--threads", "2", "--realtime", "--delay", "1ms"];
    if !may_run_fifo() {
        let out = usage_error(
            &[&["serve"][..], &args[..]].concat(),
            Duration::from_secs(10),
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("--realtime"));
        return;
    }
    let server = Served::start(args[0], &args[1..]);
    let policies = thread_policies(server.child.id());
    assert!(
        policies.len() >= 3,
        "main and two server threads: {policies:?}"
    );
    assert!(
        policies.iter().all(|&p| p == 1),
        "SCHED_FIFO is 1: {policies:?}"
    );
    let plain = Served::start("tcp", &["--threads", "2", "--delay", "1ms"]);
    assert!(thread_policies(plain.child.id()).iter().all(|&p| p == 0));
}
