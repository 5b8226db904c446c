//! Issue 19, item 5: what `wirebench launch` writes, and its bad input. The engines themselves
//! run in tests/engines.rs; here the Kubernetes manifest is checked against its golden file
//! (no cluster here), the scripts' shard lines, and the refusals (one line, exit 2, nothing
//! written).
//!
//! After an intended change of the manifest: `UPDATE_GOLDEN=1 cargo test --profile ci --test quick launch::`.

use super::common;

use common::{run_bounded, run_bounded_with, stdout_ok, usage_error};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// The manifest of three pods against a fixed start, byte for byte as tests/golden has it.
#[test]
fn the_k8s_manifest_matches_its_golden_file() {
    let text = stdout_ok(
        &[
            "launch",
            "k8s",
            "--parallelism",
            "3",
            "--image",
            "registry.example/wirebench:0.1",
            "--start-at",
            "1795000000000",
            "--",
            "run",
            "tcp://198.18.0.2:7000",
            "-c",
            "30",
            "-d",
            "2s",
        ],
        LIMIT,
    );
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/launch_k8s.yaml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text, golden,
        "rewrite with UPDATE_GOLDEN=1 and review the diff"
    );
    // Each pod's wirebench arguments, as the podman test of tests/engines.rs runs them.
    let args = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("args: "))
        .unwrap();
    let args: Vec<String> = serde_json::from_str(args).unwrap();
    assert!(args.windows(2).any(|w| w == ["--world", "3"]), "{args:?}");
    assert!(
        args.windows(2).any(|w| w == ["--shard", "auto"]),
        "{args:?}"
    );
    // A claim: results to the shared volume instead of the log.
    let text = stdout_ok(
        &[
            "launch",
            "k8s",
            "--parallelism",
            "2",
            "--image",
            "wb",
            "--claim",
            "results",
            "--",
            "run",
            "tcp://198.18.0.2:7000",
            "-c",
            "2",
        ],
        LIMIT,
    );
    assert!(text.contains("claimName: \"results\""), "{text}");
    assert!(
        text.contains("\"--out\",\"/results/shard-%r.json\""),
        "{text}"
    );
}

/// The scripts run the shard command with the shard flags and merge every rank.
#[test]
fn slurm_and_mpi_scripts_run_every_shard_then_merge() {
    let slurm = stdout_ok(
        &[
            "launch",
            "slurm",
            "-N",
            "4",
            "--ntasks-per-node",
            "2",
            "--dir",
            "/shared/wb",
            "--sbatch",
            "--partition=lab",
            "--",
            "run",
            "tcp://198.18.0.2:7000",
            "-c",
            "80",
            "--payload",
            "it's",
        ],
        LIMIT,
    );
    for line in [
        "#SBATCH --nodes=4",
        "#SBATCH --ntasks-per-node=2",
        "#SBATCH --partition=lab",
        "srun --nodes=4 --ntasks=8 --ntasks-per-node=2 \"$wirebench\" run tcp://198.18.0.2:7000 -c 80 --payload 'it'\\''s' \\",
        "  --shard auto --start-at +5000ms --out \"$dir/shard-%r.json\" -q --no-save",
        "files=$(seq -f \"$dir/shard-%g.json\" 0 7)",
    ] {
        assert!(slurm.lines().any(|l| l == line), "{line}\n{slurm}");
    }
    // A peak search: run once on the first node, each step one srun of the 8 shards.
    let peak = stdout_ok(
        &[
            "launch",
            "slurm",
            "-N",
            "4",
            "--ntasks-per-node",
            "2",
            "--dir",
            "/shared/wb",
            "--",
            "peak",
            "tcp://198.18.0.2:7000",
            "--slo",
            "p99<=10ms",
            "-c",
            "64",
        ],
        LIMIT,
    );
    let line = "  --shards 8 --launcher 'srun --nodes=4 --ntasks=8 --ntasks-per-node=2' --shard-dir \"$dir/steps\" -q --no-save --json > \"$dir/peak.json\"";
    assert!(peak.lines().any(|l| l == line), "{peak}");
    assert!(!peak.contains("\"$wirebench\" merge"), "{peak}");
    let hosts = std::env::temp_dir().join(format!("wirebench-launch-hosts-{}", std::process::id()));
    std::fs::write(&hosts, "198.18.0.11 slots=2\n").unwrap();
    let h = hosts.display().to_string();
    let mpi = stdout_ok(
        &[
            "launch",
            "mpi",
            "--hostfile",
            &h,
            "-np",
            "2",
            "--mpirun-arg=--map-by=node",
            "--",
            "run",
            "tcp://198.18.0.2:7000",
            "-c",
            "2",
        ],
        LIMIT,
    );
    let line = format!("mpirun --hostfile {h} -np 2 -x WIREBENCH_T0 --map-by=node \"$wirebench\" run tcp://198.18.0.2:7000 -c 2 \\");
    assert!(mpi.lines().any(|l| l == line), "{mpi}");
    let _ = std::fs::remove_file(hosts);
    // Printing needs no host list: the script may be written here and run on the cluster
    // (issue 40: it refused a hostfile that did not exist yet).
    let later = "/nonexistent/hosts";
    let mpi = stdout_ok(
        &[
            "launch",
            "mpi",
            "--hostfile",
            later,
            "-np",
            "2",
            "--",
            "run",
            "tcp://198.18.0.2:7000",
            "-c",
            "2",
        ],
        LIMIT,
    );
    assert!(
        mpi.contains(&format!("mpirun --hostfile {later} -np 2")),
        "{mpi}"
    );
}

/// Bad input: one line, exit 2, before anything is written or submitted.
#[test]
fn bad_launches_are_refused_in_one_line() {
    let dir = std::env::temp_dir().join(format!("wirebench-launch-{}", std::process::id()));
    let d = dir.display().to_string();
    for (args, says) in [
        (
            vec![
                "launch",
                "slurm",
                "-N",
                "4",
                "--",
                "run",
                "tcp://198.18.0.2:7000",
                "-c",
                "2",
            ],
            "leaves rank 3 none",
        ),
        (
            vec![
                "launch",
                "k8s",
                "--parallelism",
                "2",
                "--image",
                "wb",
                "--",
                "peak",
                "tcp://198.18.0.2:7000",
                "--slo",
                "p99<=1ms",
            ],
            "a Job per step",
        ),
        (
            vec![
                "launch",
                "slurm",
                "-N",
                "2",
                "--",
                "run",
                "tcp://198.18.0.2:7000",
                "-c",
                "2",
                "--shard",
                "0/2",
            ],
            "set by the launcher",
        ),
        (
            vec![
                "launch",
                "mpi",
                "--hostfile",
                "/nonexistent/hosts",
                "-np",
                "2",
                "--submit",
                "--",
                "run",
                "tcp://198.18.0.2:7000",
                "-c",
                "2",
            ],
            "no such file",
        ),
        (
            vec![
                "launch",
                "k8s",
                "--parallelism",
                "2",
                "--image",
                "wb",
                "--name",
                "Bad_Name",
                "--",
                "run",
                "tcp://198.18.0.2:7000",
                "-c",
                "2",
            ],
            "--name 'Bad_Name'",
        ),
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // --submit without the engine on PATH: one line, exit 2, no script written.
    for (engine, args) in [
        (
            "sbatch",
            vec!["launch", "slurm", "-N", "2", "--submit", "--dir", &d],
        ),
        (
            "kubectl",
            vec![
                "launch",
                "k8s",
                "--parallelism",
                "2",
                "--image",
                "wb",
                "--submit",
            ],
        ),
    ] {
        let mut args = args;
        args.extend(["--", "run", "tcp://198.18.0.2:7000", "-c", "2"]);
        let mut cmd = common::bin();
        cmd.env("PATH", "/nonexistent");
        let (out, _) = run_bounded_with(cmd, &args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--submit needs {engine}")), "{err}");
    }
    assert!(!dir.exists(), "nothing written");
    let (out, _) = run_bounded(&["launch", "slurm", "--help"], LIMIT);
    assert!(out.status.success());
}
