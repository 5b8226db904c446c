//! The fault suite (issue 16, deliver 4), a sample of the matrix protocol × load model × fault
//! (bench/faults.sh runs it whole): a `wirebench serve` child killed (SIGKILL) or frozen
//! (SIGSTOP) while a run measures it, or a target that never reads. Each run ends by its
//! deadline, counts its errors by kind, keeps what it measured before the fault, saves its row
//! in the history and exits 1.

use super::common;

use serde_json::Value;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Generous bound on a faulted run's wall time: its -d or --deadline is at most 2 s.
const LIMIT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Proto {
    Tcp,
    Udp,
    Http,
    /// h2c with prior knowledge (`--http2`): a never-reading target only (no server of ours).
    H2,
    /// DICOM C-ECHO: a never-reading target only.
    Dicom,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Load {
    Closed,
    Open,
    Crr,
    Stream,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// SIGKILL once the run has done some work.
    Killed,
    /// SIGSTOP once the run has done some work; SIGCONT and SIGKILL at the end.
    Frozen,
    /// A socket that is bound (and listens) but never reads, from the start.
    NeverReading,
}

/// One cell of the matrix: the run ends by `-d` unless `by_count`, where it is `-n` with a
/// `--deadline`; its errors include one of `kinds`.
struct Case {
    proto: Proto,
    load: Load,
    fault: Fault,
    by_count: bool,
    kinds: &'static [&'static str],
    /// `--timeout` and `-d`.
    timeout: &'static str,
    duration: &'static str,
}

/// What the run is pointed at: a `wirebench serve` child of this test, or our own socket.
enum Target {
    Server(Child),
    /// Listens, never accepts: the kernel completes handshakes and buffers, nobody reads.
    Tcp {
        _listener: TcpListener,
    },
    /// Bound, never read.
    Udp {
        _socket: UdpSocket,
    },
}

impl Target {
    /// The target of `case`, and its address.
    fn start(case: &Case) -> (Target, SocketAddr) {
        if case.fault == Fault::NeverReading {
            return match case.proto {
                Proto::Udp => {
                    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                    let addr = s.local_addr().unwrap();
                    (Target::Udp { _socket: s }, addr)
                }
                _ => {
                    let l = TcpListener::bind("127.0.0.1:0").unwrap();
                    let addr = l.local_addr().unwrap();
                    (Target::Tcp { _listener: l }, addr)
                }
            };
        }
        let kind = match case.proto {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Http => "http",
            Proto::H2 | Proto::Dicom => {
                unreachable!("{:?} is faulted by a silent socket only", case.proto)
            }
        };
        let sink = ["--mode", "sink"];
        let args: &[&str] = if case.load == Load::Stream {
            &sink
        } else {
            &[]
        };
        let mut child = common::serve_process(kind, args);
        let lines = common::stdout_lines(&mut child);
        let addr = common::first_line_addr(&mut child, &lines, kind, Duration::from_secs(5));
        (Target::Server(child), addr)
    }

    /// Sends `sig` to the server child (by its PID); nothing for our own sockets.
    fn signal(&self, sig: libc::c_int) {
        if let Target::Server(child) = self {
            let pid = libc::pid_t::try_from(child.id()).unwrap();
            // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own child's,
            // not yet reaped (it is reaped only on drop).
            assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        self.signal(libc::SIGKILL);
        if let Target::Server(child) = self {
            let _ = child.wait();
        }
    }
}

/// A temporary directory for the case's history, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("wb-faults-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn db(&self) -> String {
        self.0.join("history.db").to_str().unwrap().to_string()
    }

    /// `wirebench ARGS --json --db DB`, parsed; the command must succeed.
    fn json(&self, args: &[&str]) -> Value {
        let db = self.db();
        let all = [args, &["--json", "--db", &db]].concat();
        let (out, _) = common::run_bounded(&all, Duration::from_secs(20));
        assert!(out.status.success(), "{all:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `run` arguments of `case` against `addr`.
fn run_args(case: &Case, addr: SocketAddr) -> Vec<String> {
    let url = match case.proto {
        Proto::Tcp => format!("tcp://{addr}"),
        Proto::Udp => format!("udp://{addr}"),
        Proto::Http => format!("http://{addr}/bytes/100"),
        Proto::H2 => format!("http://{addr}/"),
        Proto::Dicom => format!("dicom://{addr}/STORESCP"),
    };
    let mut args = vec!["run".to_string(), url];
    let mut add = |a: &[&str]| args.extend(a.iter().map(|s| s.to_string()));
    if case.proto == Proto::H2 {
        add(&["--http2"]);
    }
    add(&["--timeout", case.timeout, "-q", "--json"]);
    match case.load {
        Load::Closed => {}
        Load::Open => add(&["--rate", "500"]),
        Load::Crr => add(&["--mode", "crr"]),
        Load::Stream => add(&["--mode", "stream"]),
    }
    if case.by_count {
        add(&["-n", "1000000", "--deadline", "1500ms"]);
    } else {
        add(&["-d", case.duration]);
    }
    args
}

/// Runs `case`: starts its target and the run, brings the fault, and checks how the run ended;
/// returns the document the run printed.
fn check(case: &Case) -> Value {
    let name = format!("{:?}-{:?}-{:?}", case.proto, case.load, case.fault);
    let dir = Dir::new(&name);
    let (target, addr) = Target::start(case);
    let args = run_args(case, addr);
    let started = Instant::now();
    let mut child = common::bin()
        .args(&args)
        .args(["--db", &dir.db()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let before = case.fault != Fault::NeverReading;
    if before {
        // A moment of work first (a fixed one: scanning /proc/net/tcp for the connection took
        // over a second on a busy machine, past the run's end).
        std::thread::sleep(Duration::from_millis(600));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{name}: ended before the fault"
        );
        match case.fault {
            Fault::Killed => target.signal(libc::SIGKILL),
            _ => target.signal(libc::SIGSTOP),
        }
    }
    let status = common::wait_exit(&mut child, LIMIT);
    let took = started.elapsed();
    drop(target); // a frozen server: SIGCONT, then SIGKILL
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{name}: {args:?}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < LIMIT, "{text}");
    assert_eq!(status.code(), Some(1), "{text}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    // Errors counted by kind, adding up to the total, one of them the fault's.
    let total = doc["errors"]["total"].as_u64().unwrap();
    let kinds = doc["errors"]["by_kind"].as_array().unwrap();
    let sum: u64 = kinds.iter().map(|k| k["count"].as_u64().unwrap()).sum();
    assert!(total > 0 && sum == total, "{text}");
    assert!(
        kinds
            .iter()
            .any(|k| case.kinds.contains(&k["kind"].as_str().unwrap())),
        "expected one of {:?}: {text}",
        case.kinds
    );
    // What was measured before the fault is kept.
    let ok = doc["ok"].as_u64().unwrap();
    assert_eq!(ok > 0, before, "{text}");
    // And saved: one row, the document as printed.
    let rows = dir.json(&["history"]);
    let rows = rows["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}: {text}");
    let saved = dir.json(&["show", "last"]);
    assert_eq!(saved["ok"], doc["ok"], "{text}");
    assert_eq!(saved["errors"]["total"], doc["errors"]["total"], "{text}");
    doc
}

/// A server that died: refused reconnects, reset or cut replies (UDP: ICMP refusals or none).
const DIED: &[&str] = &["refused", "reset", "short_reply", "timeout"];
/// A frozen or never-reading server: no answer within --timeout.
const SILENT: &[&str] = &["timeout"];
/// A stream to a sink that no longer counts.
const UNCOUNTED: &[&str] = &["no_receiver_count", "timeout"];

/// Runs each case, in order.
fn cases(cases: &[Case]) {
    for case in cases {
        check(case);
    }
}

/// Shorthand for a case.
fn case(proto: Proto, load: Load, fault: Fault, by_count: bool) -> Case {
    let kinds = match (fault, load) {
        (Fault::Killed, _) => DIED,
        (Fault::Frozen, Load::Stream) => UNCOUNTED,
        _ => SILENT,
    };
    Case {
        proto,
        load,
        fault,
        by_count,
        kinds,
        timeout: "300ms",
        duration: "2s",
    }
}

#[test]
fn tcp_runs_survive_a_killed_frozen_or_never_reading_target() {
    use {Fault::*, Load::*, Proto::Tcp};
    cases(&[
        case(Tcp, Closed, Killed, false),
        case(Tcp, Open, Frozen, false),
        case(Tcp, Crr, Killed, false),
        case(Tcp, Closed, NeverReading, true),
    ]);
}

/// A TCP stream whose sink is frozen mid-run: the sink's count never comes, which is an error
/// of the run (on main a run that ended before a write timed out exited 0, the bytes the
/// kernel buffered taken as sent and no error).
#[test]
fn a_tcp_stream_to_a_frozen_sink_fails_without_the_sinks_count() {
    check(&Case {
        kinds: &["no_receiver_count"],
        timeout: "2s",
        duration: "1s",
        ..case(Proto::Tcp, Load::Stream, Fault::Frozen, false)
    });
}

/// A stream whose connections fail (here: a target that never answers the preamble) counts
/// each failed connection once, by what happened to it (timeout); `no_receiver_count` is left
/// for connections that ended well without the sink's count. Main counted each twice
/// (`no_receiver_count=8,timeout=8`).
#[test]
fn a_failed_stream_connection_is_counted_once() {
    let doc = check(&Case {
        duration: "1s",
        ..case(Proto::Tcp, Load::Stream, Fault::NeverReading, false)
    });
    let kinds = doc["errors"]["by_kind"].as_array().unwrap();
    assert_eq!(kinds.len(), 1, "{doc}");
    assert_eq!(kinds[0]["kind"], "timeout", "{doc}");
    // Every failed connection is one error, and its receiver's count is still said missing.
    let failed = doc["errors"]["total"].as_u64().unwrap();
    assert_eq!(doc["throughput"]["receiver_unreported"], failed, "{doc}");
}

/// An HTTP/2 or DICOM target that takes connections and never answers the handshake (SETTINGS,
/// the association) is measured like a tcp one: the run lasts its duration, counts timeouts,
/// is saved, exits 1. Main ended in 0.3 s with one line and saved nothing, taking the first
/// connection's timeout for an unreachable target.
#[test]
fn h2_and_dicom_runs_against_a_never_reading_target_are_measured_and_saved() {
    use {Fault::NeverReading, Load::*, Proto::*};
    for (proto, load) in [(H2, Closed), (H2, Open), (Dicom, Closed)] {
        let started = Instant::now();
        check(&Case {
            duration: "1s",
            ..case(proto, load, NeverReading, false)
        });
        // It lasted its duration (or deadline): it did not end at the first timeout.
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{proto:?} {load:?}"
        );
    }
}

#[test]
fn udp_runs_survive_a_killed_frozen_or_never_reading_target() {
    use {Fault::*, Load::*, Proto::Udp};
    cases(&[
        case(Udp, Closed, Killed, false),
        case(Udp, Open, Frozen, false),
        case(Udp, Stream, Frozen, false),
        case(Udp, Closed, NeverReading, true),
    ]);
}

#[test]
fn http_runs_survive_a_killed_frozen_or_never_reading_target() {
    use {Fault::*, Load::*, Proto::Http};
    cases(&[
        case(Http, Closed, Frozen, true),
        case(Http, Crr, Killed, false),
        case(Http, Open, NeverReading, false),
    ]);
}

/// `wirebench ARGS --json -q --db DB` against a fresh silent socket (`udp`: bound, else
/// listening) at `{addr}` in ARGS: the document printed, the exit code, the wall time; the
/// history must hold one row, the document printed.
fn against_silent(dir: &Dir, udp: bool, args: &[&str]) -> (Value, Option<i32>, Duration) {
    let (_target, addr) = Target::start(&case(
        if udp { Proto::Udp } else { Proto::Tcp },
        Load::Closed,
        Fault::NeverReading,
        false,
    ));
    let addr = addr.to_string();
    let db = dir.db();
    let owned: Vec<String> = args.iter().map(|a| a.replace("{addr}", &addr)).collect();
    let mut all: Vec<&str> = owned.iter().map(String::as_str).collect();
    all.extend(["--json", "-q", "--db", &db]);
    let (out, took) = common::run_bounded(&all, Duration::from_secs(30));
    let text = format!("{all:?}: {out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    let rows = dir.json(&["history"]);
    assert_eq!(rows["runs"].as_array().unwrap().len(), 1, "{rows}: {text}");
    (doc, out.status.code(), took)
}

/// The commands of several runs against an h2 or DICOM target that never answers: the first
/// run (or step) is a result, recorded and saved, exit 1. Main exited 1 in 0.3 s and saved
/// nothing.
#[test]
fn a_sweep_and_a_peak_search_of_a_silent_h2_or_dicom_target_are_saved() {
    let dir = Dir::new("silent-sweep");
    let sweep = [
        "run",
        "http://{addr}/",
        "--http2",
        "-c",
        "1,2",
        "-d",
        "300ms",
        "--timeout",
        "200ms",
    ];
    let (doc, code, _) = against_silent(&dir, false, &sweep);
    assert_eq!(code, Some(1), "{doc}");
    let points = doc["points"].as_array().unwrap();
    assert!(!points.is_empty(), "{doc}");
    assert!(
        points[0]["result"]["errors"]["total"].as_u64().unwrap() > 0,
        "{doc}"
    );
    let dir = Dir::new("silent-peak");
    let peak = [
        "peak",
        "dicom://{addr}/STORESCP",
        "--slo",
        "p99<=50ms",
        "--step",
        "300ms",
        "--rest",
        "0s",
        "--timeout",
        "200ms",
    ];
    let (doc, code, _) = against_silent(&dir, false, &peak);
    assert_eq!(code, Some(1), "{doc}");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 1, "{doc}");
}

/// A peak search whose step got nothing back (every request timed out, not one byte came)
/// stops at that step and says the target did not answer, instead of bisecting down through
/// ever lower rates (main: 7 steps and 34 s against a silent UDP port). A step with some
/// replies that fails its objective still bisects (tests/peak.rs).
#[test]
fn a_peak_search_stops_at_a_step_that_got_no_reply() {
    let dir = Dir::new("silent-udp-peak");
    let peak = [
        "peak",
        "udp://{addr}",
        "--slo",
        "p99<=50ms",
        "--step",
        "300ms",
        "--rest",
        "0s",
        "--timeout",
        "200ms",
    ];
    let (doc, code, took) = against_silent(&dir, true, &peak);
    let said = &doc["conclusion"];
    assert_eq!(code, Some(1), "{said}");
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{said}");
    assert!(
        steps[0]["result"]["errors"]["total"].as_u64().unwrap() > 0,
        "{doc}"
    );
    let stopped = doc["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("never answered"), "{doc}");
    assert!(doc["peak"].is_null(), "{doc}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// `serve tcp --idle-timeout` closes a connection that stays idle in every mode: a source
/// whose client takes nothing, and sink and echo connections served `--blocking` (main kept
/// all three open for as long as the client held them, whatever the timeout).
#[test]
fn serve_tcp_closes_idle_connections_in_source_sink_and_blocking_modes() {
    use std::io::Write;
    use wirebench::serve::tcp::{spawn, TcpServerOptions};
    use wirebench::serve::Mode;
    for (mode, blocking) in [
        (Mode::Source, false),
        (Mode::Sink, true),
        (Mode::Echo, true),
    ] {
        let options = TcpServerOptions {
            mode,
            blocking,
            idle_timeout: Some(Duration::from_millis(300)),
            ..TcpServerOptions::default()
        };
        let server = spawn(TcpListener::bind("127.0.0.1:0").unwrap(), options).unwrap();
        let mut client = std::net::TcpStream::connect(server.addr).unwrap();
        if mode != Mode::Source {
            // A few plain bytes, then nothing (the client neither sends nor closes).
            client.write_all(b"hello").unwrap();
        }
        // The client holds its socket open and reads nothing; the server must close its end.
        let closed = common::wait_for_stats(
            || server.stats(),
            |s| s.connections == 1 && s.open == 0,
            Duration::from_millis(20),
            Duration::from_secs(3),
        );
        drop(client);
        assert_eq!(closed.connections, 1, "{mode:?} blocking {blocking}");
    }
}

/// A target gone for good ends a run by count (issue 38): `-n 300000 --timeout 1s -c 4`
/// against a server killed after 1 s still retried its connections at 60 s, 498 errors later.
/// Now, once every connection has failed for 10 s (the grace: --timeout, at least 10 s) with
/// nothing answered, it stops, keeps and saves what it measured, says why in one line and
/// exits 1: within 15 s of its start.
#[test]
fn a_run_by_count_ends_when_its_target_is_gone() {
    let dir = Dir::new("gone");
    let mut server = common::ServerProcess::start(&[]);
    let started = Instant::now();
    let mut child = common::bin()
        .args([
            "run",
            &server.url,
            "-n",
            "300000",
            "--timeout",
            "1s",
            "-c",
            "4",
        ])
        .args(["--json", "-q", "--db", &dir.db()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(child.try_wait().unwrap().is_none(), "ended before the kill");
    server.kill();
    let status = common::wait_exit(&mut child, Duration::from_secs(30));
    let took = started.elapsed();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let text = format!("{stdout}{stderr}");
    assert!(took < Duration::from_secs(15), "{took:?}: {text}");
    assert_eq!(status.code(), Some(1), "{text}");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    let why = doc["stopped"].as_str().unwrap_or_else(|| panic!("{doc}"));
    assert!(why.contains("the target stopped answering"), "{why}");
    assert_eq!(doc["notes"][0].as_str(), Some(why), "{doc}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("stopped answering"), "{stderr}");
    let ok = doc["ok"].as_u64().unwrap();
    assert!(ok > 0 && ok < 300_000, "{ok}");
    let saved = dir.json(&["show", "last"]);
    assert_eq!(saved["ok"], doc["ok"], "{text}");
    assert_eq!(saved["stopped"], doc["stopped"], "{text}");
}
