//! Issue 39, item 1: outputs never clobber. Every file wirebench writes refuses a path that
//! exists and is not a regular file (one line, exit 2, the path untouched), is written beside
//! its target and renamed, and follows only a link the user named. The device files are ones
//! this test makes with mknod in a folder of its own, never the machine's.

use super::common;

use common::{run_bounded, usage_error};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wirebench::serve::tcp::{self, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(30);

/// A folder of the test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("wb-noclobber-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A character device like /dev/full (1, 7) at `path`, made here; None (the reason printed)
/// where mknod is not allowed.
fn device(path: &str) -> Option<()> {
    let c = std::ffi::CString::new(path).unwrap();
    // SAFETY: a valid NUL-terminated path; makedev has no preconditions.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
    if made != 0 {
        eprintln!(
            "skipped the device case: mknod {path}: {}",
            std::io::Error::last_os_error()
        );
        return None;
    }
    Some(())
}

fn fifo(path: &str) {
    let c = std::ffi::CString::new(path).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// The non-regular paths of `s`: each must be refused and left as it was.
fn hostile_paths(s: &Scratch) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    if device(&s.path("full")).is_some() {
        v.push((s.path("full"), "a character device"));
        std::os::unix::fs::symlink(s.0.join("full"), s.0.join("to-full")).unwrap();
        v.push((s.path("to-full"), "a link to a device"));
    }
    fifo(&s.path("pipe"));
    v.push((s.path("pipe"), "a named pipe"));
    std::fs::create_dir(s.0.join("dir")).unwrap();
    v.push((s.path("dir"), "a directory"));
    std::os::unix::fs::symlink(s.0.join("nothing"), s.0.join("dangling")).unwrap();
    v.push((s.path("dangling"), "a link to nothing"));
    v
}

/// Every hostile path is still what it was, and nothing else appeared in the folder.
fn untouched(s: &Scratch, before: usize) {
    if Path::new(&s.path("full")).exists() {
        let t = std::fs::symlink_metadata(s.path("full"))
            .unwrap()
            .file_type();
        assert!(t.is_char_device(), "the device was replaced");
    }
    let t = std::fs::symlink_metadata(s.path("pipe"))
        .unwrap()
        .file_type();
    assert!(t.is_fifo(), "the named pipe was replaced");
    assert!(!Path::new(&s.path("nothing")).exists());
    let names: Vec<_> = std::fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), before, "something was written: {names:?}");
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A result document written by `run --json` against a reference server.
fn a_result(s: &Scratch) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    let (out, _) = run_bounded(
        &["run", &url, "-n", "50", "--json", "-q", "--no-save"],
        LIMIT,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = s.path("result.json");
    std::fs::write(&doc, &out.stdout).unwrap();
    doc
}

#[test]
fn run_out_report_o_and_save_example_refuse_what_is_not_a_regular_file() {
    let s = Scratch::new("refuse");
    let doc = a_result(&s);
    let paths = hostile_paths(&s);
    let before = std::fs::read_dir(&s.0).unwrap().count();
    for (p, what) in &paths {
        for args in [
            vec![
                "run",
                "tcp://127.0.0.1:1",
                "-n",
                "1",
                "--no-save",
                "--out",
                p,
            ],
            vec!["report", &doc, "-o", p],
            vec!["run", "dicom://127.0.0.1:1", "--save-example", p],
        ] {
            let out = usage_error(&args, LIMIT);
            let e = stderr(&out);
            assert!(e.contains(what) && e.contains(p.as_str()), "{args:?}: {e}");
        }
    }
    untouched(&s, before);
}

#[test]
fn a_link_the_user_named_is_followed_to_its_file_and_kept() {
    let s = Scratch::new("link");
    let doc = a_result(&s);
    std::fs::write(s.path("real.html"), "old").unwrap();
    std::os::unix::fs::symlink(s.0.join("real.html"), s.0.join("page.html")).unwrap();
    let (out, _) = run_bounded(&["report", &doc, "-o", &s.path("page.html")], LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = std::fs::symlink_metadata(s.path("page.html")).unwrap();
    assert!(t.file_type().is_symlink(), "the link was replaced");
    let page = std::fs::read_to_string(s.path("real.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..20]);
    // Written whole: no temporary file left beside it.
    let mut names: Vec<_> = std::fs::read_dir(&s.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["page.html", "real.html", "result.json"]);
}

#[test]
fn study_out_refuses_a_path_that_is_not_a_directory() {
    let s = Scratch::new("study");
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        "title = \"t\"\n[targets]\na = { url = \"tcp://127.0.0.1:1\" }\n[run]\nduration = \"1s\"\n",
    )
    .unwrap();
    fifo(&s.path("pipe"));
    let out = usage_error(
        &["study", &plan, "--out", &s.path("pipe"), "--no-save"],
        LIMIT,
    );
    assert!(stderr(&out).contains("pipe"), "{}", stderr(&out));
    let t = std::fs::symlink_metadata(s.path("pipe"))
        .unwrap()
        .file_type();
    assert!(t.is_fifo());
}
