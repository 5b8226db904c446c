//! The reference HTTP server over real loopback sockets, with a raw std::net client: in-process
//! through `spawn`, and the built binary for the command line. Every read and wait is bounded
//! in time.

use super::common;

use common::{first_line_addr, serve_process, stdout_lines, stop_with_sigterm, usage_error};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};
use wirebench::serve::http::{spawn, HttpServerHandle, HttpServerOptions, HttpServerStats};

/// The longest any single step may take before the test fails.
const LIMIT: Duration = Duration::from_secs(10);

fn options() -> HttpServerOptions {
    HttpServerOptions {
        threads: 2,
        ..HttpServerOptions::default()
    }
}

fn server(options: HttpServerOptions) -> HttpServerHandle {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    spawn(listener, options).unwrap()
}

/// Polls the live counters until `done` holds; they may trail a streamed body by a moment.
fn wait_for(h: &HttpServerHandle, done: impl Fn(&HttpServerStats) -> bool) -> HttpServerStats {
    common::wait_for_stats(|| h.stats(), done, Duration::from_millis(5), LIMIT)
}

/// A response as read off the wire.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn content_length(&self) -> Option<u64> {
        self.header("content-length").map(|v| v.parse().unwrap())
    }
}

/// A raw HTTP/1.1 client on one connection.
struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn new(addr: SocketAddr) -> Client {
        let s = TcpStream::connect_timeout(&addr, LIMIT).unwrap();
        s.set_read_timeout(Some(LIMIT)).unwrap();
        s.set_write_timeout(Some(LIMIT)).unwrap();
        s.set_nodelay(true).unwrap();
        Client { s, buf: Vec::new() }
    }

    fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.s.write_all(bytes.as_ref()).unwrap();
    }

    fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n"));
        self.response(false)
    }

    /// Reads more; 0 at the end of the stream (a reset counts as the end).
    fn fill(&mut self) -> usize {
        let mut chunk = [0; 64 * 1024];
        loop {
            match self.s.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return n;
                }
                // A signal (a sibling test's child ending) may interrupt the read: try again.
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return 0,
                Err(e) => panic!(
                    "read failed ({:?}; a timeout means the server did not answer): {e}",
                    e.kind()
                ),
            }
        }
    }

    /// Takes `n` bytes off the front, reading as needed.
    fn take(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            assert!(
                self.fill() > 0,
                "closed after {} of {n} bytes",
                self.buf.len()
            );
        }
        self.buf.drain(..n).collect()
    }

    /// Takes one CRLF-terminated line (without the CRLF).
    fn line(&mut self) -> String {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.take(i + 2);
                return String::from_utf8(line[..i].to_vec()).unwrap();
            }
            assert!(self.fill() > 0, "closed inside a line");
        }
    }

    /// Reads a response head and its body; `head_only` for a response to HEAD.
    fn response(&mut self, head_only: bool) -> Response {
        let status_line = self.line();
        let mut parts = status_line.splitn(3, ' ');
        assert_eq!(parts.next(), Some("HTTP/1.1"), "{status_line}");
        let status = parts.next().unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_string(), value.trim().to_string()));
        }
        let mut r = Response {
            status,
            headers,
            body: Vec::new(),
        };
        assert_eq!(r.header("server"), Some("wirebench"));
        if head_only || status == 204 || status == 304 {
            return r;
        }
        if r.header("transfer-encoding") == Some("chunked") {
            loop {
                let size = u64::from_str_radix(&self.line(), 16).unwrap() as usize;
                if size == 0 {
                    assert_eq!(self.line(), "", "no trailers");
                    break;
                }
                let data = self.take(size);
                r.body.extend_from_slice(&data);
                assert_eq!(self.take(2), b"\r\n");
            }
        } else {
            let n = r.content_length().expect("a Content-Length");
            r.body = self.take(n as usize);
        }
        r
    }

    /// Reads and drops `n` body bytes, without keeping them.
    fn skip(&mut self, mut n: u64) {
        let now = (self.buf.len() as u64).min(n);
        self.buf.drain(..now as usize);
        n -= now;
        let mut chunk = vec![0; 256 * 1024];
        while n > 0 {
            let want = (chunk.len() as u64).min(n) as usize;
            let got = self.s.read(&mut chunk[..want]).unwrap();
            assert!(got > 0, "closed with {n} bytes to go");
            n -= got as u64;
        }
    }

    /// True if the server closes the connection (within the read timeout) with nothing more.
    fn closed(&mut self) -> bool {
        self.buf.is_empty() && self.fill() == 0
    }
}

/// What a /bytes/N body holds: lines of 63 characters and a newline, cut from a 64 KiB block.
fn expected_bytes(n: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.";
    (0..n)
        .map(|i| i % (64 * 1024))
        .map(|i| {
            if i % 64 == 63 {
                b'\n'
            } else {
                ALPHABET[i % 64]
            }
        })
        .collect()
}

/// A distinct, checkable payload.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("wirebench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn bytes_have_exact_lengths() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let mut total = 0;
    for (path, n) in [
        ("/bytes/0", 0),
        ("/bytes/1", 1),
        ("/bytes/100", 100),
        ("/bytes/4k", 4096),
        ("/bytes/100000", 100_000),
        ("/bytes/1M", 1 << 20),
        ("/bytes/200000?x=1", 200_000),
    ] {
        let r = c.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.content_length(), Some(n as u64), "{path}");
        assert!(r.body == expected_bytes(n), "{path}: body differs");
        total += n as u64;
    }
    let st = wait_for(&h, |s| s.bytes_out == total);
    assert_eq!((st.connections, st.requests, st.status_2xx), (1, 7, 7));
    for bad in ["/bytes/x", "/bytes/1025G", "/bytes/-1"] {
        assert_eq!(c.get(bad).status, 400, "{bad}");
    }
}

#[test]
fn a_100_megabyte_body_streams() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    c.send("GET /bytes/100M HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response(true);
    assert_eq!((r.status, r.content_length()), (200, Some(100 << 20)));
    c.skip(100 << 20);
    // The connection is still in step: the next response follows at once.
    assert_eq!(c.get("/bytes/10").body.len(), 10);
    wait_for(&h, |s| s.bytes_out == (100 << 20) + 10 && s.requests == 2);
}

#[test]
fn keep_alive_serves_sequential_requests_on_one_connection() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    for n in [10, 20, 30] {
        let r = c.get(&format!("/bytes/{n}"));
        assert_eq!(r.body.len(), n);
        assert_eq!(
            r.header("connection"),
            None,
            "HTTP/1.1 keeps alive silently"
        );
    }
    let st = wait_for(&h, |s| s.requests == 3);
    assert_eq!((st.connections, st.open, st.bytes_out), (1, 1, 60));
    drop(c);
    let st = wait_for(&h, |s| s.open == 0);
    assert_eq!(st.connections, 1);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let batch: String = (1..=10)
        .map(|i| format!("GET /bytes/{i} HTTP/1.1\r\nHost: t\r\n\r\n"))
        .collect();
    c.send(batch);
    for i in 1..=10 {
        let r = c.response(false);
        assert_eq!((r.status, r.body.len()), (200, i));
    }
    // Mixed routes, with a HEAD among them.
    c.send(
        "GET /status/404 HTTP/1.1\r\n\r\nHEAD /bytes/7 HTTP/1.1\r\n\r\nGET /status/201 HTTP/1.1\r\n\r\n",
    );
    assert_eq!(c.response(false).status, 404);
    let head = c.response(true);
    assert_eq!((head.status, head.content_length()), (200, Some(7)));
    assert_eq!(c.response(false).status, 201);
    let st = wait_for(&h, |s| s.requests == 13);
    assert_eq!((st.connections, st.status_2xx, st.status_4xx), (1, 12, 1));
}

#[test]
fn status_codes_and_counters_by_class() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let r = c.get("/status/503");
    assert_eq!(r.status, 503);
    assert_eq!(r.body, b"503 Service Unavailable\n");
    let r = c.get("/status/204");
    assert_eq!((r.status, r.content_length()), (204, None));
    let r = c.get("/status/301");
    assert_eq!(
        (r.status, r.content_length()),
        (301, Some(r.body.len() as u64))
    );
    assert_eq!(c.get("/status/418").status, 418);
    assert_eq!(c.get("/status/100").status, 400);
    assert_eq!(c.get("/status/600").status, 400);
    assert_eq!(c.get("/nothing/here").status, 404);
    c.send("BREW /status/200 HTTP/1.1\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 405);
    assert!(r.header("allow").unwrap().contains("GET"));
    c.send("DELETE /bytes/5 HTTP/1.1\r\n\r\n");
    assert_eq!(c.response(false).status, 405);
    c.send("GET /echo HTTP/1.1\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.status, r.header("allow")), (405, Some("POST, PUT")));
    let st = wait_for(&h, |s| s.requests == 10);
    assert_eq!(
        (st.status_2xx, st.status_3xx, st.status_4xx, st.status_5xx),
        (1, 1, 7, 1)
    );
    let st = h.stop();
    assert_eq!((st.connections, st.open), (1, 0));
}

#[test]
fn delay_route_waits() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let start = Instant::now();
    let r = c.get("/delay/50ms");
    let took = start.elapsed();
    assert_eq!(r.status, 200);
    assert!(took >= Duration::from_millis(50), "{took:?}");
    assert_eq!(c.get("/delay/abc").status, 400);

    // --delay adds to every response.
    let h = server(HttpServerOptions {
        delay: Some(Duration::from_millis(30)),
        ..options()
    });
    let mut c = Client::new(h.addr);
    let start = Instant::now();
    assert_eq!(c.get("/delay/20ms").status, 200);
    assert_eq!(c.get("/bytes/1").status, 200);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(80), "{took:?}");
}

#[test]
fn echo_with_content_length() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let body = pattern(300_000, 3);
    c.send(format!(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    // Sent from a thread: the echo streams back while the body is still arriving.
    let mut writer = c.s.try_clone().unwrap();
    let sent = body.clone();
    let t = thread::spawn(move || writer.write_all(&sent).unwrap());
    let r = c.response(false);
    t.join().unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body == body, "echo differs");
    c.send("PUT /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloPOST /echo HTTP/1.1\r\n\r\n");
    assert_eq!(c.response(false).body, b"hello");
    let r = c.response(false);
    assert_eq!((r.status, r.body.len()), (200, 0));
    let st = wait_for(&h, |s| s.requests == 3);
    assert_eq!((st.bytes_in, st.bytes_out), (300_005, 300_005));
}

#[test]
fn echo_with_chunked_body() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    c.send("5\r\nhello\r\n");
    thread::sleep(Duration::from_millis(20));
    c.send("7;ext=1\r\n, world\r\n");
    let big = pattern(100_000, 9);
    c.send(format!("{:x}\r\n", big.len()));
    c.send(&big);
    c.send("\r\n0\r\nX-Trailer: 1\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    let mut want = b"hello, world".to_vec();
    want.extend_from_slice(&big);
    assert!(r.body == want, "echo differs");
    // The connection stays in step, and a body sent to another route is read and dropped.
    c.send("POST /status/202 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    assert_eq!(c.response(false).status, 202);
    let st = wait_for(&h, |s| s.requests == 2);
    assert_eq!(st.bytes_in, want.len() as u64 + 3);
    // Malformed chunk framing: 400 and close.
    c.send("POST /status/200 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    assert_eq!(c.response(false).status, 400);
    assert!(c.closed());
}

#[test]
fn expect_continue_gets_an_interim_response() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    c.send("PUT /echo HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
    assert_eq!(c.line(), "HTTP/1.1 100 Continue");
    assert_eq!(c.line(), "");
    c.send("abc");
    assert_eq!(c.response(false).body, b"abc");
    h.stop();
}

#[test]
fn files_are_served_byte_exact_with_head() {
    let dir = TempDir::new("http-files");
    let small = pattern(100, 1);
    let large = pattern(3 << 20, 2);
    std::fs::write(dir.path().join("small.bin"), &small).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/large file.bin"), &large).unwrap();
    std::fs::write(dir.path().join("empty"), b"").unwrap();
    let h = server(HttpServerOptions {
        dir: Some(dir.path().to_path_buf()),
        ..options()
    });
    let mut c = Client::new(h.addr);
    let r = c.get("/small.bin");
    assert_eq!((r.status, r.content_length()), (200, Some(100)));
    assert_eq!(r.body, small);
    let r = c.get("/sub/large%20file.bin");
    assert_eq!(r.status, 200);
    assert!(r.body == large, "large file differs");
    assert_eq!(c.get("/empty").body.len(), 0);
    // Routes come first, even with --dir.
    assert_eq!(c.get("/bytes/3").body.len(), 3);
    // HEAD: the length, no body (the next response follows the head directly).
    c.send("HEAD /sub/large%20file.bin HTTP/1.1\r\n\r\n");
    let r = c.response(true);
    assert_eq!((r.status, r.content_length()), (200, Some(3 << 20)));
    assert_eq!(c.get("/small.bin").body, small);
    assert_eq!(c.get("/missing").status, 404);
    assert_eq!(c.get("/sub").status, 403, "a directory without index.html");
    // Pipelined file requests are answered in order.
    c.send("GET /small.bin HTTP/1.1\r\n\r\nGET /bytes/5 HTTP/1.1\r\n\r\nGET /small.bin HTTP/1.1\r\n\r\n");
    assert_eq!(c.response(false).body, small);
    assert_eq!(c.response(false).body.len(), 5);
    assert_eq!(c.response(false).body, small);
    // Files, /bytes, and the text bodies of the 404 and the 403.
    let want = 100 + (3 << 20) + 3 + 100 + 100 + 5 + 100 + 14 + 14;
    let st = wait_for(&h, |s| s.requests == 11 && s.bytes_out == want);
    assert_eq!((st.status_2xx, st.status_4xx), (9, 2));
}

#[test]
fn traversal_out_of_the_directory_gets_the_answer_of_a_missing_file() {
    let base = TempDir::new("http-traversal");
    let root = base.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("ok.txt"), b"fine").unwrap();
    std::fs::write(base.path().join("secret.txt"), b"SECRET").unwrap();
    std::os::unix::fs::symlink(base.path().join("secret.txt"), root.join("link")).unwrap();
    // A link that stays inside is followed.
    std::os::unix::fs::symlink("ok.txt", root.join("inlink")).unwrap();
    let h = server(HttpServerOptions {
        dir: Some(root),
        ..options()
    });
    let mut c = Client::new(h.addr);
    assert_eq!(c.get("/ok.txt").body, b"fine");
    assert_eq!(c.get("/inlink").body, b"fine");
    let missing = c.get("/no-such-file");
    assert_eq!(missing.status, 404);
    // Existing outside or not, by `..`, an absolute path or a link: one answer, a missing
    // file's, so the server is no oracle for what exists on its host.
    for path in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/a/../../secret.txt",
        "/./../secret.txt",
        "/link",
        "/%2Fetc%2Fpasswd",
        "/%2fetc%2fshadow",
        "/%2fno%2fsuch%2ffile",
        "/../no-such-file",
    ] {
        let r = c.get(path);
        assert_eq!((r.status, &r.body), (404, &missing.body), "{path}");
    }
}

#[test]
fn oversized_header_gets_431_and_close() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    let filler = "a".repeat(20 * 1024);
    c.send(format!("GET /bytes/1 HTTP/1.1\r\nX-Big: {filler}\r\n\r\n"));
    let r = c.response(false);
    assert_eq!((r.status, r.header("connection")), (431, Some("close")));
    assert!(c.closed());
    // 65 header fields are too many as well.
    let mut c = Client::new(h.addr);
    let many: String = (0..65).map(|i| format!("X-{i}: v\r\n")).collect();
    c.send(format!("GET /bytes/1 HTTP/1.1\r\n{many}\r\n"));
    assert_eq!(c.response(false).status, 431);
    assert!(c.closed());
    let st = wait_for(&h, |s| s.status_4xx == 2);
    assert_eq!(st.requests, 2);
}

#[test]
fn malformed_request_gets_400_and_close() {
    let h = server(options());
    for bad in [
        &b"G(T / HTTP/1.1\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    ] {
        let mut c = Client::new(h.addr);
        c.send(bad);
        let r = c.response(false);
        assert_eq!(r.status, 400, "{}", bad.escape_ascii());
        assert_eq!(r.header("connection"), Some("close"));
        assert!(c.closed());
    }
    // Other connections are not affected.
    assert_eq!(Client::new(h.addr).get("/bytes/2").body.len(), 2);
}

#[test]
fn slow_client_gets_408() {
    let h = server(HttpServerOptions {
        request_timeout: Duration::from_millis(300),
        ..options()
    });
    let mut c = Client::new(h.addr);
    let start = Instant::now();
    c.send("GET /bytes/1 HTTP/1.1\r\nHost: t\r\nX-Sl");
    let r = c.response(false);
    let took = start.elapsed();
    assert_eq!((r.status, r.header("connection")), (408, Some("close")));
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(c.closed());
    // A connection that sends nothing is closed without a response.
    let mut idle = Client::new(h.addr);
    assert!(idle.closed());
    // The request timeout covers a head trickling in byte by byte too.
    let mut c = Client::new(h.addr);
    let start = Instant::now();
    for b in b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n".iter() {
        // Once the 408 is out, a write may fail: the head is over the limit anyway.
        if c.s.write_all(&[*b]).is_err() {
            break;
        }
        thread::sleep(Duration::from_millis(15));
    }
    assert_eq!(c.response(false).status, 408);
    assert!(start.elapsed() < Duration::from_secs(3));
    let st = wait_for(&h, |s| s.open == 0);
    assert_eq!(st.status_4xx, 2);
}

#[test]
fn idle_keep_alive_connection_is_closed() {
    let h = server(HttpServerOptions {
        idle_timeout: Duration::from_millis(200),
        ..options()
    });
    let mut c = Client::new(h.addr);
    assert_eq!(c.get("/bytes/1").status, 200);
    let start = Instant::now();
    assert!(c.closed());
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(150) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[test]
fn connection_close_is_honoured_both_ways() {
    let h = server(options());
    let mut c = Client::new(h.addr);
    c.send("GET /bytes/3 HTTP/1.1\r\nConnection: close\r\n\r\n");
    let r = c.response(false);
    assert_eq!((r.body.len(), r.header("connection")), (3, Some("close")));
    assert!(c.closed());
    // HTTP/1.0 closes unless asked to keep alive.
    let mut c = Client::new(h.addr);
    c.send("GET /bytes/4 HTTP/1.0\r\n\r\n");
    assert_eq!(c.response(false).body.len(), 4);
    assert!(c.closed());
    let mut c = Client::new(h.addr);
    for _ in 0..2 {
        c.send("GET /bytes/5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let r = c.response(false);
        assert_eq!(
            (r.body.len(), r.header("connection")),
            (5, Some("keep-alive"))
        );
    }
    // Requests pipelined after a close are not answered.
    let mut c = Client::new(h.addr);
    c.send("GET /bytes/1 HTTP/1.1\r\nConnection: close\r\n\r\nGET /bytes/2 HTTP/1.1\r\n\r\n");
    assert_eq!(c.response(false).body.len(), 1);
    assert!(c.closed());
    let st = wait_for(&h, |s| s.requests == 5 && s.open == 1);
    assert_eq!(st.connections, 4);
}

#[test]
fn max_connections_closes_the_extra_one() {
    let h = server(HttpServerOptions {
        max_connections: Some(1),
        ..options()
    });
    let mut first = Client::new(h.addr);
    assert_eq!(first.get("/bytes/1").status, 200);
    let mut second = Client::new(h.addr);
    assert!(second.closed());
    let st = wait_for(&h, |s| s.rejected == 1);
    assert_eq!((st.connections, st.open), (1, 1));
}

// ---- the binary ----

#[test]
fn binary_prints_url_first_and_stops_on_sigterm() {
    let mut child = serve_process("http", &["--threads", "2"]);
    let rx = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &rx, "http", LIMIT);
    let second = rx.recv_timeout(LIMIT).unwrap();
    assert!(second.starts_with("serving http: 2 threads"), "{second}");

    let mut c = Client::new(addr);
    assert_eq!(c.get("/bytes/100").body.len(), 100);
    assert_eq!(c.get("/status/503").status, 503);
    c.send("POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd");
    assert_eq!(c.response(false).body, b"abcd");
    drop(c);

    let last = stop_with_sigterm(&mut child, &rx, LIMIT);
    assert_eq!(
        last,
        "stopped: connections 1, requests 3, bytes in 4, bytes out 128, by status 2xx 2 3xx 0 4xx 0 5xx 1"
    );
}

#[test]
fn binary_bad_flags_exit_2_with_one_line() {
    for args in [
        &["--dir", "/no/such/dir"][..],
        &["--request-timeout", "x"],
        &["--idle-timeout", "0"],
        &["--listen", "999.1.1.1:1"],
    ] {
        usage_error(&[&["serve", "http"], args].concat(), LIMIT);
    }
}
