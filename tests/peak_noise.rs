//! `wirebench peak` at 1 s steps against servers whose true peak is known (`serve udp|tcp
//! --max-rate N`): the peak within 5 % of N and never above it by more (issue 17: replies
//! drained after a step's window had made an overloaded UDP server look 2.5-5 % faster), and
//! a stall of the server in one step (SIGSTOP for 300 ms, then SIGCONT, by its PID) still
//! gives that peak, with the rate that both passed and failed named in the report. (A stall
//! at every other position of a search is tested without sockets in `load::search`.)
//!
//! The stall tests run beside a CPU hog pinned with the server (tests/common/noise.rs): one
//! search per protocol at 1 s steps in CI; `WIREBENCH_NOISE=full` runs 10 searches per
//! protocol at 1 s and at 4 s steps (issue 17: 10 of 10 within 5 %).

mod common;

use common::noise::{self, Hog};
use common::{first_line_addr, one_at_a_time, stdout_lines};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The capacity of the reference servers here: small, so that a step is cheap on a shared
/// 2-vCPU machine.
const N: f64 = 1000.0;
const LIMIT: Duration = Duration::from_secs(10);

/// `wirebench serve KIND --max-rate N -t 1` on the servers' CPU: the child, the URL it serves
/// and its stdout's later lines (kept open while it runs).
fn server(kind: &str) -> (Child, String, Receiver<String>) {
    let max = format!("{N}");
    let mut child = noise::pinned(noise::server_cpu())
        .args(["serve", kind, "--max-rate", &max, "-t", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wirebench serve");
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, kind, LIMIT);
    (child, format!("{kind}://{addr}"), lines)
}

fn signal(child: &Child, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own child's, not yet
    // reaped.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// Stops the server for 300 ms: a stall of the machine as the target sees it.
fn stall(child: &Child) {
    signal(child, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    signal(child, libc::SIGCONT);
}

/// `wirebench peak URL` at `step` steps from 0.6 N (p99 ≤ 50 ms, errors ≤ 0.1 %) on the
/// client's CPU, saved to a history of its own; `on_step` sees each step's line (stderr) as
/// the step ends. Returns the stored document, the exit code and how long the search took.
fn search(
    url: &str,
    step: &str,
    mut on_step: impl FnMut(&str),
) -> (serde_json::Value, Option<i32>, Duration) {
    let dir = std::env::temp_dir().join(format!("wirebench-peak-noise-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join(format!("{}.db", url.replace([':', '/', '.'], "_")));
    let _ = std::fs::remove_file(&db);
    let db = db.to_str().unwrap().to_string();
    let start = format!("{}", 0.6 * N);
    let args = [
        "peak",
        url,
        "--slo",
        "p99<=50ms",
        "--slo",
        "errors<=0.1%",
        "--step",
        step,
        "--rest",
        "100ms",
        "--start-rate",
        &start,
        "-c",
        "16",
        "-t",
        "1",
        "--db",
        &db,
    ];
    let began = Instant::now();
    let mut child = noise::pinned(noise::client_cpu())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wirebench peak");
    let mut stdout = child.stdout.take().unwrap();
    let report = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap_or_default();
        if line.starts_with("step ") {
            on_step(&line);
        }
    }
    let status = common::wait_exit(&mut child, Duration::from_secs(300));
    let took = began.elapsed();
    let report = report.join().unwrap();
    let out = common::bin()
        .args(["show", "last", "--json", "--db", &db])
        .output()
        .expect("run wirebench show");
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {report}"));
    let _ = std::fs::remove_file(&db);
    (doc, status.code(), took)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The search confirmed a peak within 5 % of N, not above N × 1.05: the peak, or None when the
/// machine was busy (the search claimed nothing of the target, and the caller judges no more).
fn assert_within_5_percent(doc: &serde_json::Value, code: Option<i32>) -> Option<f64> {
    if common::machine_was_busy(doc, code) {
        return None;
    }
    let conclusion = &doc["conclusion"];
    assert_eq!(code, Some(0), "{conclusion}");
    let peak = f(&doc["peak"]["offered_per_s"]);
    assert!(
        (0.95 * N..=1.05 * N).contains(&peak),
        "peak {peak}/s, not within 5 % of {N}: {conclusion}; steps {}",
        rates(doc)
    );
    assert_eq!(doc["peak"]["confirmed"], true, "{conclusion}");
    assert!(
        doc["peak"]["trials"].as_u64().unwrap() >= 3,
        "{}",
        doc["peak"]
    );
    Some(peak)
}

/// The steps' offered rates and verdicts, for a failure's message.
fn rates(doc: &serde_json::Value) -> String {
    let steps = doc["steps"].as_array().unwrap();
    let each = steps.iter().map(|s| {
        format!(
            "{:.0}{}",
            f(&s["offered_per_s"]),
            if s["passed"] == true { "✓" } else { "✗" }
        )
    });
    each.collect::<Vec<_>>().join(" ")
}

/// Searches `kind`'s server at `step` steps; with `stall`, the server is stopped for 300 ms in
/// the step after the first confirmation trial (mid-step: the lines come as each step ends,
/// and a 100 ms rest follows), a trial at a rate that passed twice before. Returns the
/// document, the exit code and the index of the stalled step.
fn search_server(
    kind: &str,
    step: &str,
    stall_one: bool,
) -> (serde_json::Value, Option<i32>, Option<usize>) {
    let (mut child, url, _lines) = server(kind);
    let mut seen = 0;
    let mut stalled_in = None;
    let (doc, code, took) = search(&url, step, |line| {
        seen += 1;
        if stall_one && stalled_in.is_none() && line.contains("(confirmation)") {
            std::thread::sleep(Duration::from_millis(400));
            stall(&child);
            stalled_in = Some(seen); // the index (from 0) of the step that met the stall
        }
    });
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "{kind} --step {step}: {} in {took:?}: {}",
        rates(&doc),
        doc["conclusion"]
    );
    (doc, code, stalled_in)
}

/// Over UDP, replies drained after a step's window are late, not achieved, and the queue left
/// at the end fails the step: no overshoot at 1 s steps.
#[test]
fn udp_peak_at_1s_steps_is_within_5_percent_of_max_rate() {
    let _turn = one_at_a_time();
    let (doc, code, _) = search_server("udp", "1s", false);
    if assert_within_5_percent(&doc, code).is_none() {
        return; // a busy machine's search, its steps not the target's
    }
    let steps = doc["steps"].as_array().unwrap();
    let over: Vec<&serde_json::Value> = (steps.iter())
        .filter(|s| f(&s["offered_per_s"]) > 1.05 * N)
        .collect();
    assert!(
        !over.is_empty(),
        "a step above the capacity: {}",
        rates(&doc)
    );
    for s in over {
        assert_eq!(s["passed"], false, "{}", rates(&doc));
    }
}

#[test]
fn tcp_peak_at_1s_steps_is_within_5_percent_of_max_rate() {
    let _turn = one_at_a_time();
    let (doc, code, _) = search_server("tcp", "1s", false);
    assert_within_5_percent(&doc, code);
}

/// Beside a CPU hog, searches of `kind`'s server with a stall each (one at 1 s steps in CI;
/// 10 at 1 s and 10 at 4 s steps with `WIREBENCH_NOISE=full`): every one within 5 %.
fn assert_stalls_named(kind: &str) {
    let _turn = one_at_a_time();
    let _hog = Hog::beside_the_servers();
    let steps: &[&str] = if noise::full() {
        &["1s", "4s"]
    } else {
        &["1s"]
    };
    for step in steps {
        let n = noise::trials(1, 10);
        for i in 0..n {
            assert_stall_named(kind, step);
            eprintln!("{kind} --step {step}: {} of {n} within 5 %", i + 1);
        }
    }
}

/// The stalled step fails a rate the server sustained; that rate is measured again until a
/// majority decides, the peak stays within 5 %, and the contradiction is named with its
/// trials.
fn assert_stall_named(kind: &str, step: &str) {
    let (mut doc, mut code, mut stalled) = search_server(kind, step, true);
    if stalled.is_none() {
        // The machine's own noise made the peak's rate disagree before it was confirmed (a
        // majority of three decided it, with no confirmation trial to stall): once more.
        (doc, code, stalled) = search_server(kind, step, true);
    }
    let i = stalled.unwrap_or_else(|| panic!("no confirmation to stall: {}", rates(&doc)));
    let step = &doc["steps"][i];
    assert_eq!(
        step["passed"],
        false,
        "the stalled step {i}: {}",
        rates(&doc)
    );
    if assert_within_5_percent(&doc, code).is_none() {
        return;
    }
    let rate = f(&step["offered_per_s"]);
    let named = doc["contradictions"].as_array().unwrap();
    assert!(
        named
            .iter()
            .any(|c| (f(&c["rate_per_s"]) - rate).abs() < 1.0
                && c["passed"].as_u64() > Some(0)
                && c["failed"].as_u64() > Some(0)),
        "{rate}/s named among {named:?}"
    );
}

#[test]
fn udp_peak_survives_a_stall_of_the_server_beside_a_cpu_hog_and_names_it() {
    assert_stalls_named("udp");
}

#[test]
fn tcp_peak_survives_a_stall_of_the_server_beside_a_cpu_hog_and_names_it() {
    assert_stalls_named("tcp");
}

/// One second at 1.2 N over UDP: the server answers N of the 1.2 N requests in the window and
/// the rest from its queue after it closed. Those replies are counted apart (late), and the
/// requests owed when the window closed are that queue, not the handful in flight.
#[test]
fn replies_drained_after_the_window_are_counted_apart() {
    let _turn = one_at_a_time();
    let (mut child, url, _lines) = server("udp");
    let rate = format!("{}", 1.2 * N);
    let args = [
        url.as_str(),
        "--rate",
        &rate,
        "-d",
        "1s",
        "-c",
        "16",
        "-t",
        "1",
    ];
    let (json, _) = common::run_json(&args, LIMIT);
    let _ = child.kill();
    let _ = child.wait();
    let o = &json["open_loop"];
    let (late, owed) = (f(&o["replies_after_window"]), f(&o["owed_at_end"]));
    // 0.2 N queued in the second, less what a loaded machine's timing blurs.
    assert!(late >= 0.1 * N, "{late} late: {o}");
    assert!(owed >= 0.1 * N && owed >= late, "{owed} owed: {o}");
    assert!(
        f(&json["ok"]) >= late,
        "late replies are counted in ok too: {json}"
    );
}
