//! Every file a user names is read within a bound (issue 16, item 5): an endless device or a
//! huge file is one line and exit 2, at once, not a read that eats the machine's memory.

use super::common;

use common::run_bounded;
use std::time::{Duration, Instant};

/// Each of these used to read /dev/zero until memory ran out (8 GB in 12 s).
#[test]
fn an_endless_file_is_one_line_and_exit_2() {
    let dir = tempdir("endless");
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "tcp://127.0.0.1:9", "--payload", "@/dev/zero"],
        vec![
            "run",
            "http://127.0.0.1:9/",
            "-X",
            "PUT",
            "--body",
            "@/dev/zero",
        ],
        vec!["run", "http://127.0.0.1:9/", "--targets", "/dev/zero"],
        vec!["run", "https://127.0.0.1:9/", "--cacert", "/dev/zero"],
        vec!["study", "/dev/zero"],
        vec!["report", "/dev/zero", "-o", dir.to_str().unwrap()],
    ];
    for args in cases {
        let start = Instant::now();
        let stderr = one_line_exit_2(&args);
        assert!(stderr.contains("larger than"), "{args:?}: {stderr}");
        // Generous: a bounded read of /dev/zero is milliseconds, an unbounded one never ends.
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A regular file over the bound is refused by its size, before a byte is read.
#[test]
fn a_file_over_the_bound_is_refused_by_its_size() {
    let dir = tempdir("sparse");
    let plan = dir.join("huge.toml");
    // A sparse file: 2 MiB long, no blocks written.
    std::fs::File::create(&plan)
        .and_then(|f| f.set_len(2 << 20))
        .expect("sparse file");
    let stderr = one_line_exit_2(&["study", plan.to_str().unwrap()]);
    assert!(stderr.contains("larger than 1 MiB"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `wirebench ARGS`, which must fail as bad input does: exit 2, one line on stderr
/// (`error: …`, or a plan file's `FILE:LINE:COL: …`); returns that line.
fn one_line_exit_2(args: &[&str]) -> String {
    let (out, _) = run_bounded(args, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    stderr
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wb-bounded-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A named pipe nobody writes to: each of these waited for a writer for ever.
#[test]
fn a_named_pipe_with_no_writer_is_one_line_and_exit_2() {
    let dir = tempdir("fifo");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let f = fifo.to_str().unwrap();
    // --manifest DIR reads DIR/manifest.tsv.
    let set = dir.join("set");
    std::fs::create_dir(&set).unwrap();
    let c = std::ffi::CString::new(set.join("manifest.tsv").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let at = format!("@{f}");
    let out = dir.join("out");
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "tcp://127.0.0.1:9", "--payload", &at],
        vec!["run", "http://127.0.0.1:9/", "-X", "PUT", "--body", &at],
        vec!["run", "http://127.0.0.1:9/", "--targets", f],
        vec!["run", "https://127.0.0.1:9/", "--cacert", f],
        vec![
            "run",
            "http://127.0.0.1:9/{file}",
            "--manifest",
            set.to_str().unwrap(),
        ],
        vec!["study", f, "--dry-run"],
        vec!["report", f, "-o", out.to_str().unwrap()],
    ];
    for args in cases {
        let start = Instant::now();
        let stderr = one_line_exit_2(&args);
        assert!(stderr.contains("named pipe"), "{args:?}: {stderr}");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
