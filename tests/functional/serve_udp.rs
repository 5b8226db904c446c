//! The reference UDP server over real loopback sockets: in-process through `spawn`, and the
//! built binary for the command line. Every receive and wait is bounded in time, and senders
//! wait for the server to take each burst, so the kernel never drops for want of buffer space.
//!
//! Each behaviour is checked with both ways a server thread waits: the event loop (the default)
//! and blocking calls (`blocking`, `serve udp --blocking`); the `_blocking` tests are the
//! latter.

use super::common;

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::net::{SocketAddr, UdpSocket};
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use wirebench::serve::udp::{
    bind, spawn, Faults, UdpServerHandle, UdpServerOptions, UdpServerStats,
};
use wirebench::serve::Mode as ServerMode;
use wirebench::wire::datagram::{
    parse_report_answer, FlowReport, Header, Kind, HEADER_LEN, MAX_DATAGRAM,
};

/// The longest any single step may take before the test fails.
const LIMIT: Duration = Duration::from_secs(10);
/// Datagrams sent before waiting for the server to receive them.
const BURST: usize = 64;

fn server(options: UdpServerOptions) -> UdpServerHandle {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    spawn(socket, options).unwrap()
}

fn sink() -> UdpServerOptions {
    UdpServerOptions {
        mode: ServerMode::Sink,
        ..UdpServerOptions::default()
    }
}

/// The default options, served by the event loop or (`blocking`) with blocking calls.
fn echo(blocking: bool) -> UdpServerOptions {
    UdpServerOptions {
        blocking,
        ..UdpServerOptions::default()
    }
}

/// `options`, served by the event loop or (`blocking`) with blocking calls.
fn looped(blocking: bool, options: UdpServerOptions) -> UdpServerOptions {
    UdpServerOptions {
        blocking,
        ..options
    }
}

fn client() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    s
}

fn recv(s: &UdpSocket) -> Vec<u8> {
    let mut buf = vec![0; 65_536];
    loop {
        // A socket with a receive timeout reports any signal the process takes as EINTR.
        match s.recv(&mut buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            got => {
                buf.truncate(got.expect("a reply within the time limit"));
                return buf;
            }
        }
    }
}

/// Nothing arrives for `wait`.
fn silent(s: &UdpSocket, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0; 16];
    let quiet = loop {
        match s.recv(&mut buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            got => {
                break matches!(got, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
            }
        }
    };
    s.set_read_timeout(Some(LIMIT)).unwrap();
    quiet
}

fn header(kind: Kind, flow: u64, seq: u64) -> Header {
    Header {
        kind,
        reply_size: 0,
        flow,
        seq,
        sent_ns: 1_000_000 + seq * 1_000,
    }
}

/// A wirebench datagram of `len` bytes with a recognisable payload.
fn datagram(h: Header, len: usize) -> Vec<u8> {
    let mut buf: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    h.encode(&mut buf);
    buf
}

/// Polls the live counters until `done` holds.
fn wait_for(h: &UdpServerHandle, done: impl Fn(&UdpServerStats) -> bool) -> UdpServerStats {
    common::wait_for_stats(|| h.stats(), done, Duration::from_millis(2), LIMIT)
}

/// Sends data datagrams of flow `flow` with these sequence numbers, in bursts the server is
/// seen to receive before the next.
fn send_seqs(h: &UdpServerHandle, s: &UdpSocket, flow: u64, seqs: &[u64]) {
    for burst in seqs.chunks(BURST) {
        let before = h.stats().datagrams;
        for &seq in burst {
            s.send_to(&datagram(header(Kind::Data, flow, seq), 64), h.addr)
                .unwrap();
        }
        let want = before + burst.len() as u64;
        wait_for(h, |st| st.datagrams >= want);
    }
}

/// Asks for a flow's report; skips echo replies that arrive first.
fn report(s: &UdpSocket, to: SocketAddr, flow: u64) -> FlowReport {
    s.send_to(&datagram(header(Kind::ReportRequest, flow, 77), 40), to)
        .unwrap();
    for _ in 0..100_000 {
        let got = recv(s);
        if let Some((h, r)) = parse_report_answer(&got) {
            assert_eq!((h.flow, h.seq), (flow, 77));
            return r;
        }
    }
    panic!("no report answer");
}

#[test]
fn echo_round_trip_preserves_header_and_bytes() {
    echo_round_trip(false);
}

#[test]
fn echo_round_trip_preserves_header_and_bytes_blocking() {
    echo_round_trip(true);
}

fn echo_round_trip(blocking: bool) {
    let h = server(echo(blocking));
    let s = client();
    let req = datagram(header(Kind::Data, 42, 7), 200);
    s.send_to(&req, h.addr).unwrap();
    let rep = recv(&s);
    assert_eq!(rep.len(), 200);
    let got = Header::decode(&rep).unwrap();
    assert_eq!(got, header(Kind::Data, 42, 7).with_kind(Kind::Reply));
    assert_eq!(rep[HEADER_LEN..], req[HEADER_LEN..]);
    let st = wait_for(&h, |s| s.replies == 1);
    assert_eq!((st.datagrams, st.bytes_in, st.bytes_out), (1, 200, 200));
    assert_eq!((st.flows, st.bad, st.dropped), (1, 0, 0));
    // Echo mode keeps flow counters too.
    let r = report(&s, h.addr, 42);
    assert_eq!((r.received, r.bytes, r.highest_seq), (1, 200, Some(7)));
    let st = h.stop();
    assert_eq!((st.datagrams, st.replies), (2, 2));
}

#[test]
fn reply_size_from_header_or_option() {
    reply_sizes(false);
}

#[test]
fn reply_size_from_header_or_option_blocking() {
    reply_sizes(true);
}

fn reply_sizes(blocking: bool) {
    let h = server(echo(blocking));
    let s = client();
    let ask = |size: u32, len: usize| {
        let mut hd = header(Kind::Data, 1, 3);
        hd.reply_size = size;
        s.send_to(&datagram(hd, len), h.addr).unwrap();
        let rep = recv(&s);
        let got = Header::decode(&rep).unwrap();
        assert_eq!(
            (got.kind, got.seq, got.flow, got.sent_ns),
            (Kind::Reply, 3, 1, hd.sent_ns)
        );
        rep.len()
    };
    assert_eq!(ask(600, 64), 600);
    // No amplifier: a request gets at most 10 times its own size.
    assert_eq!(ask(MAX_DATAGRAM as u32, 64), 640);
    assert_eq!(ask(MAX_DATAGRAM as u32, 6600), MAX_DATAGRAM);
    assert_eq!(ask(40, 2000), 40);
    assert_eq!(ask(10, 64), HEADER_LEN, "never shorter than the header");
    drop(h);

    let h = server(UdpServerOptions {
        reply_size: Some(500),
        ..echo(blocking)
    });
    s.send_to(&datagram(header(Kind::Data, 1, 1), 64), h.addr)
        .unwrap();
    let rep = recv(&s);
    assert_eq!(rep.len(), 500);
    assert_eq!(Header::decode(&rep).unwrap().kind, Kind::Reply);
    // The request's own size wins over the server's.
    let mut hd = header(Kind::Data, 1, 2);
    hd.reply_size = 100;
    s.send_to(&datagram(hd, 64), h.addr).unwrap();
    assert_eq!(recv(&s).len(), 100);
    // Plain clients get filler of the configured size.
    s.send_to(b"ping", h.addr).unwrap();
    assert_eq!(recv(&s), vec![b'w'; 500]);
}

#[test]
fn sink_counts_loss_duplicates_and_reordering() {
    sink_counts(false);
}

#[test]
fn sink_counts_loss_duplicates_and_reordering_blocking() {
    sink_counts(true);
}

fn sink_counts(blocking: bool) {
    let h = server(looped(blocking, sink()));
    let s = client();
    let skipped = [0u64, 100, 500, 998];
    let seqs: Vec<u64> = (0..1000).filter(|q| !skipped.contains(q)).collect();
    send_seqs(&h, &s, 1, &seqs);
    let r = report(&s, h.addr, 1);
    // Sequence 0 is skipped, so the flow starts at 1: 3 of the 4 are seen as lost.
    assert_eq!(
        (r.received, r.lost, r.out_of_order, r.duplicated),
        (996, 3, 0, 0)
    );
    assert_eq!((r.bytes, r.highest_seq), (996 * 64, Some(999)));
    assert!(r.jitter_us.is_finite() && r.jitter_us >= 0.0);

    send_seqs(&h, &s, 2, &[0, 1, 1, 2, 3]);
    let r = report(&s, h.addr, 2);
    assert_eq!(
        (r.received, r.lost, r.out_of_order, r.duplicated),
        (5, 0, 0, 1)
    );

    send_seqs(&h, &s, 3, &[0, 1, 3, 2, 4]);
    let r = report(&s, h.addr, 3);
    assert_eq!(
        (r.received, r.lost, r.out_of_order, r.duplicated),
        (5, 0, 1, 0)
    );

    // Flows are per client address: another socket's flow 1 is a new, empty one.
    let other = client();
    assert_eq!(report(&other, h.addr, 1), FlowReport::default());
    // A sink answers nothing but reports.
    assert!(silent(&s, Duration::from_millis(50)));
    let st = h.stop();
    assert_eq!((st.flows, st.replies, st.bad), (3, 4, 0));
}

#[test]
fn drop_every_10_is_10_percent_loss() {
    drop_every_10(false);
}

#[test]
fn drop_every_10_is_10_percent_loss_blocking() {
    drop_every_10(true);
}

fn drop_every_10(blocking: bool) {
    let h = server(UdpServerOptions {
        faults: Faults {
            drop_every: Some(10),
            ..Faults::default()
        },
        ..looped(blocking, sink())
    });
    let s = client();
    // Datagrams 10, 20, …, 1000 (seq 9 … 999) are dropped; a final one (seq 1000) makes the
    // last drop visible, as loss after the highest sequence number never is.
    let seqs: Vec<u64> = (0..=1000).collect();
    send_seqs(&h, &s, 5, &seqs);
    let r = report(&s, h.addr, 5);
    assert_eq!((r.received, r.lost, r.highest_seq), (901, 100, Some(1000)));
    assert_eq!(r.lost as f64 / 1000.0, 0.10);
    let st = h.stop();
    assert_eq!((st.datagrams, st.dropped), (1002, 100));
}

#[test]
fn duplicate_and_reorder_faults() {
    duplicate_and_reorder(false);
}

#[test]
fn duplicate_and_reorder_faults_blocking() {
    duplicate_and_reorder(true);
}

fn duplicate_and_reorder(blocking: bool) {
    let h = server(UdpServerOptions {
        faults: Faults {
            duplicate_every: Some(10),
            ..Faults::default()
        },
        ..echo(blocking)
    });
    let s = client();
    let seqs: Vec<u64> = (0..100).collect();
    send_seqs(&h, &s, 8, &seqs);
    let r = report(&s, h.addr, 8);
    assert_eq!((r.received, r.duplicated, r.lost), (110, 10, 0));
    // Echo mode answers the duplicates twice too: 110 replies and one report answer.
    wait_for(&h, |st| st.replies == 111);
    drop(h);

    let h = server(UdpServerOptions {
        faults: Faults {
            reorder_every: Some(10),
            ..Faults::default()
        },
        ..looped(blocking, sink())
    });
    let seqs: Vec<u64> = (0..=100).collect();
    send_seqs(&h, &s, 9, &seqs);
    let r = report(&s, h.addr, 9);
    assert_eq!(
        (r.received, r.out_of_order, r.duplicated, r.lost),
        (101, 10, 0, 0)
    );
}

#[test]
fn delay_holds_replies_but_not_other_datagrams() {
    delay_holds_replies(false);
}

#[test]
fn delay_holds_replies_but_not_other_datagrams_blocking() {
    delay_holds_replies(true);
}

fn delay_holds_replies(blocking: bool) {
    let h = server(UdpServerOptions {
        delay: Some(Duration::from_millis(20)),
        ..echo(blocking)
    });
    let s = client();
    let start = Instant::now();
    s.send_to(&datagram(header(Kind::Data, 1, 1), 64), h.addr)
        .unwrap();
    assert_eq!(recv(&s).len(), 64);
    assert!(
        start.elapsed() >= Duration::from_millis(20),
        "{:?}",
        start.elapsed()
    );
    drop(h);

    // 40 requests with 100 ms each: served one after another they would take 4 s.
    let h = server(UdpServerOptions {
        delay: Some(Duration::from_millis(100)),
        ..echo(blocking)
    });
    let start = Instant::now();
    for seq in 0..40 {
        s.send_to(&datagram(header(Kind::Data, 2, seq), 64), h.addr)
            .unwrap();
    }
    let mut seqs: Vec<u64> = (0..40)
        .map(|_| Header::decode(&recv(&s)).unwrap().seq)
        .collect();
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(100), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    seqs.sort_unstable();
    assert_eq!(seqs, (0..40).collect::<Vec<_>>());
}

#[test]
fn plain_datagrams_are_echoed_and_counted_under_flow_0() {
    plain_datagrams(false);
}

#[test]
fn plain_datagrams_are_echoed_and_counted_under_flow_0_blocking() {
    plain_datagrams(true);
}

fn plain_datagrams(blocking: bool) {
    let h = server(echo(blocking));
    let s = client();
    for msg in [&b"hello"[..], b"", b"WB", &[0xFF; 1400]] {
        s.send_to(msg, h.addr).unwrap();
        assert_eq!(recv(&s), msg);
    }
    let r = report(&s, h.addr, 0);
    assert_eq!((r.received, r.bytes, r.highest_seq), (4, 1407, None));
    drop(h);

    let h = server(looped(blocking, sink()));
    for _ in 0..3 {
        s.send_to(b"a DNS query, say", h.addr).unwrap();
    }
    wait_for(&h, |st| st.datagrams == 3);
    assert_eq!(report(&s, h.addr, 0).received, 3);
}

#[test]
fn garbage_is_counted_and_ignored() {
    garbage(false);
}

#[test]
fn garbage_is_counted_and_ignored_blocking() {
    garbage(true);
}

fn garbage(blocking: bool) {
    let h = server(echo(blocking));
    let s = client();
    let mut unknown_kind = datagram(header(Kind::Data, 1, 1), 64);
    unknown_kind[4] = 9;
    let mut too_big = header(Kind::Data, 1, 1);
    too_big.reply_size = 70_000;
    let garbage: Vec<Vec<u8>> = vec![
        b"WBU1".to_vec(),
        b"WBU1 too short for a header".to_vec(),
        unknown_kind,
        datagram(header(Kind::Reply, 1, 1), 64),
        datagram(header(Kind::ReportAnswer, 1, 1), 64),
        datagram(too_big, 64),
    ];
    for g in &garbage {
        s.send_to(g, h.addr).unwrap();
    }
    wait_for(&h, |st| st.datagrams == garbage.len() as u64);
    assert!(
        silent(&s, Duration::from_millis(50)),
        "garbage is not answered"
    );
    // The server still works.
    s.send_to(&datagram(header(Kind::Data, 1, 1), 64), h.addr)
        .unwrap();
    assert_eq!(recv(&s).len(), 64);
    let st = h.stop();
    assert_eq!((st.bad, st.replies, st.flows), (6, 1, 1));
}

#[test]
fn flow_table_is_capped() {
    flow_table_cap(false);
}

#[test]
fn flow_table_is_capped_blocking() {
    flow_table_cap(true);
}

fn flow_table_cap(blocking: bool) {
    let h = server(UdpServerOptions {
        max_flows: 2,
        ..looped(blocking, sink())
    });
    let s = client();
    for flow in 1..=5 {
        send_seqs(&h, &s, flow, &[0, 1]);
    }
    assert_eq!(report(&s, h.addr, 2).received, 2);
    assert_eq!(report(&s, h.addr, 3), FlowReport::default());
    let st = h.stop();
    assert_eq!((st.flows, st.untracked, st.datagrams), (2, 6, 12));
}

#[test]
fn threads_share_a_port_and_keep_each_client_on_one() {
    threads_share_a_port(false);
}

#[test]
fn threads_share_a_port_and_keep_each_client_on_one_blocking() {
    threads_share_a_port(true);
}

fn threads_share_a_port(blocking: bool) {
    let options = UdpServerOptions {
        threads: 3,
        ..echo(blocking)
    };
    let socket = bind("127.0.0.1:0".parse().unwrap(), &options).unwrap();
    let h = spawn(socket, options).unwrap();
    let clients: Vec<UdpSocket> = (0..6).map(|_| client()).collect();
    for (i, c) in clients.iter().enumerate() {
        for seq in 0..20 {
            c.send_to(
                &datagram(header(Kind::Data, 100 + i as u64, seq), 64),
                h.addr,
            )
            .unwrap();
            assert_eq!(Header::decode(&recv(c)).unwrap().seq, seq);
        }
    }
    for (i, c) in clients.iter().enumerate() {
        let r = report(c, h.addr, 100 + i as u64);
        assert_eq!((r.received, r.lost, r.out_of_order), (20, 0, 0));
    }
    let st = h.stop();
    assert_eq!((st.datagrams, st.flows), (126, 6));
    // More than one thread needs SO_REUSEPORT.
    let plain = UdpSocket::bind("127.0.0.1:0").unwrap();
    let err = spawn(
        plain,
        UdpServerOptions {
            threads: 2,
            ..echo(blocking)
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
}

#[test]
fn binary_prints_url_first_and_stops_on_sigterm() {
    binary_stops_on_sigterm(&[], "serving udp: mode echo, 1 thread; stop");
}

#[test]
fn binary_prints_url_first_and_stops_on_sigterm_blocking() {
    binary_stops_on_sigterm(
        &["--blocking", "--threads", "2"],
        "serving udp: mode echo, 2 threads, blocking calls; stop",
    );
}

/// `serve udp --mode echo EXTRA`: the URL comes first, the second line starts with `second`,
/// and SIGTERM (soon, and with no traffic) ends it with the final counters.
fn binary_stops_on_sigterm(extra: &[&str], second: &str) {
    let mut child = common::bin()
        .args(["serve", "udp", "--mode", "echo"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wirebench serve udp");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let addr: SocketAddr = first
        .trim()
        .strip_prefix("udp://")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .parse()
        .unwrap();
    assert!(first.starts_with("udp://127.0.0.1:"), "{first:?}");
    let s = client();
    s.send_to(&datagram(header(Kind::Data, 1, 1), 100), addr)
        .unwrap();
    assert_eq!(recv(&s).len(), 100);

    // The rest of stdout, read on a thread so the wait is bounded.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
        let _ = tx.send(rest);
    });
    common::sigterm(&child);
    let signalled = Instant::now();
    let rest = match rx.recv_timeout(LIMIT) {
        Ok(rest) => rest,
        Err(_) => {
            let _ = child.kill();
            panic!("the server did not stop on SIGTERM");
        }
    };
    let status = child.wait().unwrap();
    // Blocked receives look at the shutdown every 200 ms.
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "stopping took {:?}",
        signalled.elapsed()
    );
    assert!(status.success(), "{status:?}");
    assert!(rest.starts_with(second), "{rest:?}");
    let stopped = rest.lines().last().unwrap();
    assert_eq!(
        stopped,
        "stopped: datagrams 1, bytes in 100, bytes out 100, flows 1, bad 0, dropped 0"
    );
}

#[test]
fn held_datagram_is_released_after_the_hold_without_traffic() {
    held_datagram_released(false);
}

#[test]
fn held_datagram_is_released_after_the_hold_without_traffic_blocking() {
    held_datagram_released(true);
}

/// With every datagram held and nothing after it, the reply comes after REORDER_HOLD (250 ms).
fn held_datagram_released(blocking: bool) {
    let h = server(UdpServerOptions {
        faults: Faults {
            reorder_every: Some(1),
            ..Faults::default()
        },
        ..echo(blocking)
    });
    let s = client();
    let start = Instant::now();
    s.send_to(&datagram(header(Kind::Data, 4, 0), 64), h.addr)
        .unwrap();
    assert_eq!(Header::decode(&recv(&s)).unwrap().seq, 0);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Two in a row: the first is held; the second finds the hold taken, is served, and the
    // held one follows right behind it, out of order.
    s.send_to(&datagram(header(Kind::Data, 4, 1), 64), h.addr)
        .unwrap();
    s.send_to(&datagram(header(Kind::Data, 4, 2), 64), h.addr)
        .unwrap();
    let got: Vec<u64> = (0..2)
        .map(|_| Header::decode(&recv(&s)).unwrap().seq)
        .collect();
    assert_eq!(got, [2, 1]);
    assert_eq!(report(&s, h.addr, 4).out_of_order, 1);
}

#[test]
fn blocking_server_stops_promptly() {
    // Idle, with a delayed reply pending, and with several threads: stop() returns within a
    // receive timeout or so, whatever each thread was waiting for.
    for options in [
        echo(true),
        UdpServerOptions {
            delay: Some(Duration::from_secs(30)),
            ..echo(true)
        },
        UdpServerOptions {
            threads: 3,
            ..echo(true)
        },
    ] {
        let threads = options.threads;
        let socket = bind("127.0.0.1:0".parse().unwrap(), &options).unwrap();
        let h = spawn(socket, options).unwrap();
        let s = client();
        s.send_to(&datagram(header(Kind::Data, 1, 1), 64), h.addr)
            .unwrap();
        wait_for(&h, |st| st.datagrams == 1);
        let start = Instant::now();
        let st = h.stop();
        let took = start.elapsed();
        assert!(took < Duration::from_secs(1), "{threads} threads: {took:?}");
        assert_eq!(st.datagrams, 1);
    }
}

#[test]
fn bad_flags_exit_2_with_one_line() {
    for args in [
        &["--mode", "source"][..],
        &["--reply-size", "70000"],
        &["--delay", "x"],
        &["--listen", "nowhere"],
        &["--threads", "0"],
    ] {
        let out = common::usage_error(&[&["serve", "udp"], args].concat(), LIMIT);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
