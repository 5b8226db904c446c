//! Helpers shared by the integration tests: the built binary, servers on 127.0.0.1:0, bounded waits.
#![allow(dead_code)] // each test file uses a different part of this module

pub mod h2;
pub mod noise;
pub mod study;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The `wirebench` binary cargo built for these tests. Its results history (every run is
/// saved) goes to a directory of the tests' own under the temp dir, not the user's
/// ~/.local/share; tests about the history give their own --db.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wirebench"));
    c.env("XDG_DATA_HOME", data_home());
    c
}

/// The tests' own data directory (given to the binary as XDG_DATA_HOME), never the user's.
pub fn data_home() -> std::path::PathBuf {
    std::env::temp_dir().join("wirebench-tests-data")
}

/// `WRAPPER... wirebench`: the binary run through another program (`ip netns exec NS`), with
/// the same temp history as `bin()`. Every spawn of the binary in tests/ goes through `bin()`
/// or this, so no test writes into the user's ~/.local/share (tests/quick/isolation.rs checks it).
pub fn bin_via(wrapper: &[&str]) -> Command {
    let mut c = Command::new(wrapper[0]);
    c.args(&wrapper[1..])
        .arg(env!("CARGO_BIN_EXE_wirebench"))
        .env("XDG_DATA_HOME", data_home());
    c
}

/// A `wirebench serve tcp` child process, killed (by its PID) when dropped.
pub struct ServerProcess {
    pub child: Child,
    pub url: String,
}

impl ServerProcess {
    /// Starts `wirebench serve tcp ARGS` and reads the URL it prints first.
    pub fn start(args: &[&str]) -> ServerProcess {
        ServerProcess::start_with(bin(), args)
    }

    /// Starts `wirebench serve tcp ARGS` from `command` (the binary, or a wrapper of it such
    /// as `taskset -c 1 wirebench`) and reads the URL it prints first.
    pub fn start_with(mut command: Command, args: &[&str]) -> ServerProcess {
        let mut child = command
            .args(["serve", "tcp"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start wirebench serve tcp");
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .expect("read the server's first line");
        assert!(
            first.starts_with("tcp://127.0.0.1:"),
            "first line: {first:?}"
        );
        ServerProcess {
            child,
            url: first.trim().to_string(),
        }
    }

    /// Sends SIGKILL to the server process.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `wirebench ARGS` to completion, failing the test if it takes longer than `limit`.
pub fn run_bounded(args: &[&str], limit: Duration) -> (Output, Duration) {
    run_bounded_with(bin(), args, limit)
}

/// Runs `command ARGS` (the binary, or a wrapper of it) to completion, failing the test if it
/// takes longer than `limit`.
pub fn run_bounded_with(
    mut command: Command,
    args: &[&str],
    limit: Duration,
) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wirebench");
    // Read both pipes while it runs: a document over the pipe's 64 KiB would otherwise block
    // its writer until the limit (a 6-run comparison's JSON is that big).
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            if let Some(mut p) = pipe {
                let _ = std::io::Read::read_to_end(&mut p, &mut all);
            }
            all
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("wirebench {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    };
    (out, started.elapsed())
}

/// Runs `wirebench run ... --json -q` and parses the JSON result; returns it and the exit code.
pub fn run_json(args: &[&str], limit: Duration) -> (serde_json::Value, i32) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-q"]);
    let (out, _) = run_bounded(&all, limit);
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "wirebench {all:?} printed no JSON ({e}); stdout: {text}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (json, out.status.code().unwrap_or(-1))
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `wirebench serve KIND ARGS` with stdout and stderr piped, for tests that read its lines.
pub fn serve_process(kind: &str, args: &[&str]) -> Child {
    bin()
        .args(["serve", kind])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads the child's stdout lines on a thread, so each line can be awaited with a time limit.
pub fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The first line of a `wirebench serve` child, `SCHEME://127.0.0.1:PORT`, as an address; kills
/// the child and fails the test when it is not.
pub fn first_line_addr(
    child: &mut Child,
    lines: &mpsc::Receiver<String>,
    scheme: &str,
    limit: Duration,
) -> SocketAddr {
    let first = lines.recv_timeout(limit).expect("an address line");
    let addr = first
        .strip_prefix(&format!("{scheme}://127.0.0.1:"))
        .and_then(|p| p.parse::<u16>().ok())
        .map(|port| SocketAddr::from(([127, 0, 0, 1], port)));
    let Some(addr) = addr else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("first line is not {scheme}://127.0.0.1:PORT: {first}");
    };
    addr
}

/// `wirebench ARGS`' stdout; the run must exit 0 (its stderr is shown if it does not).
pub fn stdout_ok(args: &[&str], limit: Duration) -> String {
    let (out, _) = run_bounded(args, limit);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `wirebench ARGS`, which must fail as bad usage does: exit code 2 and one line on
/// stderr, `error: ...`. Returns what it printed.
pub fn usage_error(args: &[&str], limit: Duration) -> Output {
    let (out, _) = run_bounded(args, limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    no_debug_value(&format!("{args:?}"), &stderr);
    out
}

/// What a library's `Debug` prints (`Other(OtherError(…))`, `Os { code: … }`, `Some(…)`):
/// never for a user's eyes. Fails the test when `text` holds one.
pub fn no_debug_value(context: &str, text: &str) {
    for debug in [
        "Other(", "Error {", "Some(", "None)", "Os {", "Custom {", "kind: ",
    ] {
        assert!(
            !text.contains(debug),
            "{context}: a library's debug value ({debug}) reached the user: {text}"
        );
    }
    // A CamelCase name opening a parenthesis or a brace (`IpAddress(V4(…`, `DnsName("…")`).
    for word in text.split(|c: char| !c.is_alphanumeric() && c != '(' && c != '{') {
        let name = word.trim_end_matches(['(', '{']);
        let humps = name.chars().filter(char::is_ascii_uppercase).count();
        let camel = name.starts_with(|c: char| c.is_ascii_uppercase())
            && humps >= 2
            && name.chars().any(|c| c.is_ascii_lowercase());
        assert!(
            !(camel && word.len() > name.len()),
            "{context}: a library's debug value ({word}) reached the user: {text}"
        );
    }
}

/// Sends SIGTERM to the child.
pub fn sigterm(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own child's, not yet
    // reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
}

/// Stops a `wirebench serve` child with SIGTERM, checks that it exits successfully, and returns
/// the line it printed last (before `limit`), the final counters.
pub fn stop_with_sigterm(
    child: &mut Child,
    lines: &mpsc::Receiver<String>,
    limit: Duration,
) -> String {
    sigterm(child);
    let status = wait_exit(child, limit);
    assert!(status.success(), "{status:?}");
    lines.recv_timeout(limit).unwrap()
}

/// Waits for the child to exit, killing it (by its PID, via the handle) if it takes longer than
/// `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("wirebench did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls a server's live counters every `every` until `done` holds, failing the test after
/// `limit`.
pub fn wait_for_stats<S: std::fmt::Debug>(
    stats: impl Fn() -> S,
    done: impl Fn(&S) -> bool,
    every: Duration,
    limit: Duration,
) -> S {
    let start = Instant::now();
    loop {
        let s = stats();
        if done(&s) {
            return s;
        }
        assert!(start.elapsed() < limit, "counters never got there: {s:?}");
        std::thread::sleep(every);
    }
}

/// nginx with `DIR/nginx.conf` and `DIR` as its prefix, started by the test (its workers hold
/// none of the harness's output pipes); wait for it with [`listens`].
pub fn spawn_nginx(dir: &std::path::Path) -> Child {
    let d = dir.display();
    Command::new("nginx")
        .args(["-c", &format!("{d}/nginx.conf"), "-p", &format!("{d}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx must be installed (apt-get install nginx-light; .ci/run does it)")
}

/// Waits (≤ 5 s) until `child` itself listens on 127.0.0.1:`port`: a socket listening there
/// whose inode is among the child's descriptors. False if the child exits first (its bind
/// failed) or never does: then someone else owns the port, and a connect would reach them.
pub fn listens(child: &mut Child, port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        let inodes: Vec<String> = std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let local_port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
                (local_port == port && f.get(3) == Some(&"0A"))
                    .then(|| f.get(9).map(|i| i.to_string()))?
            })
            .collect();
        let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id()));
        let mine = fds.into_iter().flatten().flatten().any(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| {
                inodes
                    .iter()
                    .any(|i| t.to_string_lossy() == format!("socket:[{i}]"))
            })
        });
        if mine {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Tests of one file that measure capacity or timing on this small machine run one at a time
/// (cargo runs a file's tests in parallel), so they do not load each other's generator and
/// server.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The verdict of a `wirebench compare --json` document `doc` about `metric` (`p50_us`),
/// checked against its own interval: the estimate lies in it, and the verdict is significant
/// exactly when the whole interval lies beyond the metric's noise threshold.
pub fn json_verdict<'a>(doc: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    let v = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["metric"] == metric)
        .unwrap_or_else(|| panic!("no verdict on {metric}: {doc}"));
    let (lo, hi) = (
        v["low_pct"].as_f64().unwrap(),
        v["high_pct"].as_f64().unwrap(),
    );
    let d = v["difference_percent"].as_f64().unwrap();
    assert!(lo <= d && d <= hi, "the estimate lies in its interval: {v}");
    let thr = v["threshold_pct"].as_f64().unwrap();
    match v["inconclusive"].is_string() {
        // Withheld (a wide interval, too few rounds, a busy machine met unevenly): no call.
        true => assert_eq!(v["significant"], false, "{v}"),
        false => assert_eq!(v["significant"], lo > thr || hi < -thr, "{v}"),
    }
    v
}

/// The median of the host's CPU pressure over a sweep document's kept runs (None: not
/// measured), and checks that the document's `busy` line is there exactly when it is 50% or
/// more or the median steal 20% or more (issue 38), in the words the report uses; returns the
/// pressure's median.
pub fn busy_line_agrees(sweep: &serde_json::Value) -> Option<f64> {
    let median_of = |key: &str| {
        let mut v: Vec<f64> = sweep["points"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["discarded"] != true)
            .filter_map(|p| p["result"]["generator"][key].as_f64())
            .collect();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => None,
            n if n % 2 == 1 => Some(v[n / 2]),
            n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        }
    };
    let (median, steal) = (
        median_of("cpu_pressure_percent"),
        median_of("steal_percent"),
    );
    let runs = sweep["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["discarded"] != true)
        .filter(|p| p["result"]["generator"]["cpu_pressure_percent"].is_number())
        .count();
    // summary::busy: pressure 50% or steal 20% (medians), either one.
    let busy = median.is_some_and(|m| m >= 50.0) || steal.is_some_and(|s| s >= 20.0);
    match sweep["busy"].as_str() {
        Some(line) => {
            assert!(
                busy,
                "a busy line at a median pressure of {median:?}, steal {steal:?}: {line}"
            );
            let want = format!(
                "the machine was busy: CPU pressure {:.0}% (median of {runs} runs",
                median.unwrap(),
            );
            assert!(line.starts_with(&want), "{line} (expected {want})");
            if let Some(s) = steal.filter(|s| *s >= 1.0) {
                assert!(line.contains(&format!("steal {s:.0}%")), "{line}");
            }
            assert!(!line.contains('\n'), "one line: {line}");
        }
        None => assert!(
            !busy,
            "no busy line at a median pressure of {median:?}, steal {steal:?}"
        ),
    }
    median
}

/// `wirebench run ARGS --json`'s document and exit code, run in this process through the
/// library's entry point ([`wirebench::measure`], with a stop handle of its own) rather than
/// by the binary: for tests that check figures, not the command line. Fails after `limit`.
pub fn measure_json(args: &[&str], limit: Duration) -> (serde_json::Value, i32) {
    use clap::Parser;
    let argv: Vec<String> = ["wirebench", "run"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok(cli) = wirebench::cli::Cli::try_parse_from(&argv) else {
            panic!("bad arguments: {argv:?}")
        };
        let wirebench::cli::Command::Run(run) = cli.command else {
            unreachable!("the argument list names run")
        };
        let plan = wirebench::plan::Plan::try_from(&run).expect("a valid plan");
        let summary = wirebench::measure(&plan, &wirebench::Stop::new()).expect("a run");
        let _ = tx.send(summary);
    });
    let summary = rx
        .recv_timeout(limit)
        .unwrap_or_else(|e| panic!("wirebench run {args:?} in process: {e}"));
    let code = match wirebench::app::run::exit_code(&summary) == std::process::ExitCode::SUCCESS {
        true => 0,
        false => 1,
    };
    (
        serde_json::to_value(&summary).expect("a summary is JSON"),
        code,
    )
}

/// A result merged from `world` shards (issue 19): its `shards` section lists each rank, the
/// ranks' ok add up to the merge's, and their connections to `connections`. Its ok.
#[allow(dead_code)] // not every test file checks merged shards
pub fn merged_ok(r: &serde_json::Value, world: usize, connections: u64) -> u64 {
    let ranks = r["shards"]["ranks"].as_array().expect("a merged result");
    assert_eq!(ranks.len(), world, "{}", r["shards"]);
    let ok: u64 = ranks.iter().map(|s| s["ok"].as_u64().unwrap()).sum();
    assert_eq!(r["ok"].as_u64(), Some(ok));
    let conns: u64 = ranks
        .iter()
        .map(|s| s["share"]["connections"].as_u64().unwrap())
        .sum();
    assert_eq!(conns, connections);
    ok
}

/// What one command line run in this process ([`wirebench::app::execute`]) wrote to its
/// out and err writers, and its exit code (0-255, as the binary would exit).
#[allow(dead_code)] // not every test file runs commands in process
pub struct Executed {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// `wirebench ARGS` run in this process through [`wirebench::app::execute`] rather than by
/// the binary: for tests that check figures or documents, not the process (its signals, its
/// environment). A measuring command must say where its result goes (`--no-save` or `--db`),
/// since this process's XDG_DATA_HOME is the user's. Fails after `limit`.
#[allow(dead_code)] // not every test file runs commands in process
pub fn execute(args: &[&str], limit: Duration) -> Executed {
    let measuring = ["run", "compare", "peak", "study", "diagnose"];
    assert!(
        !args.first().is_some_and(|c| measuring.contains(c))
            || args.len() == 1
            || args
                .iter()
                .any(|a| ["--no-save", "--db", "--help"].contains(a)),
        "{args:?}: give --no-save or --db, or the history would be the user's"
    );
    let argv: Vec<String> = std::iter::once("wirebench")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = wirebench::app::execute(argv, &mut out, &mut err);
        let _ = tx.send((out, err, code));
    });
    let (out, err, code) = rx
        .recv_timeout(limit)
        .unwrap_or_else(|e| panic!("wirebench {args:?} in process: {e}"));
    let code = (0..=255u8)
        .find(|&n| std::process::ExitCode::from(n) == code)
        .map_or(-1, i32::from);
    Executed {
        stdout: String::from_utf8(out).expect("UTF-8 output"),
        stderr: String::from_utf8(err).expect("UTF-8 errors"),
        code,
    }
}

/// [`run_json`] in this process ([`execute`], `--no-save` added): `wirebench run ARGS --json
/// -q`'s document and exit code.
#[allow(dead_code)] // not every test file runs commands in process
pub fn execute_json(args: &[&str], limit: Duration) -> (serde_json::Value, i32) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-q", "--no-save"]);
    let done = execute(&all, limit);
    let json = serde_json::from_str(&done.stdout).unwrap_or_else(|e| {
        panic!(
            "wirebench {all:?} printed no JSON ({e}); stdout: {}; stderr: {}",
            done.stdout, done.stderr
        )
    });
    (json, done.code)
}

/// Panics unless `doc` validates against schema/`file` (e.g. `result.v1.json`).
pub fn assert_schema(file: &str, doc: &serde_json::Value) {
    let path = format!("{}/schema/{file}", env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Whether `text` holds a Markdown table row whose cells, trimmed, start with `cells` in order
/// (e.g. `["", "Run 1", "Run 2"]`), however wide a column is padded: a column grows with its
/// widest value, so `"| Run 1 | Run 2 |"` matches only when every value fits in five characters.
#[allow(dead_code)] // not every test file reads tables
pub fn has_row(text: &str, cells: &[&str]) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        if !line.starts_with('|') {
            return false;
        }
        let row = row_cells(line);
        row.len() >= cells.len() && row.iter().zip(cells).all(|(a, b)| a == b)
    })
}

/// The cells of one Markdown table row (`| a | b |`), trimmed, the empty ones kept.
#[allow(dead_code)] // not every test file reads tables
pub fn row_cells(line: &str) -> Vec<&str> {
    line.trim_matches('|').split('|').map(str::trim).collect()
}

/// Whether a peak search ended naming a busy machine (issue 38): exit 1, no confirmed peak,
/// and the one line saying so (its CPU pressure, or its own send lag, measured). Such a
/// search claims nothing of the target, so a test of the target's capacity has nothing to
/// check; it says so on stderr.
#[allow(dead_code)] // only the peak tests read it
pub fn machine_was_busy(doc: &serde_json::Value, code: Option<i32>) -> bool {
    let conclusion = doc["conclusion"].as_str().unwrap_or_default();
    if !conclusion.starts_with("the machine was busy: ") {
        return false;
    }
    assert_eq!(code, Some(1), "{conclusion}");
    assert_ne!(doc["peak"]["confirmed"], true, "{conclusion}");
    eprintln!("the machine was busy, nothing to check of the target: {conclusion}");
    true
}

/// Whether a run measured its own machine busy: over 10% CPU pressure (some task waiting for a
/// CPU) or steal in its `generator` section. Timing a test judges (a think time's cycle, a p99,
/// an open loop keeping up) is then the machine's, not the code's: such a test checks what
/// holds whatever the load and says on stderr that the timing was not judged.
pub fn busy(json: &serde_json::Value) -> bool {
    let g = &json["generator"];
    let pressure = g["cpu_pressure_percent"].as_f64().unwrap_or(100.0);
    let steal = g["steal_percent"].as_f64().unwrap_or(100.0);
    let busy = pressure > 10.0 || steal > 10.0;
    if busy {
        eprintln!(
            "busy machine (CPU pressure {pressure:.0}%, steal {steal:.0}%): timing not judged"
        );
    }
    busy
}

/// A reference TCP server in this test's process, in `mode`, on a free loopback port: its
/// handle (stopped when dropped) and its `tcp://` URL.
pub fn tcp_in_process(
    mode: wirebench::serve::Mode,
) -> (wirebench::serve::tcp::ServerHandle, String) {
    use wirebench::serve::tcp::{self, TcpServerOptions};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let options = TcpServerOptions {
        mode,
        ..TcpServerOptions::default()
    };
    let srv = tcp::spawn(listener, options).unwrap();
    let url = format!("tcp://{}", srv.addr);
    (srv, url)
}
