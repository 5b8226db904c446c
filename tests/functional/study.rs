//! `wirebench study FILE.toml` against one `wirebench serve tcp` process: a two-size sweep
//! from a plan file, its report.md (tables and methodology), study.json (against
//! schema/study.v1.json and sweep.v1.json) and CSV tables (against the JSON), --dry-run running nothing, and bad plans pointed at by line:col.

use super::common;

use common::{run_bounded, ServerProcess};
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
    let doc = common::study::valid_study(&out);
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["targets"][0]["server"], "wirebench serve tcp");
    let sweep = &doc["document"];
    assert_eq!(sweep["points"].as_array().unwrap().len(), 2);
    common::study::assert_csv_matches(&out, sweep);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bytes_per_s.csv",
            "errors.csv",
            "ops_per_s.csv",
            "p50_us.csv",
            "p99_us.csv",
            "report.html",
            "report.md",
            "study.json"
        ],
        "the study's files, no temporaries"
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

/// A plan whose runs stop at a request count has no known time: the estimate says "unknown",
/// never 0.0 s (issue 15, item 15: the DCMTK plan said 0.0 s and took 1 min 51 s); with some
/// runs timed, it is a lower bound that says so.
#[test]
fn dry_run_of_request_count_runs_says_unknown_never_zero() {
    let dir = scratch("dry-n");
    let file = plan(
        &dir,
        "[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nsize = \"4,128\"\nrequests = 1000\n",
    );
    let (out, _) = run_bounded(&["study", &file, "--dry-run"], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("estimated time: unknown"), "{text}");
    assert!(!text.contains("0.0 s"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `study --out DIR` stopped by `signal` (SIGINT: Ctrl-C, or SIGTERM) about 1.5 s into a
/// sweep of 2 s runs: its exit code, stdout, and DIR.
fn stop_a_study(name: &str, url: &str, signal: libc::c_int) -> (Option<i32>, String, PathBuf) {
    let dir = scratch(name);
    let text = format!(
        "title = \"stopped\"\n[targets]\nlocal = \"{url}\"\n[run]\nsize = [4, 64, 128]\nduration = \"2s\"\n"
    );
    let file = plan(&dir, &text);
    let out = dir.join("results");
    let db = dir.join("history.db");
    let mut child = common::bin()
        .args(["study", &file, "--out", out.to_str().unwrap()])
        .args(["--db", db.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own live child's.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let status = common::wait_exit(&mut child, Duration::from_secs(15));
    let printed = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&printed.stdout).into_owned();
    // The history holds the study, marked interrupted.
    let (rows, _) = run_bounded(&["history", "--json", "--db", db.to_str().unwrap()], LIMIT);
    let rows: serde_json::Value = serde_json::from_slice(&rows.stdout).unwrap();
    assert_eq!(rows["runs"][0]["status"], "interrupted", "{rows}");
    (status.code(), stdout, out)
}

/// Ctrl-C during `study --out` does what it does without --out: the runs measured are kept,
/// saved as interrupted, exit 130; and DIR holds the partial study marked interrupted (it
/// exited 130 with nothing printed, an empty DIR and nothing saved). SIGTERM the same, 143.
#[test]
fn a_stopped_study_writes_its_partial_results_to_out_marked_interrupted() {
    let server = ServerProcess::start(&[]);
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (status, stdout, out) = stop_a_study(&format!("stop{signal}"), &server.url, signal);
        assert_eq!(status, Some(code), "{stdout}");
        assert!(
            stdout.contains("Interrupted: 1 run(s) measured"),
            "{stdout}"
        );
        assert!(stdout.contains("wrote "), "{stdout}");
        let doc = common::study::valid_study(&out);
        assert_eq!(doc["interrupted"], true);
        assert_eq!(doc["document"]["points"].as_array().unwrap().len(), 1);
        let report = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(report.contains("**Interrupted**"), "{report}");
        let _ = std::fs::remove_dir_all(out.parent().unwrap());
    }
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
        // Errors whose message names the flag by its short name (-H, -X): the error says which
        // flag it is about, so the key is found without reading the message.
        (
            "[targets]\na = \"http://127.0.0.1:9\"\n[run]\nduration = \"1s\"\nheader = [\"NoColon\"]\n",
            ":5:1: -H 'NoColon' is not 'Name: value'",
        ),
        (
            "[targets]\na = \"http://127.0.0.1:9\"\n[run]\nduration = \"1s\"\nmethod = \"G T\"\n",
            ":5:1: -X 'G T' is not an HTTP method",
        ),
        // Two targets at one URL: the error of the second's own key is placed at that key.
        (
            "[targets]\na = \"tcp://127.0.0.1:9\"\nb = { url = \"tcp://127.0.0.1:9\", run = { mode = \"source\", payload = \"x\" } }\n",
            ":3:42: --mode source reads what the server pushes",
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

#[test]
fn a_compare_plan_writes_verdicts_and_a_valid_study() {
    let server = ServerProcess::start(&[]);
    let dir = scratch("compare");
    let url = &server.url;
    let file = plan(
        &dir,
        &format!("title = \"same server twice\"\ncommand = \"compare\"\n[targets]\na = {{ url = \"{url}\", server = \"wirebench serve tcp\", version = \"v-test\" }}\nb = \"{url}\"\n[run]\nbaseline = \"b\"\nduration = \"150ms\"\nruns = 3\ndiscard_first = true\n"),
    );
    let out = dir.join("results");
    let (code, text, err) = study(&[&file, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}{err}");
    let doc = common::study::valid_study(&out);
    assert_eq!(doc["command"], "compare");
    assert_eq!(doc["document"]["baseline"], "b");
    common::study::assert_csv_matches(&out, &doc["document"]["sweep"]);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for fact in [
        "Against the baseline 'b'",
        "| a      | ",
        "v-test",
        "(the plan stands for `wirebench compare`)",
        "- Pinning: ",
        "- Link: none given",
    ] {
        assert!(report.contains(fact), "no {fact:?} in:\n{report}");
    }
    let verdicts = common::study::csv(&out, "verdicts.csv");
    assert_eq!(verdicts[0][..3], ["target", "at", "metric"]);
    assert_eq!(verdicts.len(), 1 + 5, "a verdict per metric: {verdicts:?}");
    assert_eq!(verdicts[0][8..11], ["low_pct", "high_pct", "significant"]);
    let runs = common::study::csv(&out, "runs_ops_per_s.csv");
    assert_eq!(runs[0][1], "run 1 (discarded)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peak_plan_finds_the_capacity_and_writes_its_curve() {
    let server = ServerProcess::start(&["--max-rate", "2000"]);
    let dir = scratch("peak");
    let file = plan(
        &dir,
        &format!("command = \"peak\"\n[targets]\ncapped = {{ url = \"{}\", server = \"wirebench serve tcp --max-rate 2000\" }}\n[run]\nslo = [\"p99<=20ms\", \"errors<=0.1%\"]\nstep = \"250ms\"\nrest = \"50ms\"\nstart_rate = 500\nconnections = 4\nwarmup = \"100\"\nlink = \"1Gbit\"\n", server.url),
    );
    let (code, dry, err) = study(&[&file, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(dry.contains("objectives: p99<=20ms, errors<=0.1%"), "{dry}");
    assert!(dry.contains("after a warm-up of 100 requests"), "{dry}");
    assert!(dry.contains("an upper bound of"), "{dry}");
    let out = dir.join("results");
    let (code, text, err) = study(&[&file, "--out", out.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{text}{err}");
    let doc = common::study::valid_study(&out);
    assert_eq!(doc["command"], "peak");
    let curve = common::study::csv(&out, "curve.csv");
    let steps = doc["document"]["steps"].as_array().unwrap();
    assert_eq!(curve.len(), 1 + steps.len());
    for (row, step) in curve[1..].iter().zip(steps) {
        let offered: f64 = row[1].parse().unwrap();
        assert_eq!(offered, step["offered_per_s"].as_f64().unwrap());
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("curve:"), "{report}");
    assert!(report.contains("- Link: --link 1Gbit"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_compare_and_peak_plans_are_one_line_with_file_line_col() {
    let dir = scratch("bad-kinds");
    let one = "[targets]\na = \"tcp://127.0.0.1:9\"\n";
    let two = "[targets]\na = \"tcp://127.0.0.1:9\"\nb = \"tcp://127.0.0.1:9\"\n";
    let cases = [
        (
            format!("command = \"bench\"\n{one}"),
            ":1:1: command = \"bench\" is not a study",
        ),
        (
            format!("command = \"peak\"\n{one}[run]\nstep = \"1s\"\nslo = []\n"),
            ":6:1: slo = [] gives no value",
        ),
        (
            format!("command = \"peak\"\n{one}[run]\n  slo = [\"fast\"]\n"),
            ":5:3: --slo 'fast' has no < or <=",
        ),
        (
            format!("command = \"peak\"\n{one}[run]\nslo = \"p99<=\"\n"),
            ":5:1: --slo 'p99<='",
        ),
        (
            format!("command = \"peak\"\n{two}[run]\nslo = \"p99<=1ms\"\n"),
            ":4:1: a peak plan searches one target",
        ),
        (
            format!("command = \"compare\"\n{two}[run]\nruns = 3\ndiscard = 3\n"),
            ":7:1: --discard 3 with --runs 3",
        ),
        (
            format!("command = \"compare\"\n{two}[run]\nbaseline = \"c\"\n"),
            ":6:1: --baseline c names no target",
        ),
        (
            format!("command = \"compare\"\n{two}[run]\nslo = \"p99<=1ms\"\n"),
            ":6:1: unknown key 'slo' in [run]: not a `wirebench compare` flag",
        ),
        (
            "command = \"compare\"\n[targets]\na = { url = \"tcp://127.0.0.1:9\", run = { mode = \"source\" } }\nb = \"tcp://127.0.0.1:9\"\n".to_string(),
            ":3:1: target 'a' has flags of its own: only a run study",
        ),
        (
            "[targets]\na = \"tcp://127.0.0.1:9\"\nb = { url = \"tcp://127.0.0.1:9\", run = { size = \"8,16\" } }\n[run]\nsize = \"4,8\"\n".to_string(),
            ":3:1: target 'b' sweeps other values",
        ),
        (
            "[targets]\na = \"tcp://127.0.0.1:9\"\nb = { url = \"tcp://127.0.0.1:9\", run = { mode = \"fast\" } }\n".to_string(),
            ":3:42: mode: invalid value 'fast'",
        ),
        (
            format!("{two}[run]\nstep = \"1s\"\n"),
            ":5:1: unknown key 'step' in [run]: not a `wirebench run` flag",
        ),
    ];
    for (text, says) in cases {
        let file = plan(&dir, &text);
        let (code, out, err) = study(&[&file, "--dry-run"]);
        assert_eq!(code, 2, "{text:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with(&format!("{file}{says}")), "{text:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_swept_flags_make_a_csv_per_value_of_the_second() {
    let server = ServerProcess::start(&[]);
    let dir = scratch("two-axes");
    let file = plan(
        &dir,
        &format!(
            "[targets]\nlocal = \"{}\"\n[run]\nsize = [4, 128]\nconnections = [1, 2]\nduration = \"100ms\"\n",
            server.url
        ),
    );
    let out = dir.join("results");
    let (code, text, err) = study(&[&file, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}{err}");
    common::study::valid_study(&out);
    for c in ["1", "2"] {
        let rows = common::study::csv(&out, &format!("ops_per_s_connections_{c}.csv"));
        assert_eq!(rows[0], ["target", "4", "128"]);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[1][0], "local");
        assert!(rows[1][1..].iter().all(|v| v.parse::<f64>().unwrap() > 0.0));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A study saved with `--out` (its own `wirebench.study/1` document, the sweep under
/// `document`) lists its figures in the history like any sweep: rate, p99, targets.
#[test]
fn a_study_with_out_lists_its_figures_in_the_history() {
    let server = ServerProcess::start(&[]);
    let dir = scratch("history");
    let file = plan(&dir, &two_sizes(&server.url));
    let (out, db) = (dir.join("results"), dir.join("h.db"));
    let (db, out) = (db.to_str().unwrap(), out.to_str().unwrap());
    let (code, text, err) = study(&[&file, "--out", out, "--db", db]);
    assert_eq!(code, 0, "{text}{err}");
    let (listed, _) = run_bounded(&["history", "--db", db, "--json"], LIMIT);
    let json: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let row = &json["runs"][0];
    assert_eq!(row["schema"], "wirebench.study/1", "{row}");
    assert!(row["ops_per_s"].as_f64().is_some_and(|r| r > 0.0), "{row}");
    assert!(row["p99_us"].as_f64().is_some_and(|p| p > 0.0), "{row}");
    assert_eq!(row["targets"][0], server.url.as_str(), "{row}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the library's caller sees of a study: runs started, documents shown, and a stop
/// requested after `stop_after` documents (never when None).
struct Counting {
    runs: usize,
    shown: usize,
    stop_after: Option<(usize, wirebench::Stop)>,
}

impl wirebench::study::Watch for Counting {
    fn run_starts(&mut self, _what: &str, _plan: &wirebench::plan::Plan) {
        self.runs += 1;
    }
    fn so_far(&mut self, _doc: &wirebench::study::Document) {
        self.shown += 1;
        if let Some((n, stop)) = &self.stop_after {
            if self.shown >= *n {
                stop.request();
            }
        }
    }
}

/// The command line `argv` (`wirebench …`), parsed.
fn parsed(argv: &[&str]) -> wirebench::cli::Command {
    use clap::Parser;
    match wirebench::cli::Cli::try_parse_from(argv) {
        Ok(cli) => cli.command,
        Err(e) => panic!("{argv:?}: {e}"),
    }
}

/// Issue 41: `study::execute` runs a sweep and a peak search in this process, side by side,
/// each with its own `Stop`: stopping the sweep after its first run ends that study only (its
/// document says so and holds that run), while the search runs to its conclusion.
#[test]
fn the_library_runs_a_sweep_and_a_peak_search_each_stopped_by_its_own_stop() {
    use wirebench::study::{execute, Design, Document};
    let (_server, url) = common::tcp_in_process(wirebench::serve::Mode::Echo);
    let wirebench::cli::Command::Run(run) = parsed(&[
        "wirebench",
        "run",
        &url,
        "-c",
        "1,2",
        "--runs",
        "2",
        "-d",
        "300ms",
        "--size",
        "64",
    ]) else {
        panic!("run parses as run")
    };
    let sweep = Design::Sweep(wirebench::app::sweep::batch(&run).expect("a valid sweep"));
    assert_eq!(sweep.runs(), Some(4));
    let wirebench::cli::Command::Peak(peak) = parsed(&[
        "wirebench",
        "peak",
        &url,
        "--slo",
        "p99<=500ms",
        "--start-rate",
        "200",
        "--ceiling",
        "800",
        "--step",
        "200ms",
        "--rest",
        "0s",
        "-c",
        "4",
        "--size",
        "64",
    ]) else {
        panic!("peak parses as peak")
    };
    let search = Design::Peak(Box::new(
        wirebench::app::peak::setup(&peak).expect("a valid search"),
    ));
    let (stop_sweep, stop_search) = (wirebench::Stop::new(), wirebench::Stop::new());
    let swept = std::thread::spawn({
        let stop = stop_sweep.clone();
        move || {
            let mut watch = Counting {
                runs: 0,
                shown: 0,
                stop_after: Some((1, stop.clone())),
            };
            (execute(&sweep, &stop, &mut watch), watch.runs)
        }
    });
    let mut watch = Counting {
        runs: 0,
        shown: 0,
        stop_after: None,
    };
    let searched = execute(&search, &stop_search, &mut watch);
    let (swept, sweep_runs) = swept.join().expect("the sweep's thread");
    // The sweep: its one run, and why it ended.
    let Ok(Document::Run(s)) = swept else {
        panic!("a sweep's document: {swept:?}")
    };
    assert_eq!(sweep_runs, 1, "no run starts after the stop");
    assert_eq!(s.points.len(), 1);
    assert!(
        s.points[0].result.ok > 0,
        "the run measured: {:?}",
        s.points[0]
    );
    assert_eq!(s.stopped.as_deref(), Some("stopped by a stop request"));
    // The search: not stopped by the other study's stop, and concluded.
    assert!(!stop_search.requested());
    let Ok(Document::Peak(p)) = searched else {
        panic!("a peak search's document: {searched:?}")
    };
    assert_eq!(p.stopped, None, "{}", p.conclusion);
    assert!(
        p.steps.len() >= 2,
        "{} steps: {}",
        p.steps.len(),
        p.conclusion
    );
    assert_eq!(watch.runs, p.steps.len(), "a run per step");
    assert_eq!(
        watch.shown,
        p.steps.len(),
        "the search so far after each step"
    );
    assert!(p.steps.iter().all(|s| s.result.ok > 0), "{}", p.conclusion);
}
