//! `wirebench study FILE.toml` against one `wirebench serve tcp` process: a two-size sweep
//! from a plan file, its report.md (tables and methodology) and study.json (against
//! schema/sweep.v1.json), --dry-run running nothing, and bad plans pointed at by line:col.

mod common;

use common::{run_bounded, ServerProcess};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A fresh directory under the system's temp dir, removed first if a past run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebench-study-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` as `dir/plan.toml`, returning its path.
fn plan(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `wirebench study ARGS`: exit code, stdout, stderr.
fn study(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["study"];
    all.extend_from_slice(args);
    let (out, _) = run_bounded(&all, LIMIT);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The two-size plan against `url`.
fn two_sizes(url: &str) -> String {
    format!(
        "title = \"DIM: message rate by size\"\n[targets]\nlocal = {{ url = \"{url}\", server = \"wirebench serve tcp\" }}\n[run]\nmode = \"rr\"\nsize = [4, 128]\nduration = \"200ms\"\nwarmup = \"100ms\"\n"
    )
}

#[test]
fn a_plan_file_runs_its_sweep_and_writes_report_and_json() {
    let server = ServerProcess::start(&[]);
    let dir = scratch("out");
    let file = plan(&dir, &two_sizes(&server.url));
    let out = dir.join("results");
    let (code, text, err) = study(&[&file, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}{err}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.starts_with("# DIM: message rate by size\n"),
        "{report}"
    );
    assert!(
        report.contains("Operations per second by --size"),
        "{report}"
    );
    assert!(report.contains("|       | 4 "), "{report}");
    for fact in [
        "## Methodology",
        "- Date: 20",
        "- Command: `",
        "study",
        "- wirebench: ",
        "- Kernel: Linux",
        "- CPU: ",
        "logical CPUs",
        "wirebench serve tcp",
        "```toml\ntitle = \"DIM",
    ] {
        assert!(report.contains(fact), "no {fact:?} in:\n{report}");
    }
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    let path = format!("{}/schema/sweep.v1.json", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("a valid schema");
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(doc["points"].as_array().unwrap().len(), 2);
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "only the two files, no temporaries: {names:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_out_the_tables_are_printed() {
    let server = ServerProcess::start(&[]);
    let dir = scratch("print");
    let file = plan(&dir, &two_sizes(&server.url));
    let (code, text, err) = study(&[&file]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(text.contains("Operations per second by --size"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dry_run_lists_the_points_and_runs_nothing() {
    let dir = scratch("dry");
    // Port 9 on loopback: nothing listens, so any run would fail; a dry run tries none.
    let file = plan(
        &dir,
        "[targets]\na = \"tcp://127.0.0.1:9\"\nb = \"tcp://127.0.0.1:9\"\n[run]\nsize = \"4,128,512\"\nduration = \"2s\"\nwarmup = \"500ms\"\nruns = 2\n",
    );
    let (out, took) = run_bounded(&["study", &file, "--dry-run"], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(took < Duration::from_secs(2), "a dry run took {took:?}");
    assert!(
        text.contains("12 runs (2 targets x 3 points x 2 runs)"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("--size 512")).count(),
        4,
        "{text}"
    );
    // 12 runs × (2 s + 0.5 s).
    assert!(text.contains("estimated time: 30.0 s"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_plans_name_the_file_line_and_column_and_exit_2() {
    let dir = scratch("bad");
    let head = "[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nduration = \"1s\"\n";
    let cases = [
        ("  sise = \"4\"\n", ":5:3: unknown key 'sise'"),
        ("size = \"abc\"\n", ":5:1: --size: 'abc' is not a byte size"),
        ("mode = \"fast\"\n", ":5:1: mode: invalid value 'fast'"),
        ("size = \"4\n", ":5:10: not valid TOML"),
    ];
    for (tail, says) in cases {
        let file = plan(&dir, &format!("{head}{tail}"));
        let (code, text, err) = study(&[&file, "--out", dir.join("never").to_str().unwrap()]);
        assert_eq!(code, 2, "{tail:?}: {text}{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with(&format!("{file}{says}")), "{tail:?}: {err}");
        assert!(!dir.join("never").exists(), "a bad plan writes nothing");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plan_errors_point_at_the_key_or_target_they_are_about() {
    let dir = scratch("blame");
    let cases = [
        (
            "[targets]\nx = \"tcp://127.0.0.1:9\"\n  y = \"foo://127.0.0.1:9\"\n",
            ":3:3: unknown scheme 'foo'",
        ),
        (
            "[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nruns = 2\ndiscard = 2\n",
            ":5:1: --discard 2 with --runs 2",
        ),
    ];
    for (text, says) in cases {
        let file = plan(&dir, text);
        let (code, _, err) = study(&[&file, "--dry-run"]);
        assert_eq!(code, 2, "{text:?}: {err}");
        assert!(err.starts_with(&format!("{file}{says}")), "{text:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_runs_leave_no_out_directory() {
    let dir = scratch("failed");
    // Nothing listens on port 9: the run fails at its first connect.
    let file = plan(
        &dir,
        "[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nduration = \"200ms\"\n",
    );
    let out = dir.join("results");
    let (code, _, err) = study(&[&file, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(!out.exists(), "a failed study left {out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
