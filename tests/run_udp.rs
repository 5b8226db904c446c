//! The UDP client against the reference UDP server, including its fault options: loss,
//! duplication and reordering are counted as injected, by the client and by the server.

mod common;

use common::{run_bounded, run_json};
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
    let (json, code) = run_json(&[&url, "-c", "2", "-n", "2000", "--size", "100"], LIMIT);
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
    // Request/response: the client sees the drops as timeouts.
    let (_srv, url) = server(faults(Faults {
        drop_every: Some(10),
        ..Faults::default()
    }));
    let (json, code) = run_json(
        &[&url, "-n", "2000", "--rate", "4000", "--timeout", "200ms"],
        LIMIT,
    );
    assert_eq!(code, 1, "lost requests are errors");
    let loss = json["datagrams"]["loss_percent"].as_f64().unwrap();
    assert!((9.5..=10.5).contains(&loss), "{}", json["datagrams"]);
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "timeout");

    // A stream to a sink: the server's report shows the loss.
    let (_sink, url) = server(UdpServerOptions {
        mode: wirebench::cli::ServerMode::Sink,
        faults: Faults {
            drop_every: Some(10),
            ..Faults::default()
        },
        ..UdpServerOptions::default()
    });
    let (json, code) = run_json(
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
    assert_eq!(code, 0, "{json}");
    let server = &json["datagrams"]["server"];
    let loss = server["loss_percent"].as_f64().unwrap();
    assert!((9.5..=10.5).contains(&loss), "{server}");
    // 8 Mbit/s of 1000-byte datagrams is 1000 datagrams a second.
    let sent = n(&json["datagrams"]["sent"]);
    assert!((990..=1010).contains(&sent), "{}", json["datagrams"]);
}

#[test]
fn injected_duplicates_and_reordering_are_counted() {
    let (_srv, url) = server(faults(Faults {
        duplicate_every: Some(10),
        ..Faults::default()
    }));
    let (json, code) = run_json(&[&url, "-n", "1000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        n(&json["datagrams"]["duplicated"]),
        100,
        "{}",
        json["datagrams"]
    );
    assert_eq!(n(&json["ok"]), 1000);

    let (_srv, url) = server(faults(Faults {
        reorder_every: Some(10),
        ..Faults::default()
    }));
    let (json, code) = run_json(&[&url, "-n", "1000", "--rate", "5000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    // The last held datagram has no successor to overtake it.
    let reordered = n(&json["datagrams"]["reordered"]);
    assert!((99..=100).contains(&reordered), "{}", json["datagrams"]);
    assert_eq!(n(&json["datagrams"]["server"]["out_of_order"]), reordered);
}

#[test]
fn raw_datagrams_are_matched_in_order() {
    let (_srv, url) = server(UdpServerOptions::default());
    let (json, code) = run_json(&[&url, "-n", "300", "--payload", "hello"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 300);
    assert_eq!(n(&json["throughput"]["received_bytes"]), 1500);
    assert!(
        json["datagrams"]["server"].is_null(),
        "plain datagrams have no flow report"
    );
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
        let (out, _) = run_bounded(&all, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
