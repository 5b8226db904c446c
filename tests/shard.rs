//! Issue 19: many generators (shards) of one load, merged exactly: per-second histograms in
//! the result, the shard contract (`--shard`, `--start-at`, `--out`), and `merge` of shards.

mod common;

use common::{bin, run_bounded, ServerProcess};
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

/// A fresh directory of this test's own under the temp dir.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebench-shard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
