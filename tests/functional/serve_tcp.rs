//! The reference TCP server over real loopback sockets: in-process through `spawn`, and the
//! built binary for the command line. Every read and wait is bounded in time.

use super::common;

use common::{first_line_addr, serve_process, stdout_lines, stop_with_sigterm, usage_error};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};
use wirebench::serve::tcp::{spawn, PlainFraming, ServerHandle, ServerStats, TcpServerOptions};
use wirebench::serve::Mode as ServerMode;

/// The longest any single step may take before the test fails.
const LIMIT: Duration = Duration::from_secs(10);

fn options() -> TcpServerOptions {
    TcpServerOptions {
        threads: 2,
        ..TcpServerOptions::default()
    }
}

fn server(options: TcpServerOptions) -> ServerHandle {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    spawn(listener, options).unwrap()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, LIMIT).unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    s.set_write_timeout(Some(LIMIT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

/// A connection that has sent its preamble.
fn wirebench(addr: SocketAddr, preamble: &str) -> TcpStream {
    let mut s = connect(addr);
    s.write_all(format!("WIREBENCH/1 {preamble}\n").as_bytes())
        .unwrap();
    s
}

fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// Everything until the server closes (a reset counts as a close).
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Err(e) => panic!("expected a close, got {e}"),
    }
    out
}

/// Polls the live counters until `done` holds; they trail the replies by a moment at most.
fn wait_for(h: &ServerHandle, done: impl Fn(&ServerStats) -> bool) -> ServerStats {
    common::wait_for_stats(|| h.stats(), done, Duration::from_millis(5), LIMIT)
}

/// A distinct, checkable payload.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn exchange_echoes_bytes_and_counts_requests() {
    let h = server(options());
    let mut s = wirebench(h.addr, "exchange req=64 rep=64");
    for i in 0..10 {
        let req = pattern(64, i);
        s.write_all(&req).unwrap();
        assert_eq!(read_n(&mut s, 64), req);
    }
    let st = wait_for(&h, |s| s.requests == 10);
    assert_eq!((st.bytes_in, st.bytes_out, st.bad_frames), (640, 640, 0));
    drop(s);
    let st = h.stop();
    assert_eq!((st.connections, st.open, st.requests), (1, 0, 10));
}

#[test]
fn large_request_is_echoed_as_it_streams() {
    let h = server(options());
    let size = 3 << 20;
    let mut s = wirebench(h.addr, &format!("exchange req={size} rep={size}"));
    let req = pattern(size, 7);
    let mut writer = s.try_clone().unwrap();
    let sent = req.clone();
    let t = thread::spawn(move || writer.write_all(&sent).unwrap());
    assert!(read_n(&mut s, size) == req, "echo differs");
    t.join().unwrap();
    wait_for(&h, |s| s.requests == 1 && s.bytes_out == size as u64);
}

#[test]
fn reply_size_differs_from_request() {
    let h = server(options());
    let mut s = wirebench(h.addr, "exchange req=10 rep=1000");
    for _ in 0..3 {
        s.write_all(&[1; 10]).unwrap();
        assert_eq!(read_n(&mut s, 1000).len(), 1000);
    }
    let big = 300_000;
    let mut s2 = wirebench(h.addr, &format!("exchange req=4 rep={big}"));
    s2.write_all(b"abcdabcd").unwrap();
    assert_eq!(read_n(&mut s2, 2 * big).len(), 2 * big);
    let st = wait_for(&h, |s| s.requests == 5);
    assert_eq!(st.bytes_out, 3000 + 2 * big as u64);
}

#[test]
fn pipelined_requests_are_all_answered() {
    let h = server(options());
    let mut s = wirebench(h.addr, "exchange req=64 rep=64");
    let all: Vec<u8> = (0..100).flat_map(|i| pattern(64, i)).collect();
    s.write_all(&all).unwrap();
    assert_eq!(read_n(&mut s, all.len()), all);
    let mut s2 = wirebench(h.addr, "exchange req=16 rep=32");
    s2.write_all(&[9; 16 * 100]).unwrap();
    assert_eq!(read_n(&mut s2, 32 * 100).len(), 3200);
    wait_for(&h, |s| s.requests == 200);
}

#[test]
fn sink_counts_streamed_requests() {
    let h = server(TcpServerOptions {
        mode: ServerMode::Sink,
        ..options()
    });
    let mut s = wirebench(h.addr, "stream req=1000");
    for _ in 0..10 {
        s.write_all(&[0; 1000]).unwrap();
    }
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(read_to_close(&mut s).is_empty());
    let st = wait_for(&h, |s| s.requests == 10 && s.open == 0);
    assert_eq!((st.bytes_in, st.bytes_out), (10_000, 0));
}

#[test]
fn source_pushes_messages() {
    let h = server(TcpServerOptions {
        mode: ServerMode::Source,
        source_size: 50,
        ..options()
    });
    let mut s = wirebench(h.addr, "source msg=100");
    assert_eq!(read_n(&mut s, 100_000).len(), 100_000);
    drop(s);
    // A plain client that says nothing gets the configured size once the server stops waiting
    // for a preamble.
    let mut plain = connect(h.addr);
    assert_eq!(read_n(&mut plain, 5000).len(), 5000);
    drop(plain);
    let st = wait_for(&h, |s| s.open == 0);
    assert!(st.requests >= 1000 + 100, "{st:?}");
    assert!(st.bytes_out >= 105_000, "{st:?}");
}

#[test]
fn mode_mismatch_gets_an_error_line() {
    let h = server(options());
    let mut s = wirebench(h.addr, "stream req=8");
    s.write_all(&[0; 64]).unwrap();
    let reply = read_to_close(&mut s);
    assert_eq!(
        String::from_utf8_lossy(&reply),
        "WIREBENCH/1 error server is in echo mode; use --mode rr\n"
    );
    let sink = server(TcpServerOptions {
        mode: ServerMode::Sink,
        ..options()
    });
    let reply = read_to_close(&mut wirebench(sink.addr, "exchange req=8 rep=8"));
    assert!(
        reply.ends_with(b"use --mode stream\n"),
        "{}",
        reply.escape_ascii()
    );
    wait_for(&h, |s| s.bad_frames == 1);
    wait_for(&sink, |s| s.bad_frames == 1);
}

#[test]
fn malformed_preamble_closes_only_that_connection() {
    let h = server(options());
    let mut good = wirebench(h.addr, "exchange req=8 rep=8");
    good.write_all(b"12345678").unwrap();
    assert_eq!(read_n(&mut good, 8), b"12345678");

    let reply = read_to_close(&mut wirebench(h.addr, "exchange req=0 rep=4"));
    assert!(
        reply.starts_with(b"WIREBENCH/1 error "),
        "{}",
        reply.escape_ascii()
    );
    let mut long = connect(h.addr);
    long.write_all(format!("WIREBENCH/1 exchange {}", "x".repeat(300)).as_bytes())
        .unwrap();
    read_to_close(&mut long);

    good.write_all(b"abcdefgh").unwrap();
    assert_eq!(read_n(&mut good, 8), b"abcdefgh");
    let st = wait_for(&h, |s| s.bad_frames == 2 && s.open == 1);
    assert_eq!(st.requests, 2);
}

#[test]
fn oversized_delimited_line_closes_only_that_connection() {
    let h = server(TcpServerOptions {
        plain: PlainFraming::Delimiter(b"\n".to_vec()),
        ..options()
    });
    let mut good = connect(h.addr);
    good.write_all(b"hello\n").unwrap();
    assert_eq!(read_n(&mut good, 6), b"hello\n");

    let mut bad = connect(h.addr);
    let mut reader = bad.try_clone().unwrap();
    // The server echoes what it reads until the line is too long, so drain concurrently.
    let drained = thread::spawn(move || read_to_close(&mut reader).len());
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..20 {
        if bad.write_all(&chunk).is_err() {
            break; // the server has closed: it got more than 1 MiB
        }
    }
    assert!(drained.join().unwrap() <= 1 << 21);
    wait_for(&h, |s| s.bad_frames == 1);

    good.write_all(b"still\n").unwrap();
    assert_eq!(read_n(&mut good, 6), b"still\n");
}

#[test]
fn fixed_framing_for_plain_clients() {
    let h = server(TcpServerOptions {
        plain: PlainFraming::Fixed(4),
        ..options()
    });
    let mut s = connect(h.addr);
    s.write_all(b"abc").unwrap();
    s.write_all(b"defgh").unwrap();
    assert_eq!(read_n(&mut s, 8), b"abcdefgh");
    wait_for(&h, |s| s.requests == 2);

    let sized = server(TcpServerOptions {
        plain: PlainFraming::Fixed(4),
        reply_size: Some(6),
        ..options()
    });
    let mut s = connect(sized.addr);
    s.write_all(b"abcdefgh").unwrap();
    assert_eq!(read_n(&mut s, 12).len(), 12);
    wait_for(&sized, |s| s.requests == 2 && s.bytes_out == 12);
}

#[test]
fn delimiter_framing_for_plain_clients() {
    let h = server(TcpServerOptions {
        plain: PlainFraming::Delimiter(b"\r\n".to_vec()),
        reply_size: Some(10),
        ..options()
    });
    let mut s = connect(h.addr);
    s.write_all(b"a\r").unwrap();
    thread::sleep(Duration::from_millis(20)); // let the delimiter be split across reads
    s.write_all(b"\nbb\r\n").unwrap();
    let reply = read_n(&mut s, 20);
    assert!(reply[..10].ends_with(b"\r\n") && reply[10..].ends_with(b"\r\n"));
    assert_eq!(reply.windows(2).filter(|w| w == b"\r\n").count(), 2);
    wait_for(&h, |s| s.requests == 2);

    let echo = server(TcpServerOptions {
        plain: PlainFraming::Delimiter(b"\n".to_vec()),
        ..options()
    });
    let mut s = connect(echo.addr);
    s.write_all(b"line1\nline2\n").unwrap();
    assert_eq!(read_n(&mut s, 12), b"line1\nline2\n");
    wait_for(&echo, |s| s.requests == 2);
}

#[test]
fn plain_stream_echoes_each_read() {
    let h = server(options());
    let mut s = connect(h.addr);
    s.write_all(b"hello").unwrap();
    assert_eq!(read_n(&mut s, 5), b"hello");
    wait_for(&h, |s| s.requests == 1 && s.bytes_in == 5);
}

#[test]
fn delay_is_waited_per_request() {
    let h = server(TcpServerOptions {
        delay: Some(Duration::from_millis(20)),
        ..options()
    });
    let mut s = wirebench(h.addr, "exchange req=8 rep=8");
    let start = Instant::now();
    s.write_all(&[1; 8]).unwrap();
    read_n(&mut s, 8);
    assert!(
        start.elapsed() >= Duration::from_millis(20),
        "{:?}",
        start.elapsed()
    );
    let start = Instant::now();
    s.write_all(&[2; 24]).unwrap();
    assert_eq!(read_n(&mut s, 24), [2; 24]);
    assert!(
        start.elapsed() >= Duration::from_millis(60),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn max_connections_rejects_the_extra_one() {
    let h = server(TcpServerOptions {
        max_connections: Some(1),
        ..options()
    });
    let mut first = wirebench(h.addr, "exchange req=4 rep=4");
    first.write_all(b"ping").unwrap();
    assert_eq!(read_n(&mut first, 4), b"ping");
    let mut extra = connect(h.addr);
    assert!(read_to_close(&mut extra).is_empty());
    let st = wait_for(&h, |s| s.rejected == 1);
    assert_eq!((st.connections, st.open), (1, 1));
    first.write_all(b"pong").unwrap();
    assert_eq!(read_n(&mut first, 4), b"pong");
    drop(first);
    wait_for(&h, |s| s.open == 0);
    let mut again = wirebench(h.addr, "exchange req=4 rep=4");
    again.write_all(b"more").unwrap();
    assert_eq!(read_n(&mut again, 4), b"more");
}

#[test]
fn open_returns_to_zero_and_stop_is_prompt() {
    let h = server(options());
    let mut conns: Vec<TcpStream> = (0..3)
        .map(|_| wirebench(h.addr, "exchange req=4 rep=4"))
        .collect();
    for c in &mut conns {
        c.write_all(b"abcd").unwrap();
        read_n(c, 4);
    }
    wait_for(&h, |s| s.open == 3 && s.connections == 3);
    conns.truncate(1);
    wait_for(&h, |s| s.open == 1);
    // One client stays connected: stopping must not wait for it.
    let start = Instant::now();
    let st = h.stop();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!((st.open, st.connections, st.requests), (0, 3, 3));
    assert!(read_to_close(&mut conns[0]).is_empty());
}

#[test]
fn spawn_rejects_bad_options() {
    for plain in [PlainFraming::Fixed(0), PlainFraming::Delimiter(vec![])] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let err = spawn(listener, TcpServerOptions { plain, ..options() }).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
}

// ---- the binary ----

#[test]
fn binary_prints_address_first_and_stops_on_sigterm() {
    let mut child = serve_process("tcp", &["--threads", "2"]);
    let rx = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &rx, "tcp", LIMIT);
    let second = rx.recv_timeout(LIMIT).unwrap();
    assert!(
        second.starts_with("serving tcp: mode echo, 2 threads"),
        "{second}"
    );

    let mut s = wirebench(addr, "exchange req=64 rep=64");
    for i in 0..3 {
        let req = pattern(64, i);
        s.write_all(&req).unwrap();
        assert_eq!(read_n(&mut s, 64), req);
    }
    drop(s);

    let last = stop_with_sigterm(&mut child, &rx, LIMIT);
    assert_eq!(
        last,
        "stopped: connections 1, requests 3, bytes in 192, bytes out 192, bad frames 0, rejected 0"
    );
}

#[test]
fn binary_bad_input_exits_2_with_one_line() {
    for args in [
        &["--reply-size", "0"][..],
        &["--delay", "abc"],
        &["--listen", "999.1.1.1:1"],
    ] {
        usage_error(&[&["serve", "tcp"], args].concat(), LIMIT);
    }
}

#[test]
fn binary_bind_failure_names_the_address() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = usage_error(&["serve", "tcp", "--listen", &addr], LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&addr) && stderr.lines().count() == 1,
        "{stderr}"
    );
}
