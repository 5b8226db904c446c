//! A figure is only what happened in its window (issue 38): at twice a capped server's rate,
//! the achieved rate, the per-second rows and the byte rates count the replies that arrived
//! within the measured window; the backlog drained after it is counted apart and named. Over
//! UDP the run reported 7,431-7,999/s against `serve udp --max-rate 4000`, rows of 9,000-12,000
//! ok/s; over TCP with --pipeline 256, 4,855/s.

mod common;

use common::{first_line_addr, one_at_a_time, run_json, serve_process, stdout_lines};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(40);

/// The servers' capacity (`--max-rate`), requests/s.
const CAP: f64 = 4000.0;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Runs `wirebench run URL ARGS` against `serve KIND --max-rate 4000 -t 1` and checks it.
fn at_twice_the_capacity(kind: &str, path: &str, args: &[&str]) {
    let _serial = one_at_a_time();
    let mut child = serve_process(kind, &["--max-rate", "4000", "-t", "1"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, kind, LIMIT);
    let url = format!("{kind}://{addr}{path}");
    let mut all = vec![url.as_str(), "--rate", "8000", "-d", "2s", "--no-save"];
    all.extend_from_slice(args);
    let (json, _) = run_json(&all, LIMIT);
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));
    check(&json);
    common::assert_schema("result.v1.json", &json);
}

/// The run's rates against the capacity: the headline, the open loop's achieved rate, the
/// per-second rows and the bytes received agree, and the drained backlog is apart.
fn check(json: &Value) {
    let ops = f(&json["throughput"]["ops_per_s"]);
    let secs = f(&json["duration_s"]);
    let o = &json["open_loop"];
    assert_eq!(f(&o["achieved_per_s"]), ops, "{o}");
    // The server never serves more than CAP/s (one slot per 1/CAP, shared by its connections);
    // less only if it is starved of CPU, which the code cannot rule out on a busy machine:
    // that side alone gets a margin (10%).
    assert!(
        (CAP * 0.90..=CAP * 1.05).contains(&ops),
        "{ops:.0} ops/s against a capacity of {CAP}: {o}"
    );
    // The queue left behind drained after the window: counted, named, not in the rates.
    let after = u(&o["replies_after_window"]);
    assert!(after > 1_000, "a backlog of {after}: {o}");
    assert_eq!(u(&json["throughput"]["ok_after_window"]), after, "{o}");
    let series = json["series"].as_array().unwrap();
    let in_rows: u64 = series.iter().map(|p| u(&p["ok"])).sum();
    let late: u64 = series
        .iter()
        .map(|p| p["after_window"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(in_rows + late, u(&json["ok"]), "rows and total");
    assert_eq!(late, after, "rows' after_window and the run's");
    assert!(
        ((in_rows as f64 / secs) - ops).abs() < 1.0,
        "the rows' {in_rows} over {secs} s against {ops} ops/s"
    );
    let lengths: f64 = series.iter().map(|p| f(&p["duration_s"])).sum();
    assert!(
        (lengths - secs).abs() < 1e-6,
        "{lengths} s of rows in {secs} s"
    );
    for p in series {
        let rate = f(&p["ok"]) / f(&p["duration_s"]);
        // A second's replies by arrival: a server that stalled (descheduled) at the end of one
        // second answers its queue at the start of the next, so a row may exceed CAP by what
        // a stall of ~50 ms held back (5% of CAP); the backlog itself (another 100% of CAP in
        // the last row before issue 38) never lands in a row.
        assert!(rate <= CAP * 1.10, "a row at {rate:.0}/s: {p}");
    }
    // Bytes: the received rate is the replies' within the window.
    let reply = u(&json["config"]["reply_bytes"]) as f64;
    let received = f(&json["throughput"]["received_mb_per_s"]) * 1e6;
    assert!(
        (received - ops * reply).abs() <= 0.02 * received.max(1.0),
        "received {received:.0} B/s, {ops:.0} replies/s of {reply} B"
    );
}

#[test]
fn udp_at_twice_a_capped_servers_rate_achieves_its_capacity() {
    at_twice_the_capacity("udp", "", &["-c", "32", "--timeout", "5s"]);
}

#[test]
fn tcp_pipelined_at_twice_a_capped_servers_rate_achieves_its_capacity() {
    at_twice_the_capacity(
        "tcp",
        "",
        &["-c", "32", "--pipeline", "256", "--timeout", "5s"],
    );
}

/// A run by count is timed from its first send to its last reply; its seconds fill that span
/// exactly, none outside it (rows "3 (0.00 s)" and "4 (0.00 s)" followed "3.00 s measured").
#[test]
fn a_run_by_count_has_no_second_outside_its_span() {
    let _serial = one_at_a_time();
    let server = common::ServerProcess::start(&["--delay", "2ms"]);
    let (json, code) = run_json(&[&server.url, "-n", "600", "-c", "2", "--no-save"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let secs = f(&json["duration_s"]);
    let series = json["series"].as_array().unwrap();
    let lengths: f64 = series.iter().map(|p| f(&p["duration_s"])).sum();
    assert!(
        (lengths - secs).abs() < 0.002,
        "{lengths} s of rows in {secs} s: {series:?}"
    );
    for (k, p) in series.iter().enumerate() {
        assert_eq!(u(&p["second"]), k as u64, "{series:?}");
        assert!(f(&p["duration_s"]) > 0.001, "{series:?}");
    }
    let ok: u64 = series.iter().map(|p| u(&p["ok"])).sum();
    assert_eq!(ok, 600);
}
