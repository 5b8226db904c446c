//! HTTP/2 against a scripted peer that encodes its responses the ways nginx does not: HPACK
//! dynamic table entries (a Huffman-coded `:status` indexed once, then referred to by index),
//! a table size update, header blocks split over CONTINUATION frames, padded DATA, a PING to
//! answer, streams reset one by one while the connection goes on, and nginx's Huffman-coded
//! entries in a small table that evicts with every response; and a reply held back by the
//! peer, which must not keep the streams freed before it from going out again at once.

use super::common;

use common::h2::{frame, Frames};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// What the peer saw from the client, over all connections.
#[derive(Debug, Default)]
struct Seen {
    connections: usize,
    requests: usize,
    ping_acks: usize,
    settings_acks: usize,
}

/// A peer on 127.0.0.1 that answers the preface with SETTINGS (at most 8 streams) and a PING,
/// and request `k` of a connection (counted from 0) on stream `s` with `answer(k, s)`;
/// it stops when the flag is set. Returns the URL, the flag and the thread.
fn peer(answer: fn(usize, u32) -> Vec<u8>) -> (String, Arc<AtomicBool>, JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let mut seen = Seen::default();
        while !flag.load(Ordering::Relaxed) {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            seen.connections += 1;
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut hello = frame(4, 0, 0, &[0, 3, 0, 0, 0, 8]);
            hello.extend(frame(6, 0, 0, b"wirebnch"));
            s.write_all(&hello).unwrap();
            let (mut frames, mut chunk, mut k) = (Frames::new(), [0u8; 4096], 0);
            'conn: loop {
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => frames.feed(&chunk[..n]),
                }
                while let Some(f) = frames.next_frame() {
                    let reply = match f.kind {
                        4 if f.flags & 1 == 0 => frame(4, 1, 0, &[]),
                        4 => {
                            seen.settings_acks += 1;
                            continue;
                        }
                        6 if f.flags & 1 == 1 && f.payload == b"wirebnch" => {
                            seen.ping_acks += 1;
                            continue;
                        }
                        1 => {
                            seen.requests += 1;
                            k += 1;
                            answer(k - 1, f.stream)
                        }
                        _ => continue,
                    };
                    if s.write_all(&reply).is_err() {
                        break 'conn;
                    }
                }
            }
        }
        seen
    });
    (url, stop, thread)
}

/// Runs `wirebench run URL ARGS --json -q`.
fn run(url: &str, args: &[&str]) -> (serde_json::Value, i32) {
    let cmd = common::bin();
    let mut all = vec!["run", url, "--http2", "--json", "-q"];
    all.extend_from_slice(args);
    let (out, _) = common::run_bounded_with(cmd, &all, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        let err = String::from_utf8_lossy(&out.stderr);
        panic!("{all:?}: no JSON ({e}): {text} {err}")
    });
    (json, out.status.code().unwrap_or(-1))
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// 200 requests, 16 streams at once, to a peer answering each with `answer` (a 201): each
/// counted ok as a 201, over one connection (at most the peer's 8 streams at once is no error).
/// The document, what the peer saw, and both as text for messages.
fn two_hundred_201s(answer: fn(usize, u32) -> Vec<u8>) -> (serde_json::Value, Seen, String) {
    let (url, stop, thread) = peer(answer);
    let args = ["-n", "200", "--pipeline", "16", "--accept", "201"];
    let (json, code) = run(&url, &args);
    stop.store(true, Ordering::Relaxed);
    let seen = thread.join().unwrap();
    let what = format!("{json} {seen:?}");
    assert_eq!((code, n(&json["ok"])), (0, 200), "{what}");
    assert_eq!(json["http"]["status"][0]["code"], 201, "{what}");
    assert_eq!(n(&json["http"]["status"][0]["count"]), 200, "{what}");
    assert_eq!((seen.connections, seen.requests), (1, 200), "{what}");
    (json, seen, what)
}

/// The response head of request `k`: the first one shrinks the dynamic table (a size update
/// to 256) and enters `:status: 201` in it (literal with incremental indexing, the value
/// Huffman-coded); the others refer to that entry by index (62) and add a literal `server`
/// field without indexing. Each head is split over HEADERS and CONTINUATION; the body
/// "hello" comes in a padded DATA frame.
fn indexed_201(k: usize, stream: u32) -> Vec<u8> {
    let block: Vec<u8> = match k {
        // 0x3f 0xe1 0x01: size update to 31 + 225 = 256. 0x48: literal with incremental
        // indexing, name :status (static 8); 0x82: a 2-byte Huffman string, "201".
        0 => vec![0x3f, 0xe1, 0x01, 0x48, 0x82, 0x10, 0x03],
        // 0xbe: indexed 62; 0x0f 0x27: literal without indexing, name `server` (static 54).
        _ => [&[0xbe, 0x0f, 0x27, 0x08][..], b"scripted"].concat(),
    };
    let (first, rest) = block.split_at(2);
    let mut out = frame(1, 0, stream, first);
    out.extend(frame(9, 4, stream, rest));
    let body = [&[3u8][..], b"hello", &[0, 0, 0]].concat();
    out.extend(frame(0, 0x8 | 0x1, stream, &body));
    out
}

#[test]
fn http2_dynamic_table_continuation_padding_and_ping_are_handled() {
    let (json, seen, what) = two_hundred_201s(indexed_201);
    assert_eq!(n(&json["http"]["body_bytes"]), 200 * 5, "{what}");
    assert_eq!((seen.ping_acks, seen.settings_acks), (1, 1), "{what}");
}

/// nginx's way of coding a response head, made harder: every response enters a `date` (its
/// value changes every 8th response, as nginx's does each second) and an `etag` in the
/// dynamic table, Huffman-coded with incremental indexing, in a table of 256 octets, so entries
/// are evicted all the time; `:status: 201` is entered the same way when the table lacks it and
/// referred to by its index when it has it. The index is there only if the client evicts no
/// earlier than RFC 7541 §4.1 says (sizes from the decoded lengths), and the status is right
/// only if a Huffman string decoded again (the client keeps recent ones) decodes alike.
fn dated_201(k: usize, stream: u32) -> Vec<u8> {
    // Literal with incremental indexing, name `:status` (static 8), Huffman "201".
    const STATUS: [u8; 4] = [0x48, 0x82, 0x10, 0x03];
    // Huffman "Wed, 25 Nov 2026 03:20:27 GMT" and "...:28 GMT" (29 octets each).
    const DATES: [&str; 2] = [
        "e4593e94136a693f75040138a019b8205c13aa62d1bf",
        "e4593e94136a693f75040138a019b8205c13ca62d1bf",
    ];
    // Literal with incremental indexing, name `etag` (static 34), Huffman "\"6925-64\"".
    const ETAG: &str = "62 88 fe5c7c4dace35fcf";
    let hex = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    // The peer's table, newest first: whether an entry is `:status`, and its size.
    let mut table: Vec<(bool, usize)> = Vec::new();
    let insert = |table: &mut Vec<(bool, usize)>, e: (bool, usize)| {
        table.insert(0, e);
        while table.iter().map(|e| e.1).sum::<usize>() > 256 {
            table.pop();
        }
    };
    let mut block = Vec::new();
    for i in 0..=k {
        block.clear();
        if i == 0 {
            block.extend([0x3f, 0xe1, 0x01]); // size update to 256
        }
        match table.iter().position(|e| e.0) {
            Some(at) => block.push(0x80 | (62 + at) as u8),
            None => {
                block.extend(STATUS);
                insert(&mut table, (true, 7 + 3 + 32));
            }
        }
        block.extend([0x61, 0x80 | 22]); // name `date` (static 33), 22 coded octets
        block.extend(hex(DATES[i / 8 % 2]));
        insert(&mut table, (false, 4 + 29 + 32));
        block.extend(hex(ETAG));
        insert(&mut table, (false, 4 + 9 + 32));
    }
    frame(1, 0x4 | 0x1, stream, &block)
}

#[test]
fn http2_a_table_that_evicts_all_the_time_stays_in_step() {
    two_hundred_201s(dated_201);
}

/// Every other request's stream is reset (RST_STREAM INTERNAL_ERROR); the rest are answered
/// "200" (static index 8) with an empty body.
fn reset_every_other(k: usize, stream: u32) -> Vec<u8> {
    match k % 2 {
        0 => frame(3, 0, stream, &2u32.to_be_bytes()),
        _ => frame(1, 0x4 | 0x1, stream, &[0x88]),
    }
}

#[test]
fn http2_streams_reset_one_by_one_are_errors_while_the_connection_goes_on() {
    let (url, stop, thread) = peer(reset_every_other);
    let (json, code) = run(&url, &["-n", "40", "--pipeline", "4"]);
    stop.store(true, Ordering::Relaxed);
    let seen = thread.join().unwrap();
    let what = format!("{json} {seen:?}");
    assert_eq!(code, 1, "{what}");
    assert_eq!(n(&json["ok"]), 20, "{what}");
    let kind = &json["errors"]["by_kind"][0];
    assert_eq!(
        (kind["kind"].as_str(), n(&kind["count"])),
        (Some("reset"), 20),
        "{what}"
    );
    let sample = kind["sample"].as_str().unwrap();
    assert!(
        sample.contains("RST_STREAM") && sample.contains("INTERNAL_ERROR"),
        "{what}"
    );
    assert_eq!(n(&json["http"]["status_2xx"]), 20, "{what}");
    assert_eq!((seen.connections, seen.requests), (1, 40), "{what}");
}

/// A peer that answers the first request (stream 1) at once and holds the second (stream 3)
/// back until the client has sent a third, on the stream the first one freed, or 5 s have
/// passed; then answers everything at once. Returns the URL and the thread, which tells the
/// streams of the requests in the order they came and whether the third came while the
/// second was still unanswered.
fn holding_peer() -> (String, JoinHandle<(Vec<u32>, bool)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let thread = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&frame(4, 0, 0, &[])).unwrap();
        let ok = |stream| frame(1, 0x4 | 0x1, stream, &[0x88]); // ":status: 200", no body
        let (mut frames, mut chunk) = (Frames::new(), [0u8; 4096]);
        let (mut streams, mut held, mut third_while_held) = (Vec::new(), None, false);
        loop {
            match s.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => frames.feed(&chunk[..n]),
                // 5 s without a third request: answer the one held, and go on.
                Err(_) => match held.take() {
                    Some(h) => {
                        s.write_all(&ok(h)).unwrap();
                        continue;
                    }
                    None => break,
                },
            }
            while let Some(f) = frames.next_frame() {
                let mut reply = match f.kind {
                    4 if f.flags & 1 == 0 => frame(4, 1, 0, &[]),
                    1 => {
                        streams.push(f.stream);
                        match streams.len() {
                            2 => {
                                held = Some(f.stream);
                                continue;
                            }
                            3 => third_while_held = held.is_some(),
                            _ => {}
                        }
                        ok(f.stream)
                    }
                    _ => continue,
                };
                if streams.len() >= 3 {
                    if let Some(h) = held.take() {
                        reply.extend(ok(h));
                    }
                }
                if s.write_all(&reply).is_err() {
                    return (streams, third_while_held);
                }
            }
        }
        (streams, third_while_held)
    });
    (url, thread)
}

/// In a closed loop a stream that a reply frees goes out again at once: a reply the server
/// keeps back (a slow backend) must not keep the next requests waiting, so that `--pipeline M`
/// keeps M requests in flight whatever the shape of the server's replies.
#[test]
fn http2_a_reply_held_back_does_not_hold_the_next_requests() {
    let (url, thread) = holding_peer();
    let (json, code) = run(&url, &["-n", "6", "--pipeline", "2", "-c", "1"]);
    let (streams, third_while_held) = thread.join().unwrap();
    let what = format!("{json} {streams:?}");
    assert_eq!((code, n(&json["ok"])), (0, 6), "{what}");
    assert_eq!(streams, [1, 3, 5, 7, 9, 11], "{what}");
    assert!(
        third_while_held,
        "the third request waited for the second reply: {what}"
    );
}
