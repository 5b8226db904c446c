//! The results history (issue 10): every test uses its own `--db` in a temporary directory
//! and real `wirebench serve tcp` servers on 127.0.0.1.

use super::common;

use common::{bin, run_bounded, usage_error, ServerProcess};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

/// A temporary directory holding a history file, removed when dropped.
struct Db {
    dir: PathBuf,
}

impl Db {
    fn new(name: &str) -> Db {
        let dir = std::env::temp_dir().join(format!("wb-history-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Db { dir }
    }

    /// The history file's path.
    fn path(&self) -> String {
        self.dir.join("history.db").to_str().unwrap().to_string()
    }

    /// Another file in the directory.
    fn file(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    /// `wirebench ARGS --db THIS`: exit code, stdout, stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let db = self.path();
        let mut all = args.to_vec();
        all.extend(["--db", &db]);
        let (out, _) = run_bounded(&all, LIMIT);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `wirebench ARGS --db THIS`, sent SIGINT after `after`: its exit code, its stdout, and
    /// how long it took to exit after the signal.
    fn interrupt(&self, args: &[&str], after: Duration) -> (Option<i32>, String, Duration) {
        self.signal(args, after, libc::SIGINT)
    }

    /// `wirebench ARGS --db THIS`, sent `signal` after `after`, as [`Db::interrupt`].
    fn signal(
        &self,
        args: &[&str],
        after: Duration,
        signal: libc::c_int,
    ) -> (Option<i32>, String, Duration) {
        let db = self.path();
        let mut child = bin()
            .args(args)
            .args(["--db", &db])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(after);
        let started = Instant::now();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own live child's.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = common::wait_exit(&mut child, Duration::from_secs(15));
        let took = started.elapsed();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (status.code(), text, took)
    }

    /// `wirebench history --json`'s rows.
    fn rows(&self) -> Vec<Value> {
        let (code, out, err) = self.run(&["history", "--json", "--limit", "1000"]);
        assert_eq!(code, 0, "{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["schema"], "wirebench.history/1");
        doc["runs"].as_array().unwrap().clone()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn save_history_show_export_round_trip() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("round");
    let (code, printed, err) = db.run(&[
        "run",
        &server.url,
        "-n",
        "2000",
        "--json",
        "-q",
        "--tag",
        "commit=3f2a",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = db.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["kind"], "result");
    assert_eq!(row["status"], "ok");
    assert_eq!(row["schema"], "wirebench.result/1");
    assert_eq!(row["ok"], 2000);
    assert_eq!(row["targets"][0], server.url.as_str());
    assert_eq!(row["tags"][0], serde_json::json!(["commit", "3f2a"]));
    let id = row["id"].as_str().unwrap()[..8].to_string();
    // The stored document is what --json printed, byte for byte, by id and by `last`.
    for reference in [id.as_str(), "last"] {
        let (code, exported, err) = db.run(&["export", reference, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(exported, printed, "export {reference}");
        let (code, shown, _) = db.run(&["show", reference, "--json"]);
        assert_eq!(code, 0);
        assert_eq!(shown, printed, "show {reference} --json");
    }
    // The document holds the whole histogram and the per-second series.
    let doc: Value = serde_json::from_str(&printed).unwrap();
    assert!(doc["latency"]["histogram"]["data"].as_str().unwrap().len() > 20);
    assert!(!doc["series"].as_array().unwrap().is_empty());
    // show renders the report as run does; csv and md carry the figures.
    let (_, shown, _) = db.run(&["show", &id]);
    assert!(shown.contains("wirebench tcp rr"), "{shown}");
    assert!(shown.contains("ok 2,000"), "{shown}");
    assert!(shown.contains("tags: commit=3f2a"), "{shown}");
    let (_, csv, _) = db.run(&["export", "last", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(lines[0].starts_with("target,point,run"), "{csv}");
    assert!(lines[1].contains(",2000,0,"), "{csv}");
    let (_, md, _) = db.run(&["export", "last", "--format", "md"]);
    assert!(
        md.starts_with("| target |") && md.contains("| 2000 |"),
        "{md}"
    );
    // Filters: by tag, by target, and a --no-save run adds nothing.
    assert_eq!(
        db.run(&["history", "--tag", "commit=other"])
            .1
            .lines()
            .count(),
        1
    );
    let (_, table, _) = db.run(&["history", "--target", "127.0.0.1", "--since", "1d"]);
    assert!(table.contains(&id), "{table}");
    let (code, _) = run_bounded(&["run", &server.url, "-n", "100", "-q", "--no-save"], LIMIT);
    assert_eq!(code.status.code(), Some(0));
    assert_eq!(db.rows().len(), 1);
}

#[test]
fn two_writers_at_once_lose_nothing() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("writers");
    let path = db.path();
    // Two processes, each storing five runs as fast as it can, at the same time.
    let spawn = |tag: &str| {
        let (url, path, tag) = (server.url.clone(), path.clone(), format!("writer={tag}"));
        std::thread::spawn(move || {
            for _ in 0..5 {
                let out = bin()
                    .args(["run", &url, "-n", "200", "-q", "--db", &path, "--tag", &tag])
                    .stdout(Stdio::null())
                    .output()
                    .unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
            }
        })
    };
    let (a, b) = (spawn("a"), spawn("b"));
    a.join().unwrap();
    b.join().unwrap();
    let rows = db.rows();
    assert_eq!(rows.len(), 10, "{rows:#?}");
    for w in ["a", "b"] {
        let (_, table, _) = db.run(&["history", "--tag", &format!("writer={w}")]);
        assert_eq!(table.lines().count(), 6, "header + 5 rows: {table}");
    }
    let mut ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10);
}

#[test]
fn ctrl_c_stops_a_run_and_saves_it_as_interrupted() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("sigint");
    let args = ["run", &server.url, "-d", "60s", "-c", "2"];
    let (code, text, took) = db.interrupt(&args, Duration::from_millis(1500));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(code, Some(130), "{text}");
    assert!(text.contains("Interrupted (Ctrl-C)"), "{text}");
    assert!(text.contains("ops/s"), "the partial report: {text}");
    let rows = db.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "interrupted");
    assert!(rows[0]["ok"].as_i64().unwrap() > 0, "{:?}", rows[0]);
    let secs = rows[0]["duration_s"].as_f64().unwrap();
    assert!(secs > 0.5 && secs < 10.0, "measured until the stop: {secs}");
}

/// SIGTERM (what `timeout`, systemd, Slurm and CI send) stops a run as Ctrl-C does: the
/// report of what was measured, named for the signal, the row saved, exit 143 (128 + 15).
#[test]
fn sigterm_stops_a_run_and_saves_it_as_interrupted() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("sigterm");
    let args = ["run", &server.url, "-d", "60s", "-c", "2"];
    let (code, text, took) = db.signal(&args, Duration::from_millis(1500), libc::SIGTERM);
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(code, Some(143), "{text}");
    assert!(text.contains("Interrupted (SIGTERM)"), "{text}");
    assert!(text.contains("ops/s"), "the partial report: {text}");
    let rows = db.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "interrupted");
}

/// Ctrl-C during a sweep stops the run in progress and starts no other: the tables of the runs
/// measured (the stopped one with what it measured), saved as interrupted, exit 130.
#[test]
fn ctrl_c_stops_a_sweep_and_keeps_the_runs_measured() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("sigint-sweep");
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let args = ["run", &a, &b, "--size", "4,64", "-d", "2s"];
    let (code, text, _) = db.interrupt(&args, Duration::from_millis(3000));
    assert_eq!(code, Some(130), "{text}");
    // About 3 s in: during the second run (the first or third on a slow machine; never after
    // all four).
    let stopped_after = ["1", "2", "3"]
        .iter()
        .any(|n| text.contains(&format!("Interrupted (Ctrl-C) after {n} of 4 runs")));
    assert!(stopped_after, "{text}");
    assert!(text.contains("Operations per second"), "the tables: {text}");
    let rows = db.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "interrupted");
}

/// Ctrl-C during a peak search ends it after the step in progress: the steps so far are
/// printed, no peak is claimed, and the search is saved as interrupted (exit 130).
#[test]
fn ctrl_c_stops_a_peak_search_without_claiming_a_peak() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("sigint-peak");
    let args = [
        "peak",
        &server.url,
        "--slo",
        "p99<=50ms",
        "--step",
        "1s",
        "--rest",
        "0s",
    ];
    let (code, text, _) = db.interrupt(&args, Duration::from_millis(2500));
    assert_eq!(code, Some(130), "{text}");
    assert!(text.contains("interrupted (Ctrl-C) after"), "{text}");
    let rows = db.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "interrupted");
}

#[test]
fn fail_if_exits_3_naming_the_failed_threshold() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("thresholds");
    let base = ["run", server.url.as_str(), "-n", "1000", "-q"];
    let mut args = base.to_vec();
    args.extend([
        "--fail-if",
        "p99>1ns",
        "--fail-if",
        "ops<1",
        "--fail-if",
        "errors>0.1%",
    ]);
    let (code, out, err) = db.run(&args);
    assert_eq!(code, 3, "{out}{err}");
    assert!(err.contains("threshold failed: p99>1ns"), "{err}");
    // The measured value first, then the bound and the verdict: "pass" cannot be read as
    // the bound having been crossed.
    assert!(out.contains(", fails above 1ns: FAIL"), "{out}");
    assert!(out.contains(", fails below 1: pass"), "{out}");
    assert!(out.contains(", fails above 0.1%: pass"), "{out}");
    assert!(!out.contains("pass  "), "{out}");
    // In --json, each verdict; the stored run keeps them.
    args.push("--json");
    let (code, out, _) = db.run(&args);
    assert_eq!(code, 3);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let t = doc["thresholds"].as_array().unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t[0]["fail_if"], "p99>1ns");
    assert_eq!(t[0]["passed"], false);
    assert_eq!(t[1]["passed"], true);
    assert_eq!(db.run(&["export", "last"]).1, out);
    // All passing: exit 0.
    let mut ok = base.to_vec();
    ok.extend(["--fail-if", "p99>10s", "--fail-if", "errors>0"]);
    assert_eq!(db.run(&ok).0, 0);
}

/// An unknown metric is named with the list of metrics (not "fails above a bound, not
/// below"), a latency bound without a unit is refused (it meant seconds), both exit 2.
#[test]
fn fail_if_names_the_metrics_and_wants_a_unit() {
    let cases = [
        ("rps<5", "unknown metric 'rps'"),
        ("p(95)<200", "unknown metric 'p(95)'"),
        ("p99>20", "unit"),
    ];
    for (condition, says) in cases {
        let out = usage_error(
            &[
                "run",
                "tcp://127.0.0.1:9",
                "--fail-if",
                condition,
                "--no-save",
            ],
            LIMIT,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{condition}: {err}");
        assert!(!err.contains("not below"), "{condition}: {err}");
        assert!(
            err.contains("p99") && err.contains("ms"),
            "{condition}: {err}"
        );
    }
}

/// A threshold that fails in a sweep names the point where it failed, in the report, on
/// stderr and in the JSON verdict: here the slow one of two targets.
#[test]
fn a_failed_threshold_in_a_sweep_names_its_point() {
    let fast = ServerProcess::start(&[]);
    let slow = ServerProcess::start(&["--delay", "20ms"]);
    let db = Db::new("thresholds-sweep");
    let (a, b) = (format!("fast={}", fast.url), format!("slow={}", slow.url));
    let args = ["run", &a, &b, "-n", "50", "-q", "--fail-if", "p50>10ms"];
    let (code, out, err) = db.run(&args);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains(" at slow, fails above 10ms: FAIL"), "{out}");
    assert!(err.contains("p50>10ms (at slow)"), "{err}");
    let mut json = args.to_vec();
    json.push("--json");
    let (_, out, _) = db.run(&json);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["thresholds"][0]["at"], "slow", "{out}");
}

#[test]
fn diff_of_a_run_twice_as_slow_exits_3() {
    let fast = ServerProcess::start(&["--delay", "5ms"]);
    let slow = ServerProcess::start(&["--delay", "10ms"]);
    let db = Db::new("diff");
    for url in [&fast.url, &slow.url] {
        let (code, _, err) = db.run(&["run", url, "-d", "4s", "-c", "2", "-q"]);
        assert_eq!(code, 0, "{err}");
    }
    // Two servers are two targets: diff refuses to take one for the other, naming what
    // differs, unless told to compare anyway.
    let (code, out, err) = db.run(&["diff", "last~1", "last"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("different tests") && err.contains("target"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    let force = [
        "diff",
        "last~1",
        "last",
        "--max-regression",
        "5%",
        "--force",
    ];
    let (code, out, err) = db.run(&force);
    assert_eq!(code, 3, "{out}{err}");
    // Exit 3 says why in one line (issue 40, item 6).
    assert!(err.contains("exit 3: regressed beyond 5%: "), "{err}");
    assert!(out.contains("compared anyway (--force): target"), "{out}");
    // Half the rate and twice the median: on a loaded machine one of the two may vary too
    // much second to second to be significant, never both.
    assert!(
        out.contains("REGRESSED: ops_per_s regressed")
            || out.contains("REGRESSED: p50_us regressed"),
        "{out}"
    );
    let (code, out, _) = db.run(&["diff", "last~1", "last", "--json", "--force"]);
    assert_eq!(code, 3);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], "wirebench.diff/1");
    assert_eq!(doc["regressed"], true);
    assert_valid("diff.v1.json", &doc);
    // The other way round, the same change is an improvement, and said so.
    let (code, out, _) = db.run(&["diff", "last", "last~1", "--force"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ops_per_s improved") || out.contains("p50_us improved"),
        "{out}"
    );
    assert!(!out.contains("within 5%"), "{out}");
    // A run against itself has not regressed.
    assert_eq!(db.run(&["diff", "last", "last"]).0, 0);
    // --target counts last and last~N among one target's runs: here the fast server's only
    // run has no run before it.
    let (code, _, err) = db.run(&["diff", "last~1", "last", "--target", &fast.url]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fewer than 2 runs of a target containing"),
        "{err}"
    );
}

/// Runs of another load shape are another test: diff names what differs (protocol, mode,
/// connections, load) and refuses; --target picks one target's runs out of a shared history.
#[test]
fn diff_refuses_runs_of_different_tests_and_scopes_last_by_target() {
    let a = ServerProcess::start(&[]);
    let b = ServerProcess::start(&[]);
    let db = Db::new("diff-kinds");
    for args in [
        vec!["run", &a.url, "-n", "300", "-c", "1", "-q"],
        vec!["run", &a.url, "-n", "300", "-c", "4", "-q"],
        vec!["run", &a.url, "--rate", "500", "-d", "500ms", "-q"],
        vec!["run", &b.url, "-n", "300", "-c", "1", "-q"],
    ] {
        let (code, _, err) = db.run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let (code, _, err) = db.run(&["diff", "last~3", "last~2"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("connections 1 vs 4"), "{err}");
    let (code, _, err) = db.run(&["diff", "last~2", "last~1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("load a closed loop vs an open loop"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The last run is b's; among a's runs, last is the open loop and last~2 the first.
    let (code, out, err) = db.run(&["diff", "last~2", "last~1", "--target", &a.url, "--force"]);
    // Four connections may well be slower per request than one: either verdict stands.
    assert!(code == 0 || code == 3, "{out}{err}");
    assert!(out.contains("connections 1 vs 4"), "{out}");
}

/// Two results: the per-second test counts each side by its effective sample size and says
/// what one run a side cannot show.
#[test]
fn diff_of_two_results_names_the_samples_worth_and_what_one_run_cannot_show() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("diff-note");
    for _ in 0..2 {
        let (code, _, err) = db.run(&["run", &server.url, "-d", "3s", "-c", "2", "-q"]);
        assert_eq!(code, 0, "{err}");
    }
    let (_, out, err) = db.run(&["diff", "last~1", "last"]);
    assert!(out.contains("not run-to-run variance"), "{out}{err}");
    assert!(out.contains("independent)"), "{out}");
    let (_, out, _) = db.run(&["diff", "last~1", "last", "--json"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_valid("diff.v1.json", &doc);
    assert_eq!(doc["samples"], "results");
    let rate = &doc["changes"][0];
    assert_eq!(rate["metric"], "ops_per_s");
    let worth = rate["effective_samples"]
        .as_array()
        .expect("effective sizes");
    for (n, seconds) in worth.iter().zip(rate["samples"].as_array().unwrap()) {
        let (n, seconds) = (n.as_f64().unwrap(), seconds.as_f64().unwrap());
        assert!((1.0..=seconds).contains(&n), "{rate}");
    }
}

/// Two compare documents with repeated runs: diffed point by point over their runs; a point
/// that got ~1000× slower regressed; a result and a compare are not alike (exit 2). (With two
/// runs a side Welch's test has about one degree of freedom: its 95% bound is t = 12.7, so the
/// slow side's spread must be small beside the change. A 5 ms delay gave p50s of 5-8.6 ms
/// beside a CPU hog, t = 3.9: inconclusive, rightly. 50 ms is judged beside the hog too.)
#[test]
fn diff_of_two_compares_judges_each_target_over_its_runs() {
    let fast = ServerProcess::start(&[]);
    let other = ServerProcess::start(&[]);
    let slow = ServerProcess::start(&["--delay", "50ms"]);
    let db = Db::new("diff-runs");
    for web in [&fast.url, &slow.url] {
        let (web, other) = (format!("web={web}"), format!("other={}", other.url));
        let args = ["compare", &web, &other, "--runs", "2", "-d", "500ms", "-q"];
        let (code, _, err) = db.run(&args);
        assert!(code == 0 || code == 3, "{err}");
    }
    let (code, out, err) = db.run(&["diff", "last~1", "last", "--max-regression", "5%"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("web: 2 runs old, 2 new"), "{out}");
    assert!(out.contains("REGRESSED: p50_us regressed"), "{out}");
    let (_, out, _) = db.run(&["diff", "last~1", "last", "--json"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_valid("diff.v1.json", &doc);
    assert_eq!(doc["samples"], "runs");
    let web = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["target"] == "web");
    let p50 = &web.expect("the point web")["changes"][2];
    assert_eq!(
        (&p50["metric"], &p50["regressed"]),
        (&"p50_us".into(), &true.into())
    );
    assert_eq!(p50["samples"], serde_json::json!([2, 2]), "{p50}");
    // A result against a compare: one line, exit 2.
    assert_eq!(db.run(&["run", &fast.url, "-n", "100", "-q"]).0, 0);
    let (code, _, err) = db.run(&["diff", "last~1", "last"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("are not alike"), "{err}");
}

#[test]
fn merge_adds_results_exactly() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("merge");
    for _ in 0..2 {
        assert_eq!(db.run(&["run", &server.url, "-n", "500", "-q"]).0, 0);
    }
    let file = db.file("one.json");
    std::fs::write(&file, db.run(&["export", "last"]).1).unwrap();
    // The two runs ran one after the other: merged only when --sequential says so.
    let (code, out, err) = db.run(&["merge", "last", "last~1", &file, "--sequential"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], "wirebench.result/1");
    assert_eq!(doc["ok"], 1500);
    assert_eq!(doc["latency"]["count"], 1500);
    // Another schema version is bad input.
    let other = db.file("other.json");
    std::fs::write(
        &other,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("wirebench.result/1", "wirebench.result/2"),
    )
    .unwrap();
    let db_path = db.path();
    let err = usage_error(&["merge", "last", &other, "--db", &db_path], LIMIT);
    assert!(String::from_utf8_lossy(&err.stderr).contains("wirebench.result/2"));
}

/// Results whose measured windows do not overlap did not run together: merge refuses to add
/// them as concurrent (exit 2, one line naming --sequential), adds them one after another with
/// --sequential (rates over the summed time), and adds runs that did run at the same time.
#[test]
fn merge_adds_only_runs_that_ran_together_unless_sequential() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("merge-windows");
    for _ in 0..2 {
        let (code, _, err) = db.run(&["run", &server.url, "-d", "500ms", "-q"]);
        assert_eq!(code, 0, "{err}");
    }
    let (code, out, err) = db.run(&["merge", "last", "last~1"]);
    assert_eq!(code, 2, "sequential runs merged as concurrent: {out}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--sequential") && err.contains("did not run together"),
        "{err}"
    );
    let (code, out, err) = db.run(&["merge", "last", "last~1", "--sequential"]);
    assert_eq!(code, 0, "{err}");
    let seq: Value = serde_json::from_str(&out).unwrap();
    let secs = seq["duration_s"].as_f64().unwrap();
    assert!(
        secs > 0.9,
        "the measured times add up one after another: {secs}"
    );

    // Two generators at the same time against one server: their windows overlap.
    let files: Vec<String> = (0..2).map(|i| db.file(&format!("gen{i}.json"))).collect();
    let children: Vec<_> = files
        .iter()
        .map(|_| {
            bin()
                .args(["run", &server.url, "-d", "1s", "--json", "-q", "--no-save"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for (child, file) in children.into_iter().zip(&files) {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        std::fs::write(file, &out.stdout).unwrap();
    }
    let (code, out, err) = db.run(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["config"]["connections"], 2);
}

#[test]
fn bad_input_is_one_line_exit_2_and_leaves_the_db_untouched() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("bad");
    // A corrupt file and another program's SQLite database, refused before anything runs.
    let corrupt = db.file("corrupt.db");
    std::fs::write(
        &corrupt,
        b"this is not a database, it is a text file of forty bytes or so\n".repeat(100),
    )
    .unwrap();
    let foreign = db.file("foreign.db");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('x');")
            .unwrap();
    }
    for file in [&corrupt, &foreign] {
        let before = std::fs::read(file).unwrap();
        for args in [
            vec!["run", server.url.as_str(), "-n", "100", "--db", file],
            vec!["history", "--db", file],
            vec!["show", "last", "--db", file],
        ] {
            let out = usage_error(&args, LIMIT);
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("not a wirebench history"),
                "{args:?}"
            );
        }
        assert_eq!(std::fs::read(file).unwrap(), before, "{file} untouched");
        assert!(!std::path::Path::new(&format!("{file}-wal")).exists());
    }
    // An unknown id, a bad id, a threshold that does not parse: the history is unchanged.
    assert_eq!(db.run(&["run", &server.url, "-n", "100", "-q"]).0, 0);
    let path = db.path();
    for args in [
        vec!["show", "abcdef12", "--db", &path],
        vec!["export", "last~5", "--db", &path],
        vec!["diff", "last", "nothex!", "--db", &path],
        vec![
            "run",
            &server.url,
            "-n",
            "100",
            "--fail-if",
            "p99>>fast",
            "--db",
            &path,
        ],
        vec![
            "run",
            &server.url,
            "-n",
            "100",
            "--fail-if",
            "ops>5",
            "--db",
            &path,
        ],
        vec![
            "run",
            &server.url,
            "-n",
            "100",
            "--tag",
            "novalue",
            "--db",
            &path,
        ],
    ] {
        usage_error(&args, LIMIT);
    }
    assert_eq!(db.rows().len(), 1);
}

/// Panics with every error when `doc` does not validate against `schema/NAME`.
fn assert_valid(name: &str, doc: &Value) {
    let path = format!("{}/schema/{name}", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
}

#[test]
fn json_documents_match_their_schemas() {
    let server = ServerProcess::start(&[]);
    let db = Db::new("schemas");
    let url = server.url.as_str();
    let checks = ["--fail-if", "p99>10s", "--fail-if", "ops<1", "--json", "-q"];
    let doc = |args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.extend(checks);
        let (code, out, err) = db.run(&all);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let a = format!("a={url}");
    let b = format!("b={url}");
    assert_valid("result.v1.json", &doc(&["run", url, "-n", "300"]));
    assert_valid("sweep.v1.json", &doc(&["run", &a, &b, "-n", "300"]));
    let compare = doc(&["compare", &a, &b, "-n", "300", "--runs", "2"]);
    assert_eq!(compare["thresholds"].as_array().unwrap().len(), 2);
    assert_valid("compare.v1.json", &compare);
    let rows: Value = serde_json::from_str(&db.run(&["history", "--json"]).1).unwrap();
    assert_eq!(rows["runs"].as_array().unwrap().len(), 3);
    assert_eq!(rows["runs"][0]["kind"], "compare");
    assert_eq!(rows["runs"][1]["kind"], "sweep");
    assert_valid("history.v1.json", &rows);
    let (_, diff, _) = db.run(&["diff", "last~2", "last~2", "--json"]);
    assert_valid("diff.v1.json", &serde_json::from_str(&diff).unwrap());
}

/// `wirebench report last` renders the newest stored run as an HTML page (ID.html by default,
/// -o to choose); an ID the history does not hold is one line, exit 2, and no page.
#[test]
fn report_renders_a_stored_run_as_html() {
    let db = Db::new("report");
    let server = ServerProcess::start(&[]);
    let (code, _, err) = db.run(&["run", &server.url, "-d", "300ms", "-q"]);
    assert_eq!(code, 0, "{err}");
    let page = db.file("last.html");
    let (code, out, err) = db.run(&["report", "last", "-o", &page]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("<svg") && html.contains(&server.url),
        "{html}"
    );
    let missing = db.file("none.html");
    let (code, _, err) = db.run(&["report", "last~9", "-o", &missing]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!std::path::Path::new(&missing).exists());
}
