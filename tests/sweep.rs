//! Sweeps and several targets against one `wirebench serve tcp` process: the tables' rows and
//! columns, the values in their cells, the run order, per-point warm-ups, the JSON document
//! against schema/sweep.v1.json, and bad lists refused before anything runs.

mod common;

use common::{run_bounded, ServerProcess};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A schema file under schema/, compiled.
fn validator(file: &str) -> jsonschema::Validator {
    let path = format!("{}/schema/{file}", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema")
}

/// Panics with every error when `doc` does not validate against `file`.
fn assert_valid(file: &str, doc: &Value) {
    let v = validator(file);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:#?}");
}

/// `wirebench run ARGS`: exit code, stdout, stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    let (out, _) = run_bounded(&all, LIMIT);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The markdown table under the line starting with `title`: its rows, split into cells.
fn table(text: &str, title: &str) -> Vec<Vec<String>> {
    let start = text
        .find(title)
        .unwrap_or_else(|| panic!("no table '{title}' in:\n{text}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|-"))
        .map(|l| common::row_cells(l).into_iter().map(String::from).collect())
        .collect()
}

#[test]
fn a_size_sweep_makes_a_row_per_target_and_a_column_per_size() {
    let server = ServerProcess::start(&[]);
    let (local, other) = (
        format!("local={}", server.url),
        format!("other={}", server.url),
    );
    let (code, text, err) = run(&[
        &local,
        &other,
        "--size",
        "4,128,512..2k",
        "-d",
        "200ms",
        "-q",
    ]);
    assert_eq!(code, 0, "{text}{err}");
    for title in [
        "Operations per second by --size",
        "Median latency (p50) by --size",
        "Errors by --size",
    ] {
        let rows = table(&text, title);
        // Sizes as a user writes them: 1k, not 1024 (issue 40).
        assert_eq!(rows[0], ["", "4", "128", "512", "1k", "2k"], "{title}");
        assert_eq!(rows.len(), 3, "{title}: {rows:?}");
        assert_eq!(
            (rows[1][0].as_str(), rows[2][0].as_str()),
            ("local", "other")
        );
    }
    let kb = table(&text, "Payload throughput");
    for row in &kb[1..] {
        let v: Vec<f64> = row[1..].iter().map(|c| c.parse().unwrap()).collect();
        // 512 times the bytes per request; the request rate falls far less than that.
        assert!(v[4] > 20.0 * v[0], "throughput grows with size: {row:?}");
    }
    assert!(table(&text, "Errors by --size")[1][1..]
        .iter()
        .all(|c| c == "0"));
    // One run of 200 ms per point shows no spread of its own, and the report says so.
    assert!(
        text.contains("note: one run per point, too short (under 3 whole seconds)"),
        "{text}"
    );
}

#[test]
fn the_json_document_embeds_each_points_result_in_run_order() {
    let server = ServerProcess::start(&[]);
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let (code, text, err) = run(&[
        &a, &b, "--size", "64,4k", "-d", "200ms", "--warmup", "50", "--json", "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    assert_valid("sweep.v1.json", &doc);
    assert_eq!(doc["schema"], "wirebench.sweep/1");
    let points = doc["points"].as_array().unwrap();
    let order: Vec<(&str, &str)> = points
        .iter()
        .map(|p| {
            (
                p["target"].as_str().unwrap(),
                p["values"]["--size"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, [("a", "64"), ("b", "64"), ("a", "4k"), ("b", "4k")]);
    for p in points {
        assert_valid("result.v1.json", &p["result"]);
        let size = wirebench::units::parse_size(p["values"]["--size"].as_str().unwrap()).unwrap();
        assert_eq!(p["result"]["config"]["request_bytes"], size);
        assert_eq!(p["result"]["target"], server.url);
        // Each point has its own warm-up.
        assert!(
            p["result"]["warmup"].is_object(),
            "{}",
            p["result"]["warmup"]
        );
    }
}

#[test]
fn a_second_swept_flag_makes_a_table_per_value() {
    let server = ServerProcess::start(&[]);
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let (code, text, err) = run(&[&a, &b, "--size", "64,1k", "-c", "1,2", "-d", "150ms", "-q"]);
    assert_eq!(code, 0, "{err}");
    for c in ["1", "2"] {
        let rows = table(
            &text,
            &format!("Operations per second by --size, at --connections {c}:"),
        );
        assert_eq!(rows[0], ["", "64", "1k"]);
        assert_eq!((rows[1][0].as_str(), rows[2][0].as_str()), ("a", "b"));
    }
    // One target over two flags is one grid per metric, the second flag's values its rows
    // (issue 40: 15 one-row tables).
    let (code, text, err) = run(&[
        &server.url,
        "--size",
        "64,1k",
        "-c",
        "1,2",
        "-d",
        "150ms",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let title = format!(
        "Operations per second of {} by --size (columns) and --connections (rows):",
        server.url
    );
    let rows = table(&text, &title);
    assert_eq!(rows[0], ["", "64", "1k"]);
    assert_eq!(rows[1][0], "--connections 1");
    assert_eq!(rows[2][0], "--connections 2");
    assert_eq!(text.matches("Operations per second").count(), 1, "{text}");
    let (_, json, _) = run(&[
        &server.url,
        "--size",
        "64,1k",
        "-c",
        "1,2",
        "-d",
        "100ms",
        "--json",
        "-q",
    ]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let configs: Vec<(u64, u64)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let c = &p["result"]["config"];
            (
                c["request_bytes"].as_u64().unwrap(),
                c["connections"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(configs, [(64, 1), (1024, 1), (64, 2), (1024, 2)]);
}

#[test]
fn bad_lists_are_one_line_and_exit_2_before_anything_runs() {
    // Nothing listens here: a bad list must be refused before a connection is tried.
    let url = "tcp://127.0.0.1:9";
    for (args, says) in [
        (&[url, "--size", ""][..], "empty list"),
        (&[url, "--size", "4,,8"], "empty item"),
        (&[url, "-c", "1,"], "empty item"),
        (&[url, "--size", "64k..4"], "ends below its start"),
        (&[url, "--rate", "5000..1000"], "ends below its start"),
        (
            &[
                url,
                "--size",
                "4,8",
                "--mode",
                "stream",
                "--pipeline",
                "2,4",
            ],
            "--pipeline",
        ),
        (
            &["a=tcp://127.0.0.1:9", "a=tcp://127.0.0.1:10"],
            "given twice",
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
}

/// The ops/s cells of a per-run table row, parentheses kept.
fn per_run_row<'a>(rows: &'a [Vec<String>], name: &str) -> &'a [String] {
    &rows
        .iter()
        .find(|r| r[0] == name)
        .unwrap_or_else(|| panic!("no row {name}: {rows:?}"))[1..]
}

#[test]
fn discard_first_excludes_exactly_the_first_run() {
    let server = ServerProcess::start(&[]);
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let (code, text, err) = run(&[&a, &b, "-n", "3000", "--runs", "4", "--discard-first", "-q"]);
    assert_eq!(code, 0, "{text}{err}");
    let rows = table(&text, "Operations per second per run:");
    assert_eq!(
        rows[0],
        ["", "Run 1", "Run 2", "Run 3", "Run 4", "mean", "median", "stddev", "95% CI"]
    );
    for name in ["a", "b"] {
        let row = per_run_row(&rows, name);
        assert!(
            row[0].starts_with('(') && row[0].ends_with(')'),
            "run 1 marked: {row:?}"
        );
        let kept: Vec<f64> = row[1..4]
            .iter()
            .map(|c| c.parse().expect("a kept run is unmarked"))
            .collect();
        let mean: f64 = row[4].parse().unwrap();
        // The mean is of runs 2 to 4 alone (cells are rounded to whole ops/s).
        let want = kept.iter().sum::<f64>() / 3.0;
        assert!(
            (mean - want).abs() <= 1.0,
            "{row:?}: mean {mean}, runs 2-4 give {want}"
        );
        assert!(row[7].starts_with('±'), "{row:?}");
    }
    assert!(text.contains("Runs in parentheses are the first run of each, discarded"));
    assert!(text.contains("Student's t"));
}

#[test]
fn repeated_runs_in_json_interleave_and_mark_the_discarded() {
    let server = ServerProcess::start(&[]);
    let (a, b) = (format!("a={}", server.url), format!("b={}", server.url));
    let (code, json, err) = run(&[
        &a,
        &b,
        "-n",
        "500",
        "--runs",
        "3",
        "--discard-first",
        "--json",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_valid("sweep.v1.json", &doc);
    assert_eq!(
        (doc["runs"].as_u64(), doc["discard"].as_u64()),
        (Some(3), Some(1))
    );
    let order: Vec<(&str, u64, bool)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["target"].as_str().unwrap(),
                p["run"].as_u64().unwrap(),
                p["discarded"].as_bool().unwrap(),
            )
        })
        .collect();
    // Rounds interleave the targets: A B A B A B, never A A A B B B.
    assert_eq!(
        order,
        [
            ("a", 1, true),
            ("b", 1, true),
            ("a", 2, false),
            ("b", 2, false),
            ("a", 3, false),
            ("b", 3, false)
        ]
    );
}

#[test]
fn a_discard_that_keeps_no_run_is_refused() {
    for args in [
        &["tcp://127.0.0.1:9", "--runs", "3", "--discard", "3"][..],
        &["tcp://127.0.0.1:9", "--discard-first"],
        &["tcp://127.0.0.1:9", "--runs", "0"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("--runs") || err.contains("--discard"), "{err}");
    }
}

#[test]
fn a_target_that_cannot_be_reached_mid_sweep_keeps_the_runs_measured() {
    let server = ServerProcess::start(&[]);
    let up = format!("up={}", server.url);
    let down = format!("down=tcp://127.0.0.1:{}", common::free_port());
    let (code, text, err) = run(&[&up, &down, "--size", "4,64", "-d", "200ms", "-q"]);
    assert_eq!(code, 1, "{text}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("stopped after 2 of 4 runs") && err.contains("refused"),
        "{err}"
    );
    // The run of `up` at 4 B is in the table, and the failed one of `down` (no operation ok);
    // what never ran is a dash.
    let ops = table(&text, "Operations per second");
    assert_eq!(ops[1][0], "up");
    assert!(ops[1][1].parse::<f64>().unwrap() > 0.0, "{ops:?}");
    assert_eq!(ops[2][1].parse::<f64>().unwrap(), 0.0, "{ops:?}");
    assert_eq!((ops[1][2].as_str(), ops[2][2].as_str()), ("—", "—"));

    let (code, json, _) = run(&[&up, &down, "--size", "4,64", "-d", "200ms", "--json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&json).expect("the runs measured, as JSON");
    assert_valid("sweep.v1.json", &doc);
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{doc}");
    assert_eq!(points[1]["result"]["errors"]["total"], 1, "{doc}");
    assert!(
        doc["stopped"].as_str().unwrap().contains("refused"),
        "{doc}"
    );
}

/// Issue 38: a sweep on a contended machine (a CPU hog pinned beside the server, as
/// tests/common/noise.rs makes it) says so in one line, in the JSON (`busy`), the terminal
/// report and the HTML page, exactly when its kept runs' median CPU pressure is 50% or more.
#[test]
fn a_sweep_beside_a_cpu_hog_names_the_busy_machine_in_one_line() {
    use common::noise::{self, Hog};
    let _turn = common::one_at_a_time();
    let _hog = Hog::beside_the_servers();
    let server = noise::server(&["--delay", "1ms"]);
    let args = ["run", &server.url, "-c", "1,2", "-d", "400ms", "--no-save"];
    let out = noise::client(&[&args[..], &["--json", "-q"][..]].concat(), LIMIT);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_valid("sweep.v1.json", &doc);
    let pressure = common::busy_line_agrees(&doc);
    eprintln!("CPU pressure {pressure:?}: {}", doc["busy"]);
    // The page says what the document says.
    let dir = std::env::temp_dir().join(format!("wirebench-busy-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sweep.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let page = dir.join("sweep.html");
    let (o, _) = run_bounded(
        &[
            "report",
            file.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        LIMIT,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.contains("the machine was busy: CPU pressure"),
        doc["busy"].is_string(),
        "{}",
        doc["busy"]
    );
    let _ = std::fs::remove_dir_all(&dir);
    // The terminal's report: the line at most once, on a line of its own.
    let out = noise::client(&args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("the machine was busy"))
        .collect();
    assert!(lines.len() <= 1, "{text}");
    for l in lines {
        assert!(
            l.starts_with("  the machine was busy: CPU pressure ") && l.contains("— "),
            "{l}"
        );
    }
}
