//! Issue 39, item 2: nothing from a plan file runs as a command unless the command line says so
//! (`--allow-launcher`), and what `launch` writes refuses control characters in every value it
//! embeds; `--launcher ''` is bad input, not a panic.

use super::common;

use common::{run_bounded, usage_error};

/// A study refused for its plan: exit 2 and one line `FILE:LINE:COL: …`, as every plan error.
fn plan_refused(args: &[&str]) -> std::process::Output {
    let (out, _) = run_bounded(args, LIMIT);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    out
}
use std::path::PathBuf;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wb-plancmd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A plan of two shards whose launcher is `launcher`.
fn plan(dir: &std::path::Path, launcher: &str) -> String {
    let p = dir.join("plan.toml");
    std::fs::write(
        &p,
        format!(
            "title = \"someone else's plan\"\n[targets]\na = {{ url = \"tcp://127.0.0.1:1\" }}\n[run]\nduration = \"1s\"\nconnections = 2\nshards = 2\nlauncher = {launcher:?}\n"
        ),
    )
    .unwrap();
    p.display().to_string()
}

#[test]
fn a_plans_launcher_is_refused_without_allow_launcher() {
    let d = scratch("refused");
    let marker = d.join("ran");
    let file = plan(&d, &format!("sh -c touch {}", marker.display()));
    let out = plan_refused(&["study", &file, "--no-save"]);
    let e = stderr(&out);
    assert!(e.contains("--allow-launcher"), "{e}");
    assert!(e.contains("plan.toml:8:"), "the key's line: {e}");
    let file = plan(&d, &format!("touch {}", marker.display()));
    let out_dir = d.join("out").display().to_string();
    let out = plan_refused(&["study", &file, "--no-save", "--out", &out_dir]);
    assert!(
        stderr(&out).contains("--allow-launcher"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the plan's command ran");
    assert!(!d.join("out").exists(), "--out was made for a refused plan");
    // A dry run runs nothing: it lists the plan.
    let (out, _) = run_bounded(&["study", &file, "--dry-run"], LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!marker.exists());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn with_allow_launcher_the_plans_launcher_runs() {
    let d = scratch("allowed");
    // `true` starts no shard: the study fails for want of their results, having run it.
    let file = plan(&d, "true");
    let (out, _) = run_bounded(&["study", &file, "--no-save", "--allow-launcher"], LIMIT);
    let e = stderr(&out);
    assert!(!e.contains("--allow-launcher"), "{e}");
    assert!(e.contains("left no result"), "{e}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn an_empty_launcher_is_bad_input_not_a_panic() {
    for cmd in ["run", "peak"] {
        let mut args = vec![cmd, "tcp://127.0.0.1:1", "--shards", "2", "--launcher", ""];
        if cmd == "peak" {
            args.extend(["--slo", "p99<=5ms"]);
        }
        let out = usage_error(&args, LIMIT);
        assert!(stderr(&out).contains("--launcher"), "{}", stderr(&out));
    }
    let out = usage_error(
        &[
            "run",
            "tcp://127.0.0.1:1",
            "--shards",
            "2",
            "--launcher",
            "srun\n-n 2",
        ],
        LIMIT,
    );
    assert!(
        stderr(&out).contains("control character"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn generated_scripts_and_manifests_refuse_control_characters() {
    let run = ["--", "run", "tcp://198.18.0.2:7000", "-c", "2"];
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "launch",
            "slurm",
            "-N",
            "2",
            "--sbatch",
            "--partition=lab\nrm -rf /",
        ],
        vec!["launch", "slurm", "-N", "2", "--dir", "/shared/a\nb"],
        vec![
            "launch",
            "k8s",
            "--parallelism",
            "2",
            "--image",
            "wb",
            "--name",
            "a\nb",
        ],
        vec![
            "launch",
            "k8s",
            "--parallelism",
            "2",
            "--image",
            "wb\r",
            "--name",
            "a",
        ],
        vec![
            "launch",
            "k8s",
            "--parallelism",
            "2",
            "--image",
            "wb",
            "--claim",
            "c\x1b[2J",
        ],
        vec![
            "launch",
            "slurm",
            "-N",
            "2",
            "--binary",
            "/opt/wb\n/bin/evil",
        ],
        vec![
            "launch",
            "slurm",
            "-N",
            "2",
            "--",
            "run",
            "tcp://198.18.0.2:7000/\n",
            "-c",
            "2",
        ],
    ];
    for mut args in cases {
        if !args.contains(&"--") {
            args.extend(run);
        }
        let out = usage_error(&args, LIMIT);
        let e = stderr(&out);
        assert!(e.contains("control character"), "{args:?}: {e}");
        assert!(out.stdout.is_empty(), "{args:?} printed a script");
    }
}
