//! Hostile clients against the reference servers, through the built binary: the limits that
//! bound what a slow, silent or oversized client can hold (`--idle-timeout` of `serve tcp`,
//! `--max-header-bytes` and `--request-timeout` of `serve http`). Every wait is bounded.

mod common;

use common::{first_line_addr, serve_process, stdout_lines};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

/// The longest any single wait may take before the test fails.
const LIMIT: Duration = Duration::from_secs(8);

/// `wirebench serve KIND ARGS` and its address; the child is killed by the caller.
fn serve(kind: &str, args: &[&str]) -> (Child, SocketAddr) {
    let mut child = serve_process(kind, args);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, kind, LIMIT);
    (child, addr)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads until the server closes; returns what arrived and when the close came.
fn read_to_close(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = Instant::now();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (got, started.elapsed()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return (got, started.elapsed()),
            Err(e) => panic!("no close within {LIMIT:?} ({e}); got {got:?}"),
        }
    }
}

#[test]
fn tcp_silent_connection_is_closed_after_the_idle_timeout() {
    let (child, addr) = serve("tcp", &["--idle-timeout", "1s", "-t", "1"]);
    let mut silent = TcpStream::connect(addr).unwrap();
    // A talking client on the same server keeps its connection past the timeout.
    let mut talker = TcpStream::connect(addr).unwrap();
    talker.set_read_timeout(Some(LIMIT)).unwrap();
    for _ in 0..8 {
        talker.write_all(b"x").unwrap();
        let mut one = [0u8; 1];
        talker.read_exact(&mut one).unwrap();
        assert_eq!(&one, b"x", "the echo of a talking client");
        std::thread::sleep(Duration::from_millis(250));
    }
    let (got, after) = read_to_close(&mut silent);
    stop(child);
    assert!(got.is_empty(), "a silent client got {got:?}");
    // Connected ~2 s ago (the talker's loop) with a 1 s timeout: closed by now or very soon.
    assert!(
        after < Duration::from_secs(3),
        "closed {after:?} after the talk"
    );
}

#[test]
fn http_head_over_max_header_bytes_gets_431() {
    let (child, addr) = serve("http", &["--max-header-bytes", "1k", "-t", "1"]);
    let head = |pad: usize| {
        format!(
            "GET /bytes/3 HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
            "a".repeat(pad)
        )
    };
    let mut fits = TcpStream::connect(addr).unwrap();
    fits.set_read_timeout(Some(LIMIT)).unwrap();
    fits.write_all(head(900).as_bytes()).unwrap();
    let mut reply = [0u8; 12];
    fits.read_exact(&mut reply).unwrap();
    let mut over = TcpStream::connect(addr).unwrap();
    over.write_all(head(1100).as_bytes()).unwrap();
    let (got, _) = read_to_close(&mut over);
    stop(child);
    assert_eq!(&reply, b"HTTP/1.1 200", "a 950-byte head under a 1k limit");
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 431 "), "a 1,150-byte head: {got}");
    assert!(got.contains("Connection: close"), "431 closes: {got}");
}

#[test]
fn http_max_header_bytes_out_of_range_is_a_usage_error() {
    let out = common::usage_error(&["serve", "http", "--max-header-bytes", "2M"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-header-bytes 2M") && err.contains("256 to 1M"),
        "{err}"
    );
}

#[test]
fn http_head_trickled_byte_by_byte_gets_408_at_the_request_timeout() {
    // Slowloris: every byte arrives in time for a per-read timeout, but the head as a whole
    // must arrive within --request-timeout of the connection.
    let (child, addr) = serve("http", &["--request-timeout", "1s", "-t", "1"]);
    let mut slow = TcpStream::connect(addr).unwrap();
    let started = Instant::now();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-a: ")
        .unwrap();
    let mut sent_for = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(4) {
        if slow.write_all(b"a").is_err() {
            break;
        }
        sent_for = started.elapsed();
        std::thread::sleep(Duration::from_millis(200));
        slow.set_nonblocking(true).unwrap();
        let mut peek = [0u8; 1];
        let answered = slow.peek(&mut peek).is_ok();
        slow.set_nonblocking(false).unwrap();
        if answered {
            break;
        }
    }
    let (got, _) = read_to_close(&mut slow);
    stop(child);
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 408 "), "a trickled head: {got}");
    assert!(
        sent_for < Duration::from_secs(3),
        "answered only after {sent_for:?}"
    );
}
