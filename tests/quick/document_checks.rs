//! Documents read back are checked against their schema and ranges before anything uses
//! them: `report`, `merge` and `diff` refuse a corrupt one in one line naming the file and the
//! field, exit 2 (report spun forever on `series[0].p99_us = 1.5e308`, and drew pages from
//! garbage histograms, strings for numbers and negative counts with exit 0).

use super::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Generous bound on reading a document: the spin this guards against never ended.
const LIMIT: Duration = Duration::from_secs(20);

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebench-doc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A real result: a short run's --json, of two seconds in its series (the per-second chart
/// is where 1.5e308 made the render spin).
fn result(url: &str) -> Value {
    let (json, code) = common::run_json(&[url, "-d", "1200ms", "--no-save"], LIMIT);
    assert_eq!(code, 0, "{json}");
    json
}

/// `doc` with `damage` done to it, written to `dir/name.json`.
fn damaged(dir: &Path, name: &str, doc: &Value, damage: impl Fn(&mut Value)) -> String {
    let mut doc = doc.clone();
    damage(&mut doc);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// Damage done to a document.
type Damage = Box<dyn Fn(&mut Value)>;

/// Each kind of damage, and the field the refusal must name.
fn damages() -> Vec<(&'static str, &'static str, Damage)> {
    vec![
        (
            "huge",
            "series[0].p99_us",
            Box::new(|d| d["series"][0]["p99_us"] = 1.5e308.into()),
        ),
        ("string", "ok", Box::new(|d| d["ok"] = "12".into())),
        (
            "negative",
            "errors.total",
            Box::new(|d| d["errors"]["total"] = (-3).into()),
        ),
        (
            "garbage",
            "latency.histogram.data",
            Box::new(|d| d["latency"]["histogram"]["data"] = "SGVsbG8gd29ybGQ=".into()),
        ),
        (
            "missing",
            "throughput",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("throughput");
            }),
        ),
    ]
}

#[test]
fn report_and_merge_refuse_a_damaged_document_naming_the_field() {
    let server = common::ServerProcess::start(&[]);
    let doc = result(&server.url);
    let dir = scratch("report");
    // The undamaged document renders: the checks accept what wirebench writes.
    let good = damaged(&dir, "good", &doc, |_| {});
    let page = dir.join("good.html");
    common::stdout_ok(&["report", &good, "-o", page.to_str().unwrap()], LIMIT);
    for (name, field, damage) in damages() {
        let file = damaged(&dir, name, &doc, damage);
        let html = dir.join(format!("{name}.html"));
        let out = common::usage_error(&["report", &file, "-o", html.to_str().unwrap()], LIMIT);
        let line = String::from_utf8_lossy(&out.stderr);
        assert!(
            line.contains(&file) && line.contains(&format!("{field}:")),
            "{line}"
        );
        assert!(!html.exists(), "{name}: a page was written");
        let out = common::usage_error(&["merge", &good, &file], LIMIT);
        let line = String::from_utf8_lossy(&out.stderr);
        assert!(
            line.contains(&file) && line.contains(&format!("{field}:")),
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A result damaged in the history: diff (and show) name the stored run and the field.
#[test]
fn diff_refuses_a_damaged_stored_result() {
    let server = common::ServerProcess::start(&[]);
    let dir = scratch("diff");
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    for _ in 0..2 {
        let (out, _) = common::run_bounded(
            &["run", &server.url, "-d", "200ms", "-q", "--db", db],
            LIMIT,
        );
        assert_eq!(out.status.code(), Some(0));
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let text: String = conn
        .query_row(
            "SELECT document FROM runs ORDER BY n DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["series"][0]["p99_us"] = 1.5e308.into();
    conn.execute(
        "UPDATE runs SET document = ?1 WHERE n = (SELECT MAX(n) FROM runs)",
        [doc.to_string()],
    )
    .unwrap();
    drop(conn);
    let out = common::usage_error(&["diff", "last~1", "last", "--db", db], LIMIT);
    let line = String::from_utf8_lossy(&out.stderr);
    assert!(line.contains("series[0].p99_us:"), "{line}");
    let out = common::usage_error(&["show", "last", "--db", db], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("series[0].p99_us:"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Figures no run measures (1e308 ops/s, an `ok` of 2^64-1, ok operations in 0 s, a second
/// of 2^63) are refused by `report` and `merge` naming the field; a second of 10 million is a
/// figure, but `merge` sizes its series by it (second = 100,000 cost 1.6 GB): refused in one
/// line before anything is allocated.
#[test]
fn impossible_figures_and_far_seconds_are_refused_before_anything_is_sized() {
    let server = common::ServerProcess::start(&[]);
    let doc = result(&server.url);
    let dir = scratch("ranges");
    let good = damaged(&dir, "good", &doc, |_| {});
    let cases: Vec<(&str, &str, Damage)> = vec![
        (
            "ops",
            "throughput.ops_per_s",
            Box::new(|d| d["throughput"]["ops_per_s"] = 1e308.into()),
        ),
        ("okmax", "ok", Box::new(|d| d["ok"] = u64::MAX.into())),
        (
            "notime",
            "duration_s",
            Box::new(|d| d["duration_s"] = 0.into()),
        ),
        (
            "second63",
            "series[0].second",
            Box::new(|d| d["series"][0]["second"] = (1u64 << 63).into()),
        ),
    ];
    for (name, field, damage) in cases {
        let file = damaged(&dir, name, &doc, damage);
        let html = dir.join(format!("{name}.html"));
        let out = common::usage_error(&["report", &file, "-o", html.to_str().unwrap()], LIMIT);
        let line = String::from_utf8_lossy(&out.stderr);
        assert!(line.contains(&format!("{field}:")), "{name}: {line}");
        assert!(!html.exists(), "{name}: a page was written");
        let out = common::usage_error(&["merge", &good, &file], LIMIT);
        let line = String::from_utf8_lossy(&out.stderr);
        assert!(line.contains(&format!("{field}:")), "{name}: {line}");
    }
    let last = doc["series"].as_array().unwrap().len() - 1;
    let far = damaged(&dir, "far", &doc, |d| {
        d["series"][last]["second"] = 10_000_000.into()
    });
    let out = common::usage_error(&["merge", &good, &far], LIMIT);
    let line = String::from_utf8_lossy(&out.stderr);
    assert!(line.contains("span 10000"), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}
