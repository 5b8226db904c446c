//! Issue 39, item 6: no panic on any input, and bad input writes nothing, not even an empty
//! history database; nonsense objectives and thresholds are refused. Each case runs with a
//! data directory of its own, which must stay empty.

use super::common;

use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// Runs `args` with a fresh XDG_DATA_HOME: exit 2, one line, no panic, and nothing written there.
fn refused(args: &[&std::ffi::OsStr]) -> String {
    let home = std::env::temp_dir().join(format!(
        "wb-badinput-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&home).unwrap();
    let mut c = common::bin();
    c.env("XDG_DATA_HOME", &home)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    common::wait_exit(&mut child, LIMIT);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(!stderr.contains("panick"), "{args:?}: {stderr}");
    let left: Vec<_> = walk(&home);
    assert!(left.is_empty(), "{args:?} wrote {left:?}");
    let _ = std::fs::remove_dir_all(&home);
    stderr
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all.push(p.clone());
            all.extend(walk(&p));
        } else {
            all.push(p);
        }
    }
    all
}

fn os(words: &[&str]) -> Vec<std::ffi::OsString> {
    words.iter().map(std::ffi::OsString::from).collect()
}

fn refused_words(words: &[&str]) -> String {
    let v = os(words);
    let r: Vec<&std::ffi::OsStr> = v.iter().map(|s| s.as_os_str()).collect();
    refused(&r)
}

#[test]
fn lookups_of_nothing_make_no_history() {
    for args in [
        &["show", "zzzz"][..],
        &["show", ""],
        &["export", "zzzz"],
        &["diff", "zzzz", "yyyy"],
        &["report", "zzzz"],
        &["merge", "a.json", "/dev/zero"],
        &["merge", "zzzz"],
    ] {
        refused_words(args);
    }
}

#[test]
fn nonsense_objectives_thresholds_and_rates_are_refused() {
    let url = "tcp://127.0.0.1:1";
    for (args, says) in [
        (vec!["run", url, "--fail-if", "errors>-1"], "errors"),
        (vec!["run", url, "--fail-if", "errors>=0"], "errors"),
        (vec!["run", url, "--fail-if", "p99>0ms"], "never"),
        (vec!["run", url, "--fail-if", "ops<0"], "ops"),
        (vec!["peak", url, "--slo", "p99<=0ms"], "never"),
        (vec!["run", url, "--fail-if", "errors>=0%"], "never"),
        (vec!["run", url, "--rate", "1e308"], "at most"),
        (vec!["run", url, "--stages", "1s@1e300"], "at most"),
        (vec!["history", "--since", "1e308d"], "--since"),
        (
            vec!["run", url, "--shards", "2", "--launcher", ""],
            "--launcher",
        ),
    ] {
        let e = refused_words(&args);
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

#[test]
fn an_argument_that_is_not_utf8_is_named_not_a_panic() {
    let bad = std::ffi::OsStr::from_bytes(b"tcp://127.0.0.1:1/\xff\xfe");
    let e = refused(&[std::ffi::OsStr::new("run"), bad]);
    assert!(e.contains("not valid UTF-8"), "{e}");
    let e = refused(&[
        std::ffi::OsStr::new("history"),
        std::ffi::OsStr::new("--db"),
        std::ffi::OsStr::from_bytes(b"/tmp/\xc3\x28.db"),
    ]);
    assert!(e.contains("not valid UTF-8"), "{e}");
}
