//! Issue 19: many generators (shards) of one load, merged exactly: per-second histograms in
//! the result, the shard contract (`--shard`, `--start-at`, `--out`), and `merge` of shards.

use super::common;

use common::{
    bin, first_line_addr, run_bounded, serve_process, stdout_lines, stop_with_sigterm, usage_error,
    ServerProcess,
};
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// `wirebench ARGS` in parallel, one child per argument list; their stdouts, as documents.
fn parallel(runs: &[Vec<String>]) -> Vec<Value> {
    let children: Vec<_> = runs
        .iter()
        .map(|args| {
            bin()
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{err}");
            serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
        })
        .collect()
}

/// A second's latency histogram, as the document carries it.
fn second(p: &Value) -> hdrhistogram::Histogram<u64> {
    wirebench::record::compact::decode(p["histogram"].as_str().expect("a histogram")).unwrap()
}

/// p50 and p99 of `h` in µs, read as the series reads them.
fn p50_p99(h: &hdrhistogram::Histogram<u64>) -> (f64, f64) {
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    (us(0.5), us(0.99))
}

/// Each second of a result carries its histogram (the one its p50/p99 were read from), and a
/// merge of two generators' results keeps each second's p50/p99 exact: those of the seconds'
/// histograms added, not an average.
#[test]
fn per_second_percentiles_survive_a_merge() {
    let server = ServerProcess::start(&[]);
    let dir = tempdir("persecond");
    let run: Vec<String> = ["run", &server.url, "-d", "2s", "--json", "-q", "--no-save"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let parts = parallel(&[run.clone(), run]);
    let mut files = vec!["merge".to_string()];
    for (i, doc) in parts.iter().enumerate() {
        for p in doc["series"].as_array().unwrap() {
            let (p50, p99) = p50_p99(&second(p));
            assert_eq!(
                (p["p50_us"].as_f64(), p["p99_us"].as_f64()),
                (Some(p50), Some(p99))
            );
        }
        let file = dir.join(format!("part{i}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        files.push(file.display().to_string());
    }
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let (out, _) = run_bounded(&args, LIMIT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Both started within the same second, so their seconds line up one to one.
    let starts: Vec<u64> = parts
        .iter()
        .map(|d| d["started_unix_ms"].as_u64().unwrap())
        .collect();
    assert!(starts[0].abs_diff(starts[1]) < 500, "{starts:?}");
    let series = merged["series"].as_array().unwrap();
    assert!(series.len() >= 2, "{merged}");
    for (i, p) in series.iter().enumerate() {
        let mut sum = wirebench::record::new_histogram();
        let mut ok = 0;
        for part in &parts {
            if let Some(q) = part["series"].get(i) {
                sum.add(second(q)).unwrap();
                ok += q["ok"].as_u64().unwrap();
            }
        }
        assert_eq!(p["ok"].as_u64(), Some(ok));
        assert_eq!(second(p), sum, "second {i}");
        let (p50, p99) = p50_p99(&sum);
        assert_eq!(
            (p["p50_us"].as_f64(), p["p99_us"].as_f64()),
            (Some(p50), Some(p99))
        );
    }
    let note = merged["notes"][0].as_str().unwrap();
    assert!(note.contains("seconds' histograms added"), "{note}");
}

/// `wirebench merge FILES…`: the merged document, or the exit code and stderr.
fn merge(files: &[String]) -> Result<Value, (i32, String)> {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let (out, _) = run_bounded(&args, LIMIT);
    match out.status.code() {
        Some(0) => Ok(serde_json::from_slice(&out.stdout).unwrap()),
        code => Err((
            code.unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )),
    }
}

/// The shards' `run` command lines: the load's totals, each rank's --shard, one agreed start.
fn shard_runs(url: &str, world: u64, out: &str, extra: &[&str]) -> Vec<Vec<String>> {
    (0..world)
        .map(|r| {
            let mut a: Vec<String> = ["run", url, "-q", "--no-save", "--start-at", "+2s"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            a.extend([
                "--shard".into(),
                format!("{r}/{world}"),
                "--out".into(),
                out.into(),
            ]);
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        })
        .collect()
}

/// Starts the shards' `runs` at once, their --start-at counted from one agreed now
/// (WIREBENCH_T0, as a launcher sets it), and waits for each to succeed.
fn launch_together(runs: &[Vec<String>]) {
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let children: Vec<_> = runs
        .iter()
        .map(|a| {
            bin()
                .args(a)
                .env("WIREBENCH_T0", t0.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Three shards of one load by count, started together against one server: each runs its
/// share (remainders to the lowest ranks), and the merge's ok is the sum of the shards' and
/// the server's own count of requests; every rank is in the `shards` section with its skew.
/// A missing rank, a rank given twice, a shard of another plan or another world size, and a
/// damaged per-second histogram are each refused: one line, exit 2, nothing printed.
#[test]
fn shards_merge_to_the_servers_count_and_bad_sets_are_refused() {
    let mut server = serve_process("tcp", &[]);
    let lines = stdout_lines(&mut server);
    let addr = first_line_addr(&mut server, &lines, "tcp", LIMIT);
    let url = format!("tcp://{addr}");
    let dir = tempdir("count");
    let out = dir.join("shard-%r.json").display().to_string();
    let runs = shard_runs(&url, 3, &out, &["-n", "3001", "-c", "7"]);
    launch_together(&runs);
    let files: Vec<String> = (0..3)
        .map(|r| dir.join(format!("shard-{r}.json")).display().to_string())
        .collect();
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let shares: Vec<(u64, u64)> = docs
        .iter()
        .map(|d| {
            let s = &d["shard"]["share"];
            (
                s["connections"].as_u64().unwrap(),
                s["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shares, [(3, 1001), (2, 1000), (2, 1000)]);
    let ok: Vec<u64> = docs.iter().map(|d| d["ok"].as_u64().unwrap()).collect();
    assert_eq!(ok, [1001, 1000, 1000]);
    for d in &docs {
        let skew = d["shard"]["skew_ms"].as_f64().expect("a skew");
        assert!((0.0..1000.0).contains(&skew), "{skew} ms");
    }
    let merged = merge(&files).unwrap();
    assert_eq!(merged["ok"], 3001);
    assert_eq!(merged["latency"]["count"], 3001);
    assert_eq!(merged["config"]["connections"], 7);
    let ranks: Vec<u64> = merged["shards"]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1, 2]);
    assert!(merged.get("shard").is_none(), "the merge is no shard");
    // The server's own count: its last line once stopped (the line before says it serves).
    let mut last = stop_with_sigterm(&mut server, &lines, LIMIT);
    while !last.starts_with("stopped:") {
        last = lines.recv_timeout(LIMIT).unwrap();
    }
    assert!(
        last.contains("requests 3001,"),
        "the server counted: {last}"
    );

    // Bad sets: each one line, exit 2, nothing on stdout.
    let other = dir.join("other.json").display().to_string();
    let world4 = dir.join("world4.json").display().to_string();
    let damaged = dir.join("damaged.json").display().to_string();
    let mut doc = docs[2].clone();
    doc["shard"]["plan"]["--rate"] = "5000".into();
    doc["shard"]["plan_hash"] = "0123456789abcdef".into();
    std::fs::write(&other, doc.to_string()).unwrap();
    let mut doc = docs[2].clone();
    doc["shard"]["world"] = 4.into();
    std::fs::write(&world4, doc.to_string()).unwrap();
    let mut doc = docs[2].clone();
    doc["series"][0]["histogram"] = "HISTFAAAAB94nJNpmSzMwMDAxgABMDoTAFmgBNI=".into();
    std::fs::write(&damaged, doc.to_string()).unwrap();
    let (a, b, c) = (files[0].clone(), files[1].clone(), files[2].clone());
    for (set, says) in [
        (vec![a.clone(), b.clone()], "rank 2 of 3 missing"),
        (
            vec![a.clone(), b.clone(), b.clone(), c.clone()],
            "rank 1 is there twice",
        ),
        (vec![a.clone(), b.clone(), other], "--rate unset vs 5000"),
        (vec![a.clone(), b.clone(), world4], "world size disagrees"),
        (vec![a, b, damaged], "series[0].histogram"),
    ] {
        let (code, err) = merge(&set).unwrap_err();
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{says}: {err}");
    }
}

/// A shard released after its agreed start (here, one in the past) marks itself late, and
/// the merge lists it; rank and world come from the engine's environment with `--shard auto`.
#[test]
fn a_start_in_the_past_is_late_and_auto_reads_the_engine() {
    // 5 ms a reply, so each shard's 100 requests on 2 connections take ~250 ms: the two
    // processes, started together, overlap, as the merge of shards requires (at 0 ms they
    // took a few ms each, and one could end before the other began).
    let server = ServerProcess::start(&["--delay", "5ms"]);
    let past = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        - 5_000;
    let dir = tempdir("late");
    let file = dir.join("k8s-%r.json").display().to_string();
    let zero = dir.join("k8s-0.json").display().to_string();
    // Rank 1 as a Kubernetes Indexed Job's pod, told to start 5 s ago; rank 0 of the same
    // plan at the same time, by Slurm's variables, with no agreed start.
    // One shard of the plan: `run URL -n 200 -c 2` with its own flags and environment.
    let shard = |flags: &[&str], env: &[(&str, &str)]| {
        bin()
            .args([
                "run",
                &server.url,
                "-n",
                "200",
                "-c",
                "2",
                "-q",
                "--no-save",
            ])
            .args(flags)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let past = past.to_string();
    let late = shard(
        &[
            "--shard",
            "auto",
            "--world",
            "2",
            "--out",
            &file,
            "--start-at",
            &past,
        ],
        &[("JOB_COMPLETION_INDEX", "1")],
    );
    let on_time = shard(
        &["--shard", "auto", "--out", &zero],
        &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")],
    );
    for c in [late, on_time] {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("k8s-1.json")).unwrap()).unwrap();
    let shard = &doc["shard"];
    assert_eq!(
        (shard["rank"].as_u64(), shard["world"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(shard["source"], "JOB_COMPLETION_INDEX");
    assert_eq!(shard["share"]["requests"], 100);
    assert!(shard["skew_ms"].as_f64().unwrap() >= 5_000.0, "{shard}");
    assert_eq!(shard["late"], true);
    let notes = doc["notes"].to_string();
    assert!(notes.contains("later than --max-skew"), "{notes}");
    let merged = merge(&[zero, dir.join("k8s-1.json").display().to_string()]).unwrap();
    assert_eq!(merged["ok"], 200);
    assert_eq!(merged["shards"]["late"], serde_json::json!([1]));
}

/// Two shards that differ only in a workload flag (here --arrival) ran different loads: the
/// merge refuses them and names the flag, as it names a different --rate.
#[test]
fn shards_of_another_arrival_are_refused_by_name() {
    let server = ServerProcess::start(&[]);
    let dir = tempdir("arrival");
    let out = dir.join("shard-%r.json").display().to_string();
    let mut runs = shard_runs(
        &server.url,
        2,
        &out,
        &["--rate", "200", "-c", "2", "-d", "300ms"],
    );
    runs[0].extend([
        "--arrival".into(),
        "poisson".into(),
        "--seed".into(),
        "7".into(),
    ]);
    runs[1].extend(["--seed".into(), "7".into()]);
    for r in &mut runs {
        r[5] = "+300ms".into(); // --start-at: soon, the test is short
    }
    launch_together(&runs);
    let files: Vec<String> = (0..2)
        .map(|r| dir.join(format!("shard-{r}.json")).display().to_string())
        .collect();
    let (code, err) = merge(&files).unwrap_err();
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--arrival Poisson vs unset"), "{err}");
    assert!(!err.contains("--seed"), "the seeds agree: {err}");
}

/// Bad shard flags: one line, exit 2, before anything runs.
#[test]
fn bad_shard_flags_are_usage_errors() {
    let server = ServerProcess::start(&[]);
    let u = server.url.as_str();
    for (args, says) in [
        (
            vec!["run", u, "-c", "2", "--shard", "2/3"],
            "--connections 2 leaves rank 2 none",
        ),
        (
            vec!["run", u, "-c", "3", "-n", "2", "--shard", "2/3"],
            "--requests 2",
        ),
        (vec!["run", u, "--shard", "3/3"], "not below the world size"),
        (vec!["run", u, "--shard", "auto"], "found no rank"),
        (
            vec!["run", u, "--shard", "0/1", "--start-at", "17"],
            "seconds?",
        ),
        (vec!["run", u, "--start-at", "+1s"], "give --shard R/N too"),
        (
            vec![
                "run",
                u,
                "-c",
                "4",
                "--rate",
                "100..200/2s",
                "--shard",
                "0/2",
            ],
            "constant --rate",
        ),
        (
            vec!["compare", u, u, "--shard", "0/2"],
            "for `wirebench run` so far",
        ),
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A fresh directory of this test's own under the temp dir.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebench-shard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A network namespace of the test's own with its loopback up, removed when dropped.
struct Netns(String);

impl Netns {
    /// `ip netns add NAME`; None where namespaces cannot be made (not root, no `ip`).
    fn up(name: String) -> Option<Netns> {
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ip(&["netns", "add", &name]) {
            return None;
        }
        let ns = Netns(name);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]).then_some(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

/// Issue 38: a merge of shards keeps each shard's own notes (here: requests due and never
/// sent, a server too slow for the rate), shows the load's whole schedule (2 × 1000/s is
/// 2,000/s, not one shard's 1000/s), and names each shard's host so that two network
/// namespaces of one machine (one hostname) are told apart. Each shard runs in a namespace
/// of its own against a server at the same address in it (so the plans agree).
#[test]
fn a_merge_of_shards_keeps_their_notes_the_whole_schedule_and_their_namespaces() {
    let id = std::process::id();
    let names = [format!("wb38m{id}a"), format!("wb38m{id}b")];
    let Some(spaces) = names
        .iter()
        .map(|n| Netns::up(n.clone()))
        .collect::<Option<Vec<Netns>>>()
    else {
        eprintln!("skipped: cannot make network namespaces (needs root and ip)");
        return;
    };
    // 20 ms a request on 2 connections: at most 100/s of each shard's 1000/s goes out.
    let servers: Vec<ServerProcess> = spaces
        .iter()
        .map(|ns| {
            ServerProcess::start_with(
                common::bin_via(&["ip", "netns", "exec", &ns.0]),
                &["-l", "127.0.0.1:7038", "--delay", "20ms"],
            )
        })
        .collect();
    let dir = tempdir("netns");
    let out = dir.join("shard-%r.json").display().to_string();
    let mut runs = shard_runs(
        &servers[0].url,
        2,
        &out,
        &[
            "--rate",
            "2000",
            "-c",
            "4",
            "--pipeline",
            "1",
            "-d",
            "500ms",
        ],
    );
    for r in &mut runs {
        r[5] = "+500ms".into(); // --start-at: soon, the test is short
    }
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let children: Vec<_> = runs
        .iter()
        .zip(&spaces)
        .map(|(a, ns)| {
            common::bin_via(&["ip", "netns", "exec", &ns.0])
                .args(a)
                .env("WIREBENCH_T0", t0.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        // Exit 1: the target did not keep up with the load (its result is written all the same).
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let files: Vec<String> = (0..2)
        .map(|r| dir.join(format!("shard-{r}.json")).display().to_string())
        .collect();
    let parts: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let merged = merge(&files).unwrap();
    let hosts: Vec<&str> = merged["shards"]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    for (host, ns) in hosts.iter().zip(&names) {
        assert!(host.ends_with(&format!("(netns {ns})")), "{hosts:?}");
    }
    assert_ne!(hosts[0], hosts[1]);
    assert_eq!(
        merged["open_loop"]["schedule"], "2,000/s (2 × 1000/s)",
        "{}",
        merged["open_loop"]
    );
    // Every shard's own note is in the merge, named by its shard (the shards owed most of
    // their 1000/s: the note of requests never sent is among them).
    let notes: Vec<&str> = merged["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for (rank, part) in parts.iter().enumerate() {
        let own = part["notes"].as_array().unwrap();
        assert!(
            own.iter()
                .any(|n| n.as_str().unwrap().contains("were never sent")),
            "{own:?}"
        );
        for n in own {
            let named = format!(
                "shard {rank} of 2 ({}): {}",
                hosts[rank],
                n.as_str().unwrap()
            );
            assert!(notes.contains(&named.as_str()), "{named} not in {notes:?}");
        }
    }
    drop(servers);
}
