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

/// The flags users bring from wrk2, h2load, ab, curl, iperf3, k6, wrk, oha and netperf, as
/// README's table of bad input lists them (issue 40, item 5): each run by the binary gets
/// wirebench's name for it, in one line, exit 2; and no hint names a flag of another meaning.
#[test]
fn the_readme_s_foreign_flags_each_get_their_hint() {
    let readme = include_str!("../../README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| a flag from another tool |"))
        .expect("README's row of foreign flags");
    let url = "http://127.0.0.1:9/";
    for (flag, hint) in [
        ("-q 1000", "did you mean --rate 1000?"),
        ("-t 10s", "did you mean -d 10s (--duration)?"),
        ("-R 1000", "--rate 1000 (an open loop, as wrk2's)"),
        ("-m 16", "--pipeline 16"),
        ("-k", "--insecure"),
        ("-u", "a udp:// URL"),
        ("-P 4", "-c 4 (--connections)"),
        ("-J", "-J is --json"),
        ("--vus 10", "-c 10 (--connections)"),
        ("--latency", "always reports the latency distribution"),
        ("--no-tui", "leave --no-tui out"),
        ("-t TCP_RR", "--mode rr"),
    ] {
        assert!(
            row.contains(&format!("`{flag}`")),
            "README lists {flag}: {row}"
        );
        let mut args = vec!["run", url];
        args.extend(flag.split(' '));
        let e = stderr(&args);
        assert!(e.contains(hint), "{flag}: {e}");
        // Never clap's likeness of spelling for a flag of another meaning.
        for wrong in [
            "--rate'",
            "--until",
            "--runs",
            "similar argument",
            "use '--",
        ] {
            assert!(!e.contains(wrong), "{flag}: {e}");
        }
    }
    // The hints the README quotes are those the binary prints.
    for quoted in [
        "did you mean --rate 1000?",
        "--pipeline 16",
        "a udp:// URL",
        "--mode rr",
    ] {
        assert!(row.contains(quoted), "README quotes {quoted}: {row}");
    }
    // k6's -u with a number is its virtual users; netperf's other tests get their mode.
    assert!(stderr(&["run", url, "-u", "50"]).contains("-c 50"));
    assert!(stderr(&["run", "tcp://127.0.0.1:9", "-t", "TCP_CRR"]).contains("--mode crr"));
    // A flag that is neither ours nor another tool's: no suggestion of an unrelated flag.
    let e = stderr(&["run", url, "--latencies"]);
    assert!(!e.contains("similar argument"), "{e}");
}

/// A bare `-t 10` is wrk's threads (README: "a bare `-t 10` is threads, as in wrk"), and a
/// command line with a URL but no command is a `run`, as wrk and oha are typed.
#[test]
fn a_bare_t_is_threads_and_a_url_alone_is_a_run() {
    use wirebench::serve::tcp::{self, TcpServerOptions};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    let (out, _) = common::run_bounded(
        &[
            "-c",
            "4",
            "-t",
            "2",
            "-n",
            "200",
            &url,
            "--json",
            "-q",
            "--no-save",
        ],
        LIMIT,
    );
    srv.stop();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("run's JSON");
    assert_eq!(doc["schema"], "wirebench.result/1");
    assert_eq!(doc["config"]["threads"], 2, "{}", doc["config"]);
    assert_eq!(doc["config"]["connections"], 4, "{}", doc["config"]);
    assert_eq!(doc["ok"], 200);
}

/// `serve redis` and `serve grpc` take `-l` as every other server does; `serve udp --help`
/// lists only the modes a UDP server has (issue 40).
#[test]
fn servers_take_l_and_udp_lists_its_own_modes() {
    for kind in ["redis", "grpc"] {
        let h = help(&["serve", kind]);
        assert!(h.contains("-l, --listen"), "{kind}: {h}");
    }
    let udp = help(&["serve", "udp"]);
    assert!(udp.contains("echo") && udp.contains("sink"), "{udp}");
    assert!(!udp.contains("source"), "{udp}");
    // Given anyway, source is refused with the reason and where it is served.
    let e = stderr(&["serve", "udp", "--mode", "source"]);
    assert!(e.contains("serve tcp --mode source"), "{e}");
}
