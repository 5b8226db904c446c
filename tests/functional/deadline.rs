//! A run by count (`-n`) has an overall deadline (`--deadline`): against a frozen target it
//! ends there, keeps what it measured, counts what it still owed as errors, and exits 1.

use super::common;

use std::time::Duration;

/// Generous bound on one run's wall time: the deadline below is 1 s.
const LIMIT: Duration = Duration::from_secs(20);

/// Sends `sig` to the server (a child of this test, by its PID).
fn signal(server: &common::ServerProcess, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(server.child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// `-n 1000 --timeout 200ms` against a SIGSTOPped server would take 1000 × 200 ms on one
/// connection (the kernel still completes its handshakes); `--deadline 1s` ends it in about a
/// second, with every request counted: ok + errors = 1000, the deadline named in a note.
#[test]
fn a_run_by_count_against_a_frozen_target_ends_at_its_deadline() {
    let server = common::ServerProcess::start(&[]);
    signal(&server, libc::SIGSTOP);
    let args = [
        server.url.as_str(),
        "-n",
        "1000",
        "--timeout",
        "200ms",
        "--deadline",
        "1s",
        "--no-save",
    ];
    let (out, took) =
        common::run_bounded(&[&["run"], &args[..], &["--json", "-q"]].concat(), LIMIT);
    signal(&server, libc::SIGCONT);
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}{stderr}");
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (ok, errors) = (
        json["ok"].as_u64().unwrap(),
        json["errors"]["total"].as_u64().unwrap(),
    );
    assert_eq!(ok + errors, 1000, "{json}");
    assert!(errors >= 990, "{json}");
    let notes = json["notes"].to_string();
    assert!(notes.contains("deadline (1.00s) passed"), "{notes}");
}

/// The table says it too, and `--deadline 0` is bad input.
#[test]
fn the_deadline_is_said_in_the_table_and_checked() {
    let server = common::ServerProcess::start(&[]);
    signal(&server, libc::SIGSTOP);
    let (out, _) = common::run_bounded(
        &[
            "run",
            &server.url,
            "-n",
            "50",
            "--timeout",
            "300ms",
            "--deadline",
            "500ms",
            "--no-save",
        ],
        LIMIT,
    );
    signal(&server, libc::SIGCONT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("raise --deadline"), "{text}");
    common::usage_error(&["run", &server.url, "-n", "5", "--deadline", "0"], LIMIT);
}

/// A worker with one connection blocks in its socket calls, with no event loop to fire the
/// deadline's timer: `-n 1000000 --deadline 2s` against a live server ran 19-39 s. It ends at
/// its deadline now, with every request counted.
#[test]
fn a_run_by_count_with_one_connection_per_worker_ends_at_its_deadline() {
    let server = common::ServerProcess::start(&[]);
    let args = [
        "run",
        server.url.as_str(),
        "-n",
        "1000000",
        "-c",
        "2",
        "-t",
        "2",
        "--deadline",
        "1s",
        "--no-save",
        "--json",
        "-q",
    ];
    let (out, took) = common::run_bounded(&args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (ok, errors) = (
        json["ok"].as_u64().unwrap(),
        json["errors"]["total"].as_u64().unwrap(),
    );
    assert_eq!(ok + errors, 1_000_000, "{json}");
    assert!(ok > 0, "{json}");
}
