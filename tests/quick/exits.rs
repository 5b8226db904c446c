//! Every exit code that is not 0 says why in one line (issue 40, item 6), and the smaller
//! things a new user met (issue 40's "Smaller" list): a study's directory holds one study,
//! `merge` takes `--json` and names a missing file, `--dry-run` lists its runs as a table, an
//! unknown plan key gets the key it was likely meant to be, a Kubernetes manifest says when
//! it must be applied.

use super::common;

use std::path::PathBuf;
use std::time::Duration;
use wirebench::serve::Mode;

const LIMIT: Duration = Duration::from_secs(60);

/// `wirebench ARGS`: exit code, stdout, stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let (out, _) = common::run_bounded(args, LIMIT);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wb-exits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An open loop that sent under half its requests exits 1 and says so: it printed "errors 0"
/// and exited 1 with no word why.
#[test]
fn an_open_loop_that_fell_behind_says_why_it_exits_1() {
    let (srv, url) = common::tcp_in_process(Mode::Echo);
    let (code, out, err) = run(&[
        "run",
        &url,
        "--rate",
        "10000000",
        "-c",
        "1",
        "-d",
        "300ms",
        "--json",
        "-q",
        "--no-save",
    ]);
    srv.stop();
    assert_eq!(code, 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let last = err.lines().last().unwrap_or_default();
    match doc["errors"]["total"].as_u64() {
        // A loaded machine may time a request out; then the errors are the reason.
        Some(0) => assert!(
            last.starts_with("exit 1: the open loop sent") && last.contains("--rate"),
            "{err}"
        ),
        _ => assert!(last.contains("operations failed"), "{err}"),
    }
    common::no_debug_value("open loop", &err);
}

/// Failed operations, in a run and in a sweep: the last line counts them and names the first
/// failed point.
#[test]
fn failed_operations_say_why_in_a_run_and_a_sweep() {
    // A listener that never accepts: connections wait in its backlog, requests are never
    // answered, every one times out.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("tcp://{}", silent.local_addr().unwrap());
    let (code, _, err) = run(&[
        "run",
        &url,
        "-n",
        "2",
        "--timeout",
        "100ms",
        "-q",
        "--no-save",
    ]);
    assert_eq!(code, 1, "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("exit 1: ") && last.contains("operations failed (timeout"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "run",
        &url,
        "-c",
        "1,2",
        "-n",
        "2",
        "--timeout",
        "100ms",
        "-q",
        "--no-save",
    ]);
    drop(silent);
    assert_eq!(code, 1, "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("exit 1: 2 of 2 runs failed; the first, --connections 1: "),
        "{err}"
    );
}

/// A peak search that confirms no peak exits 1 with its conclusion as the reason.
#[test]
fn a_peak_search_without_a_peak_says_why() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("tcp://{}", silent.local_addr().unwrap());
    let (code, _, err) = run(&[
        "peak",
        &url,
        "--slo",
        "p99<=1ms",
        "--step",
        "200ms",
        "--rest",
        "0s",
        "--start-rate",
        "100",
        "--timeout",
        "100ms",
        "-q",
        "--no-save",
    ]);
    drop(silent);
    assert_eq!(code, 1, "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("exit 1: no peak confirmed: "), "{err}");
}

/// A second study into the same directory leaves none of the first one's tables: an earlier
/// sweep's CSVs read as this study's.
#[test]
fn a_study_s_directory_holds_one_study() {
    let (srv, url) = common::tcp_in_process(Mode::Echo);
    let dir = scratch("study");
    let out = dir.join("out");
    let plan = |name: &str, swept: &str| {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("title = \"t\"\n[targets]\na = \"{url}\"\n[run]\n{swept}\nrequests = 20\n"),
        )
        .unwrap();
        p.display().to_string()
    };
    let csvs = || {
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".csv"))
            .collect();
        names.sort();
        names
    };
    let by_size = plan("size.toml", "size = \"64,128\"\nruns = 2");
    let o = out.display().to_string();
    let (code, _, err) = run(&["study", &by_size, "--out", &o, "--no-save"]);
    assert_eq!(code, 0, "{err}");
    let first = csvs();
    assert!(first.iter().any(|n| n.starts_with("runs_")), "{first:?}");
    // The user's own file stays.
    std::fs::write(out.join("mine.csv"), "a,b\n").unwrap();
    let by_c = plan("c.toml", "connections = \"1,2\"");
    let (code, _, err) = run(&["study", &by_c, "--out", &o, "--no-save"]);
    srv.stop();
    assert_eq!(code, 0, "{err}");
    let second = csvs();
    assert!(second.contains(&"mine.csv".to_string()), "{second:?}");
    assert!(
        !second.iter().any(|n| n.starts_with("runs_")),
        "the first study's per-run tables stayed: {second:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--dry-run` lists the runs as a table: every line's round at the same column, whatever
/// the targets' names.
#[test]
fn a_dry_run_lines_up_its_columns() {
    let dir = scratch("dry");
    let p = dir.join("plan.toml");
    std::fs::write(
        &p,
        "title = \"t\"\n[targets]\na = \"tcp://127.0.0.1:9\"\nlonger_name = \"tcp://127.0.0.1:9\"\n[run]\nsize = \"4,64k\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let (code, out, err) = run(&["study", p.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let at: Vec<usize> = out.lines().filter_map(|l| l.find(" run 1/1")).collect();
    assert_eq!(at.len(), 4, "{out}");
    assert!(at.iter().all(|&c| c == at[0]), "{out}");
    // Sizes as the user wrote them: 64k, not 65536.
    assert!(out.contains("--size 64k"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An unknown key in a plan names the key it is likely a typo of.
#[test]
fn an_unknown_plan_key_gets_did_you_mean() {
    let dir = scratch("keys");
    for (text, says) in [
        (
            "title = \"t\"\n[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\nconections = 2\n",
            "unknown key 'conections' in [run]: did you mean 'connections'?",
        ),
        (
            "titel = \"t\"\n[targets]\na = \"tcp://127.0.0.1:9\"\n",
            "unknown key 'titel': did you mean 'title'?",
        ),
        (
            "[targets]\na = { ulr = \"tcp://127.0.0.1:9\" }\n",
            "unknown key 'a.ulr': did you mean 'url'?",
        ),
    ] {
        let p = dir.join("plan.toml");
        std::fs::write(&p, text).unwrap();
        // A plan's error is FILE:LINE:COL: WHAT, one line, exit 2.
        let (code, _, err) = run(&["study", p.to_str().unwrap(), "--dry-run"]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{text}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `merge` takes `--json`, as every other command does, and a missing file is named as a
/// file, not taken for a run id.
#[test]
fn merge_takes_json_and_names_a_missing_file() {
    let (srv, url) = common::tcp_in_process(Mode::Echo);
    let dir = scratch("merge");
    let file = dir.join("a.json");
    let (code, out, err) = run(&["run", &url, "-n", "50", "--json", "-q", "--no-save"]);
    srv.stop();
    assert_eq!(code, 0, "{err}");
    std::fs::write(&file, out).unwrap();
    let f = file.display().to_string();
    let (code, out, err) = run(&["merge", &f, "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("merged JSON");
    assert_eq!(doc["ok"], 50);
    let out = common::usage_error(&["merge", "nosuch.json"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuch.json: cannot read it"), "{err}");
    assert!(!err.contains("not a run id"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Kubernetes manifest written to a file to apply later says when its pods start, in the
/// manifest and on stderr, since its start is absolute.
#[test]
fn a_k8s_manifest_says_when_to_apply_it() {
    let (code, out, err) = run(&[
        "launch",
        "k8s",
        "--parallelism",
        "2",
        "--image",
        "wb",
        "--start-in",
        "10m",
        "--",
        "run",
        "tcp://198.18.0.2:7000",
        "-c",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("# Apply:   kubectl apply -f job.yaml, before "),
        "{out}"
    );
    assert!(
        err.starts_with("note: the pods start together at ") && err.contains("--start-in"),
        "{err}"
    );
    let secs: u64 = err
        .split(" s from now")
        .next()
        .and_then(|h| h.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!((590..=600).contains(&secs), "{err}");
}
