//! A reader that goes away (`wirebench run … | head`) ends wirebench quietly, as it ends every
//! Unix tool: killed by SIGPIPE, never a panic (exit 101) or "error: Broken pipe" (exit 1).

use super::common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Output, Stdio};
use std::time::Duration;
use wirebench::serve::tcp::{self, TcpServerOptions};

/// A pipe whose read end is already closed: its write end, as the child's output.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two new descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    drop(unsafe { OwnedFd::from_raw_fd(fds[0]) });
    unsafe { OwnedFd::from_raw_fd(fds[1]) }
}

/// `wirebench run` against a reference echo server, its output going where `wire` says.
fn run_into(wire: impl FnOnce(&mut std::process::Command)) -> Output {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    let mut c = common::bin();
    c.args(["run", &url, "-d", "300ms", "--no-save"]);
    wire(&mut c);
    let mut child = c.spawn().unwrap();
    common::wait_exit(&mut child, Duration::from_secs(30));
    let out = child.wait_with_output().unwrap();
    srv.stop();
    out
}

fn assert_quiet_sigpipe(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "status {:?}; stderr: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panic"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// `wirebench run … | head` with head gone before the report: nothing on stderr.
#[test]
fn a_closed_stdout_ends_quietly() {
    let out = run_into(|c| {
        c.stdout(Stdio::from(closed_pipe())).stderr(Stdio::piped());
    });
    assert_quiet_sigpipe(&out);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `wirebench run … 2>&1 | head`: stdout and stderr both closed, still no panic.
#[test]
fn closed_stdout_and_stderr_end_quietly() {
    let out = run_into(|c| {
        let fd = closed_pipe();
        c.stdout(Stdio::from(fd.try_clone().unwrap()))
            .stderr(Stdio::from(fd));
    });
    assert_quiet_sigpipe(&out);
}
