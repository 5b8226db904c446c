//! Report headers name the command the user typed and each target's workload truly (issue 15,
//! item 10): a comparison and a plan file's study are no `wirebench sweep`, and a push target
//! is not `tcp rr` because the first target is.

use super::common;

use std::net::TcpListener;
use std::time::Duration;
use wirebench::serve::Mode;

const LIMIT: Duration = Duration::from_secs(60);

/// The first line of `wirebench ARGS`' report.
fn header(args: &[&str]) -> String {
    let stdout = common::stdout_ok(args, LIMIT);
    stdout
        .lines()
        .find(|l| l.starts_with("wirebench "))
        .unwrap_or("")
        .to_string()
}

#[test]
fn compare_says_compare() {
    let (_a, a) = common::tcp_in_process(Mode::Echo);
    let (_b, b) = common::tcp_in_process(Mode::Echo);
    let (a, b) = (format!("a={a}"), format!("b={b}"));
    let h = header(&[
        "compare",
        &a,
        &b,
        "-d",
        "100ms",
        "--runs",
        "2",
        "-q",
        "--no-save",
    ]);
    assert!(h.starts_with("wirebench compare: 2 target(s)"), "{h}");
    assert!(h.contains("tcp rr each"), "{h}");
}

#[test]
fn a_study_with_a_push_target_names_both_workloads() {
    let (_rr, rr) = common::tcp_in_process(Mode::Echo);
    let (_push, push) = common::tcp_in_process(Mode::Source);
    let dir = std::env::temp_dir().join(format!("wb-headers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dim.toml");
    let plan = format!(
        "title = \"DIM\"\n[targets]\nrr = \"{rr}\"\npush = {{ url = \"{push}\", run = {{ mode = \"source\" }} }}\n\
         [run]\nmode = \"rr\"\nsize = \"16,64\"\nduration = \"100ms\"\nquiet = true\n"
    );
    std::fs::write(&file, plan).unwrap();
    let h = header(&["study", file.to_str().unwrap(), "--no-save"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(h.starts_with("wirebench study: 2 target(s)"), "{h}");
    assert!(h.contains("tcp rr (rr), tcp source (push)"), "{h}");
}

#[test]
fn a_compare_plan_through_study_says_study() {
    let (_a, a) = common::tcp_in_process(Mode::Echo);
    let (_b, b) = common::tcp_in_process(Mode::Echo);
    let dir = std::env::temp_dir().join(format!("wb-headers-cmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cmp.toml");
    let plan = format!(
        "title = \"A vs B\"\ncommand = \"compare\"\n[targets]\na = \"{a}\"\nb = \"{b}\"\n\
         [run]\nduration = \"100ms\"\nruns = 2\nquiet = true\n"
    );
    std::fs::write(&file, plan).unwrap();
    let h = header(&["study", file.to_str().unwrap(), "--no-save"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(h.starts_with("wirebench study: 2 target(s)"), "{h}");
}

/// `--targets FILE`: the header lists the requests sent in turn, never the URL's `GET /`, which
/// was never sent (issue 15, item 5).
#[test]
fn a_run_of_listed_requests_names_them() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("wb-headers-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("targets.txt");
    let list = "GET /bytes/10\nPOST /echo\nGET /bytes/100\nGET /status/204\n";
    std::fs::write(&file, list).unwrap();
    let url = format!("http://{}/", srv.addr);
    let args = ["run", &url, "--targets", file.to_str().unwrap(), "-n", "8"];
    let stdout = common::stdout_ok(&args, LIMIT);
    let _ = std::fs::remove_dir_all(&dir);
    let want = "4 requests in turn: GET /bytes/10, POST /echo, GET /bytes/100, … (4 in all)";
    assert!(stdout.contains(want), "{stdout}");
    assert!(!stdout.contains("GET /,"), "{stdout}");
}
