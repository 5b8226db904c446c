//! Flags of the tools our users come from (issue 15, items 12-13): a clash with iperf3's, oha's
//! or hey's meaning gets a line naming what the user meant, harmless aliases work, and each
//! command's help lists only the flags it takes.

use super::common;

use common::{run_json, usage_error};
use std::time::Duration;
use wirebench::serve::udp::{self, UdpServerOptions};

const LIMIT: Duration = Duration::from_secs(30);

fn stderr(args: &[&str]) -> String {
    String::from_utf8_lossy(&usage_error(args, LIMIT).stderr).into_owned()
}

/// oha's and hey's `-q 1000` is a rate; ours is --quiet, so 1000 was taken for a URL.
#[test]
fn q_with_a_number_suggests_rate() {
    let e = stderr(&["run", "tcp://127.0.0.1:9", "-q", "1000"]);
    assert!(e.contains("did you mean --rate 1000?"), "{e}");
    let e = stderr(&[
        "peak",
        "http://127.0.0.1:9/",
        "--slo",
        "p99<=5ms",
        "-q",
        "200",
    ]);
    assert!(e.contains("did you mean --rate 200?"), "{e}");
}

/// iperf3's `-t 10s` is a time; ours is --threads.
#[test]
fn t_with_a_time_suggests_duration() {
    let e = stderr(&["run", "tcp://127.0.0.1:9", "-t", "10s"]);
    assert!(e.contains("did you mean -d 10s"), "{e}");
}

/// `-z` (oha, hey) is the duration, `-b` (iperf3) the bandwidth of a UDP stream.
#[test]
fn z_and_b_are_aliases() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let options = UdpServerOptions {
        mode: wirebench::serve::Mode::Sink,
        ..UdpServerOptions::default()
    };
    let srv = udp::spawn(socket, options).unwrap();
    let url = format!("udp://{}", srv.addr);
    let args = [&url, "--mode", "stream", "-b", "8Mbit", "--size", "1000"];
    let (json, code) = run_json(&[&args[..], &["-z", "500ms", "--no-save"]].concat(), LIMIT);
    srv.stop();
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["config"]["duration_s"].as_f64(), Some(0.5), "{json}");
    // 8 Mbit/s of 1000-byte datagrams is 1000 a second: 500 in half a second.
    let sent = json["datagrams"]["sent"].as_u64().unwrap();
    assert!((450..=550).contains(&sent), "{}", json["datagrams"]);
}

/// `wirebench CMD --help`.
fn help(cmd: &[&str]) -> String {
    let (out, _) = common::run_bounded(&[cmd, &["--help"]].concat(), LIMIT);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `help` has an entry for `flag` (not a mention of it in another's text).
fn lists(help: &str, flag: &str) -> bool {
    help.lines().any(|l| {
        let l = l.trim_start();
        let l = l
            .split_once(", ")
            .filter(|(s, _)| s.len() == 2)
            .map_or(l, |(_, long)| long);
        l == flag || l.starts_with(&format!("{flag} "))
    })
}

/// peak and diagnose list none of run's flags they refuse or ignore.
#[test]
fn help_lists_only_the_flags_a_command_takes() {
    let peak = help(&["peak"]);
    for flag in [
        "--rate",
        "--think",
        "--runs",
        "--stages",
        "--duration",
        "<URL>...",
    ] {
        assert!(!lists(&peak, flag), "peak --help lists {flag}:\n{peak}");
    }
    assert!(
        lists(&peak, "--start-rate") && lists(&peak, "--fail-if"),
        "{peak}"
    );
    let diagnose = help(&["diagnose"]);
    for flag in ["--runs", "--fail-if", "--no-save", "<URL>..."] {
        assert!(
            !lists(&diagnose, flag),
            "diagnose --help lists {flag}:\n{diagnose}"
        );
    }
    assert!(diagnose.contains("[default: 3s]"), "{diagnose}");
    assert!(!diagnose.contains("[default: 10s"), "{diagnose}");
    let compare = help(&["compare"]);
    assert!(compare.contains("two or more"), "{compare}");
}

/// diagnose judges nothing: a threshold is refused, not ignored.
#[test]
fn diagnose_refuses_fail_if() {
    let e = stderr(&["diagnose", "tcp://127.0.0.1:9", "--fail-if", "p99>1ms"]);
    assert!(e.contains("diagnose has no pass or fail"), "{e}");
}

/// Every exit code a run can end with is listed.
#[test]
fn run_help_lists_every_exit_code() {
    let run = help(&["run"]);
    for code in ["3 a --fail-if threshold failed", "130 stopped by Ctrl-C"] {
        assert!(run.contains(code), "{run}");
    }
}

/// `serve tcp --blocking` serves each connection on a thread of its own, and says so.
#[test]
fn blocking_server_says_a_thread_per_connection() {
    let mut child = common::serve_process("tcp", &["--blocking", "-t", "2"]);
    let lines = common::stdout_lines(&mut child);
    let _ = lines.recv_timeout(LIMIT).unwrap();
    let second = lines.recv_timeout(LIMIT).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(second.contains("a thread per connection"), "{second}");
    assert!(!second.contains("2 threads"), "{second}");
}

/// Every flag that sizes memory has a ceiling checked before the run: `--pipeline 1e9` tried
/// to allocate 5 GB, `--pipeline 1e7` took 1.9 GB for a 1 s run.
#[test]
fn pipeline_has_a_ceiling() {
    for p in ["1000000000", "10000000", "65537"] {
        let line = stderr(&["run", "tcp://127.0.0.1:9", "--pipeline", p, "-d", "1s"]);
        assert!(
            line.contains("--pipeline") && line.contains("ceiling"),
            "{p}: {line}"
        );
    }
    let line = stderr(&[
        "run",
        "tcp://127.0.0.1:9",
        "-c",
        "100",
        "--pipeline",
        "65536",
    ]);
    assert!(line.contains("ceiling"), "{line}");
}
