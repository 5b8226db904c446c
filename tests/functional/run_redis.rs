//! redis:// against `wirebench serve redis`: a protocol added as a driver (`driver/redis`), a
//! reference server (`serve/redis.rs`) and their registration lines. The client's count of
//! replies is the server's count of commands answered.

use super::common;

use common::usage_error;
use common::{first_line_addr, run_json, serve_process, stdout_lines, stop_with_sigterm};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The commands the server says it answered, from its last line.
fn answered(last: &str) -> u64 {
    last.split(", ")
        .find_map(|p| p.strip_suffix(" commands answered"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of commands: {last}"))
}

#[test]
fn a_redis_run_gets_what_the_server_answered() {
    let mut child = serve_process("redis", &["--listen", "127.0.0.1:0"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "redis", LIMIT);
    let second = lines.recv_timeout(LIMIT).unwrap();
    assert!(second.starts_with("serving redis"), "{second}");
    let url = format!("redis://{addr}");

    // By count: every command answered, and the value set is the value got.
    let (set, code) = run_json(&[&url, "--redis-cmd", "SET k v", "-n", "20"], LIMIT);
    assert_eq!(code, 0, "{set}");
    assert_eq!(n(&set["ok"]), 20);
    let (get, code) = run_json(
        &[
            &url,
            "--redis-cmd",
            "GET k",
            "-n",
            "40",
            "-c",
            "2",
            "--pipeline",
            "4",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{get}");
    assert_eq!(n(&get["ok"]), 40);
    // A connection per request.
    let (crr, code) = run_json(&[&url, "--mode", "crr", "-n", "10"], LIMIT);
    assert_eq!(code, 0, "{crr}");
    assert_eq!(n(&crr["ok"]), 10);
    // An error reply is a failed request, not a broken connection.
    let (bad, code) = run_json(&[&url, "--redis-cmd", "NOSUCH", "-n", "5"], LIMIT);
    assert_eq!(code, 1, "{bad}");
    assert_eq!(n(&bad["errors"]["total"]), 5);
    assert_eq!(n(&bad["ok"]), 0);

    // By time (PING, the default): replies came, and the server answered each of them (one
    // command may still have been in flight when the second ended).
    let (ping, code) = run_json(&[&url, "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{ping}");
    let ok = n(&ping["ok"]);
    assert!(ok > 0, "{ping}");
    assert_eq!(ping["protocol"], "redis");
    assert_schema(&ping);

    let served = answered(&stop_with_sigterm(&mut child, &lines, LIMIT));
    let counted = 20 + 40 + 10 + 5 + ok;
    assert!(
        (counted..=counted + 1).contains(&served),
        "the server answered {served}, the client counted {counted}"
    );
}

/// Panics unless `doc` validates against schema/result.v1.json (which names no protocol list:
/// a new driver's results are documents like any other).
fn assert_schema(doc: &serde_json::Value) {
    common::assert_schema("result.v1.json", doc);
}

#[test]
fn redis_flags_are_checked() {
    usage_error(&["run", "redis://127.0.0.1:9", "--redis-cmd", " "], LIMIT);
    usage_error(&["run", "redis://127.0.0.1:9", "--mode", "stream"], LIMIT);
    let out = usage_error(&["run", "tcp://127.0.0.1:9", "--redis-cmd", "PING"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("redis://"), "{err}");
    usage_error(&["run", "redis://127.0.0.1:9", "--size", "10"], LIMIT);
}
