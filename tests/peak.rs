//! `--max-rate` on the reference servers (a server whose true peak is known), and `wirebench
//! peak`, which must find that peak.

mod common;

use common::{first_line_addr, run_json, serve_process, stdout_lines, ServerProcess};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A closed loop with many connections offers far more than 2000/s; the server serves 2000/s
/// across all its connections and threads, and the rest waits in its queue.
#[test]
fn a_closed_loop_gets_the_max_rate_of_serve_tcp() {
    let srv = ServerProcess::start(&["--max-rate", "2000", "-t", "2"]);
    let (json, code) = run_json(&[&srv.url, "-c", "40", "-d", "2s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let ops = f(&json["throughput"]["ops_per_s"]);
    assert!((1700.0..=2300.0).contains(&ops), "{ops} ops/s");
}

#[test]
fn a_closed_loop_gets_the_max_rate_of_serve_http() {
    let mut child = serve_process("http", &["--max-rate", "2000", "-t", "2"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "http", LIMIT);
    let (json, code) = run_json(
        &[&format!("http://{addr}/bytes/16"), "-c", "40", "-d", "2s"],
        LIMIT,
    );
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));
    assert_eq!(code, 0, "{json}");
    let ops = f(&json["throughput"]["ops_per_s"]);
    assert!((1700.0..=2300.0).contains(&ops), "{ops} ops/s");
}
