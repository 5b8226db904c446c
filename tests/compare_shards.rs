//! Issue 19, items 1 and 4: `compare --shards N` and a study's `shards = N` run each run of
//! each target as N shards (launched by the engine's own launcher, here N local processes),
//! merged exactly before the paired analysis; `run --shards N` does the same for one run and
//! for each point of a sweep.

mod common;

use common::{
    first_line_addr, merged_ok, one_at_a_time, run_bounded, serve_process, stdout_lines,
    stop_with_sigterm, usage_error,
};
use serde_json::Value;
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

/// A `wirebench serve tcp` that says how many requests it served when stopped.
struct Counted {
    child: Child,
    lines: Receiver<String>,
    url: String,
}

impl Counted {
    fn start() -> Counted {
        let mut child = serve_process("tcp", &[]);
        let lines = stdout_lines(&mut child);
        let addr = first_line_addr(&mut child, &lines, "tcp", LIMIT);
        let url = format!("tcp://{addr}");
        Counted { child, lines, url }
    }

    /// Stops it: the requests it served.
    fn served(mut self) -> u64 {
        let mut last = stop_with_sigterm(&mut self.child, &self.lines, LIMIT);
        while !last.starts_with("stopped:") {
            last = self.lines.recv_timeout(LIMIT).unwrap();
        }
        let n = last.split("requests ").nth(1).and_then(|t| {
            let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().ok()
        });
        n.unwrap_or_else(|| panic!("no request count in: {last}"))
    }
}

impl Drop for Counted {
    /// A test that failed before [`Counted::served`] leaves no server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The comparison document's runs: each a merge of `world` shards whose ok add up to the
/// run's, its connections the total; the sum of ok for each target, in targets' order.
fn check_merged_runs(doc: &Value, world: usize, connections: u64) -> Vec<u64> {
    let sweep = &doc["sweep"];
    let names: Vec<&str> = sweep["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut per_target = vec![0; names.len()];
    for point in sweep["points"].as_array().unwrap() {
        let ok = merged_ok(&point["result"], world, connections);
        let t = names.iter().position(|n| point["target"] == *n).unwrap();
        per_target[t] += ok;
    }
    per_target
}

/// `wirebench ARGS` (a comparison of `a` and `b`, each run as 2 shards of `connections`),
/// which must succeed: every run is the exact merge of its shards, the comparison's counts
/// are the servers' own, and there are verdicts. How long it took.
fn compared(args: &[&str], a: Counted, b: Counted, connections: u64) -> Duration {
    let (out, took) = run_bounded(args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["sweep"]["points"].as_array().unwrap().len(), 4);
    let ok = check_merged_runs(&doc, 2, connections);
    assert!(ok.iter().all(|&n| n > 0), "{ok:?}");
    assert!(!doc["verdicts"].as_array().unwrap().is_empty());
    assert_eq!(vec![a.served(), b.served()], ok);
    took
}

/// `wirebench ARGS`, which must succeed: its JSON document.
fn succeeded(args: &[&str]) -> Value {
    let (out, _) = run_bounded(args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    serde_json::from_str(&text).unwrap()
}

/// A sweep document over `--connections` whose every point is a merge of 2 shards holding
/// that point's connections: the points' ok, summed.
fn sweep_points_ok(doc: &Value) -> u64 {
    let points = doc["points"].as_array().expect("a sweep document");
    points
        .iter()
        .map(|p| {
            let c = p["values"]["--connections"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            merged_ok(&p["result"], 2, c)
        })
        .sum()
}

/// Two servers compared in 2 rounds, each run 2 shards of 2 connections for 500 ms: every
/// run is the exact merge of its shards, the comparison's counts are the servers' own, and
/// the verdicts are judged from the merged runs.
#[test]
fn compare_runs_each_run_as_merged_shards() {
    let _serial = one_at_a_time();
    let (a, b) = (Counted::start(), Counted::start());
    let (ua, ub) = (format!("a={}", a.url), format!("b={}", b.url));
    let args = [
        "compare",
        &ua,
        &ub,
        "-d",
        "500ms",
        "-c",
        "4",
        "--runs",
        "2",
        "--shards",
        "2",
        "--json",
        "-q",
        "--no-save",
    ];
    let took = compared(&args, a, b, 4);
    eprintln!("compare --shards 2, 4 runs: {took:?}");
}

/// A study's plan of a comparison takes `shards = 2` as the command line takes --shards.
#[test]
fn a_study_plan_with_shards_runs_merged_shards() {
    let _serial = one_at_a_time();
    let (a, b) = (Counted::start(), Counted::start());
    let dir = std::env::temp_dir().join(format!("wirebench-cmpshards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "command = \"compare\"\n[targets]\na = {{ url = \"{}\" }}\nb = {{ url = \"{}\" }}\n[run]\nduration = \"500ms\"\nconnections = 3\nruns = 2\nshards = 2\njson = true\nquiet = true\nno-save = true\n",
            a.url, b.url
        ),
    )
    .unwrap();
    let took = compared(&["study", plan.to_str().unwrap()], a, b, 3);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("study shards = 2, 4 runs: {took:?}");
}

/// Shards that cannot split the totals are refused before anything runs: one line, exit 2.
#[test]
fn compare_shards_that_cannot_split_are_refused() {
    let a = Counted::start();
    let (ua, ub) = (format!("a={}", a.url), format!("b={}", a.url));
    let out = usage_error(
        &["compare", &ua, &ub, "-c", "2", "--shards", "3", "-q"],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("leaves rank 2 none"), "{err}");
    assert_eq!(a.served(), 0, "nothing ran");
}

/// `run --shards 2` with a swept `-c 2,4`: each point is the exact merge of 2 shards holding
/// the point's connections, and the points' counts are the server's own.
#[test]
fn a_sweep_runs_each_point_as_merged_shards() {
    let _serial = one_at_a_time();
    let a = Counted::start();
    let args = [
        "run",
        &a.url,
        "-c",
        "2,4",
        "-d",
        "500ms",
        "--shards",
        "2",
        "--yes",
        "--json",
        "-q",
        "--no-save",
    ];
    let doc = succeeded(&args);
    assert_eq!(doc["points"].as_array().unwrap().len(), 2, "{doc}");
    let ok = sweep_points_ok(&doc);
    assert!(ok > 0);
    assert_eq!(a.served(), ok);
}

/// A run study's plan takes `shards = 2` as `run` takes --shards: each point merged.
#[test]
fn a_run_study_plan_with_shards_merges_each_point() {
    let _serial = one_at_a_time();
    let a = Counted::start();
    let dir = std::env::temp_dir().join(format!("wirebench-runshards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.toml");
    let text = format!(
        "[targets]\na = \"{}\"\n[run]\nconnections = \"2,4\"\nduration = \"500ms\"\nshards = 2\nyes = true\njson = true\nquiet = true\nno-save = true\n",
        a.url
    );
    std::fs::write(&plan, text).unwrap();
    let doc = succeeded(&["study", plan.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    let ok = sweep_points_ok(&doc);
    assert_eq!(a.served(), ok);
}

/// `run --shards 2` of one target: one result, the exact merge of 2 shards of 2 connections
/// each; `--shards` with `--shard` (a shard's own flag) is bad input.
#[test]
fn a_run_with_shards_is_one_merged_run() {
    let _serial = one_at_a_time();
    let a = Counted::start();
    let args = [
        "run",
        &a.url,
        "-c",
        "4",
        "-d",
        "500ms",
        "--shards",
        "2",
        "--json",
        "-q",
        "--no-save",
    ];
    let ok = merged_ok(&succeeded(&args), 2, 4);
    let out = usage_error(
        &["run", &a.url, "--shards", "2", "--shard", "0/2", "-q"],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without --shard"), "{err}");
    assert_eq!(a.served(), ok);
}

/// Shards of a few requests each (`-n`) end within ms, so a shard released a little later may
/// begin after another ended: released at one agreed start, they still merge, and the
/// requests split exactly.
#[test]
fn a_run_of_a_few_requests_merges_its_shards() {
    let _serial = one_at_a_time();
    let a = Counted::start();
    let args = [
        "run",
        &a.url,
        "-c",
        "2",
        "-n",
        "10",
        "--shards",
        "2",
        "--json",
        "-q",
        "--no-save",
    ];
    assert_eq!(merged_ok(&succeeded(&args), 2, 2), 10);
    assert_eq!(a.served(), 10);
}
