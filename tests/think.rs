//! Think time waited as asked (issue 15, item 4). A file of its own: cargo runs test files one
//! after another, so no sibling test competes for the two CPUs while a cycle is timed.

mod common;

use common::{run_json, ServerProcess};
use std::time::Duration;

/// Think time is waited precisely (a timerfd, not tokio's 1 ms tick, which rounds every
/// deadline up to its next tick): with `--think 5ms`, one connection's cycle of request, reply
/// and think lasts 5 ms and a loopback round trip, not the 6.2 ms of tokio's sleep.
#[test]
fn think_time_is_waited_to_the_asked_time() {
    let server = ServerProcess::start(&["-t", "1"]);
    let (json, code) = run_json(
        &[&server.url, "-c", "1", "-n", "200", "--think", "5ms"],
        Duration::from_secs(30),
    );
    assert_eq!(code, 0, "{json}");
    let cycle_ms = json["duration_s"].as_f64().expect("duration_s") * 1e3 / 200.0;
    assert!(
        (4.9..5.6).contains(&cycle_ms),
        "--think 5ms: a cycle of {cycle_ms:.3} ms"
    );
}
