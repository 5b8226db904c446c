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

/// A fresh directory of this test's own (every node reads the same file system), removed
/// when dropped (declared first in a test, so dropped after what runs in it).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("wirebench-engines-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
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
    std::fs::set_permissions(&*dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
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
            // Time for the engine to start every shard on a loaded machine (ssh and orted
            // took 3.8 s once with a build running beside them).
            "--start-in",
            "6s",
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

/// `wirebench launch mpi --submit` over sshd in two namespaces (mpirun's ssh launch, its
/// daemons wired over 198.19.20.0/24): each process a shard by OMPI_COMM_WORLD_RANK.
#[test]
fn mpi_shards_over_ssh_merge_to_the_servers_count() {
    require!("mpirun", "sshd", "ssh", "ssh-keygen", "ip");
    let _serial = common::one_at_a_time();
    let hosts = Hosts::up("wb19m", "198.19.20", 2);
    let dir = tempdir("mpi");
    let ssh = dir.join("ssh").display().to_string();
    struct Sshd(String);
    impl Drop for Sshd {
        fn drop(&mut self) {
            sh("sshd.sh", &["down", &self.0]);
        }
    }
    let _sshd = Sshd(ssh.clone());
    sh("sshd.sh", &["up", &ssh, hosts.prefix, "2"]);
    let hostfile = dir.join("hosts");
    std::fs::write(&hostfile, "198.19.20.11 slots=1\n198.19.20.12 slots=1\n").unwrap();
    let server = Server::start(&hosts, &[]);
    let out = dir.join("out");
    let mut launch = bin();
    launch.envs([
        ("OMPI_ALLOW_RUN_AS_ROOT", "1".to_string()),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1".into()),
        ("OMPI_MCA_plm_rsh_args", format!("-F {ssh}/ssh_config")),
        ("OMPI_MCA_oob_tcp_if_include", "198.19.20.0/24".into()),
        ("OMPI_MCA_btl_tcp_if_include", "198.19.20.0/24".into()),
    ]);
    let (o, _) = run_bounded_with(
        launch,
        &[
            "launch",
            "mpi",
            "--hostfile",
            &hostfile.display().to_string(),
            "-np",
            "2",
            "--submit",
            // Time for the engine to start every shard on a loaded machine (ssh and orted
            // took 3.8 s once with a build running beside them).
            "--start-in",
            "6s",
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
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let served = server.stop();
    assert_eq!(served, 3001);
    check_merged(&out, 2, served, 1000.0);
    let shard: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("shard-1.json")).unwrap()).unwrap();
    assert_eq!(shard["shard"]["source"], "OMPI_COMM_WORLD_RANK");
}

/// `podman` with its storage and configuration in `dir` (CONTAINERS_CONF: runc, the issue's
/// ulimits, no network unless one is named: never the default CNI bridge).
fn podman(dir: &Path) -> Command {
    let mut c = Command::new("podman");
    c.env("CONTAINERS_CONF", dir.join("containers.conf"))
        .arg("--root")
        .arg(dir.join("storage"))
        .arg("--runroot")
        .arg(dir.join("run"))
        .args(["--storage-driver", "vfs"]);
    c
}

/// Runs `command`, which must succeed; its stdout.
fn ok(mut command: Command) -> Vec<u8> {
    let out = command.stderr(Stdio::piped()).output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The image of the Containerfile around the tests' binary, in `dir`'s storage. That binary
/// links glibc dynamically (a static one is a build of its own, too long for CI), so a layer
/// on top adds the libraries `ldd` names; the Containerfile's own layer is as shipped.
fn build_image(dir: &Path) -> &'static str {
    let ctx = dir.join("ctx");
    let libs = dir.join("libs");
    std::fs::create_dir_all(&ctx).unwrap();
    let binary = PathBuf::from(bin().get_program());
    std::fs::copy(&binary, ctx.join("wirebench")).unwrap();
    let containerfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("Containerfile");
    let mut b = podman(dir);
    b.args([
        "build",
        "-q",
        "--build-arg",
        "BINARY=wirebench",
        "-t",
        "localhost/wb19:bin",
        "-f",
    ])
    .arg(&containerfile)
    .arg(&ctx);
    ok(b);
    let ldd = String::from_utf8(ok({
        let mut c = Command::new("ldd");
        c.arg(&binary);
        c
    }))
    .unwrap();
    let mut layer = String::from("FROM localhost/wb19:bin\n");
    for lib in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        let to = libs.join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(lib, &to).unwrap();
        layer += &format!("COPY {} {lib}\n", lib.trim_start_matches('/'));
    }
    std::fs::write(libs.join("Containerfile"), layer).unwrap();
    let mut b = podman(dir);
    b.args(["build", "-q", "-t", "localhost/wb19:test"])
        .arg(&libs);
    ok(b);
    "localhost/wb19:test"
}

/// The Kubernetes launcher's pods, run by podman in three namespaces: the arguments of the
/// manifest `launch k8s` writes, JOB_COMPLETION_INDEX set as an Indexed Job sets it, each
/// result read from the container's output as `kubectl logs` would.
#[test]
fn k8s_pods_under_podman_merge_to_the_servers_count() {
    require!("podman", "runc", "ldd", "ip");
    let _serial = common::one_at_a_time();
    let hosts = Hosts::up("wb19p", "198.19.21", 3);
    let dir = tempdir("podman");
    struct Storage(PathBuf);
    impl Drop for Storage {
        fn drop(&mut self) {
            let mut rm = podman(&self.0);
            let _ = rm.args(["rmi", "-a", "-f"]).output();
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let storage = Storage(dir.to_path_buf());
    std::fs::write(
        dir.join("containers.conf"),
        "[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\nnetns = \"none\"\n\
         [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
    )
    .unwrap();
    let image = build_image(&dir);
    let server = Server::start(&hosts, &[]);
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 5_000;
    let manifest = String::from_utf8(ok({
        let mut c = bin();
        c.args([
            "launch",
            "k8s",
            "--parallelism",
            "3",
            "--image",
            image,
            "--start-at",
        ])
        .arg(start.to_string())
        .args(["--", "run", &server.url, "-n", "3001", "-c", "3"]);
        c
    }))
    .unwrap();
    let args = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("args: "))
        .unwrap();
    let args: Vec<String> = serde_json::from_str(args).unwrap();
    let pods: Vec<Child> = (0..3)
        .map(|i| {
            let mut c = podman(&dir);
            c.args(["run", "--rm", "--network"])
                .arg(format!("ns:/run/netns/{}-{}", hosts.prefix, i + 1))
                .args(["-e", &format!("JOB_COMPLETION_INDEX={i}"), image])
                .args(&args)
                .stdout(std::fs::File::create(dir.join(format!("shard-{i}.json"))).unwrap())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut pod in pods {
        assert!(wait_exit(&mut pod, LIMIT).success(), "a pod failed");
    }
    let files: Vec<String> = (0..3)
        .map(|i| dir.join(format!("shard-{i}.json")).display().to_string())
        .collect();
    let mut merge = vec!["merge"];
    merge.extend(files.iter().map(String::as_str));
    std::fs::write(dir.join("merged.json"), common::stdout_ok(&merge, LIMIT)).unwrap();
    let served = server.stop();
    assert_eq!(served, 3001);
    let merged = check_merged(&dir, 3, served, 1000.0);
    let shard: Value = serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    assert_eq!(shard["shard"]["source"], "JOB_COMPLETION_INDEX");
    assert_eq!(merged["shards"]["world"], 3);
    drop(storage);
}
