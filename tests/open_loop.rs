//! Open-loop load (--rate, --stages): a fixed timetable whatever the server does, latency from
//! the intended send time, and a report that says when the target could not keep up.

mod common;

use common::{run_json, usage_error, ServerProcess};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A server that stalls all replies for 500 ms once a second: the open-loop latency shows it,
/// the service time (from the actual send) does not, and a closed loop would hide it.
#[test]
fn coordinated_omission_is_not_committed() {
    let srv = ServerProcess::start(&["--stall-every", "1s", "--stall-for", "500ms"]);
    let (json, code) = run_json(&[&srv.url, "--rate", "2000", "-c", "4", "-d", "3s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let latency_p99 = f(&json["latency"]["p99_us"]);
    let service_p99 = f(&json["service_time"]["p99_us"]);
    assert!(
        latency_p99 >= 250_000.0,
        "open-loop p99 {latency_p99} µs hides the stall"
    );
    assert!(service_p99 < 250_000.0, "service-time p99 {service_p99} µs");
    let open = &json["open_loop"];
    assert!(open["behind_schedule"].as_u64().unwrap() > 0, "{open}");
    assert!(f(&open["max_lag_us"]) >= 250_000.0, "{open}");

    // The same server in a closed loop: the stall hides in a handful of samples.
    let (closed, _) = run_json(&[&srv.url, "-c", "4", "-d", "2s"], LIMIT);
    assert!(f(&closed["latency"]["p99_us"]) < 250_000.0, "{closed}");
    assert!(closed["service_time"].is_null() && closed["open_loop"].is_null());
}

#[test]
fn the_achieved_rate_is_within_one_percent_of_the_offered_rate() {
    let srv = ServerProcess::start(&[]);
    let (json, code) = run_json(&[&srv.url, "--rate", "20000", "-c", "8", "-d", "3s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let achieved = f(&json["open_loop"]["achieved_per_s"]);
    assert!(
        (achieved - 20_000.0).abs() <= 200.0,
        "achieved {achieved}/s: {}",
        json["open_loop"]
    );
    assert_eq!(f(&json["open_loop"]["offered_per_s"]).round(), 20_000.0);
    assert_eq!(json["open_loop"]["kept_up"], true);
    for p in json["series"].as_array().unwrap() {
        assert_eq!(p["offered"], 20_000, "{p}");
    }
}

#[test]
fn ramps_and_stages_follow_their_timetable() {
    let srv = ServerProcess::start(&[]);
    let (json, code) = run_json(&[&srv.url, "--rate", "1000..3000/2s", "-c", "2"], LIMIT);
    assert_eq!(code, 0, "{json}");
    // N(t) = 1000 t + 500 t²: 1500 in the first second, 2500 in the second.
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{json}");
    assert_eq!(series[0]["offered"], 1500);
    assert_eq!(series[1]["offered"], 2500);
    // Every request sent before the deadline is answered (in-flight ones get their --timeout);
    // one whose send a late wake-up pushed past the deadline is offered but not sent.
    let open = &json["open_loop"];
    assert_eq!(open["offered"], 4000, "{open}");
    assert_eq!(json["ok"], open["sent"], "{open}");
    assert!(open["sent"].as_u64().unwrap() >= 3990, "{open}");

    let (json, code) = run_json(&[&srv.url, "--stages", "1s@500,1s@1500", "-c", "2"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["ok"], json["open_loop"]["sent"], "{json}");
    assert!(json["ok"].as_u64().unwrap() >= 1990, "{json}");
    let series = json["series"].as_array().unwrap();
    let sent: Vec<u64> = series.iter().map(|p| p["sent"].as_u64().unwrap()).collect();
    assert!(
        (495..=505).contains(&sent[0]) && (1495..=1505).contains(&sent[1]),
        "{sent:?}"
    );
}

#[test]
fn a_target_that_cannot_keep_up_is_reported() {
    // 5 ms per request on 2 connections caps the server at 400/s; 1000/s are offered.
    let srv = ServerProcess::start(&["--delay", "5ms"]);
    let (json, code) = run_json(&[&srv.url, "--rate", "1000", "-c", "2", "-d", "2s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let open = &json["open_loop"];
    assert_eq!(open["kept_up"], false, "{open}");
    assert!(f(&open["achieved_per_s"]) < 500.0, "{open}");
    assert!(f(&open["offered_per_s"]) > 990.0, "{open}");
    let note = json["notes"][0].as_str().unwrap();
    assert!(note.contains("did not keep up"), "{note}");
}

#[test]
fn bad_rates_get_one_line_and_exit_2() {
    for (args, want) in [
        (&["--rate", "0"][..], "above 0"),
        (&["--rate", "-5"], "above 0"),
        (&["--rate", "5000..1000/10s"], "ends below its start"),
        (&["--stages", "10s@1000,oops"], "DURATION@RATE"),
        (
            &["--rate", "100", "--stages", "1s@1"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["run", "tcp://127.0.0.1:9"];
        all.extend_from_slice(args);
        let out = usage_error(&all, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
