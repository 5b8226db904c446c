//! `--max-rate` on the reference servers (a server whose true peak is known), and `wirebench
//! peak`, which must find that peak.

mod common;

use common::{
    first_line_addr, one_at_a_time, run_json, serve_process, stdout_lines, ServerProcess,
};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A closed loop with many connections offers far more than 2000/s; the server serves 2000/s
/// across all its connections and threads, and the rest waits in its queue.
#[test]
fn a_closed_loop_gets_the_max_rate_of_serve_tcp() {
    let _serial = one_at_a_time();
    let srv = ServerProcess::start(&["--max-rate", "2000", "-t", "2"]);
    let (json, code) = run_json(&[&srv.url, "-c", "40", "-d", "2s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let ops = f(&json["throughput"]["ops_per_s"]);
    assert!((1700.0..=2300.0).contains(&ops), "{ops} ops/s");
}

#[test]
fn a_closed_loop_gets_the_max_rate_of_serve_http() {
    let _serial = one_at_a_time();
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

/// Runs `wirebench ARGS`, reading its stdout as it comes (a peak document embeds every step's
/// histograms: more than a pipe holds); kills it by its PID after `limit`.
fn run_reading(args: &[&str], limit: Duration) -> (String, Option<i32>) {
    use std::io::Read;
    let mut child = common::bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start wirebench");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let status = common::wait_exit(&mut child, limit);
    (reader.join().unwrap(), status.code())
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = format!("{}/schema/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("schema is readable");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema")
}

fn assert_valid(v: &jsonschema::Validator, doc: &serde_json::Value) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
}

/// `wirebench peak URL` with the objectives the tests use (p99 ≤ 50 ms, errors ≤ 0.1 %), 1 s
/// steps from 1000/s, 32 connections on one thread: the JSON document, the exit code and how
/// long the search took.
fn search(url: &str) -> (serde_json::Value, Option<i32>, Duration) {
    let args = [
        "peak",
        url,
        "--slo",
        "p99<=50ms",
        "--slo",
        "errors<=0.1%",
        "--step",
        "1s",
        "--rest",
        "300ms",
        "--start-rate",
        "1000",
        "-c",
        "32",
        "-t",
        "1",
        "--json",
        "-q",
    ];
    let started = std::time::Instant::now();
    let (text, code) = run_reading(&args, Duration::from_secs(60));
    let took = started.elapsed();
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (doc, code, took)
}

/// The search's steps, one line each, for a failure to show what each step measured: offered
/// and achieved rates, p99, backlog, pass, and the machine's CPU pressure and steal.
fn steps(doc: &serde_json::Value) -> String {
    let mut out = String::from("offered achieved p99_ms owed backlog passed pressure% steal%");
    for s in doc["steps"].as_array().into_iter().flatten() {
        let g = &s["result"]["generator"];
        out += &format!(
            "\n{:.0} {:.0} {:.1} {} {} {} {} {}",
            f(&s["offered_per_s"]),
            f(&s["achieved_per_s"]),
            s["p99_us"].as_f64().unwrap_or(f64::NAN) / 1000.0,
            s["owed_at_end"],
            s["backlog"],
            s["passed"],
            g["cpu_pressure_percent"],
            g["steal_percent"],
        );
    }
    out
}

/// The search found and confirmed a peak within 5 % of the server's true 4000/s.
fn assert_found_4000(doc: &serde_json::Value, code: Option<i32>) {
    if common::machine_was_busy(doc, code) {
        return;
    }
    assert_eq!(code, Some(0), "{}\n{}", doc["conclusion"], steps(doc));
    let peak = f(&doc["peak"]["offered_per_s"]);
    assert!(
        (3800.0..=4200.0).contains(&peak),
        "peak {peak}/s; {}\n{}",
        doc["conclusion"],
        steps(doc)
    );
    assert_eq!(doc["peak"]["confirmed"], true);
    assert!(!doc["generator_limited"].as_bool().unwrap());
}

/// The search finds the known peak of `serve tcp --max-rate 4000` within 5 %, confirms it,
/// and its JSON validates against schema/peak.v1.json (each step against result.v1.json).
#[test]
fn peak_finds_the_max_rate_of_serve_tcp() {
    let _serial = one_at_a_time();
    let srv = ServerProcess::start(&["--max-rate", "4000", "-t", "1"]);
    let (doc, code, took) = search(&srv.url);
    assert_valid(&schema("peak.v1.json"), &doc);
    let result = schema("result.v1.json");
    for step in doc["steps"].as_array().unwrap() {
        assert_valid(&result, &step["result"]);
    }
    assert_found_4000(&doc, code);
    assert!(took < Duration::from_secs(40), "{took:?}");
}

/// The same search over UDP against `serve udp --max-rate 4000` (requests beyond the rate
/// wait in the server's queue, as over TCP; none is dropped below the socket's buffer).
#[test]
fn peak_finds_the_max_rate_of_serve_udp() {
    let _serial = one_at_a_time();
    let mut child = serve_process("udp", &["--max-rate", "4000", "-t", "1"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "udp", LIMIT);
    let (doc, code, _) = search(&format!("udp://{addr}"));
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));
    assert_found_4000(&doc, code);
}

/// A bad objective is one line and exit 2, before anything is sent.
#[test]
fn a_bad_slo_is_a_usage_error() {
    for slo in ["p99", "p98<=5ms", "errors<=5", "p99<=fast"] {
        let out = common::usage_error(&["peak", "tcp://127.0.0.1:9", "--slo", slo], LIMIT);
        assert!(String::from_utf8_lossy(&out.stderr).contains("--slo"));
    }
    common::usage_error(
        &[
            "peak",
            "tcp://127.0.0.1:9",
            "--slo",
            "p99<=5ms",
            "--rate",
            "100",
        ],
        LIMIT,
    );
    let out = common::usage_error(
        &[
            "peak",
            "tcp://127.0.0.1:9",
            "--slo",
            "p99<=5ms",
            "--think",
            "10ms",
        ],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--think"));
}

/// The same search over HTTP/1.1 against `serve http --max-rate 4000`.
#[test]
fn peak_finds_the_max_rate_of_serve_http() {
    let _serial = one_at_a_time();
    let mut child = serve_process("http", &["--max-rate", "4000", "-t", "1"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "http", LIMIT);
    let (doc, code, _) = search(&format!("http://{addr}/bytes/16"));
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));
    assert_found_4000(&doc, code);
}

/// A target that rejects the workload itself (a 404 for every request) has no peak, and the
/// search says why after one step instead of halving down to 1/s.
#[test]
fn a_target_that_answers_nothing_ends_the_search_with_the_reason() {
    let mut child = serve_process("http", &[]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "http", LIMIT);
    let url = format!("http://{addr}/no/such/path");
    let args = [
        "peak",
        &url,
        "--slo",
        "p99<=20ms",
        "--step",
        "300ms",
        "--rest",
        "0s",
        "--json",
        "-q",
    ];
    let (text, code) = run_reading(&args, Duration::from_secs(30));
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));
    let doc: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(code, Some(1), "{}", doc["conclusion"]);
    let conclusion = doc["conclusion"].as_str().unwrap();
    assert!(
        conclusion.contains("every request") && conclusion.contains("404"),
        "{conclusion}"
    );
    // It ends at the first step whose every request failed; a first step that a loaded
    // machine let send nothing at all is not that step (seen beside a CPU hog).
    let steps = doc["steps"].as_array().unwrap().len();
    assert!((1..=2).contains(&steps), "{steps} steps: {conclusion}");
    assert!(doc["peak"].is_null());
}

/// `wirebench peak URL/delay/2ms` against `serve http --max-rate 600`, 0.5 s steps from
/// 200/s, with `extra` flags: the JSON document and the exit code. The latency objective is
/// generous (200 ms) so that a loaded machine's stalls do not fail a step: each search here
/// turns on whether the generator kept its timetable.
fn search_delayed(url: &str, extra: &[&str]) -> (serde_json::Value, Option<i32>) {
    let mut args = vec![
        "peak",
        url,
        "--slo",
        "p99<=200ms",
        "--slo",
        "errors<=0.1%",
        "--step",
        "500ms",
        "--rest",
        "200ms",
        "--start-rate",
        "200",
        "--json",
        "-q",
    ];
    args.extend(extra);
    let (text, code) = run_reading(&args, Duration::from_secs(60));
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (doc, code)
}

/// One connection to a target that takes 2 ms a request cannot offer 400/s (each waits for its
/// reply): the generator falls behind its timetable while the target stays as fast as at
/// 200/s. No peak is claimed (issue 15, item 6: it claimed the rate one connection reached),
/// and the conclusion names -c. With the default connections the same search finds the
/// server's true 600/s.
#[test]
fn one_connection_that_falls_behind_claims_no_peak_and_the_default_finds_it() {
    let _serial = one_at_a_time();
    let mut child = serve_process("http", &["--max-rate", "600", "-t", "1"]);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, "http", LIMIT);
    let url = format!("http://{addr}/delay/2ms");
    let (one, one_code) = search_delayed(&url, &["-c", "1"]);
    let (default, default_code) = search_delayed(&url, &[]);
    common::sigterm(&child);
    let _ = common::wait_exit(&mut child, Duration::from_secs(5));

    let conclusion = one["conclusion"].as_str().unwrap();
    assert_eq!(one_code, Some(1), "{conclusion}");
    assert!(one["peak"].is_null(), "{conclusion}");
    assert_eq!(one["generator_limited"], true, "{conclusion}");
    assert!(conclusion.contains("no peak claimed"), "{conclusion}");
    assert!(conclusion.contains("-c "), "names the flag: {conclusion}");
    let last = one["steps"].as_array().unwrap().last().unwrap();
    assert_eq!(last["limit"], "connections", "{conclusion}");
    assert_valid(&schema("peak.v1.json"), &one);

    if common::machine_was_busy(&default, default_code) {
        return;
    }
    let conclusion = default["conclusion"].as_str().unwrap();
    assert_eq!(default_code, Some(0), "{conclusion}");
    let steps = default["steps"].as_array().unwrap();
    assert_eq!(steps[0]["result"]["config"]["connections"], 10);
    let peak = f(&default["peak"]["offered_per_s"]);
    assert!(
        (540.0..=660.0).contains(&peak),
        "peak {peak}/s: {conclusion}"
    );
}
