//! Helpers shared by the integration tests: the built binary, servers on 127.0.0.1:0, bounded waits.
#![allow(dead_code)] // each test file uses a different part of this module

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `wirebench` binary cargo built for these tests.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wirebench"))
}

/// A `wirebench serve tcp` child process, killed (by its PID) when dropped.
pub struct ServerProcess {
    pub child: Child,
    pub url: String,
}

impl ServerProcess {
    /// Starts `wirebench serve tcp ARGS` and reads the URL it prints first.
    pub fn start(args: &[&str]) -> ServerProcess {
        let mut child = bin()
            .args(["serve", "tcp"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start wirebench serve tcp");
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .expect("read the server's first line");
        assert!(
            first.starts_with("tcp://127.0.0.1:"),
            "first line: {first:?}"
        );
        ServerProcess {
            child,
            url: first.trim().to_string(),
        }
    }

    /// Sends SIGKILL to the server process.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `wirebench ARGS` to completion, failing the test if it takes longer than `limit`.
pub fn run_bounded(args: &[&str], limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wirebench");
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("wirebench {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("collect output");
    (out, started.elapsed())
}

/// Runs `wirebench run ... --json -q` and parses the JSON result; returns it and the exit code.
pub fn run_json(args: &[&str], limit: Duration) -> (serde_json::Value, i32) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-q"]);
    let (out, _) = run_bounded(&all, limit);
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "wirebench {all:?} printed no JSON ({e}); stdout: {text}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (json, out.status.code().unwrap_or(-1))
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
