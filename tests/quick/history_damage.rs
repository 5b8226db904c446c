//! A history that is damaged, missing or on a full disk (issue 16 item 10): one line naming the
//! fix, exit 2 where the user must act, a run's results printed whatever the history's state,
//! and no file made where none was asked for.

use super::common;

use common::{bin, run_bounded, usage_error, ServerProcess};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// SQLite's page size for the histories wirebench writes (its default).
const PAGE: usize = 4096;

/// A temporary directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("wb-damage-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A history at `path` holding `runs` runs against `server`.
fn history(server: &ServerProcess, path: &str, runs: usize) {
    for _ in 0..runs {
        let (out, _) = run_bounded(
            &["run", &server.url, "-n", "200", "-q", "--db", path],
            LIMIT,
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
}

/// What SQLite's own check says of the file.
fn quick_check(path: &str) -> String {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row("PRAGMA quick_check", [], |r| r.get(0)).unwrap()
}

#[test]
fn a_damaged_history_is_one_line_exit_2_naming_the_fix() {
    let server = ServerProcess::start(&[]);
    let dir = Dir::new("show");
    let db = dir.file("history.db");
    history(&server, &db, 2);
    // The first page (the file's header and schema) stays; every page of the tables is garbage.
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[PAGE..].fill(0xA5);
    std::fs::write(&db, &bytes).unwrap();
    for args in [
        vec!["show", "last", "--db", &db],
        vec!["history", "--db", &db],
        vec!["export", "last", "--db", &db],
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("damaged"), "{args:?}: {err}");
        assert!(
            err.contains("move it aside") && err.contains("--db"),
            "{err}"
        );
    }
}

#[test]
fn a_run_into_a_history_failing_its_integrity_check_says_so_and_prints_its_results() {
    let server = ServerProcess::start(&[]);
    let dir = Dir::new("integrity");
    let db = dir.file("history.db");
    history(&server, &db, 1);
    // The root page of the index of tags becomes garbage: runs without --tag never touch it,
    // so a new row could be written, into a file SQLite's check finds damaged.
    let root: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'tags_key'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut bytes = std::fs::read(&db).unwrap();
    let at = (root as usize - 1) * PAGE;
    bytes[at..at + PAGE].fill(0xA5);
    std::fs::write(&db, &bytes).unwrap();
    assert_ne!(quick_check(&db), "ok", "the test damaged the file as meant");
    let (out, _) = run_bounded(&["run", &server.url, "-n", "200", "--db", &db], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    // Printed, not kept: the command fails (issue 39: a save that fails fails the command).
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ok 200"),
        "the results are printed: {out:?}"
    );
    let warning: Vec<&str> = err.lines().filter(|l| l.contains("integrity")).collect();
    assert_eq!(warning.len(), 1, "{err}");
    assert!(warning[0].contains("not saved") && warning[0].contains("move it aside"));
    let c = rusqlite::Connection::open(&db).unwrap();
    let rows: i64 = c
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1, "nothing written into the damaged file");
}

#[test]
fn reading_commands_on_a_missing_db_say_so_and_create_nothing() {
    let dir = Dir::new("missing");
    let db = dir.file("NEW.db");
    for args in [
        vec!["show", "last", "--db", &db],
        vec!["history", "--db", &db],
        vec!["diff", "last~1", "last", "--db", &db],
        vec!["export", "last", "--db", &db],
        vec!["report", "last", "--db", &db, "-o", &dir.file("r.html")],
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no such file"), "{args:?}: {err}");
        let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

#[test]
fn a_history_that_cannot_be_written_names_the_fix_and_leaves_no_empty_file() {
    let dir = Dir::new("full");
    let db = dir.file("history.db");
    // A file size limit of 0 makes every write fail as on a full disk (EFBIG; SIGXFSZ ignored,
    // as the kernel then reports the error instead of killing).
    let mut cmd = bin();
    cmd.args(["run", "tcp://127.0.0.1:9", "-n", "10", "--db", &db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &none) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("free space") && err.contains("--db"),
        "names the fix: {err}"
    );
    assert!(!Path::new(&db).exists(), "no empty file left behind");
}
