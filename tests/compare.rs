//! `wirebench compare` against `wirebench serve tcp` processes: identical servers come out "no
//! significant difference", a server with twice the service time comes out significant, the
//! JSON validates, and bad input exits 2.

mod common;

use common::{run_bounded, ServerProcess};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

/// `wirebench compare ARGS`: exit code, stdout, stderr.
fn compare(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    let (out, _) = run_bounded(&all, LIMIT);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The verdict line about `metric` (e.g. "the median latency").
fn verdict<'a>(text: &'a str, metric: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with("b") && l.contains(metric))
        .unwrap_or_else(|| panic!("no verdict on {metric}:\n{text}"))
}

#[test]
fn identical_servers_show_no_significant_difference() {
    // A 1 ms service time makes the latency the server's, not the busy machine's.
    let (a, b) = (
        ServerProcess::start(&["--delay", "1ms"]),
        ServerProcess::start(&["--delay", "1ms"]),
    );
    let (a, b) = (format!("a={}", a.url), format!("b={}", b.url));
    let args = [
        &a[..],
        &b,
        "-d",
        "300ms",
        "--runs",
        "6",
        "--discard-first",
        "-q",
    ];
    // A 95% test calls one comparison in 20 of identical servers significant by design: one
    // more try keeps this test's false alarms near 1 in 400.
    let mut lines = Vec::new();
    for _ in 0..2 {
        let (code, text, err) = compare(&args);
        assert_eq!(code, 0, "{text}{err}");
        assert!(text.contains("Welch"), "the method is named: {text}");
        let line = verdict(&text, "the median latency").to_string();
        if line.contains("no significant difference") {
            return;
        }
        lines.push(line);
    }
    panic!("identical servers differ twice: {lines:?}");
}

#[test]
fn twice_the_service_time_is_significant() {
    let (a, b) = (
        ServerProcess::start(&["--delay", "1ms"]),
        ServerProcess::start(&["--delay", "2ms"]),
    );
    let (a, b) = (format!("a={}", a.url), format!("b={}", b.url));
    let (code, text, err) = compare(&[
        "--baseline",
        "a",
        &a,
        &b,
        "-d",
        "300ms",
        "--runs",
        "4",
        "-q",
    ]);
    assert_eq!(code, 0, "{text}{err}");
    let line = verdict(&text, "the mean latency");
    assert!(
        line.contains("b adds") && line.ends_with("; significant"),
        "{line}"
    );
    let line = verdict(&text, "the throughput");
    assert!(
        line.contains("b takes") && line.ends_with("; significant"),
        "{line}"
    );
    // The Flash view: a row per target with throughput, median, mean and p95.
    assert!(text.contains("| target | ops/s | median | mean"), "{text}");
}

#[test]
fn the_json_document_validates() {
    let (a, b) = (ServerProcess::start(&[]), ServerProcess::start(&[]));
    let (a, b) = (format!("a={}", a.url), format!("b={}", b.url));
    let (code, text, err) = compare(&[&a, &b, "-n", "300", "--runs", "3", "--json", "-q"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    for (file, part) in [("compare.v1.json", &doc), ("sweep.v1.json", &doc["sweep"])] {
        let path = format!("{}/schema/{file}", env!("CARGO_MANIFEST_DIR"));
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let v = jsonschema::draft202012::new(&schema).unwrap();
        let errors: Vec<String> = v
            .iter_errors(part)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{file}: {errors:#?}");
    }
    assert_eq!(doc["baseline"], "a");
    assert_eq!(
        doc["verdicts"].as_array().unwrap().len(),
        4,
        "one per metric"
    );
    assert_eq!(doc["shapes"].as_array().unwrap().len(), 2, "one per target");
}

#[test]
fn bad_comparisons_exit_2() {
    for (args, says) in [
        (&["a=tcp://127.0.0.1:9"][..], "two targets"),
        (
            &[
                "a=tcp://127.0.0.1:9",
                "b=tcp://127.0.0.1:9",
                "--baseline",
                "x",
            ],
            "--baseline x",
        ),
        (
            &[
                "a=tcp://127.0.0.1:9",
                "b=tcp://127.0.0.1:9",
                "--runs",
                "2",
                "--discard-first",
            ],
            "2 kept runs",
        ),
    ] {
        let (code, out, err) = compare(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
