//! Results survive (issue 16, deliver 1): a target killed in the middle of a peak search, a
//! sweep, a comparison or a study; wirebench itself killed mid-sweep; a full disk under
//! `study --out`. Every finished step or run is printed, kept in the history (saved as it
//! goes) and written, the failing one recorded with its errors, exit 1.

mod common;

use common::{bin, ServerProcess};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A temporary directory for a history file and plan files, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("wb-survive-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    /// A path in the directory.
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }

    /// The history's rows (`wirebench history --json`), newest first.
    fn rows(&self) -> Vec<Value> {
        let db = self.file("history.db");
        let args = ["history", "--json", "--db", &db];
        let (out, _) = common::run_bounded(&args, Duration::from_secs(20));
        assert!(out.status.success(), "{out:?}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["runs"].as_array().unwrap().clone()
    }

    /// The newest stored document (`wirebench show last --json`).
    fn last(&self) -> Value {
        let db = self.file("history.db");
        let args = ["show", "last", "--json", "--db", &db];
        let (out, _) = common::run_bounded(&args, Duration::from_secs(20));
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a finished wirebench printed and how it ended.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `wirebench ARGS --db DIR/history.db`, running.
fn start(dir: &Dir, args: &[&str]) -> Child {
    bin()
        .args(args)
        .args(["--db", &dir.file("history.db")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (≤ 30 s) for `child` and collects what it printed.
fn ended(mut child: Child) -> Ended {
    let status = common::wait_exit(&mut child, Duration::from_secs(30));
    let out = child.wait_with_output().unwrap();
    Ended {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Waits (≤ 20 s) until the history holds a row: the command saved its first finished run.
fn first_saved(dir: &Dir) {
    let started = Instant::now();
    while !std::path::Path::new(&dir.file("history.db")).exists() || dir.rows().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(20), "nothing saved");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `wirebench ARGS` against `server`, kills the server (SIGKILL, by its PID) once the
/// first run is saved (so at least one run is measured before, whatever the machine's load),
/// and waits for wirebench to end.
fn kill_target_during(dir: &Dir, server: &mut ServerProcess, args: &[&str]) -> Ended {
    let child = start(dir, args);
    first_saved(dir);
    server.kill();
    ended(child)
}

/// A result document's failed operations.
fn errors(result: &Value) -> u64 {
    result["errors"]["total"].as_u64().unwrap()
}

#[test]
fn a_peak_search_keeps_its_steps_when_the_target_is_killed() {
    let mut server = ServerProcess::start(&[]);
    let dir = Dir::new("peak");
    let url = server.url.clone();
    let args = [
        "peak",
        &url,
        "--slo",
        "p99<=50ms",
        "--step",
        "300ms",
        "--rest",
        "0s",
    ];
    let started = Instant::now();
    let end = kill_target_during(&dir, &mut server, &args);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let text = format!("{}{}", end.stdout, end.stderr);
    assert_eq!(end.code, Some(1), "{text}");
    // The curve of the steps run, and why the search stopped.
    assert!(end.stdout.contains("curve:"), "{text}");
    assert!(end.stdout.contains("no peak claimed"), "{text}");
    assert!(end.stdout.contains("refused"), "{text}");
    // The failing step says its requests failed, not that it fell behind.
    assert!(end.stdout.contains("100.00% of requests failed"), "{text}");
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "partial", "{rows:?}");
    let doc = dir.last();
    let steps = doc["steps"].as_array().unwrap();
    assert!(steps.len() >= 2, "{doc}");
    assert!(
        errors(&steps[0]["result"]) == 0,
        "the first step, before the kill: {doc}"
    );
    assert!(
        errors(&steps.last().unwrap()["result"]) > 0,
        "the failing step: {doc}"
    );
    assert!(
        doc["stopped"].as_str().unwrap().contains("refused"),
        "{doc}"
    );
    assert!(doc["peak"].is_null(), "{doc}");
    steps_blame_the_target_and_offer_what_was_asked(steps, &doc);
    common::study::assert_valid("peak.v1.json", &doc);
}

#[test]
fn a_sweep_saves_the_runs_measured_before_its_target_was_killed() {
    let mut server = ServerProcess::start(&[]);
    let dir = Dir::new("sweep");
    let url = server.url.clone();
    let args = ["run", &url, "-c", "1,2,3,4", "-d", "400ms", "-q"];
    let end = kill_target_during(&dir, &mut server, &args);
    let text = format!("{}{}", end.stdout, end.stderr);
    assert_eq!(end.code, Some(1), "{text}");
    assert!(end.stdout.contains("Operations per second"), "{text}");
    assert!(end.stderr.contains("the sweep stopped after"), "{text}");
    assert!(end.stderr.contains("saved"), "{text}");
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "partial", "{rows:?}");
    let doc = dir.last();
    let points = doc["points"].as_array().unwrap();
    assert!((2..=4).contains(&points.len()), "{doc}");
    assert_eq!(
        errors(&points[0]["result"]),
        0,
        "measured before the kill: {doc}"
    );
    assert!(points[0]["result"]["ok"].as_u64().unwrap() > 0, "{doc}");
    assert!(errors(&points.last().unwrap()["result"]) > 0, "{doc}");
    assert!(doc["stopped"].is_string(), "{doc}");
    common::study::assert_valid("sweep.v1.json", &doc);
}

#[test]
fn a_comparison_saves_the_rounds_measured_before_a_target_was_killed() {
    let mut server = ServerProcess::start(&[]);
    let dir = Dir::new("compare");
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let args = ["compare", &a, &b, "--runs", "4", "-d", "250ms"];
    let end = kill_target_during(&dir, &mut server, &args);
    let text = format!("{}{}", end.stdout, end.stderr);
    assert_eq!(end.code, Some(1), "{text}");
    assert!(end.stdout.contains("Operations per second"), "{text}");
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["kind"].as_str(), rows[0]["status"].as_str()),
        (Some("compare"), Some("partial"))
    );
    let doc = dir.last();
    let points = doc["sweep"]["points"].as_array().unwrap();
    assert!((2..8).contains(&points.len()), "{doc}");
    assert!(doc["sweep"]["stopped"].is_string(), "{doc}");
    common::study::assert_valid("compare.v1.json", &doc);
}

/// A run study of three sizes, each run `each` long, against `url`.
fn plan(dir: &Dir, url: &str, each: &str) -> String {
    let file = dir.file("plan.toml");
    let text = format!(
        "title = \"survive\"\n[targets]\nlocal = \"{url}\"\n[run]\nsize = [4, 64, 128, 256]\nduration = \"{each}\"\n"
    );
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_study_keeps_its_runs_when_the_target_is_killed_with_and_without_out() {
    for with_out in [false, true] {
        let mut server = ServerProcess::start(&[]);
        let dir = Dir::new(if with_out { "study-out" } else { "study" });
        let file = plan(&dir, &server.url, "400ms");
        let results = dir.file("results");
        let mut args = vec!["study", &file];
        if with_out {
            args.extend(["--out", &results]);
        }
        let end = kill_target_during(&dir, &mut server, &args);
        let text = format!("{}{}", end.stdout, end.stderr);
        assert_eq!(end.code, Some(1), "--out {with_out}: {text}");
        assert!(end.stderr.contains("stopped"), "{text}");
        let rows = dir.rows();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0]["status"], "partial", "{rows:?}");
        if !with_out {
            assert!(end.stdout.contains("Operations per second"), "{text}");
            continue;
        }
        let study = common::study::valid_study(std::path::Path::new(&results));
        let points = study["document"]["points"].as_array().unwrap();
        assert!((2..=4).contains(&points.len()), "{study}");
        assert!(study["document"]["stopped"].is_string(), "{study}");
        let report = std::fs::read_to_string(format!("{results}/report.md")).unwrap();
        assert!(report.contains("**Partial**"), "{report}");
    }
}

#[test]
fn a_sweep_killed_itself_leaves_the_runs_finished_in_the_history() {
    let server = ServerProcess::start(&[]);
    let dir = Dir::new("sigkill");
    let url = server.url.clone();
    let mut child = start(
        &dir,
        &["run", &url, "-c", "1,2,3,4,5,6", "-d", "300ms", "-q"],
    );
    first_saved(&dir);
    child.kill().unwrap(); // SIGKILL: no handler runs
    let _ = child.wait();
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "partial", "{rows:?}");
    let doc = dir.last();
    let points = doc["points"].as_array().unwrap();
    assert!((1..6).contains(&points.len()), "{doc}");
    assert!(points.iter().all(|p| errors(&p["result"]) == 0), "{doc}");
    assert!(
        doc["stopped"].as_str().unwrap().contains("in progress"),
        "{doc}"
    );
    common::study::assert_valid("sweep.v1.json", &doc);
}

/// Sends `signal` to our own child.
fn send(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own live child's.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

#[test]
fn diagnose_stopped_by_sigterm_or_ctrl_c_prints_what_it_measured() {
    let server = ServerProcess::start(&[]);
    for (signal, code, name) in [
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGINT, 130, "Ctrl-C"),
    ] {
        let child = bin()
            .args(["diagnose", &server.url, "-d", "3s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        let started = Instant::now();
        send(&child, signal);
        let end = ended(child);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let text = format!("{}{}", end.stdout, end.stderr);
        assert_eq!(end.code, Some(code), "{text}");
        assert!(end.stdout.contains("baseline:"), "{text}");
        assert!(end.stdout.contains("ops/s"), "{text}");
        assert!(
            end.stdout.contains(&format!("Interrupted ({name})")),
            "{text}"
        );
    }
}

#[test]
fn the_demo_stopped_by_sigterm_or_ctrl_c_prints_the_runs_measured() {
    for (signal, code, name) in [
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGINT, 130, "Ctrl-C"),
    ] {
        let child = bin()
            .args(["demo", "--time-per-size", "150ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1200));
        send(&child, signal);
        let end = ended(child);
        let text = format!("{}{}", end.stdout, end.stderr);
        assert_eq!(end.code, Some(code), "{text}");
        assert!(end.stdout.contains("Messages per second"), "{text}");
        assert!(
            end.stdout.contains(&format!("Interrupted ({name})")),
            "{text}"
        );
        // The first sizes were measured; the last were not, and are dashes, not zeros.
        let row = end
            .stdout
            .lines()
            .find(|l| l.starts_with("| request/response"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        assert!(row.contains(" ±"), "{row}");
        assert!(row.contains('—'), "{row}");
    }
}

/// A 16 KiB tmpfs mounted on `dir` (we are root in CI), unmounted when dropped; None, with a
/// note, where mounting is not permitted.
struct Tiny(String);

impl Tiny {
    fn mount(dir: &str) -> Option<Tiny> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs", dir])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("note: skipped: cannot mount a tmpfs on {dir} (needs root)");
        }
        ok.then(|| Tiny(dir.to_string()))
    }
}

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_study_out_on_a_full_disk_is_still_printed_and_saved() {
    let server = ServerProcess::start(&[]);
    let dir = Dir::new("full");
    let file = plan(&dir, &server.url, "200ms");
    let disk = dir.file("disk");
    let Some(_mounted) = Tiny::mount(&disk) else {
        return;
    };
    let out = format!("{disk}/results");
    let end = ended(start(&dir, &["study", &file, "--out", &out]));
    let text = format!("{}{}", end.stdout, end.stderr);
    assert_eq!(end.code, Some(1), "{text}");
    // The study on the terminal instead, and in the history.
    assert!(end.stdout.contains("Operations per second"), "{text}");
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["kind"], "study");
    assert_eq!(
        dir.last()["document"]["points"].as_array().unwrap().len(),
        4
    );
    // One line naming the disk and the fix; no empty (or half-written) directory left.
    let error = end
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        error.contains(&format!("the disk holding {out} is full")),
        "{error}"
    );
    assert!(
        error.contains("give --out a directory on another disk"),
        "{error}"
    );
    assert!(!std::path::Path::new(&out).exists(), "{text}");
}

#[test]
fn an_http_peak_search_keeps_its_steps_when_the_server_is_killed() {
    let mut server = common::serve_process("http", &[]);
    let lines = common::stdout_lines(&mut server);
    let addr = common::first_line_addr(&mut server, &lines, "http", Duration::from_secs(5));
    let dir = Dir::new("peak-http");
    let url = format!("http://{addr}/bytes/100");
    let args = [
        "peak",
        &url,
        "--slo",
        "p99<=50ms",
        "--step",
        "300ms",
        "--rest",
        "0s",
    ];
    let child = start(&dir, &args);
    first_saved(&dir);
    let _ = server.kill(); // SIGKILL, by the PID of the server this test started
    let _ = server.wait();
    let end = ended(child);
    let text = format!("{}{}", end.stdout, end.stderr);
    assert_eq!(end.code, Some(1), "{text}");
    assert!(end.stdout.contains("no peak claimed"), "{text}");
    let rows = dir.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "partial", "{rows:?}");
    let doc = dir.last();
    let steps = doc["steps"].as_array().unwrap();
    assert!(steps[0]["result"]["ok"].as_u64().unwrap() > 0, "{doc}");
    assert!(errors(&steps.last().unwrap()["result"]) > 0, "{doc}");
    steps_blame_the_target_and_offer_what_was_asked(steps, &doc);
}

/// A step cut short by the target's refusals (killed) is the target's failure: not
/// "generator-limited", and not run again as if the load machine had stalled. Each step
/// offered the rate asked of it (its schedule, `150/s`), however soon its target refused.
fn steps_blame_the_target_and_offer_what_was_asked(steps: &[Value], doc: &Value) {
    for step in steps.iter().filter(|s| errors(&s["result"]) > 0) {
        assert_eq!(step["generator_limited"], false, "{doc}");
    }
    for step in steps {
        let schedule = step["result"]["open_loop"]["schedule"].as_str().unwrap();
        let asked: f64 = schedule.trim_end_matches("/s").parse().unwrap();
        let offered = step["offered_per_s"].as_f64().unwrap();
        assert!(
            offered <= asked * 1.01,
            "{offered} offered at {asked}/s: {doc}"
        );
    }
}
