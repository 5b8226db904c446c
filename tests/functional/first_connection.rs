//! The run's first connection is its reachability check; what the target refuses stops the run
//! at once; bulk uploads report what the receiver counted; target faults exit 1, input 2.

use super::common;

use common::{execute_json, free_port, run_bounded, usage_error};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};
use wirebench::serve::tcp::{spawn, ServerHandle, TcpServerOptions};
use wirebench::serve::Mode as ServerMode;

const LIMIT: Duration = Duration::from_secs(30);

fn server(mode: ServerMode, blocking: bool) -> (ServerHandle, String) {
    let options = TcpServerOptions {
        mode,
        blocking,
        ..TcpServerOptions::default()
    };
    let handle = spawn(TcpListener::bind("127.0.0.1:0").unwrap(), options).unwrap();
    let url = format!("tcp://{}", handle.addr);
    (handle, url)
}

/// A client whose mode the server does not serve gets the server's reason, at once, exit 2,
/// and no throughput figure: it used to run for its whole duration reconnecting, and headline
/// "12.90 Gbit/s" for bytes no peer accepted.
#[test]
fn a_mode_the_server_refuses_stops_the_run_at_once() {
    let cases = [
        (ServerMode::Echo, "stream", "use --mode rr"),
        (ServerMode::Sink, "rr", "use --mode stream"),
        (ServerMode::Sink, "source", "use --mode stream"),
        (ServerMode::Source, "stream", "use --mode source"),
    ];
    for blocking in [false, true] {
        for (mode, client, want) in cases {
            let (srv, url) = server(mode, blocking);
            let started = Instant::now();
            let out = usage_error(&["run", &url, "--mode", client, "-d", "5s"], LIMIT);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(want), "{mode:?} {client}: {err}");
            assert!(
                out.stdout.is_empty(),
                "{mode:?} {client}: a report was printed"
            );
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{mode:?} {client}: took {:?}",
                started.elapsed()
            );
            // One connection tried, not hundreds of reconnections.
            let stats = srv.stop();
            assert!(stats.connections <= 2, "{mode:?} {client}: {stats:?}");
        }
    }
}

/// A server that accepts one connection only: the run must use it (no hidden probe first).
#[test]
fn a_one_connection_server_serves_the_whole_run() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let echo = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let mut total = 0u64;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 || s.write_all(&buf[..n]).is_err() {
                break;
            }
            total += n as u64;
        }
        total
    });
    let url = format!("tcp://{addr}");
    let (json, code) = execute_json(
        &[&url, "--raw", "--size", "16", "-n", "50", "--timeout", "2s"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["ok"], 50, "{json}");
    assert_eq!(echo.join().unwrap(), 50 * 16);
}

/// The reference server counts exactly the connections the user asked for.
#[test]
fn the_server_sees_only_the_connections_asked_for() {
    let (srv, url) = server(ServerMode::Echo, false);
    for _ in 0..3 {
        let (json, code) = execute_json(&[&url, "-c", "2", "-n", "20"], LIMIT);
        assert_eq!(code, 0, "{json}");
    }
    let stats = srv.stop();
    assert_eq!(stats.connections, 6, "{stats:?}");
    assert_eq!(stats.requests, 60, "{stats:?}");
}

/// A stream to a wirebench sink reports what the sink counted: every byte the client wrote,
/// the same figure the sink's own counter holds.
#[test]
fn a_stream_reports_what_the_sink_counted() {
    for blocking in [false, true] {
        let (srv, url) = server(ServerMode::Sink, blocking);
        for c in ["1", "3"] {
            let (json, code) = execute_json(
                &[
                    &url, "--mode", "stream", "--size", "1k", "-c", c, "-d", "500ms",
                ],
                LIMIT,
            );
            assert_eq!(code, 0, "{json}");
            let t = &json["throughput"];
            assert!(t["sent_bytes"].as_u64().unwrap() > 0, "{json}");
            assert_eq!(t["receiver_bytes"], t["sent_bytes"], "{json}");
        }
        let stats = srv.stop();
        assert_eq!(stats.connections, 4, "{stats:?}");
    }
}

/// Faults of the target exit 1 with one line: nothing listens, or nothing answers.
#[test]
fn an_unreachable_target_exits_1_with_one_line() {
    let url = format!("tcp://127.0.0.1:{}", free_port());
    for args in [
        vec!["run", url.as_str(), "-d", "5s"],
        vec!["run", url.as_str(), "--mode", "stream", "-d", "5s"],
        vec!["run", url.as_str(), "--rate", "100", "-d", "5s"],
    ] {
        let (out, took) = run_bounded(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("connection refused"), "{err}");
        assert!(out.stdout.is_empty());
        assert!(took < Duration::from_secs(3), "{args:?}: {took:?}");
    }
}

/// Datagrams to a closed port come back as ICMP port unreachable: counted as refused, and the
/// report never says "lost 0" when nothing was answered.
#[test]
fn udp_to_a_closed_port_is_refused_not_lossless() {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("udp://{}", sock.local_addr().unwrap());
    drop(sock);
    let (out, _) = run_bounded(&["run", &url, "-d", "300ms"], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no reply at all"), "{text}");
    assert!(!text.contains("lost 0"), "{text}");
    assert!(text.contains("refused"), "{text}");
}
