//! What the real binary prints reads right (issue 7): no sentinel for an unlimited in-flight
//! window, no "ok 0" and no replies expected of bulk modes, bit rates in the unit their size
//! calls for, per-second rates over a partial second's true length, and usage errors that
//! name what is wrong. Every run is against a reference server on 127.0.0.1, bounded in time.

use super::common;

use common::{run_bounded, run_json, usage_error};
use std::net::UdpSocket;
use std::time::Duration;
use wirebench::serve::udp::{self, UdpServerOptions};
use wirebench::serve::Mode as ServerMode;

const LIMIT: Duration = Duration::from_secs(30);

/// `wirebench run URL ARGS -q`: its exit code and the terminal report.
fn run_table(url: &str, args: &[&str]) -> (i32, String) {
    let mut all = vec!["run", url, "-q"];
    all.extend_from_slice(args);
    let (out, _) = run_bounded(&all, LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.is_empty(), "{all:?}: no report; stderr: {stderr}");
    (out.status.code().unwrap_or(-1), stdout)
}

fn udp_server(mode: ServerMode) -> (udp::UdpServerHandle, String) {
    let options = UdpServerOptions {
        mode,
        ..UdpServerOptions::default()
    };
    let srv = udp::spawn(UdpSocket::bind("127.0.0.1:0").unwrap(), options).unwrap();
    let url = format!("udp://{}", srv.addr);
    (srv, url)
}

/// The number after `label` on the first line holding it: `ops/s 1,234.5` → 1234.5.
fn figure(text: &str, label: &str) -> f64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in\n{text}"));
    let digits: String = text[at + label.len()..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in\n{text}"))
}

/// The cells of the per-second table's row whose label starts with `second`.
fn series_row(text: &str, second: &str) -> Vec<String> {
    let row = text
        .lines()
        .filter(|l| l.contains('┆'))
        .map(|l| l.trim().trim_matches('│'))
        .find(|l| l.split('┆').next().unwrap().trim().starts_with(second))
        .unwrap_or_else(|| panic!("no row for second {second} in\n{text}"));
    row.split('┆').map(|c| c.trim().to_string()).collect()
}

fn number(cell: &str) -> f64 {
    cell.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{cell:?}"))
}

/// A run shorter than a second: its only per-second point is a rate over the time it lasted,
/// so it equals the headline rate; before, it showed the count as if it were per second.
#[test]
fn a_partial_second_shows_its_true_rate() {
    let (srv, url) = common::tcp_in_process(ServerMode::Echo);
    let (code, text) = run_table(&url, &["-d", "90ms"]);
    assert_eq!(code, 0, "{text}");
    let ok = figure(&text, "ok ");
    let ops_per_s = figure(&text, "ops/s ");
    let row = series_row(&text, "0");
    let ok_per_s = number(&row[1]);
    assert!(ok > 10.0, "{text}");
    assert!(
        (ok_per_s - ops_per_s).abs() <= 1.0,
        "per-second ok/s {ok_per_s} is not the rate {ops_per_s} (count {ok})\n{text}"
    );
    assert!(row[0].contains("s)"), "the label gives the length: {row:?}");

    // The JSON series gives each point's length, so its counts become rates too.
    let (json, code) = run_json(&[&url, "-d", "300ms"], LIMIT);
    srv.stop();
    assert_eq!(code, 0, "{json}");
    let point = &json["series"][0];
    let length = point["duration_s"].as_f64().expect("duration_s");
    let measured = json["duration_s"].as_f64().unwrap();
    assert!((length - measured).abs() < 1e-6, "{length} vs {measured}");
    let rate = point["ok"].as_f64().unwrap() / length;
    let headline = json["throughput"]["ops_per_s"].as_f64().unwrap();
    assert!(
        (rate - headline).abs() < 1e-6 * headline,
        "{rate} vs {headline}"
    );
}

/// The UDP open loop has no in-flight limit: it reads "unlimited", and the JSON says null.
#[test]
fn an_unlimited_window_is_not_printed_as_a_number() {
    let (srv, url) = udp_server(ServerMode::Echo);
    let (code, text) = run_table(&url, &["--rate", "1000", "-d", "300ms"]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains(&usize::MAX.to_string()), "{text}");
    assert!(text.contains("pipeline unlimited"), "{text}");
    let (json, _) = run_json(&[&url, "--rate", "1000", "-d", "300ms"], LIMIT);
    srv.stop();
    assert!(json["config"]["pipeline"].is_null(), "{}", json["config"]);
}

/// A stream has no answers: it is judged by what the server received (its loss is an error of
/// the run), not by "answered ok 0/s", and it shows messages and bytes, not "ok 0". 100 Mbit/s
/// reads as Mbit/s.
#[test]
fn a_udp_stream_is_judged_by_what_the_receiver_got() {
    let (srv, url) = udp_server(ServerMode::Sink);
    let args = [
        "--mode",
        "stream",
        "--bandwidth",
        "100Mbit",
        "--size",
        "1400",
    ];
    let (code, text) = run_table(&url, &[&args[..], &["-d", "1s"]].concat());
    srv.stop();
    assert!(!text.contains("answered ok"), "{text}");
    assert!(!text.contains("ok 0"), "{text}");
    assert!(text.contains("messages "), "{text}");
    // 100 Mbit/s of payload, give or take what a busy host lets through.
    let headline = text.lines().find(|l| l.contains("bit/s")).unwrap();
    assert!(headline.contains(" Mbit/s"), "{headline}");
    let mbit = figure(headline, "");
    assert!((50.0..=101.0).contains(&mbit), "{headline}");
    // "Did not keep up" only with a reason: the server lost datagrams, or the sends fell short.
    let line = |what: &str| text.lines().find(|l| l.contains(what)).unwrap();
    // The receiver's line (iperf3's): datagrams the server lost are errors of the run.
    let lost = figure(line("receiver:"), "lost ");
    assert_eq!(code, if lost == 0.0 { 0 } else { 1 }, "{text}");
    let offered = figure(line("open loop"), "offered ");
    let sent = figure(line("open loop"), "sent ");
    if lost == 0.0 && sent >= 0.99 * offered {
        assert!(!text.contains("did not keep up"), "{text}");
    }
}

/// A stream the server received only nine tenths of did not keep up, and the note says why:
/// by the server's count, not by replies a stream never gets.
#[test]
fn a_lossy_udp_stream_is_named_by_the_servers_count() {
    let options = UdpServerOptions {
        mode: ServerMode::Sink,
        faults: udp::Faults {
            drop_every: Some(10),
            ..udp::Faults::default()
        },
        ..UdpServerOptions::default()
    };
    let srv = udp::spawn(UdpSocket::bind("127.0.0.1:0").unwrap(), options).unwrap();
    let url = format!("udp://{}", srv.addr);
    let args = ["--mode", "stream", "--bandwidth", "8Mbit", "--size", "1000"];
    let (code, text) = run_table(&url, &[&args[..], &["-d", "500ms"]].concat());
    srv.stop();
    // The datagrams the server dropped are errors of the run (issue 15, item 3).
    assert_eq!(code, 1, "{text}");
    let note = text
        .lines()
        .find(|l| l.contains("did not keep up"))
        .unwrap_or_else(|| panic!("no shortfall note in\n{text}"));
    assert!(
        note.contains("the target did not keep up with the stream"),
        "{note}"
    );
    assert!(note.contains("the server received"), "{note}");
    assert!(!note.contains("answered ok"), "{note}");
}

/// TCP stream and source move bytes with no request/response: no "ok 0", but messages and
/// bytes, and each second's rate in the unit its size calls for.
#[test]
fn bulk_tcp_runs_show_what_they_moved() {
    for (server, mode) in [(ServerMode::Sink, "stream"), (ServerMode::Source, "source")] {
        let (srv, url) = common::tcp_in_process(server);
        let (code, text) = run_table(&url, &["--mode", mode, "-d", "300ms"]);
        srv.stop();
        assert_eq!(code, 0, "{mode}: {text}");
        assert!(!text.contains("ok 0"), "{mode}: {text}");
        assert!(figure(&text, "messages ") > 0.0, "{mode}: {text}");
        // Bytes moved, with a unit: "sent 1.23 GB" / "received 456.78 MB".
        let moved = text.lines().find(|l| l.contains("messages ")).unwrap();
        assert!(moved.contains("B   ") || moved.ends_with('B'), "{moved}");
    }
}

#[test]
fn an_out_of_range_port_is_named_as_such() {
    for url in ["tcp://127.0.0.1:99999", "udp://127.0.0.1:70000"] {
        let out = usage_error(&["run", url], LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("out of range"), "{stderr}");
        assert!(stderr.contains("1 to 65535"), "{stderr}");
        assert!(!stderr.contains("lacks a port"), "{stderr}");
    }
}

#[test]
fn a_missing_url_is_named_with_how_to_give_it() {
    let out = usage_error(&["run"], LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("<URL>"), "{stderr}");
    assert!(stderr.contains("wirebench run <URL>"), "{stderr}");
    assert!(stderr.contains("wirebench run --help"), "{stderr}");
}
