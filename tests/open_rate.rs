//! Open-loop rates on short runs are rates over the timetable, and a run that did not offer
//! its load says so and fails.

mod common;

use std::time::Duration;

/// Generous bound on one short run's wall time.
const LIMIT: Duration = Duration::from_secs(20);

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `--rate 10 -d 200ms` sends 2 requests, due at 0 and 100 ms, and is done at ~100 ms: timed to
/// its last reply it reported "offered 19.4/s". Over its 200 ms it offered 10/s; `-n 2` too.
#[test]
fn a_short_open_loop_offers_the_rate_asked() {
    let server = common::ServerProcess::start(&[]);
    for extra in [["-d", "200ms"], ["-n", "2"]] {
        let args = [
            &[server.url.as_str(), "--rate", "10", "--no-save"],
            &extra[..],
        ]
        .concat();
        let (json, code) = common::run_json(&args, LIMIT);
        assert_eq!(code, 0, "{extra:?}: {json}");
        let o = &json["open_loop"];
        assert_eq!(o["offered"], 2, "{extra:?}: {o}");
        let offered = f(&o["offered_per_s"]);
        assert!((9.0..=11.0).contains(&offered), "{extra:?}: {o}");
        let ops = f(&json["throughput"]["ops_per_s"]);
        assert!(ops <= 11.0, "{extra:?}: {ops} ops/s at --rate 10");
    }
}

/// A peak search capped at 10/s cannot report a peak above 10/s (it said 19 ops/s, "confirmed").
#[test]
fn a_peak_never_exceeds_its_ceiling() {
    let server = common::ServerProcess::start(&[]);
    let args = [
        "peak",
        &server.url,
        "--start-rate",
        "1000",
        "--ceiling",
        "10",
        "--step",
        "200ms",
        "--slo",
        "p99<=100ms",
        "--no-save",
        "--json",
    ];
    let (out, _) = common::run_bounded(&args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let peak = &json["peak"];
    assert!(f(&peak["ops_per_s"]) <= 10.5, "{peak}");
    assert!(f(&peak["offered_per_s"]) <= 10.0, "{peak}");
}

/// `--rate 1e12` cannot be offered: the requests due and never sent are counted, a note says
/// so, and the run fails (it exited 0 with 34,836/s sent and the rest never mentioned).
#[test]
fn requests_never_sent_fail_the_run() {
    let server = common::ServerProcess::start(&[]);
    let args = [
        server.url.as_str(),
        "--rate",
        "1e12",
        "-d",
        "300ms",
        "--no-save",
    ];
    let (json, code) = common::run_json(&args, LIMIT);
    assert_eq!(code, 1, "{json}");
    let o = &json["open_loop"];
    let (offered, sent) = (o["offered"].as_u64().unwrap(), o["sent"].as_u64().unwrap());
    assert!(sent < offered / 1000, "{o}");
    assert_eq!(o["kept_up"], false, "{o}");
    let notes = json["notes"].to_string();
    assert!(notes.contains("never sent"), "{notes}");
    let (out, _) = common::run_bounded(&[&["run"], &args[..]].concat(), LIMIT);
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("never sent"), "{table}");
}
