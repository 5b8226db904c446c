//! The library's entry point for a whole command (issue 18, item 4): `wirebench::app::execute`
//! runs a command line in this process, its report written to the writer it is given, and
//! returns the exit code. What it writes and returns is the binary's, byte for byte.

use super::common;

use common::{execute, Executed};
use std::net::TcpListener;
use std::time::Duration;
use wirebench::serve::tcp::{self, ServerHandle, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(30);

/// An echo server in this process, and its URL.
fn echo() -> (ServerHandle, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    (srv, url)
}

/// `args` run by the binary and in this process: the same stdout, stderr and exit code.
fn same_as_the_binary(args: &[&str]) -> Executed {
    let (out, _) = common::run_bounded(args, LIMIT);
    let done = execute(args, LIMIT);
    assert_eq!(
        done.stdout,
        String::from_utf8_lossy(&out.stdout),
        "{args:?}"
    );
    assert_eq!(
        done.stderr,
        String::from_utf8_lossy(&out.stderr),
        "{args:?}"
    );
    assert_eq!(Some(done.code), out.status.code(), "{args:?}");
    done
}

#[test]
fn a_run_writes_its_report_and_its_document_to_the_writer() {
    let (_srv, url) = echo();
    let table = execute(
        &["run", &url, "-n", "200", "-c", "2", "-q", "--no-save"],
        LIMIT,
    );
    assert_eq!(table.code, 0, "{}{}", table.stdout, table.stderr);
    assert!(
        table
            .stdout
            .starts_with(&format!("wirebench tcp rr → {url}\n")),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("ok 200   errors 0"),
        "{}",
        table.stdout
    );
    assert_eq!(table.stderr, "");

    let (doc, code) = common::execute_json(&[&url, "-n", "300"], LIMIT);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["ok"], 300, "{doc}");
    assert_eq!(doc["schema"], "wirebench.result/1");
}

#[test]
fn a_sweep_and_a_comparison_write_their_documents_to_the_writer() {
    let (_a, a) = echo();
    let (_b, b) = echo();
    let sweep = execute(
        &["run", &a, "-c", "1,2", "-n", "100", "--json", "--no-save"],
        LIMIT,
    );
    assert_eq!(sweep.code, 0, "{}", sweep.stderr);
    let doc: serde_json::Value = serde_json::from_str(&sweep.stdout).expect("a sweep document");
    assert_eq!(doc["points"].as_array().map(Vec::len), Some(2), "{doc}");

    let a = format!("a={a}");
    let b = format!("b={b}");
    let compare = execute(
        &[
            "compare",
            &a,
            &b,
            "-n",
            "100",
            "--runs",
            "2",
            "--json",
            "-q",
            "--no-save",
        ],
        LIMIT,
    );
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let doc: serde_json::Value = serde_json::from_str(&compare.stdout).expect("a comparison");
    common::json_verdict(&doc, "p50_us");
}

#[test]
fn bad_input_is_the_binarys_one_line_and_exit_2() {
    for args in [
        &["run", "tcp://127.0.0.1:9", "--conections", "4", "--no-save"][..],
        &["run", "tcp://127.0.0.1:9", "-q", "1000", "--no-save"],
        &["run", "tcp://127.0.0.1:9", "-c", "0", "--no-save"],
        &["peak", "tcp://127.0.0.1:9", "--slo", "p99", "--no-save"],
        &["compare", "tcp://127.0.0.1:9", "--no-save"],
        &["run"],
    ] {
        let done = same_as_the_binary(args);
        assert_eq!(done.code, 2, "{args:?}");
        assert_eq!(done.stderr.lines().count(), 1, "{args:?}: {}", done.stderr);
        assert_eq!(done.stdout, "");
    }
}

#[test]
fn help_and_version_are_the_binarys() {
    for args in [&["--help"][..], &["run", "--help"], &["--version"], &[]] {
        let done = same_as_the_binary(args);
        assert_eq!(done.code, 0, "{args:?}");
        assert!(!(done.stdout.clone() + &done.stderr).is_empty(), "{args:?}");
    }
}

#[test]
fn an_unreachable_target_fails_with_the_binarys_line() {
    let port = common::free_port();
    let url = format!("tcp://127.0.0.1:{port}");
    let done = same_as_the_binary(&["run", &url, "-n", "1", "-q", "--no-save"]);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(done.stderr.starts_with("error: "), "{}", done.stderr);
}

#[test]
fn commands_on_several_threads_keep_their_own_output() {
    let (_srv, url) = echo();
    let runs: Vec<_> = (1..=3)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let c = c.to_string();
                let args = [url.as_str(), "-c", &c, "-d", "300ms"];
                (c.clone(), common::execute_json(&args, LIMIT))
            })
        })
        .collect();
    for run in runs {
        let (c, (doc, code)) = run.join().unwrap();
        assert_eq!(code, 0, "{doc}");
        assert_eq!(doc["config"]["connections"].to_string(), c, "{doc}");
        assert!(doc["duration_s"].as_f64().unwrap() >= 0.25, "{doc}");
    }
}

#[test]
fn the_history_records_the_command_line_given() {
    let (_srv, url) = echo();
    let dir = std::env::temp_dir().join(format!("wirebench-execute-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let run = execute(&["run", &url, "-n", "50", "-q", "--db", db], LIMIT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listed = execute(&["history", "--db", db, "--json"], LIMIT);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let doc: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    let command = format!("wirebench run {url} -n 50 -q --db {db}");
    assert_eq!(doc["runs"][0]["command"], command.as_str(), "{doc}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_plan_file_is_the_binarys_located_line() {
    let dir = std::env::temp_dir().join(format!("wirebench-execute-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    let text = "[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nduration = \"1s\"\n  sise = \"4\"\n";
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let done = same_as_the_binary(&["study", file, "--no-save"]);
    assert_eq!(done.code, 2);
    assert!(
        done.stderr
            .starts_with(&format!("{file}:5:3: unknown key 'sise'")),
        "{}",
        done.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_threshold_is_said_on_the_err_writer_with_exit_3() {
    let (_srv, url) = echo();
    let args = [
        "run",
        &url,
        "-n",
        "100",
        "-q",
        "--no-save",
        "--fail-if",
        "ops<1e12",
    ];
    let done = execute(&args, LIMIT);
    assert_eq!(done.code, 3, "{}", done.stderr);
    assert_eq!(done.stderr, "threshold failed: ops<1e12\n");
    assert!(
        done.stdout.contains("Thresholds (--fail-if):"),
        "{}",
        done.stdout
    );
    let (out, _) = common::run_bounded(&args, LIMIT);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stderr), done.stderr);
}
