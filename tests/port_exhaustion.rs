//! Connection-per-request load runs a client out of local ports; wirebench names it, with the
//! port range and the advice. The test makes its own network namespace (as root), narrows the
//! ephemeral port range there and turns off TIME_WAIT reuse, so exhaustion comes quickly and
//! nothing outside the namespace is touched. The namespace is removed afterwards.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

struct Netns(String);

impl Netns {
    /// A namespace whose ephemeral ports are `range` ("40000 40009"), named for `what`.
    fn create(what: &str, range: &str) -> Netns {
        let name = format!("wb-{what}-{}", std::process::id());
        let ok = |c: &mut Command| c.status().map(|s| s.success()).unwrap_or(false);
        assert!(
            ok(Command::new("ip").args(["netns", "add", &name])),
            "this test needs root and iproute2 (ip netns add)"
        );
        let ns = Netns(name);
        for args in [
            &["ip", "link", "set", "lo", "up"][..],
            &[
                "sysctl",
                "-qw",
                &format!("net.ipv4.ip_local_port_range={range}"),
            ],
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
    let ns = Netns::create("ports", "40000 40009");
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

/// A UDP session never talks to itself: against a local port nobody holds, in a namespace
/// whose ephemeral range is that port and one more, every new socket the kernel binds to the
/// target's port is replaced by one on the other port. Before, such a socket's requests came
/// back to it as replies: bytes "received", the target taken for alive, and a run of 200
/// requests still going at 20 s. Now nothing is received and each request fails.
#[test]
fn a_udp_session_never_talks_to_itself() {
    let ns = Netns::create("self", "40000 40001");
    let started = std::time::Instant::now();
    let out = ns
        .wirebench(&[
            "run",
            "udp://127.0.0.1:40000",
            "-n",
            "200",
            "--timeout",
            "200ms",
            "--deadline",
            "20s",
            "--json",
            "-q",
        ])
        .output()
        .unwrap();
    let took = started.elapsed();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(json["throughput"]["received_bytes"], 0, "{json}");
    assert_eq!(json["ok"], 0, "{json}");
    // Refused (the kernel's ICMP answer), or a timeout where its ICMP rate limit held one back.
    let kinds = json["errors"]["by_kind"].as_array().unwrap();
    assert!(
        kinds
            .iter()
            .all(|k| k["kind"] == "refused" || k["kind"] == "timeout"),
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|k| k["kind"] == "refused"), "{kinds:?}");
    assert_eq!(json["errors"]["total"], 200, "{json}");
    let notes = json["notes"].to_string();
    assert!(!notes.contains("deadline"), "{notes}");
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
}

/// A TCP connection never meets itself: in the same two-port namespace, a connect the kernel
/// gave the target's own port as its source (a simultaneous open, which answers itself) is a
/// refusal like any other. Before, 2 of 4 such runs connected to themselves and counted their
/// own requests as replies (7 "mismatch" of 50; a raw echo would have counted them ok); now
/// every run ends at once: nothing listens there.
#[test]
fn a_tcp_connection_never_meets_itself() {
    let ns = Netns::create("selftcp", "40000 40001");
    for _ in 0..4 {
        let out = ns
            .wirebench(&[
                "run",
                "tcp://127.0.0.1:40000",
                "-n",
                "50",
                "--timeout",
                "200ms",
                "--json",
                "-q",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("nothing listens there"), "{stderr}");
        assert_eq!(out.status.code(), Some(1), "{stderr}");
    }
}
