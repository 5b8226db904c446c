//! Connection-per-request load runs a client out of local ports; wirebench names it, with the
//! port range and the advice. The test makes its own network namespace (as root), narrows the
//! ephemeral port range there and turns off TIME_WAIT reuse, so exhaustion comes quickly and
//! nothing outside the namespace is touched. The namespace is removed afterwards.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

struct Netns(String);

impl Netns {
    fn create() -> Netns {
        let name = format!("wb-ports-{}", std::process::id());
        let ok = |c: &mut Command| c.status().map(|s| s.success()).unwrap_or(false);
        assert!(
            ok(Command::new("ip").args(["netns", "add", &name])),
            "this test needs root and iproute2 (ip netns add)"
        );
        let ns = Netns(name);
        for args in [
            &["ip", "link", "set", "lo", "up"][..],
            &["sysctl", "-qw", "net.ipv4.ip_local_port_range=40000 40009"],
            &["sysctl", "-qw", "net.ipv4.tcp_tw_reuse=0"],
        ] {
            assert!(ok(&mut ns.exec(args)), "netns set-up: {args:?}");
        }
        ns
    }

    fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(args);
        c
    }

    /// `wirebench ARGS` inside the namespace, with the tests' own history.
    fn wirebench(&self, args: &[&str]) -> Command {
        let mut c = common::bin_via(&["ip", "netns", "exec", &self.0]);
        c.args(args);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

#[test]
fn connection_per_request_names_port_exhaustion() {
    let ns = Netns::create();
    let mut server = ns
        .wirebench(&[
            "serve",
            "tcp",
            "--listen",
            "127.0.0.1:7000",
            "--threads",
            "1",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(server.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim(), "tcp://127.0.0.1:7000");

    // The client runs inside the namespace too, where the narrow port range applies.
    let out = ns
        .wirebench(&[
            "run",
            "tcp://127.0.0.1:7000",
            "--mode",
            "crr",
            "-d",
            "1s",
            "--json",
            "-q",
        ])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{json}");
    let kinds = json["errors"]["by_kind"].as_array().unwrap();
    let ports = kinds
        .iter()
        .find(|k| k["kind"] == "port_exhausted")
        .unwrap_or_else(|| panic!("no port_exhausted errors: {json}"));
    assert!(ports["count"].as_u64().unwrap() > 0);
    // The ~5 usable ports of the range were used before exhaustion.
    assert!(json["ok"].as_u64().unwrap() >= 3, "{json}");
    let note = json["notes"][0].as_str().unwrap_or_default();
    assert!(note.contains("local port exhaustion"), "{note}");
    assert!(note.contains("40000-40009 (10 ports)"), "{note}");
    assert!(note.contains("--mode rr"), "{note}");
}
