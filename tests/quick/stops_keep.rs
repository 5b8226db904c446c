//! Issue 39, item 5: every stop keeps what was measured. SIGHUP keeps and saves a run as
//! SIGINT does (exit 129); a closed stdout (`run … | head -1`) still saves the run before the
//! process ends by SIGPIPE; `study --out` stopped by SIGHUP writes its partial study; a save
//! that fails on a full disk fails the command; `files make` checks free space first and
//! removes what it wrote when it fails. Full disks are small tmpfs mounts the test makes and
//! removes (skipped, with the reason printed, where mounting is not allowed).

use super::common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wirebench::serve::tcp::{self, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(60);

/// A folder of the test's own, removed (and unmounted, if mounted) when dropped.
struct Scratch {
    dir: PathBuf,
    mounted: Option<PathBuf>,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("wb-stops-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir, mounted: None }
    }

    /// A tmpfs of `options` at DIR/disk, or None (the reason printed) where mount fails.
    fn disk(&mut self, options: &str) -> Option<PathBuf> {
        let at = self.dir.join("disk");
        std::fs::create_dir_all(&at).unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                options,
                "wb-test",
                at.to_str().unwrap(),
            ])
            .stderr(Stdio::piped())
            .output();
        match status {
            Ok(o) if o.status.success() => {
                self.mounted = Some(at.clone());
                Some(at)
            }
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount ({e})");
                None
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(m) = &self.mounted {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fills the disk at `dir` to the last byte.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    let one = [0u8; 1];
    while f.write_all(&one).is_ok() {}
    let _ = f.sync_all();
}

fn echo() -> (tcp::ServerHandle, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    (srv, url)
}

/// The runs the history `db` holds: (kind, status) each.
fn stored(db: &Path) -> Vec<(String, String)> {
    let (out, _) = common::run_bounded(&["history", "--db", db.to_str().unwrap(), "--json"], LIMIT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or("").to_string(),
                r["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn sighup(child: &std::process::Child) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
}

#[test]
fn sighup_keeps_and_saves_the_run_as_sigint_does() {
    let s = Scratch::new("hup");
    let (srv, url) = echo();
    let db = s.dir.join("h.db");
    let mut child = common::bin()
        .args(["run", &url, "-d", "60s", "-q", "--db", db.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    sighup(&child);
    let status = common::wait_exit(&mut child, LIMIT);
    let out = child.wait_with_output().unwrap();
    srv.stop();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        status.code(),
        Some(129),
        "{status:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Interrupted (SIGHUP)"), "{text}");
    assert_eq!(stored(&db), [("result".into(), "interrupted".into())]);
}

#[test]
fn a_closed_stdout_still_saves_the_run() {
    let s = Scratch::new("pipe");
    let (srv, url) = echo();
    let db = s.dir.join("h.db");
    let mut fds = [0; 2];
    // SAFETY: pipe fills two new descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    drop(unsafe { OwnedFd::from_raw_fd(fds[0]) });
    let closed = unsafe { OwnedFd::from_raw_fd(fds[1]) };
    let mut child = common::bin()
        .args(["run", &url, "-n", "200", "--db", db.to_str().unwrap()])
        .stdout(Stdio::from(closed))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::wait_exit(&mut child, LIMIT);
    srv.stop();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    assert_eq!(stored(&db), [("result".into(), "ok".into())]);
}

#[test]
fn study_out_stopped_by_sighup_writes_the_partial_study() {
    let s = Scratch::new("study");
    let (srv, url) = echo();
    let plan = s.dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!("title = \"t\"\n[targets]\na = {{ url = \"{url}\" }}\nb = {{ url = \"{url}\" }}\n[run]\nduration = \"1s\"\n"),
    )
    .unwrap();
    let out_dir = s.dir.join("out");
    let db = s.dir.join("h.db");
    let mut child = common::bin()
        .args([
            "study",
            plan.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first run saved: the study is under way (and watching its signals).
    let start = Instant::now();
    loop {
        let (o, _) = common::run_bounded(&["history", "--db", db.to_str().unwrap()], LIMIT);
        if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("study") {
            break;
        }
        assert!(start.elapsed() < LIMIT, "the first run was never saved");
        std::thread::sleep(Duration::from_millis(100));
    }
    sighup(&child);
    let status = common::wait_exit(&mut child, LIMIT);
    let out = child.wait_with_output().unwrap();
    srv.stop();
    assert_eq!(
        status.code(),
        Some(129),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md written");
    assert!(md.contains("**Interrupted**"), "{md}");
    assert!(out_dir.join("study.json").is_file());
}

#[test]
fn a_save_that_fails_on_a_full_disk_fails_the_command() {
    let mut s = Scratch::new("full");
    let Some(disk) = s.disk("size=2m") else {
        return;
    };
    let (srv, url) = echo();
    let db = disk.join("h.db");
    let dbs = db.to_str().unwrap().to_string();
    // A history made while there was room; then the disk fills.
    let (out, _) = common::run_bounded(&["run", &url, "-n", "10", "-q", "--db", &dbs], LIMIT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fill(&disk);
    let (out, _) = common::run_bounded(&["run", &url, "-d", "500ms", "--db", &dbs], LIMIT);
    srv.stop();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Refused before the run (exit 2: the history cannot be opened), or measured, reported,
    // and failed for the save (exit 1): never a success that kept nothing.
    match out.status.code() {
        Some(1) => {
            assert!(stderr.contains("not saved"), "{stderr}");
            assert!(stdout.contains("ops/s") || !stdout.is_empty(), "{stdout}");
        }
        Some(2) => assert!(stderr.contains("h.db"), "{stderr}"),
        c => panic!("exit {c:?}: {stderr}"),
    }
}

#[test]
fn files_make_checks_free_space_and_cleans_up_after_itself() {
    let mut s = Scratch::new("files");
    let Some(disk) = s.disk("size=1m,nr_inodes=12") else {
        return;
    };
    let set = disk.join("set");
    let sets = set.to_str().unwrap();
    // Too big for the disk: refused before a byte is written.
    let out = common::usage_error(&["files", "make", sets, "--total", "10M"], LIMIT);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("free"), "{e}");
    assert!(
        !set.exists(),
        "files make wrote into a disk it knew too small"
    );
    // Room for the bytes but not for 16 files' inodes: it fails, and removes what it wrote.
    let (out, _) = common::run_bounded(
        &["files", "make", sets, "--total", "64k", "--count", "16"],
        LIMIT,
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!set.exists(), "a set without its manifest was left: {e}");
}
