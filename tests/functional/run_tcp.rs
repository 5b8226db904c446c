//! The client against real servers on loopback: the reference server (in-process and as a
//! process), memcached, and small hand-written misbehaving servers. Tests that check only
//! figures run the client in this process ([`common::measure_json`]); the rest run the binary.

use super::common;

use common::{
    execute_json, free_port, listens, measure_json, run_bounded, run_json, ServerProcess,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};
use wirebench::serve::tcp::{spawn, ServerHandle, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(30);

fn server(options: TcpServerOptions) -> (ServerHandle, String) {
    let handle = spawn(TcpListener::bind("127.0.0.1:0").unwrap(), options).unwrap();
    let url = format!("tcp://{}", handle.addr);
    (handle, url)
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn ok_count_equals_the_servers_request_counter() {
    let (srv, url) = server(TcpServerOptions::default());
    let (json, code) = measure_json(&[&url, "-c", "4", "-n", "2000", "--size", "100"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 2000);
    assert_eq!(n(&json["errors"]["total"]), 0);
    let stats = srv.stop();
    assert_eq!(stats.requests, 2000, "server counted {stats:?}");
    assert_eq!(n(&json["throughput"]["sent_bytes"]), 200_000);
    assert_eq!(n(&json["throughput"]["received_bytes"]), 200_000);
    // The server counts payload only, as the client does; preambles are framing.
    assert_eq!(stats.bytes_in, 200_000);
}

#[test]
fn pipelined_requests_are_all_answered_and_counted() {
    let (srv, url) = server(TcpServerOptions::default());
    let (json, code) = measure_json(&[&url, "-c", "2", "--pipeline", "16", "-n", "5000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 5000);
    assert_eq!(srv.stop().requests, 5000);
}

/// Requests far larger than the socket buffers, to a server that echoes as it reads: the
/// client must read while it writes (else both sides wait for ever), check every echoed byte,
/// and never hold a whole request in memory. Both client paths: blocking calls (one connection
/// on a thread) and the event loop (pipelined, two connections on one thread).
#[test]
fn requests_larger_than_the_socket_buffers_are_echoed_at_constant_memory() {
    for blocking_server in [false, true] {
        let (srv, url) = server(TcpServerOptions {
            blocking: blocking_server,
            ..TcpServerOptions::default()
        });
        let mb64 = 64 << 20;
        let (json, code) = run_json(
            &[
                &url,
                "--size",
                "64M",
                "-n",
                "3",
                "--threads",
                "1",
                "--timeout",
                "20s",
            ],
            LIMIT,
        );
        assert_eq!(code, 0, "{json}");
        assert_eq!(n(&json["ok"]), 3);
        assert_eq!(n(&json["throughput"]["received_bytes"]), 3 * mb64);
        let rss = n(&json["generator"]["peak_rss_kib"]);
        assert!(
            rss < 48 * 1024,
            "client peak RSS {rss} KiB for 64 MiB requests"
        );
        let (json, code) = run_json(
            &[
                &url,
                "--size",
                "1M",
                "-c",
                "2",
                "--threads",
                "1",
                "--pipeline",
                "8",
                "-n",
                "200",
                "--timeout",
                "20s",
            ],
            LIMIT,
        );
        assert_eq!(code, 0, "{json}");
        assert_eq!(n(&json["ok"]), 200);
        let stats = srv.stop();
        assert_eq!(stats.requests, 203, "{stats:?}");
        assert_eq!(stats.bytes_in, 3 * mb64 + 200 * (1 << 20), "{stats:?}");
    }
}

/// A server that reads the preamble, then answers every 64-byte request with the same bytes
/// but one flipped: the client must notice the echo is not byte-exact.
#[test]
fn corrupted_echoes_are_counted_as_mismatches() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        // The client's first connection is its only one (there is no hidden probe).
        for _ in 0..1 {
            let (s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let mut req = [0u8; 64];
            if r.read_exact(&mut req).is_ok() {
                req[40] ^= 0xff;
                let _ = (&s).write_all(&req);
            }
            std::thread::sleep(Duration::from_millis(200));
            return;
        }
    });
    let url = format!("tcp://{addr}");
    let (json, code) = execute_json(&[&url, "-n", "1", "--size", "64"], LIMIT);
    server.join().unwrap();
    assert_eq!(code, 1);
    assert_eq!(n(&json["ok"]), 0);
    let kinds = json["errors"]["by_kind"].as_array().unwrap();
    assert_eq!(kinds[0]["kind"], "mismatch", "{json}");
    assert!(
        kinds[0]["sample"].as_str().unwrap().contains("byte 40"),
        "{json}"
    );
}

#[test]
fn server_delay_shows_in_the_median() {
    let (_srv, url) = server(TcpServerOptions {
        delay: Some(Duration::from_millis(5)),
        ..TcpServerOptions::default()
    });
    let (json, code) = measure_json(&[&url, "-c", "2", "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let p50 = f(&json["latency"]["p50_us"]);
    assert!((5_000.0..50_000.0).contains(&p50), "p50 {p50} µs");
    assert!(f(&json["latency"]["min_us"]) >= 5_000.0);
}

/// --think pauses each connection between requests (the Handle.Net study's 10 ms), and a
/// pause longer than the run ends with the run, not with --timeout.
#[test]
fn think_time_paces_each_connection_and_ends_with_the_run() {
    let (srv, url) = server(TcpServerOptions::default());
    let (json, code) = execute_json(&[&url, "-c", "2", "--think", "100ms", "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    // At most one request per 100 ms per connection: 2 x 10 (the first goes at once).
    let ok = n(&json["ok"]);
    assert!((10..=22).contains(&ok), "ok {ok} with 100 ms think: {json}");
    let started = Instant::now();
    let (json, code) = execute_json(
        &[
            &url,
            "-c",
            "4",
            "--think",
            "30s",
            "-d",
            "1s",
            "--timeout",
            "10s",
        ],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 4), "{json}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "took {took:?}: the pause outlived the run"
    );
    assert_eq!(srv.stop().requests, ok + 4);
}

#[test]
fn warmup_requests_stay_out_of_the_statistics() {
    let (srv, url) = server(TcpServerOptions::default());
    let (json, code) = measure_json(&[&url, "-c", "3", "-n", "600", "--warmup", "150"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 600);
    assert_eq!(n(&json["latency"]["count"]), 600);
    assert_eq!(n(&json["warmup"]["ok"]), 150);
    assert_eq!(srv.stop().requests, 750);

    let (srv, url) = server(TcpServerOptions::default());
    let (json, _) = measure_json(&[&url, "-d", "1s", "--warmup", "500ms"], LIMIT);
    let warm = n(&json["warmup"]["ok"]);
    assert!(warm > 0, "{json}");
    assert_eq!(srv.stop().requests, n(&json["ok"]) + warm);
    assert!((0.9..1.2).contains(&f(&json["duration_s"])), "{json}");
}

#[test]
fn connection_per_request_reports_connect_time() {
    let (srv, url) = server(TcpServerOptions::default());
    let (json, code) = measure_json(&[&url, "--mode", "crr", "-c", "2", "-n", "300"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 300);
    assert_eq!(n(&json["connect"]["count"]), 300);
    assert!(f(&json["connect"]["p50_us"]) > 0.0);
    assert!(f(&json["latency"]["p50_us"]) >= f(&json["connect"]["min_us"]));
    let stats = srv.stop();
    assert_eq!(stats.requests, 300);
    assert_eq!(
        stats.connections, 300,
        "one per request, no hidden probe: {stats:?}"
    );
}

#[test]
fn stream_and_source_move_bytes() {
    let (sink, url) = server(TcpServerOptions {
        mode: wirebench::serve::Mode::Sink,
        ..TcpServerOptions::default()
    });
    let (json, code) = execute_json(
        &[&url, "--mode", "stream", "--size", "16k", "-d", "1s"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    let sent = n(&json["throughput"]["sent_bytes"]);
    assert!(sent > 1_000_000, "{json}");
    assert!(json["latency"].is_null());
    assert!(f(&json["throughput"]["messages_per_s"]) > 0.0);
    // Issue 38: the stream's rates agree: the headline, sent MB/s and the per-second rows are
    // all what the receiver acknowledged within the window (the rest is drained_bytes).
    let t = &json["throughput"];
    let secs = f(&json["duration_s"]);
    let window = n(&t["window_bytes"]);
    assert!(window > 0 && window <= sent, "{t}");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.max(1.0);
    assert!(
        close(f(&t["sent_mb_per_s"]) * 8.0 / 1e3, f(&t["gbit_per_s"])),
        "{t}"
    );
    assert!(
        close(f(&t["gbit_per_s"]), window as f64 * 8.0 / secs / 1e9),
        "{t}"
    );
    let rows: u64 = json["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| n(&p["sent_bytes"]))
        .sum();
    assert_eq!(rows, window, "{}", json["series"]);
    let stats = sink.stop();
    assert!(
        stats.bytes_in >= sent,
        "the sink got {} of {sent}",
        stats.bytes_in
    );

    let (source, url) = server(TcpServerOptions {
        mode: wirebench::serve::Mode::Source,
        ..TcpServerOptions::default()
    });
    let (json, code) = execute_json(
        &[&url, "--mode", "source", "--size", "1k", "-d", "1s"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    let got = n(&json["throughput"]["received_bytes"]);
    assert!(got > 100_000, "{json}");
    let msgs = f(&json["throughput"]["messages_per_s"]) * f(&json["duration_s"]);
    assert!((msgs - (got / 1024) as f64).abs() < 2.0, "{json}");
    assert!(source.stop().bytes_out >= got);
}

#[test]
fn a_mode_mismatch_is_explained() {
    let (_srv, url) = server(TcpServerOptions {
        mode: wirebench::serve::Mode::Sink,
        ..TcpServerOptions::default()
    });
    // The server's reason ends the run: one line, exit 2 (the user's mode is wrong).
    let out = common::usage_error(&["run", &url, "-n", "1"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sink") && err.contains("--mode stream"),
        "{err}"
    );
}

#[test]
fn memcached_answers_get_until_end() {
    let port = free_port();
    let mut mc = std::process::Command::new("memcached")
        .args([
            "-l",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "0",
            "-u",
            "root",
            "-t",
            "1",
        ])
        .spawn()
        .expect("memcached must be installed (apt-get install memcached; .ci/run does it)");
    let url = format!("tcp://127.0.0.1:{port}");
    assert!(
        listens(&mut mc, port),
        "memcached did not start on port {port}"
    );
    let (set, code) = execute_json(
        &[
            &url,
            "-n",
            "1",
            "--payload",
            "set k 0 0 5\\r\\nhello\\r\\n",
            "--until",
            "STORED\\r\\n",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{set}");
    let (json, code) = execute_json(
        &[
            &url,
            "-c",
            "2",
            "-n",
            "500",
            "--payload",
            "get k\\r\\n",
            "--until",
            "END\\r\\n",
        ],
        LIMIT,
    );
    let _ = mc.kill();
    let _ = mc.wait();
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 500);
    // "VALUE k 0 5\r\nhello\r\nEND\r\n" is 25 bytes.
    assert_eq!(n(&json["throughput"]["received_bytes"]), 500 * 25);
}

#[test]
fn a_server_killed_mid_run_gives_partial_results_in_time() {
    let mut srv = ServerProcess::start(&["--threads", "1"]);
    let url = srv.url.clone();
    let client = std::thread::spawn(move || {
        run_bounded(
            &[
                "run",
                &url,
                "-c",
                "2",
                "-d",
                "3s",
                "--timeout",
                "1s",
                "--json",
                "-q",
            ],
            LIMIT,
        )
    });
    std::thread::sleep(Duration::from_millis(1000));
    srv.kill();
    let (out, took) = client.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    // duration + timeout + 1 s, plus start-up slack.
    assert!(took < Duration::from_millis(5500), "took {took:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(n(&json["ok"]) > 0, "{json}");
    assert!(n(&json["errors"]["total"]) > 0, "{json}");
}

#[test]
fn a_stalled_server_times_out_and_the_run_ends_on_time() {
    let (_srv, url) = server(TcpServerOptions {
        delay: Some(Duration::from_secs(10)),
        ..TcpServerOptions::default()
    });
    let started = Instant::now();
    let (json, code) = execute_json(&[&url, "-c", "2", "-d", "2s", "--timeout", "500ms"], LIMIT);
    assert!(started.elapsed() < Duration::from_millis(4500));
    assert_eq!(code, 1);
    let kinds = &json["errors"]["by_kind"];
    assert_eq!(kinds[0]["kind"], "timeout", "{json}");
    assert!(n(&kinds[0]["count"]) >= 4, "{json}");
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "ftp://127.0.0.1:21"], "unknown scheme"),
        (
            vec!["run", "tcp://no-such-host.invalid:80"],
            "cannot resolve",
        ),
        (
            vec!["run", "tcp://127.0.0.1:9", "--size", "0"],
            "at least 1 byte",
        ),
        (vec!["run", "tcp://127.0.0.1:9", "--size", "2G"], "1 GiB"),
        (
            vec!["run", "tcp://127.0.0.1:9", "-d", "soon"],
            "not a duration",
        ),
        (
            vec!["run", "tcp://127.0.0.1:9", "--size", "8", "--payload", "x"],
            "cannot be used with",
        ),
        (
            vec!["run", "tcp://127.0.0.1:9", "--bogus"],
            "unexpected argument",
        ),
    ];
    for (args, want) in cases {
        let (out, _) = run_bounded(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line, got {err}"
        );
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    }
}

#[test]
fn the_table_report_shows_the_figures() {
    let (_srv, url) = server(TcpServerOptions::default());
    let (out, _) = run_bounded(&["run", &url, "-n", "100", "-q"], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in ["ok 100", "p50", "p99.9", "generator:"] {
        assert!(text.contains(want), "missing {want:?} in {text}");
    }
}

#[test]
fn a_blocking_server_serves_as_the_event_loop_does() {
    let (srv, url) = server(TcpServerOptions {
        blocking: true,
        ..TcpServerOptions::default()
    });
    let (json, code) = execute_json(&[&url, "-c", "4", "-n", "2000", "--pipeline", "4"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 2000);
    let (json, code) = execute_json(&[&url, "--mode", "crr", "-n", "50"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 50), "{json}");
    // A stream to an echo server is refused with a reason, as by the event loop: the run
    // stops with it (exit 2).
    let out = common::usage_error(&["run", &url, "--mode", "stream", "-d", "300ms"], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("echo mode"));
    let stats = srv.stop();
    assert_eq!(stats.requests, 2050, "{stats:?}");
}

/// A message is the operation of a bulk run: ops, ops/s, the per-second series and `--fail-if
/// 'ops<N'` count messages (on main a stream had ops/s 0 and failed any `ops<` threshold).
#[test]
fn a_bulk_runs_operations_are_its_messages() {
    for (mode, serve) in [
        ("stream", wirebench::serve::Mode::Sink),
        ("source", wirebench::serve::Mode::Source),
    ] {
        let (srv, url) = server(TcpServerOptions {
            mode: serve,
            ..TcpServerOptions::default()
        });
        let args = [&url, "--mode", mode, "--size", "1k", "-d", "700ms"];
        let mut with_threshold = args.to_vec();
        with_threshold.extend(["--fail-if", "ops<100"]);
        let (json, code) = execute_json(&with_threshold, LIMIT);
        assert_eq!(
            code, 0,
            "{mode}: a bulk run moving messages fails ops<100: {json}"
        );
        let t = &json["throughput"];
        let ops = f(&t["ops_per_s"]);
        assert!(ops > 100.0, "{mode}: {json}");
        assert_eq!(ops, f(&t["messages_per_s"]), "{mode}");
        let ok = n(&json["ok"]) as f64;
        assert!(
            (ok - ops * f(&json["duration_s"])).abs() < 2.0,
            "{mode}: {json}"
        );
        let per_s: u64 = json["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| n(&p["ok"]))
            .sum();
        // The series counts the messages moved each second: a stream's writes, of which the
        // headline keeps what the receiver acknowledged within the window; the rest waited in
        // buffers at its end and is reported apart as drained (a loaded machine reads the end
        // late and leaves megabytes there, several percent of a 700 ms run).
        let drained = t["drained_bytes"].as_u64().unwrap_or(0) as f64 / 1024.0;
        assert!(
            per_s > 0 && (per_s as f64 - ok - drained).abs() <= ok * 0.01 + 2.0,
            "{mode}: {json}"
        );
        srv.stop();
    }
}
