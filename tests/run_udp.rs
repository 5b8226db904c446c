//! The UDP client against the reference UDP server, including its fault options: loss,
//! duplication and reordering are counted as injected, by the client and by the server.

mod common;

use common::{execute_json, usage_error};
use std::net::UdpSocket;
use std::time::Duration;
use wirebench::serve::udp::{spawn, Faults, UdpServerHandle, UdpServerOptions};

const LIMIT: Duration = Duration::from_secs(30);

fn server(options: UdpServerOptions) -> (UdpServerHandle, String) {
    let handle = spawn(UdpSocket::bind("127.0.0.1:0").unwrap(), options).unwrap();
    let url = format!("udp://{}", handle.addr);
    (handle, url)
}

fn faults(f: Faults) -> UdpServerOptions {
    UdpServerOptions {
        faults: f,
        ..UdpServerOptions::default()
    }
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn request_response_over_udp_counts_every_reply() {
    let (srv, url) = server(UdpServerOptions::default());
    let (json, code) = execute_json(&[&url, "-c", "2", "-n", "2000", "--size", "100"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 2000);
    assert_eq!(json["protocol"], "udp");
    let d = &json["datagrams"];
    assert_eq!(n(&d["answered"]), 2000, "{d}");
    assert_eq!(n(&d["lost"]), 0, "{d}");
    assert_eq!(n(&d["server"]["received"]), 2000, "{d}");
    assert!(json["connect"].is_null(), "UDP has no handshake");
    assert_eq!(
        srv.stop().datagrams,
        2000 + 2,
        "2000 requests and 2 report requests"
    );
}

#[test]
fn every_tenth_datagram_dropped_is_ten_percent_loss() {
    // Request/response: the client sees the drops as timeouts. The timeout leaves a reply a
    // whole second on a busy machine: a late one would count as lost too, so the bound above
    // 10% is a margin, not the measure.
    let (srv, url) = server(faults(Faults {
        drop_every: Some(10),
        ..Faults::default()
    }));
    let (json, code) = execute_json(
        &[&url, "-n", "2000", "--rate", "4000", "--timeout", "1s"],
        LIMIT,
    );
    assert_eq!(code, 1, "lost requests are errors");
    let loss = json["datagrams"]["loss_percent"].as_f64().unwrap();
    assert!((9.95..=11.0).contains(&loss), "{}", json["datagrams"]);
    assert_eq!(srv.stop().dropped, 200, "the server dropped every tenth");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "timeout");

    // A stream to a sink: the server's report shows the loss.
    let (_sink, url) = server(UdpServerOptions {
        mode: wirebench::serve::Mode::Sink,
        faults: Faults {
            drop_every: Some(10),
            ..Faults::default()
        },
        ..UdpServerOptions::default()
    });
    let (json, code) = execute_json(
        &[
            &url,
            "--mode",
            "stream",
            "--bandwidth",
            "8Mbit",
            "--size",
            "1000",
            "-d",
            "1s",
        ],
        LIMIT,
    );
    assert_eq!(
        code, 1,
        "datagrams the sink reports lost are errors: {json}"
    );
    let server = &json["datagrams"]["server"];
    let loss = server["loss_percent"].as_f64().unwrap();
    // At least the injected tenth; a receive buffer that overflowed while the machine was
    // busy could add a few more.
    assert!((9.5..=12.0).contains(&loss), "{server}");
    // 8 Mbit/s of 1000-byte datagrams is 1000 datagrams a second (paced on a timetable; the
    // margin is for a window measured on a busy machine).
    let sent = n(&json["datagrams"]["sent"]);
    assert!((900..=1100).contains(&sent), "{}", json["datagrams"]);
    receivers_figures_are_the_result(&json);
}

/// A UDP stream's loss reported by the sink is a result: errors of kind `lost`, and the
/// headline rates (messages/s, Gbit/s, ok) are what the receiver got, below the sender's.
fn receivers_figures_are_the_result(json: &serde_json::Value) {
    let lost = n(&json["datagrams"]["server"]["lost"]);
    let kinds = &json["errors"]["by_kind"];
    let entry = kinds
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "lost")
        .unwrap_or_else(|| panic!("no `lost` errors: {kinds}"));
    assert_eq!(n(&entry["count"]), lost, "{kinds}");
    let t = &json["throughput"];
    let (got, wrote) = (
        t["messages_per_s"].as_f64().unwrap(),
        t["sender_messages_per_s"].as_f64().unwrap(),
    );
    assert!(
        got < 0.95 * wrote,
        "receiver {got}/s vs sender {wrote}/s: {t}"
    );
    let (gbit, sender_gbit) = (
        t["gbit_per_s"].as_f64().unwrap(),
        t["sender_gbit_per_s"].as_f64().unwrap(),
    );
    assert!(gbit < 0.95 * sender_gbit, "{t}");
    // ok is what the receiver got within the window (issue 38); what it got after the window
    // (on a busy machine, datagrams still queued when the window closed) is counted apart.
    let (window, drained) = (
        n(&t["window_bytes"]),
        t["drained_bytes"].as_u64().unwrap_or(0),
    );
    assert_eq!(window / 1000, n(&json["ok"]), "{t}");
    assert_eq!(n(&t["receiver_bytes"]), window + drained, "{t}");
}

/// A UDP stream to a sink that never reports (SIGSTOPped): the missing count is an error of
/// the run (exit 1, `no_receiver_count`, a line saying so), and the run still ends on time.
#[test]
fn a_stream_to_a_frozen_sink_fails_for_want_of_the_receivers_count() {
    let mut sink = common::serve_process("udp", &["--mode", "sink", "-t", "1"]);
    let lines = common::stdout_lines(&mut sink);
    let addr = common::first_line_addr(&mut sink, &lines, "udp", LIMIT);
    let pid = libc::pid_t::try_from(sink.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the PID is our own, unreaped child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let url = format!("udp://{addr}");
    let args = [
        "run",
        &url,
        "--mode",
        "stream",
        "--bandwidth",
        "10Mbit",
        "-d",
        "1s",
    ];
    let (out, took) = common::run_bounded(&args, LIMIT);
    let (json, code) = execute_json(&args[1..], LIMIT);
    // SAFETY: as above; the child is resumed and then killed by its handle.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let _ = sink.kill();
    let _ = sink.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no_receiver_count"), "{text}");
    assert!(text.contains("the server did not report"), "{text}");
    assert!(!text.contains("errors 0"), "{text}");
    // 1 s of load, the report's wait (1 s) and start-up: well under 10 s.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(code, 1, "{json}");
    let kinds = json["errors"]["by_kind"].to_string();
    assert!(kinds.contains("no_receiver_count"), "{kinds}");
    assert!(json["throughput"].get("receiver_bytes").is_none(), "{json}");
}

#[test]
fn injected_duplicates_and_reordering_are_counted() {
    let (_srv, url) = server(faults(Faults {
        duplicate_every: Some(10),
        ..Faults::default()
    }));
    // 1001 requests: the copy of the 1000th reply arrives while the client still waits for
    // the 1001st, so it is seen; a copy after the very last reply could come too late to count.
    let (json, code) = execute_json(&[&url, "-n", "1001"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        n(&json["datagrams"]["duplicated"]),
        100,
        "{}",
        json["datagrams"]
    );
    assert_eq!(n(&json["ok"]), 1001);

    let (_srv, url) = server(faults(Faults {
        reorder_every: Some(10),
        ..Faults::default()
    }));
    let (json, code) = execute_json(&[&url, "-n", "1000", "--rate", "5000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    // The last held datagram has no successor to overtake it.
    let reordered = n(&json["datagrams"]["reordered"]);
    assert!((99..=100).contains(&reordered), "{}", json["datagrams"]);
    assert_eq!(n(&json["datagrams"]["server"]["out_of_order"]), reordered);
}

/// A server whose threads wait in the event loop or (`blocking`) in blocking calls.
fn either(blocking: bool, options: UdpServerOptions) -> (UdpServerHandle, String) {
    server(UdpServerOptions {
        blocking,
        ..options
    })
}

// `-c 1 --threads 1` in a closed loop: the worker's one session uses blocking socket calls.
const ONE: [&str; 4] = ["-c", "1", "--threads", "1"];

fn one_session(url: &str, args: &[&str]) -> (serde_json::Value, i32) {
    let mut all = vec![url];
    all.extend_from_slice(&ONE);
    all.extend_from_slice(args);
    execute_json(&all, LIMIT)
}

#[test]
fn one_blocking_session_counts_every_reply() {
    for blocking in [true, false] {
        let (srv, url) = either(blocking, UdpServerOptions::default());
        let (json, code) = one_session(&url, &["-n", "3000", "--size", "64"]);
        assert_eq!(code, 0, "blocking server {blocking}: {json}");
        assert_eq!(n(&json["ok"]), 3000);
        let d = &json["datagrams"];
        assert_eq!(
            (n(&d["answered"]), n(&d["lost"]), n(&d["late"])),
            (3000, 0, 0),
            "{d}"
        );
        assert_eq!((n(&d["duplicated"]), n(&d["reordered"])), (0, 0), "{d}");
        // The report covers all 3000: one session, one flow, from start to end.
        assert_eq!(
            (n(&d["server"]["sent"]), n(&d["server"]["received"])),
            (3000, 3000),
            "{d}"
        );
        assert_eq!(srv.stop().datagrams, 3000 + 1, "and one report request");
    }
}

#[test]
fn one_blocking_session_counts_every_tenth_lost() {
    for blocking in [true, false] {
        let (srv, url) = either(
            blocking,
            faults(Faults {
                drop_every: Some(10),
                ..Faults::default()
            }),
        );
        // 100 requests, 10 of them dropped, each waited out for 500 ms: long enough that a
        // reply delayed by a busy machine is not taken for a lost one (20 ms was not), short
        // enough that the 10 waits take 5 s.
        let started = std::time::Instant::now();
        let (json, code) = one_session(&url, &["-n", "100", "--timeout", "500ms"]);
        assert_eq!(code, 1, "lost requests are errors: {json}");
        // 10 requests wait out their 500 ms each, and no more (a bound, with a margin).
        assert!(started.elapsed() < Duration::from_secs(25));
        let d = &json["datagrams"];
        let (lost, answered) = (n(&d["lost"]), n(&d["answered"]));
        // The server's drops are exact; a reply later than 500 ms would add to them.
        assert!((10..=13).contains(&lost), "blocking server {blocking}: {d}");
        assert_eq!(lost + answered, 100, "{d}");
        assert_eq!(json["errors"]["by_kind"][0]["kind"], "timeout");
        assert_eq!(n(&json["errors"]["total"]), lost);
        // A loss does not end the session: the server saw one flow of 100, 90 of them.
        let server = &d["server"];
        assert_eq!(
            (n(&server["sent"]), n(&server["received"])),
            (100, 90),
            "{server}"
        );
        assert_eq!(srv.stop().dropped, 10);
    }
}

#[test]
fn one_blocking_session_counts_duplicates() {
    for blocking in [true, false] {
        let (_srv, url) = either(
            blocking,
            faults(Faults {
                duplicate_every: Some(10),
                ..Faults::default()
            }),
        );
        // 1001 requests: the duplicate of request 1000 arrives before the reply to 1001, so
        // it is counted. (The duplicate of a run's very last reply is counted only if it is
        // already queued when that reply is read, with the event loop as with blocking
        // calls: the session has no read after its last reply.)
        let (json, code) = one_session(&url, &["-n", "1001"]);
        assert_eq!(code, 0, "{json}");
        assert_eq!(n(&json["ok"]), 1001);
        let d = &json["datagrams"];
        assert_eq!((n(&d["duplicated"]), n(&d["late"])), (100, 0), "{d}");
        assert_eq!(
            (n(&d["server"]["received"]), n(&d["server"]["duplicated"])),
            (1101, 100),
            "blocking server {blocking}: {d}"
        );
    }
}

#[test]
fn raw_datagrams_are_matched_in_order() {
    let (_srv, url) = server(UdpServerOptions::default());
    let (json, code) = execute_json(&[&url, "-n", "300", "--payload", "hello"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 300);
    assert_eq!(n(&json["throughput"]["received_bytes"]), 1500);
    assert!(
        json["datagrams"]["server"].is_null(),
        "plain datagrams have no flow report"
    );
}

/// A datagram is one reply whatever its size: a third-party server answering 30 B requests
/// with 46 B is reported as "46 B replies", in the header and the JSON, not the request's size.
#[test]
fn raw_replies_are_reported_at_the_size_they_came() {
    let (_srv, url) = server(UdpServerOptions {
        reply_size: Some(46),
        ..UdpServerOptions::default()
    });
    let args = [url.as_str(), "-n", "100", "--raw", "--size", "30"];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["config"]["reply_bytes"]), 46, "{}", json["config"]);
    assert_eq!(n(&json["throughput"]["received_bytes"]), 4600);
    let mut all = vec!["run"];
    all.extend_from_slice(&args);
    let out = common::stdout_ok(&all, LIMIT);
    assert!(out.contains("30 B requests / 46 B replies"), "{out}");
}

#[test]
fn bad_udp_input_gets_one_line_and_exit_2() {
    for (args, want) in [
        (&["--size", "70000"][..], "over the UDP limit"),
        (&["--size", "16"], "32-byte wirebench datagram header"),
        (&["--mode", "crr"], "needs a connection"),
        (&["--until", "\\n", "--raw"], "one datagram"),
        (&["--mode", "stream", "--bandwidth", "fast"], "--bandwidth"),
    ] {
        let mut all = vec!["run", "udp://127.0.0.1:9"];
        all.extend_from_slice(args);
        let out = usage_error(&all, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
