//! Sweeps and studies are checked whole before their first run: every point's open files, and
//! their size (a big one asks on a terminal, and wants `--yes` in a script).

use super::common;

use std::process::{Command, Stdio};
use std::time::Duration;

/// Generous bound on a refusal, which measures nothing.
const LIMIT: Duration = Duration::from_secs(10);

/// The hard limit on open files, as the binary will find it.
fn hard_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim.rlim_max
}

/// A sweep whose last point needs more open files than the hard limit allows is refused
/// before its first point (it measured 15 points of `-c 1..100000`, then exit 2).
#[test]
fn a_sweep_with_a_point_that_cannot_run_runs_none() {
    let server = common::ServerProcess::start(&[]);
    let too_many = hard_fd_limit().min(10_000_000); // past the limit once the spares are added
    let c = format!("1,{too_many}");
    let out = common::usage_error(
        &["run", &server.url, "-c", &c, "-d", "300ms", "--no-save"],
        LIMIT,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("-c {too_many}")), "{stderr}");
    assert!(stderr.contains("ulimit"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// 341 points of 10 s (57 min) in a script: refused at once, naming --yes (it started them).
#[test]
fn a_big_study_in_a_script_wants_yes() {
    let server = common::ServerProcess::start(&[]);
    let out = common::usage_error(
        &[
            "run",
            &server.url,
            "--size",
            "1..1G",
            "-c",
            "1..1000",
            "--no-save",
        ],
        LIMIT,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("341 runs"), "{stderr}");
    assert!(stderr.contains("57 min"), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    // compare too, and too many runs to hold is refused even with --yes.
    let b = format!("b={}", server.url);
    let a = format!("a={}", server.url);
    let out = common::usage_error(&["compare", &a, &b, "--runs", "600", "--no-save"], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    let out = common::usage_error(
        &[
            "run",
            &server.url,
            "--runs",
            "100000000",
            "--yes",
            "--no-save",
        ],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("split the study"));
}

/// On a terminal the study asks, and an answer other than yes runs nothing (exit 2).
#[test]
fn a_big_study_on_a_terminal_asks_first() {
    if Command::new("script").arg("--version").output().is_err() {
        panic!("this test needs script(1) (util-linux) for a terminal");
    }
    let server = common::ServerProcess::start(&[]);
    let line = format!(
        "{} run {} -c 1..1000 -d 10m --no-save; echo exit=$?",
        common::bin().get_program().to_string_lossy(),
        server.url
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("XDG_DATA_HOME", common::data_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"n\n").unwrap();
    let started = std::time::Instant::now();
    let status = common::wait_exit(&mut child, LIMIT);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(started.elapsed() < LIMIT, "{status:?}");
    assert!(text.contains("Run it? [y/N]"), "{text}");
    assert!(text.contains("not run"), "{text}");
    assert!(text.contains("exit=2"), "{text}");
}

/// Validation is linear in the plan: 100,000 keys under [run] took minutes when each key's
/// place in the file was found by reading the file up to it. Now one line, exit 2, at once
/// (the bound is generous: a linear validation takes well under a second).
#[test]
fn a_plan_of_100000_unknown_keys_is_refused_at_once() {
    let dir = std::env::temp_dir().join(format!("wirebench-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("keys.toml");
    let mut text = String::from("[targets]\na = \"tcp://127.0.0.1:9\"\n[run]\n");
    for i in 0..100_000 {
        // Short keys: the file stays under the 1 MiB plan limit.
        text += &format!("k{i}=1\n");
    }
    std::fs::write(&plan, text).unwrap();
    let started = std::time::Instant::now();
    let (out, _) = common::run_bounded(
        &["study", plan.to_str().unwrap(), "--dry-run"],
        Duration::from_secs(60),
    );
    let took = started.elapsed();
    let line = String::from_utf8_lossy(&out.stderr);
    // FILE:LINE:COL: the first unknown key, in one line, exit 2.
    assert_eq!(out.status.code(), Some(2), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains(":4:1: unknown key 'k0'"), "{line}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Validation is linear in the targets too: a plan of 10,000 targets took 23 s to dry-run (each
/// target's run cloned the arguments with all 10,000 URLs). It lists every run and exits 0, a
/// run study and a comparison alike. (No timing here: bench/results/plan_validation.txt times
/// it at 1,000, 5,000 and 10,000 targets.)
#[test]
fn a_plan_of_10000_targets_dry_runs_whole() {
    let dir = std::env::temp_dir().join(format!("wirebench-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A run study, a comparison, and a run study whose targets have flags of their own (each
    // target's command line parsed alone).
    for (command, runs, own) in [
        ("run", 10_000, false),
        ("compare", 50_000, false),
        ("run", 10_000, true),
    ] {
        let plan = dir.join(format!("{command}-{own}.toml"));
        let mut text = format!("title = \"many\"\ncommand = \"{command}\"\n[targets]\n");
        for i in 0..10_000 {
            let url = format!("tcp://127.0.0.{}:{}", 1 + i % 200, 1000 + i);
            text += &match own {
                true => format!(
                    "t{i} = {{ url = \"{url}\", run = {{ connections = \"{}\" }} }}\n",
                    1 + i % 3
                ),
                false => format!("t{i} = \"{url}\"\n"),
            };
        }
        text += "[run]\nrequests = 10\n";
        std::fs::write(&plan, text).unwrap();
        let (out, _) = common::run_bounded(
            &["study", plan.to_str().unwrap(), "--dry-run"],
            Duration::from_secs(120),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        assert!(stderr.is_empty(), "{command}: {stderr}");
        let first = stdout.lines().next().unwrap_or_default();
        assert!(
            first.contains(&format!("{runs} runs (10000 targets x 1 points x")),
            "{command}: {first}"
        );
        // Every run listed, numbered to the last; then the estimate.
        let listed = stdout.lines().filter(|l| l.contains("  run ")).count();
        assert_eq!(listed, runs, "{command}");
        assert!(stdout.contains(&format!("{runs:>4}  t")), "{command}");
        assert!(stdout.contains("--dry-run ran nothing"), "{command}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
