//! A reply that comes after `--timeout` is a timeout, never an ok (issue 16 item 10): a body
//! that keeps coming (so no single read waits a whole timeout) and a late reply, with blocking
//! reads (one connection per thread), several connections and an open loop.

mod common;

use common::{first_line_addr, run_json, serve_process, stdout_lines};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A server that answers every request with its head at once and its 10-byte body one byte
/// every 60 ms: 600 ms a reply, with progress all along.
fn trickling_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut head = Vec::new();
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    head.extend_from_slice(&buf[..n]);
                    if !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        continue;
                    }
                    head.clear();
                    let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
                    if conn.write_all(reply).is_err() {
                        return;
                    }
                    for _ in 0..10 {
                        std::thread::sleep(Duration::from_millis(60));
                        if conn.write_all(b"x").is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    url
}

/// Runs against `url` with `--timeout 400ms` and asserts that no reply was counted ok and
/// that timeouts were.
fn all_timeouts(url: &str, extra: &[&str]) {
    let mut args = vec![url, "--timeout", "400ms", "-d", "1500ms"];
    args.extend_from_slice(extra);
    let (json, code) = run_json(&args, LIMIT);
    assert_eq!(code, 1, "{args:?}: {json}");
    assert_eq!(
        json["ok"], 0,
        "{args:?}: a reply after 400 ms is no ok: {json}"
    );
    let kinds = &json["errors"]["by_kind"];
    assert_eq!(kinds[0]["kind"], "timeout", "{args:?}: {json}");
    assert!(kinds[0]["count"].as_u64().unwrap() >= 2, "{args:?}: {json}");
}

#[test]
fn a_reply_that_ends_after_the_timeout_is_a_timeout() {
    // The body keeps coming within the timeout of each read, but the reply ends at 1.5x it:
    // one connection per thread (blocking reads), several, and an open loop.
    let url = trickling_server();
    for extra in [&["-c", "1"][..], &["-c", "4"], &["--rate", "4"]] {
        all_timeouts(&url, extra);
    }
    // wirebench's own server, replying after 600 ms.
    let mut server = serve_process("http", &[]);
    let lines = stdout_lines(&mut server);
    let addr = first_line_addr(&mut server, &lines, "http", Duration::from_secs(10));
    let delayed = format!("http://{addr}/delay/600ms");
    for extra in [&["-c", "1"][..], &["--rate", "4"]] {
        all_timeouts(&delayed, extra);
    }
    let _ = server.kill();
    let _ = server.wait();
}
