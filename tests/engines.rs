//! Issue 19, items 5 and 6: `wirebench launch` on real engines, on simulated hosts (network
//! namespaces on a bridge in 198.19.0.0/16, inside the test range 198.18.0.0/15; the target
//! server in a namespace of its own). Each test asserts that the merged ok is the sum of the
//! shards and the server's own count, that every rank is there once, and that the shards
//! started within the skew tolerance. A test whose engine is not installed (or that is not
//! root) says why and passes without running: `.ci/run` installs the engines.

mod common;

use common::{bin, bin_via, run_bounded_with, stdout_lines, wait_exit};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The scripts that build the simulated hosts and the engines on them.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines")
        .join(name)
}

/// Why this machine cannot run a test needing `tools`, if it cannot.
fn missing(tools: &[&str]) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces)".into());
    }
    let absent: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| {
            !std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .chain(["/usr/sbin".into(), "/sbin".into()])
                .any(|d| d.join(t).is_file())
        })
        .collect();
    (!absent.is_empty()).then(|| format!("not installed: {}", absent.join(", ")))
}

/// Skips the calling test (printing why) when `tools` are missing.
macro_rules! require {
    ($($tool:expr),*) => {
        if let Some(why) = missing(&[$($tool),*]) {
            eprintln!("skipped: {why} (.ci/run installs them)");
            return;
        }
    };
}

/// `bash SCRIPT ARGS`, which must succeed.
fn sh(name: &str, args: &[&str]) {
    let out = Command::new("bash")
        .arg(script(name))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Simulated hosts: a bridge PREFIX at NET.1, the server's namespace PREFIX-srv at NET.2 and
/// hosts PREFIX-1… at NET.11…; removed when dropped.
struct Hosts {
    prefix: &'static str,
    net: &'static str,
}

impl Hosts {
    fn up(prefix: &'static str, net: &'static str, n: u32) -> Hosts {
        sh("net.sh", &["down", prefix]); // what a killed run of this test left
        let hosts = Hosts { prefix, net };
        sh("net.sh", &["up", prefix, net, &n.to_string()]);
        hosts
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        sh("net.sh", &["down", self.prefix]);
    }
}

/// `wirebench serve tcp` in the server's namespace, with its output lines.
struct Server {
    child: Child,
    lines: Receiver<String>,
    url: String,
}

impl Server {
    fn start(hosts: &Hosts, extra: &[&str]) -> Server {
        let ns = format!("{}-srv", hosts.prefix);
        let addr = format!("{}.2:7000", hosts.net);
        let mut child = bin_via(&["ip", "netns", "exec", &ns])
            .args(["serve", "tcp", "-l", &addr])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        let first = lines.recv_timeout(LIMIT).unwrap();
        assert_eq!(first, format!("tcp://{addr}"));
        Server {
            child,
            lines,
            url: first,
        }
    }

    /// Stops the server (SIGTERM, by its PID) and returns the requests it served.
    fn stop(mut self) -> u64 {
        common::sigterm(&self.child);
        assert!(wait_exit(&mut self.child, LIMIT).success());
        let last = self
            .lines
            .iter()
            .find(|l| l.starts_with("stopped:"))
            .expect("the server's last line");
        let n = last.split("requests ").nth(1).unwrap();
        n.split(',').next().unwrap().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh directory of this test's own (every node reads the same file system).
fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirebench-engines-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The merged document a launcher left in `dir`, checked against its shards and the server:
/// ok is the sum of the shards' and the server's count; ranks 0..world each once; every
/// shard started within `tolerance_ms` of the agreed start (and none is marked late).
fn check_merged(dir: &Path, world: u64, served: u64, tolerance_ms: f64) -> Value {
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    let mut sum = 0;
    for r in 0..world {
        let shard: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("shard-{r}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(shard["shard"]["rank"], r);
        sum += shard["ok"].as_u64().unwrap();
    }
    assert_eq!(
        merged["ok"].as_u64(),
        Some(sum),
        "merged ok = the shards' sum"
    );
    assert_eq!(sum, served, "the shards' sum = the server's own count");
    let ranks = merged["shards"]["ranks"].as_array().unwrap();
    let got: Vec<u64> = ranks.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(got, (0..world).collect::<Vec<_>>());
    for r in ranks {
        let skew = r["skew_ms"].as_f64().expect("a skew");
        assert!((0.0..tolerance_ms).contains(&skew), "{r}");
    }
    merged
}

/// `wirebench launch slurm --submit --wait` on a Slurm cluster of two nodes (one slurmd per
/// namespace): srun runs a shard on each, the script merges them.
#[test]
fn slurm_shards_on_two_nodes_merge_to_the_servers_count() {
    require!(
        "slurmctld",
        "slurmd",
        "munged",
        "sbatch",
        "srun",
        "nsenter",
        "ip"
    );
    let _serial = common::one_at_a_time();
    let hosts = Hosts::up("wb19s", "198.19.19", 2);
    let dir = tempdir("slurm");
    let state = dir.join("cluster");
    let state_s = state.display().to_string();
    // Every user (slurm, munge) walks into the cluster's directory.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    struct Cluster(String);
    impl Drop for Cluster {
        fn drop(&mut self) {
            sh("slurm.sh", &["down", &self.0]);
        }
    }
    let _cluster = Cluster(state_s.clone());
    sh(
        "slurm.sh",
        &["up", &state_s, hosts.prefix, hosts.net, "2", "16817"],
    );
    let server = Server::start(&hosts, &[]);
    let out = dir.join("out");
    let mut launch = bin();
    launch.env("SLURM_CONF", state.join("slurm.conf"));
    let (o, _) = run_bounded_with(
        launch,
        &[
            "launch",
            "slurm",
            "-N",
            "2",
            "--submit",
            "--wait",
            "--start-in",
            "2s",
            "--dir",
            &out.display().to_string(),
            "--",
            "run",
            &server.url,
            "-n",
            "3001",
            "-c",
            "4",
        ],
        LIMIT,
    );
    let log = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("slurm-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        o.status.success(),
        "{}\n{log}",
        String::from_utf8_lossy(&o.stderr)
    );
    let served = server.stop();
    let merged = check_merged(&out, 2, served, 1000.0);
    assert_eq!(served, 3001);
    let hostnames: Vec<&str> = merged["shards"]["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    let mut sorted = hostnames.clone();
    sorted.sort();
    assert_eq!(sorted, ["wb19s-1", "wb19s-2"], "one shard on each node");
}
