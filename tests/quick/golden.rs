//! Golden files: the terminal report of one fixed summary per mode, compared byte for byte with
//! `tests/golden/MODE.txt`. A change to the report shows up as a diff of those files in review.
//!
//! The summaries are built here, with the helpers of tests/golden_common, from recorders filled
//! with fixed values through the same constructors the engine uses (`Throughput::of`,
//! `Distribution::of`, `SeriesPoint::of` and `set_lengths`, `diagnose::notes`), so every figure
//! is deterministic. Each run lasts 2.5 s, so every series ends with a half second whose rates
//! must be over its half second. compare, peak, study and diagnose: tests/quick/golden_studies.rs.
//!
//! After an intended change to the report, rewrite the files and review the diff:
//! `UPDATE_GOLDEN=1 cargo test --profile ci --test quick golden::`.

use super::common;
use super::golden_common;

use golden_common::*;
use std::time::Duration;
use wirebench::record::{ErrorKind, OpError, PeerCounts, Recorder};
use wirebench::summary::{
    Config, Datagrams, Distribution, Http, ServerCount, StatusCount, Summary, Warmup,
};

/// `--mode rr` over TCP, with a warm-up and two kinds of error.
fn tcp_rr() -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        exchanges(rec, second, length, 40_000, 64);
        if second == 0 {
            (0..4).for_each(|i| rec.connected(latency(i, 60_000, 20_000)));
        }
        if second == 1 {
            rec.error(OpError::new(ErrorKind::Timeout, "no reply within 1s"));
            rec.error(OpError::new(
                ErrorKind::Reset,
                "read reply: connection reset by peer",
            ));
        }
    });
    let mut s = tcp_rr_summary(&total, series);
    s.warmup = Some(Warmup {
        duration_s: 1.0,
        ok: 38_211,
        errors: 0,
        p50_us: Some(24.6),
        steady: None,
    });
    finish(s)
}

/// `--mode crr`: a connection per request, so connect times are many.
fn tcp_crr() -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        exchanges(rec, second, length, 9_000, 64);
        for i in 0..(9_000.0 * length) as u64 {
            rec.connected(latency(i, 40_000, 25_000));
        }
    });
    finish(summary(
        "tcp://127.0.0.1:7000",
        "crr",
        config(64, Some(64)),
        &total,
        series,
        None,
    ))
}

/// `--mode stream` at 100 Mbit/s (12.5 MB/s): it must headline as Mbit/s, not 0.10 Gbit/s.
fn tcp_stream() -> Summary {
    tcp_bulk("stream", 12_500_000)
}

/// `--mode source` at 9.6 Gbit/s.
fn tcp_source() -> Summary {
    tcp_bulk("source", 1_200_000_000)
}

/// UDP request/response in the open loop at 1000/s, where any number may be in flight: no
/// "pipeline 18446744073709551615". A few datagrams were lost, one came late.
fn udp_rr() -> Summary {
    let (mut total, mut series) = seconds(|second, length, rec| {
        let lost = if second == 1 { 3 } else { 0 };
        exchanges(rec, second, 1.0, due_in(1_000.0, second, length) - lost, 64);
        for _ in 0..lost {
            rec.error(OpError::new(ErrorKind::Timeout, "no reply within 1s"));
            rec.issued(Duration::ZERO);
            rec.sent_bytes += 64;
        }
        rec.late += u64::from(lost > 0);
    });
    total.peer = PeerCounts {
        reports: 1,
        sent: total.issued,
        received: total.issued - 2,
        duplicated: 0,
        out_of_order: 1,
        jitter_us: 6.4,
        ..PeerCounts::default()
    };
    offered(&mut series, 1_000.0);
    let config = Config {
        connections: 1,
        threads: 1,
        pipeline: None,
        preamble: false,
        ..config(64, Some(64))
    };
    let mut s = summary("udp://127.0.0.1:7001", "rr", config, &total, series, None);
    s.service_time = Distribution::of(&total.latency);
    s.open_loop = Some(open_loop("1000/s", 1_000.0, &total, true));
    s.datagrams = Some(datagrams(&total, 3));
    finish(s)
}

/// What became of a UDP run's datagrams, `lost` of them unanswered.
fn datagrams(total: &Recorder, lost: u64) -> Datagrams {
    let peer = &total.peer;
    let percent = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
    Datagrams {
        sent: total.issued,
        answered: total.ok,
        lost,
        loss_percent: percent(lost, total.ok + lost),
        late: total.late,
        duplicated: total.duplicates,
        reordered: total.reordered,
        host_queue_full: 0,
        server: Some(ServerCount {
            sent: peer.sent,
            received: peer.received,
            lost: peer.lost(),
            loss_percent: percent(peer.lost(), peer.sent),
            out_of_order: peer.out_of_order,
            duplicated: peer.duplicated,
            jitter_us: peer.jitter_us,
        }),
    }
}

/// `udp://… --mode stream --bandwidth 100Mbit --size 1400` against a sink that lost nothing:
/// no replies, so no "ok 0" and no "did not keep up … answered ok 0/s".
fn udp_stream() -> Summary {
    let rate = 100e6 / (1_400.0 * 8.0);
    let (mut total, mut series) = seconds(|second, length, rec| {
        let n = due_in(rate, second, length);
        for i in 0..n {
            // A few sends more than 1 ms late: timer jitter, noted but no shortfall.
            rec.issued(Duration::from_micros(if i % 1_000 == 7 {
                1_800
            } else {
                20
            }));
        }
        rec.sent_bytes += n * 1_400;
    });
    total.messages = total.issued;
    total.peer = PeerCounts {
        reports: 1,
        sent: total.issued,
        received: total.issued,
        jitter_us: 11.2,
        ..PeerCounts::default()
    };
    offered(&mut series, rate);
    let config = Config {
        connections: 1,
        threads: 1,
        pipeline: None,
        reply_bytes: None,
        preamble: false,
        ..config(1_400, None)
    };
    let target = "udp://127.0.0.1:7001";
    let mut s = summary(target, "stream", config, &total, series, Some(1_400));
    s.open_loop = Some(open_loop("100Mbit/s", rate, &total, true));
    s.datagrams = Some(Datagrams {
        lost: 0,
        loss_percent: 0.0,
        ..datagrams(&total, 0)
    });
    // The sink received every datagram: the receiver's figures equal the sender's.
    s.throughput.receiver_bytes = Some(total.sent_bytes);
    s.throughput.sender_gbit_per_s = Some(s.throughput.gbit_per_s);
    s.throughput.sender_messages_per_s = Some(s.throughput.messages_per_s);
    finish(s)
}

/// HTTP/1.1 GET of 1 KiB bodies, with some 404s.
fn http() -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        exchanges(rec, second, length, 20_000, 0);
        let n = (20_000.0 * length) as u64;
        rec.sent_bytes += n * 78; // "GET /bytes/1024 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n…"
        for i in 0..n {
            rec.status.add(if i % 100 == 0 { 404 } else { 200 });
            wirebench::record::record_duration(&mut rec.ttfb, latency(i, 15_000, 20_000));
        }
        rec.received_bytes += n * 1_024;
    });
    let config = Config {
        reply_bytes: None,
        preamble: false,
        ..config(0, None)
    };
    let mut s = summary(
        "http://127.0.0.1:8080/bytes/1024",
        "rr",
        config,
        &total,
        series,
        None,
    );
    let body_bytes = total.received_bytes;
    s.http = Some(Http {
        method: "GET".into(),
        path: "/bytes/1024".into(),
        requests: 1,
        keepalive: true,
        version: "1.1".into(),
        status: total
            .status
            .iter()
            .map(|(code, count)| StatusCount { code, count })
            .collect(),
        status_2xx: total.status.class(2),
        status_3xx: 0,
        status_4xx: total.status.class(4),
        status_5xx: 0,
        body_bytes,
        goodput_mb_per_s: body_bytes as f64 / MEASURED.as_secs_f64() / 1e6,
        ttfb: Distribution::of(&total.ttfb),
        server_closes: 0,
        resent: 0,
    });
    finish(s)
}

/// TCP request/response in the open loop at 20000/s, which the target could not keep up with:
/// 15,000/s answered, sends behind schedule, latency from the intended send.
fn open_loop_tcp() -> Summary {
    let (total, mut series) = seconds(|second, length, rec| {
        let n = (15_000.0 * length) as u64;
        for i in 0..n {
            rec.ok(latency(i + second * n, 2_000_000, 3_000_000));
            record_service(rec, latency(i, 40_000, 20_000));
            rec.issued(Duration::from_micros(if i % 4 == 0 { 2_500 } else { 300 }));
        }
        rec.sent_bytes += n * 64;
        rec.received_bytes += n * 64;
    });
    offered(&mut series, 20_000.0);
    let mut s = tcp_rr_summary(&total, series);
    s.service_time = Distribution::of(&total.service);
    s.open_loop = Some(open_loop("20000/s", 20_000.0, &total, false));
    finish(s)
}

/// Every fixture, by the name of its golden file.
fn fixtures() -> Vec<(&'static str, Summary)> {
    vec![
        ("tcp_rr", tcp_rr()),
        ("tcp_stream", tcp_stream()),
        ("tcp_source", tcp_source()),
        ("tcp_crr", tcp_crr()),
        ("udp_rr", udp_rr()),
        ("udp_stream", udp_stream()),
        ("http", http()),
        ("open_loop", open_loop_tcp()),
    ]
}

/// The report as a fixed-width-free table renders it, whatever terminal runs the test.
fn render(s: &Summary) -> String {
    let mut out = Vec::new();
    wirebench::report::table::write_width(s, &mut out, None).expect("writing to memory");
    String::from_utf8(out).expect("the report is UTF-8")
}

/// A sweep's report: `names` as targets, `axes` (flag, values), and each run's summary by
/// (target, index into each axis), in the order they ran.
fn render_sweep(
    names: &[&str],
    axes: &[(&'static str, &[&str])],
    runs: Vec<(usize, Vec<usize>, Summary)>,
) -> String {
    let points = runs.into_iter().map(|(t, at, s)| (t, at, 1, s)).collect();
    let sweep = sweep_of(names, axes, 1, 0, points);
    let mut out = Vec::new();
    wirebench::report::sweep::write(&sweep, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("the report is UTF-8")
}

/// A sweep of two targets over two sizes, from the fixed run summaries above.
fn sweep() -> String {
    let mut runs = Vec::new();
    for at in 0..2 {
        runs.push((0, vec![at], tcp_rr()));
        runs.push((1, vec![at], tcp_crr()));
    }
    render_sweep(&["a", "b"], &[("--size", &["64", "1k"])], runs)
}

/// Two swept flags of one target, so one grid per metric, a row per value of the second:
/// 12.5 MB/s at -c 1 and 1.2 GB/s at -c 100 share one unit, chosen once for the whole set of
/// tables (issue 15, item 9).
fn sweep_units() -> String {
    let runs = vec![
        (0, vec![0, 0], tcp_source_at(12_500_000)),
        (0, vec![0, 1], tcp_source_at(1_200_000_000)),
    ];
    render_sweep(
        &["push"],
        &[("--size", &["64k"]), ("--connections", &["1", "100"])],
        runs,
    )
}

/// `--mode source` at `bytes_per_s`.
fn tcp_source_at(bytes_per_s: u64) -> Summary {
    tcp_bulk("source", bytes_per_s)
}

#[test]
fn each_modes_report_matches_its_golden_file() {
    let reports = fixtures().into_iter().map(|(name, s)| (name, render(&s)));
    let sweeps = [("sweep", sweep()), ("sweep_units", sweep_units())];
    check_goldens(reports.chain(sweeps));
}

/// A set of sweep tables gives payload throughput in one SI unit, the direction named.
#[test]
fn a_sweeps_tables_share_one_unit() {
    let text = sweep_units();
    let units: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Payload throughput"))
        .collect();
    assert_eq!(units.len(), 1, "{text}");
    assert!(
        units.iter().all(|l| l.contains(" in MB/s (1 MB = 10^6 B)")),
        "{text}"
    );
    assert!(units.iter().all(|l| l.contains("received")), "{text}");
    assert!(
        common::has_row(&text, &["--connections 1", "12.5"])
            && common::has_row(&text, &["--connections 100", "1200.0"]),
        "{text}"
    );
}

/// A run whose rate fell to a quarter in its second second: as tcp_rr otherwise.
fn tcp_rr_with_a_dip() -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        let per_s = if second == 1 { 10_000 } else { 40_000 };
        exchanges(rec, second, length, per_s, 64);
    });
    let s = tcp_rr_summary(&total, series);
    finish(s)
}

/// A sweep without --runs marks a point whose one run spread too much second to second, and
/// says why under the table (issue 17, item 6); the steady points stay unmarked.
#[test]
fn a_single_run_too_spread_second_to_second_is_marked_noisy() {
    let runs = vec![(0, vec![0], tcp_rr()), (0, vec![1], tcp_rr_with_a_dip())];
    let text = render_sweep(&["a"], &[("--size", &["64", "1k"])], runs);
    let rates = text
        .split("Operations per second")
        .nth(1)
        .and_then(|t| t.lines().find(|l| l.starts_with("| a")))
        .expect("the rate table's row");
    let cells: Vec<&str> = rates.split('|').map(str::trim).collect();
    assert!(
        !cells[2].ends_with('*') && cells[3].ends_with(" *"),
        "{text}"
    );
    assert!(
        text.contains("* noisy: the run's per-second figures spread by more than 10%"),
        "{text}"
    );
    // The steady sweep has no mark at all.
    assert!(!sweep().contains("noisy"), "{}", sweep());
    // The HTML report marks the same cell and says why under its table.
    let runs = vec![(0, vec![0], tcp_rr()), (0, vec![1], tcp_rr_with_a_dip())];
    let points = runs.into_iter().map(|(t, at, s)| (t, at, 1, s)).collect();
    let doc = serde_json::to_value(sweep_of(&["a"], &[("--size", &["64", "1k"])], 1, 0, points))
        .expect("a sweep document");
    let mut html = Vec::new();
    wirebench::report::html::render(&doc, &mut html).expect("rendering to memory");
    let html = String::from_utf8(html).expect("UTF-8");
    let ops = html.split("sweep ops").nth(1).expect("the rate table");
    let ops = ops.split("</table>").next().unwrap();
    assert_eq!(ops.matches(" *</td>").count(), 1, "{ops}");
    let note = "s per-second figures spread by more than 10% (standard deviation over mean)";
    assert!(
        html.contains("<p>* noisy: the run") && html.contains(note),
        "{html}"
    );
}

/// What the golden files hold, checked apart from their exact bytes, so that rewriting them
/// cannot quietly bring back what issue 7 removed.
#[test]
fn the_golden_reports_read_right() {
    let reports: Vec<(&str, String)> = fixtures()
        .iter()
        .map(|(name, s)| (*name, render(s)))
        .collect();
    for (name, text) in &reports {
        assert!(
            !text.contains(&usize::MAX.to_string()),
            "{name}: sentinel\n{text}"
        );
        assert!(!text.contains("answered ok 0/s"), "{name}\n{text}");
        // Every series ends with a half second, labelled as such.
        assert!(
            text.contains("2 (0.50 s)"),
            "{name}: partial second\n{text}"
        );
    }
    let report = |name: &str| &reports.iter().find(|(n, _)| *n == name).unwrap().1;
    for bulk in ["tcp_stream", "tcp_source", "udp_stream"] {
        assert!(!report(bulk).contains("ok 0"), "{bulk}\n{}", report(bulk));
        assert!(report(bulk).contains("messages "), "{bulk}");
    }
    // 29.888 MB acknowledged within the 2.5 s window: what a 100 Mbit tbf link carries.
    assert!(report("tcp_stream").contains("95.64 Mbit/s"));
    assert!(report("tcp_stream").contains("drained after the window: 1.36 MB"));
    assert!(report("tcp_source").contains("9.60 Gbit/s"));
    assert!(report("udp_stream").contains("100.00 Mbit/s"));
    assert!(!report("udp_stream").contains("did not keep up"));
    assert!(report("udp_rr").contains("pipeline unlimited"));
    assert!(report("open_loop").contains("did not keep up"));
    // 40,000/s in the tcp rr run: the half second shows 40,000/s, not the 20,000 it counted.
    let half = report("tcp_rr")
        .lines()
        .find(|l| l.contains("2 (0.50 s)"))
        .unwrap();
    assert!(half.contains("40,000"), "{half}");
}
