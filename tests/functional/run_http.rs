//! The HTTP client against nginx (from Debian's packages, started by each test on a free port
//! with a temporary configuration and its own access log): counts agree with the server's log.
//! HTTP/2 (`--http2`) against nginx's h2c and h2-over-TLS listeners, and against a scripted
//! HTTP/2 peer that resets streams or ends connections, which nginx does not do on demand.

use super::common;

use common::{execute_json, free_port, listens, run_bounded, run_json, usage_error};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// How an nginx listens.
#[derive(Clone, Copy, Default)]
struct Listen {
    /// https with a fresh self-signed certificate.
    tls: bool,
    /// HTTP/2: h2c with prior knowledge, or h2 by ALPN with `tls`.
    http2: bool,
}

/// An nginx of this test's own: one worker, a temporary root and log, stopped by its PID.
/// Its access log lines are `$connection $request_uri $status $ssl_session_reused
/// $server_protocol` (`r` for a resumed TLS session, `.` for a full handshake, `-` without TLS).
struct Nginx {
    child: Child,
    dir: PathBuf,
    url: String,
}

impl Nginx {
    fn start(name: &str, extra: &str) -> Nginx {
        Nginx::start_with(name, extra, false)
    }

    /// With `tls`, the server speaks https with a fresh self-signed certificate for
    /// localhost and 127.0.0.1 (made with openssl), in `cert.pem` of its directory.
    fn start_with(name: &str, extra: &str, tls: bool) -> Nginx {
        Nginx::launch(name, extra, Listen { tls, http2: false })
    }

    fn launch(name: &str, extra: &str, listen: Listen) -> Nginx {
        let tls = listen.tls;
        let dir = std::env::temp_dir().join(format!("wb-nginx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("www/small.txt"), "x".repeat(100)).unwrap();
        let d = dir.display();
        let ssl = if tls {
            let ok = Command::new("openssl")
                .args([
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-subj",
                    "/CN=localhost",
                    "-days",
                    "1",
                ])
                .args([
                    "-keyout",
                    &format!("{d}/key.pem"),
                    "-out",
                    &format!("{d}/cert.pem"),
                ])
                .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
                .args(["-addext", "basicConstraints=critical,CA:FALSE"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("openssl makes the test certificate")
                .success();
            assert!(ok, "openssl failed");
            format!(" ssl; ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem;")
        } else {
            ";".to_string()
        };
        // nginx turns TCP_NODELAY on for keep-alive HTTP/1.1 and TLS only: a cleartext HTTP/2
        // connection keeps Nagle on, and sendfile then holds each small body for the client's
        // delayed ACK (~40 ms). Without sendfile, a frame header and its data go in one write.
        let (h2, sendfile) = match (listen.http2, tls) {
            (true, false) => (" http2", "off"),
            (true, true) => (" http2", "on"),
            (false, _) => ("", "on"),
        };
        let mut attempt = 0;
        let (child, port) = loop {
            attempt += 1;
            let port = free_port();
            let conf = format!(
                "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
                 events {{ worker_connections 1024; }}
                 http {{
                   log_format wb '$connection $request_uri $status $ssl_session_reused $server_protocol';
                   access_log {d}/access.log wb;
                   client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
                   fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
                   keepalive_requests 1000000; sendfile {sendfile};
                   server {{ listen 127.0.0.1:{port}{h2}{ssl} root {d}/www;
                     location = /status/503 {{ return 503; }}
                     {extra}
                   }}
                 }}"
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            // Its workers must not hold the test harness's output pipes open.
            let mut child = common::spawn_nginx(&dir);
            if listens(&mut child, port) {
                break (child, port);
            }
            // Another test's server took the port between free_port() and nginx's bind (nginx
            // retries its bind for a while, then exits). SIGTERM, so a master stops its worker.
            // SAFETY: kill(2) on the PID of the child this test started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
            assert!(attempt < 5, "nginx did not start on any of 5 free ports");
        };
        let scheme = if tls { "https" } else { "http" };
        Nginx {
            child,
            dir,
            url: format!("{scheme}://127.0.0.1:{port}"),
        }
    }

    /// The access log's lines, once written: nginx writes each line as its request completes,
    /// which can be just after the client has read the reply (a run in this process reads the
    /// log at once: 99 lines of 100 were seen), so the log is read until it stops growing
    /// (no new line for 50 ms, at most 2 s).
    fn log(&self) -> Vec<String> {
        let path = self.dir.join("access.log");
        let read = || -> Vec<String> {
            std::fs::read_to_string(&path)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let mut lines = read();
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = read();
            if now.len() == lines.len() || std::time::Instant::now() > deadline {
                return now;
            }
            lines = now;
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.join("www")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM to the master is nginx's fast shutdown: its workers stop with it (SIGKILL
        // would orphan them).
        // SAFETY: kill(2) on the PID of the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn ok_count_equals_nginx_access_log_lines() {
    let ngx = Nginx::start("count", "");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(&[&url, "-c", "4", "-d", "1s", "--warmup", "100"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let ok = n(&json["ok"]) + n(&json["warmup"]["ok"]);
    // Requests in flight at the deadline finish before the run ends: every one is counted.
    let lines = ngx.log().len() as u64;
    assert_eq!(lines, ok, "log {lines}, client {ok}");
    let http = &json["http"];
    assert_eq!(n(&http["status_2xx"]), n(&json["ok"]), "{http}");
    assert_eq!(n(&http["body_bytes"]), 100 * n(&json["ok"]));
    assert!(http["ttfb"]["p50_us"].as_f64().unwrap() > 0.0);
}

/// nginx closes a connection after 10 requests (`keepalive_requests 10`, `Connection: close`
/// on the 10th reply): the requests pipelined behind it were not processed (RFC 9112 §9.6), so
/// they go out again on a new connection (§9.3.2) — no errors, every request answered once, ok
/// equal to the access log, and the closes counted.
#[test]
fn requests_pipelined_behind_a_close_are_sent_again_not_errors() {
    let ngx = Nginx::start("close", "keepalive_requests 10;");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(&[&url, "-c", "2", "--pipeline", "4", "-n", "400"], LIMIT);
    assert_eq!(code, 0, "a close in good order is no error: {json}");
    assert_eq!((n(&json["ok"]), n(&json["errors"]["total"])), (400, 0));
    let http = &json["http"];
    assert!(n(&http["server_closes"]) >= 39, "{http}");
    assert!(n(&http["resent"]) > 0, "{http}");
    let ok = 400;
    assert_eq!(ngx.log().len() as u64, ok);
    // By time, the README's way: the same, and the terminal says so.
    let (out, _) = run_bounded(
        &["run", &url, "-c", "2", "--pipeline", "8", "-d", "1s"],
        LIMIT,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("errors 0 "), "{text}");
    assert!(
        text.contains("(Connection: close): a new connection each"),
        "{text}"
    );
    let ok = ngx.log().len() as u64;
    // In the open loop nothing more is sent on a connection the server is closing.
    let (json, code) = execute_json(&[&url, "-c", "2", "--rate", "500", "-d", "1s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let sent = n(&json["open_loop"]["sent"]);
    assert_eq!(n(&json["ok"]), sent, "{json}");
    assert_eq!(ngx.log().len() as u64, ok + sent);
    // Pipelined in the open loop: those behind a close go out again at once.
    let args = [
        &url,
        "-c",
        "2",
        "--pipeline",
        "4",
        "--rate",
        "2000",
        "-d",
        "1s",
    ];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!((code, n(&json["errors"]["total"])), (0, 0), "{json}");
    assert_eq!(n(&json["ok"]), n(&json["open_loop"]["sent"]), "{json}");
    assert!(n(&json["http"]["server_closes"]) > 0, "{}", json["http"]);
}

#[test]
fn statuses_are_counted_and_judged_by_accept() {
    let ngx = Nginx::start("status", "");
    let url = format!("{}/status/503", ngx.url);
    let (json, code) = execute_json(&[&url, "-n", "50"], LIMIT);
    assert_eq!(code, 1, "503 is an error by default");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "status");
    assert_eq!(n(&json["errors"]["by_kind"][0]["count"]), 50);
    assert_eq!(json["http"]["status"][0]["code"], 503);
    let (json, code) = execute_json(&[&url, "-n", "50", "--accept", "2xx,503"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 50), "{json}");
    assert_eq!(n(&json["http"]["status_5xx"]), 50);
}

#[test]
fn templated_paths_never_repeat_across_workers() {
    let ngx = Nginx::start("seq", "");
    let url = format!("{}/item/{{seq}}?w={{worker}}&r={{rand:1000}}", ngx.url);
    let (json, code) = execute_json(
        &[
            &url,
            "-c",
            "6",
            "--threads",
            "2",
            "-n",
            "600",
            "--accept",
            "404",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    let log = ngx.log();
    let mut seqs: Vec<&str> = log
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().split('?').next().unwrap())
        .collect();
    assert_eq!(seqs.len(), 600);
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), 600, "some {{seq}} repeated");
    assert!(
        log.iter().any(|l| l.contains("w=1")),
        "both workers took part"
    );
}

#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let ngx = Nginx::start("close", "");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(&[&url, "--no-keepalive", "-c", "2", "-n", "100"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["connect"]["count"]), 100);
    let mut conns: Vec<String> = ngx
        .log()
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    conns.sort();
    conns.dedup();
    assert_eq!(conns.len(), 100, "one connection per request");
    assert_eq!(json["http"]["keepalive"], false);
}

#[test]
fn a_one_gib_download_streams_at_constant_memory() {
    let ngx = Nginx::start("big", "");
    // A sparse file: nginx sends a gigabyte of zeros without the disk.
    let f = std::fs::File::create(ngx.root().join("big.bin")).unwrap();
    f.set_len(1 << 30).unwrap();
    let url = format!("{}/big.bin", ngx.url);
    let (json, code) = run_json(&[&url, "-n", "1", "--timeout", "30s"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 1 << 30);
    assert!(
        json["http"]["goodput_mb_per_s"].as_f64().unwrap() > 10.0,
        "{}",
        json["http"]
    );
    let rss = n(&json["generator"]["peak_rss_kib"]);
    assert!(rss < 64 * 1024, "peak RSS {rss} KiB");
}

#[test]
fn post_bodies_and_headers_are_sent() {
    let ngx = Nginx::start("post", "location = /post { return 200 \"$http_x_id\"; }");
    let url = format!("{}/post", ngx.url);
    let body = ngx.dir.join("body.json");
    std::fs::write(&body, "{\"k\": 1}").unwrap();
    let at = format!("@{}", body.display());
    let (json, code) = execute_json(
        &[
            &url,
            "-X",
            "POST",
            "-H",
            "X-Id: {seq}",
            "--body",
            &at,
            "-n",
            "20",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 20);
    // The replies echo X-Id: 20 bodies of the numbers 0..19, digits summed.
    assert_eq!(n(&json["http"]["body_bytes"]), 10 + 2 * 10);
}

#[test]
fn https_verifies_certificates_unless_told_not_to() {
    let ngx = Nginx::start_with("tls", "", true);
    let url = format!("{}/small.txt", ngx.url);
    // A self-signed certificate is not trusted: one clear line, exit 2, before any load.
    let out = usage_error(&["run", &url, "-n", "5"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("TLS handshake") && err.contains("--insecure"),
        "{err}"
    );
    let (json, code) = execute_json(&[&url, "-c", "2", "-n", "200", "--insecure"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 200), "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 200 * 100);
    // Trusting its certificate as a CA works too, by name.
    let cert = ngx.dir.join("cert.pem").display().to_string();
    let by_name = url.replace("127.0.0.1", "localhost");
    let (json, code) = execute_json(
        &[&by_name, "-n", "20", "--cacert", &cert, "--no-keepalive"],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 20), "{json}");
    assert_eq!(
        n(&json["connect"]["count"]),
        20,
        "a TLS handshake per connection"
    );
    assert_eq!(ngx.log().len(), 220);
}

/// TLS session resumption is on by default, as in browsers: after a worker's first connection,
/// the next ones resume its session (nginx logs `r`); `--no-tls-resume` makes every connection
/// a full handshake (`.`).
#[test]
fn tls_sessions_resume_unless_told_not_to() {
    let ngx = Nginx::start_with("resume", "", true);
    let url = format!("{}/small.txt", ngx.url);
    let reused = |log: &[String]| -> Vec<String> {
        log.iter()
            .map(|l| l.split(' ').nth(3).unwrap_or("?").to_string())
            .collect()
    };
    let args = [
        &url,
        "-c",
        "1",
        "--threads",
        "1",
        "-n",
        "20",
        "--no-keepalive",
        "--insecure",
    ];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 20), "{json}");
    let on = reused(&ngx.log());
    let resumed = on.iter().filter(|r| *r == "r").count();
    assert!(resumed >= 15, "want most of 20 connections resumed: {on:?}");
    let mut off_args = args.to_vec();
    off_args.push("--no-tls-resume");
    let (json, code) = execute_json(&off_args, LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 20), "{json}");
    let off = reused(&ngx.log()[20..]);
    assert_eq!(off, vec!["."; 20], "--no-tls-resume: every handshake full");
}

#[test]
fn bad_http_input_gets_one_line_and_exit_2() {
    let dir = std::env::temp_dir();
    let missing = format!("@{}/wb-no-such-body-file", dir.display());
    for (args, want) in [
        (vec!["run", "http://"], "no usable host"),
        (
            vec!["run", "http://127.0.0.1:9/", "--insecure"],
            "apply to https://",
        ),
        (
            vec!["run", "https://127.0.0.1:9/", "--cacert", "/no/such.pem"],
            "--cacert",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "--no-tls-resume"],
            "apply to https://",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "-H", "NoColon"],
            "Name: value",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "--body", &missing],
            "cannot read",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "--accept", "7xx"],
            "--accept",
        ),
        (vec!["run", "http://127.0.0.1:9/{rand:0}"], "needs a bound"),
        (
            vec!["run", "http://127.0.0.1:9/", "--size", "10"],
            "applies to tcp://",
        ),
        (
            vec!["run", "tcp://127.0.0.1:9", "-X", "GET"],
            "applies to http://",
        ),
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The client against wirebench's own HTTP server: counts agree, templated bodies are echoed,
/// and the open loop paces HTTP as it paces TCP.
#[test]
fn the_client_against_the_reference_http_server() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let base = format!("http://{}", srv.addr);
    let (json, code) = execute_json(
        &[&format!("{base}/bytes/1k"), "-c", "4", "-n", "1000"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 1000 * 1024);
    // A templated body, echoed: "id=" and a number of 1 to 3 digits for 0..999.
    let echo = format!("{base}/echo");
    let (json, code) = execute_json(&[&echo, "--body", "id={seq}", "-n", "1000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let digits: u64 = (0..1000u64).map(|i| i.to_string().len() as u64).sum();
    assert_eq!(n(&json["http"]["body_bytes"]), 3 * 1000 + digits);
    let (json, code) = execute_json(
        &[
            &format!("{base}/bytes/100"),
            "--rate",
            "1000",
            "-c",
            "2",
            "-d",
            "2s",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["open_loop"]["kept_up"], true, "{}", json["open_loop"]);
    let stats = srv.stop();
    // Requests in flight at the deadline finish before the run ends: the server answered
    // exactly what the client counted.
    assert_eq!(stats.requests, 2000 + n(&json["ok"]), "{stats:?}");
}

/// Long and short bodies in turn on one keep-alive connection: a long body raises the socket's
/// receive low-water mark, which must never make the client wait for bytes that are not coming
/// (the end of that body, or the short reply after it).
#[test]
fn long_and_short_bodies_alternate_on_one_connection() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("wb-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("targets.txt");
    // 3,000,001 bytes is not a multiple of any buffer or water mark.
    std::fs::write(
        &file,
        "GET /bytes/3000001\nGET /bytes/10\nGET /bytes/1500000\n",
    )
    .unwrap();
    let base = format!("http://{}/", srv.addr);
    for threads in ["1", "2"] {
        // One connection on one thread uses blocking calls; on two threads, one idle, the
        // connection runs in the event loop. Both paths must honour the water mark.
        let (json, code) = execute_json(
            &[
                &base,
                "--targets",
                file.to_str().unwrap(),
                "-c",
                "1",
                "--threads",
                threads,
                "-n",
                "30",
                "--timeout",
                "5s",
            ],
            LIMIT,
        );
        assert_eq!(code, 0, "{json}");
        assert_eq!(n(&json["ok"]), 30);
        assert_eq!(
            n(&json["http"]["body_bytes"]),
            10 * (3_000_001 + 10 + 1_500_000)
        );
        // Far below the 5 s timeout per request: nobody waited for missing bytes.
        let max = json["latency"]["max_us"].as_f64().unwrap();
        assert!(max < 1_000_000.0, "max {max} µs: {json}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Per run: one keep-alive connection, and no hidden probe.
    let stats = srv.stop();
    assert_eq!(stats.connections, 2, "{stats:?}");
    assert_eq!(stats.requests, 60, "{stats:?}");
}

// ---------------------------------------------------------------------------------------------
// HTTP/2
// ---------------------------------------------------------------------------------------------

fn h2c(name: &str, extra: &str) -> Nginx {
    Nginx::launch(
        name,
        extra,
        Listen {
            tls: false,
            http2: true,
        },
    )
}

/// The distinct `$connection` numbers of an access log.
fn connections(log: &[String]) -> usize {
    let mut c: Vec<&str> = log.iter().map(|l| l.split(' ').next().unwrap()).collect();
    c.sort();
    c.dedup();
    c.len()
}

/// Every access log line was an HTTP/2 request.
fn assert_all_http2(log: &[String]) {
    assert!(!log.is_empty());
    for l in log {
        assert!(l.ends_with(" HTTP/2.0"), "not HTTP/2: {l}");
    }
}

/// Panics unless `doc` validates against schema/result.v1.json.
fn assert_schema(doc: &serde_json::Value) {
    common::assert_schema("result.v1.json", doc);
}

#[test]
fn http2_counts_equal_the_nginx_log_on_at_most_two_connections() {
    let ngx = h2c("h2count", "");
    let url = format!("{}/small.txt", ngx.url);
    let args = [&url, "--http2", "-c", "2", "--pipeline", "8", "-n", "800"];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 800);
    assert_eq!(json["http"]["version"], "2");
    assert_eq!(n(&json["http"]["status_2xx"]), 800);
    assert_eq!(n(&json["http"]["body_bytes"]), 800 * 100);
    assert_eq!(n(&json["connect"]["count"]), 2, "{}", json["connect"]);
    assert!(json["http"]["ttfb"]["p50_us"].as_f64().unwrap() > 0.0);
    assert_schema(&json);
    let log = ngx.log();
    assert_eq!(log.len(), 800);
    assert_all_http2(&log);
    assert!(connections(&log) <= 2, "{} connections", connections(&log));
    // By time, with a warm-up: requests in flight at the deadline finish, so the log holds
    // exactly what was counted, warm-up included.
    let (json, code) = execute_json(
        &[
            &url,
            "--http2",
            "-c",
            "2",
            "--pipeline",
            "8",
            "-d",
            "1s",
            "--warmup",
            "100",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    let ok = n(&json["ok"]) + n(&json["warmup"]["ok"]);
    let lines = ngx.log().len() as u64 - 800;
    assert!(ok > 100 && lines == ok, "log {lines}, client {ok}");
}

#[test]
fn http2_statuses_are_counted_and_judged_by_accept() {
    let ngx = h2c("h2status", "");
    let url = format!("{}/status/503", ngx.url);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "50", "--pipeline", "4"], LIMIT);
    assert_eq!(code, 1, "503 is an error by default");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "status");
    assert_eq!(n(&json["errors"]["by_kind"][0]["count"]), 50);
    assert_eq!(json["http"]["status"][0]["code"], 503);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "50", "--accept", "2xx,503"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 50), "{json}");
    assert_eq!(n(&json["http"]["status_5xx"]), 50);
    assert_eq!(ngx.log().len(), 100);
}

#[test]
fn http2_large_bodies_are_counted_exactly_at_constant_memory() {
    let ngx = h2c("h2big", "");
    // A sparse file: nginx sends 64 MiB of zeros without the disk.
    let f = std::fs::File::create(ngx.root().join("big.bin")).unwrap();
    f.set_len(64 << 20).unwrap();
    let url = format!("{}/big.bin", ngx.url);
    // Six bodies, two at a time on one connection: 384 MiB through an 8 MiB window.
    let (json, code) = run_json(
        &[
            &url,
            "--http2",
            "-n",
            "6",
            "--pipeline",
            "2",
            "--timeout",
            "30s",
        ],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["ok"]), 6);
    assert_eq!(n(&json["http"]["body_bytes"]), 6 * (64 << 20));
    let rss = n(&json["generator"]["peak_rss_kib"]);
    assert!(rss < 48 * 1024, "peak RSS {rss} KiB for 384 MiB of bodies");
}

/// `--link` over HTTP/2: the packets come from the connection's TCP_INFO, as over HTTP/1.1,
/// so the wire rate counts each segment's headers on top of the HTTP/2 bytes.
#[test]
fn http2_downloads_get_a_wire_rate_with_link() {
    let ngx = h2c("h2link", "");
    let f = std::fs::File::create(ngx.root().join("one.bin")).unwrap();
    f.set_len(1 << 20).unwrap();
    let url = format!("{}/one.bin", ngx.url);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "20", "--link", "100Gbit"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let link = &json["throughput"]["link"];
    assert_eq!(link["direction"], "received", "{link}");
    // An average over the connections' segments: a number, not always whole.
    let payload = link["packet"]["payload_bytes"]
        .as_f64()
        .expect("a packet size");
    assert!(payload >= 536.0, "{link}");
    assert!(n(&link["packet"]["transport_header_bytes"]) >= 20, "{link}");
    let (bits, wire) = (
        link["payload_bits_per_s"].as_f64().unwrap(),
        link["frames"]["bits_per_s"].as_f64().unwrap(),
    );
    assert!(bits > 0.0 && wire > bits, "{link}");
}

#[test]
fn http2_over_tls_by_alpn_with_a_trusted_certificate() {
    let ngx = Nginx::launch(
        "h2tls",
        "",
        Listen {
            tls: true,
            http2: true,
        },
    );
    let cert = ngx.dir.join("cert.pem").display().to_string();
    let url = format!("{}/small.txt", ngx.url).replace("127.0.0.1", "localhost");
    let (json, code) = execute_json(
        &[
            &url,
            "--http2",
            "--cacert",
            &cert,
            "-c",
            "2",
            "--pipeline",
            "4",
            "-n",
            "200",
        ],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 200), "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 200 * 100);
    let log = ngx.log();
    assert_eq!(log.len(), 200);
    assert_all_http2(&log);
    assert!(connections(&log) <= 2);
    // Untrusted without --cacert: the same one line as for HTTP/1.1.
    let (out, _) = run_bounded(&["run", &url, "--http2", "-n", "5"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("TLS handshake"), "{err}");
}

/// Servers that do not speak HTTP/2 are named before the load, in one line, exit 2.
#[test]
fn http2_servers_without_it_are_named_before_the_load() {
    let plain = Nginx::start("h2no", "");
    let tls = Nginx::start_with("h2notls", "", true);
    let cert = tls.dir.join("cert.pem").display().to_string();
    let tls_url = format!("{}/small.txt", tls.url);
    let plain_url = format!("{}/small.txt", plain.url);
    for (args, want) in [
        (
            vec!["run", &plain_url, "--http2", "-n", "5"],
            "does not speak HTTP/2 without TLS",
        ),
        (
            vec!["run", &tls_url, "--http2", "--cacert", &cert, "-n", "5"],
            "chose http/1.1 in ALPN, not h2",
        ),
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want) && err.contains("--http2"), "{err}");
    }
    // No request reached either server: the HTTP/1.1 one logged the preface as a bad request.
    assert!(tls.log().is_empty(), "{:?}", tls.log());
    for l in plain.log() {
        assert!(l.contains(" 400 "), "{l}");
    }
}

#[test]
fn bad_http2_input_gets_one_line_and_exit_2() {
    for (args, want) in [
        (
            vec!["run", "tcp://127.0.0.1:9", "--http2"],
            "--http2 applies to http://",
        ),
        (
            vec!["run", "udp://127.0.0.1:9", "--http2"],
            "--http2 applies to http://",
        ),
        (
            vec![
                "run",
                "http://127.0.0.1:9/",
                "--http2",
                "-H",
                "Connection: close",
            ],
            "HTTP/2 and HTTP/3 forbid connection-specific headers",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "--http2", "-H", "TE: gzip"],
            "HTTP/2 and HTTP/3 forbid",
        ),
    ] {
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn http2_no_keepalive_opens_a_connection_per_request() {
    let ngx = h2c("h2close", "");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(
        &[&url, "--http2", "--no-keepalive", "-c", "2", "-n", "40"],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 40), "{json}");
    assert_eq!(n(&json["connect"]["count"]), 40);
    assert_eq!(json["http"]["keepalive"], false);
    let log = ngx.log();
    assert_eq!((log.len(), connections(&log)), (40, 40));
    assert_all_http2(&log);
}

#[test]
fn http2_sends_templates_bodies_headers_and_targets() {
    let ngx = h2c(
        "h2post",
        "location = /post { return 200 \"$http_x_id:$request_body\"; }
         location /item/ { return 200 \"$host\"; }",
    );
    // nginx reads a body only when something uses it: $request_body does, once it is read,
    // which `return` does not wait for; so echo the header and count the body through the log.
    let url = format!("{}/post", ngx.url);
    let (json, code) = execute_json(
        &[
            &url,
            "--http2",
            "-X",
            "POST",
            "-H",
            "X-Id: {seq}",
            "--body",
            "k={seq}",
            "-n",
            "20",
        ],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 20), "{json}");
    // "N:" per reply, N the numbers 0..19: 30 digits and 20 colons (the body is not read).
    let body = n(&json["http"]["body_bytes"]);
    assert!(body >= 30 + 20, "{body}");
    // --targets in turn, with {seq} paths unique and a Host header as :authority.
    let dir = ngx.dir.join("targets.txt");
    std::fs::write(&dir, "GET /item/{seq}\nHEAD /small.txt\n").unwrap();
    let base = format!("{}/", ngx.url);
    let (json, code) = execute_json(
        &[
            &base,
            "--http2",
            "--targets",
            dir.to_str().unwrap(),
            "-H",
            "Host: example.org",
            "-c",
            "2",
            "--pipeline",
            "4",
            "-n",
            "100",
        ],
        LIMIT,
    );
    assert_eq!((code, n(&json["ok"])), (0, 100), "{json}");
    // 50 replies "example.org" and 50 HEAD replies without a body.
    assert_eq!(n(&json["http"]["body_bytes"]), 50 * 11);
    let log = ngx.log();
    let mut items: Vec<&str> = log
        .iter()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|p| p.starts_with("/item/"))
        .collect();
    assert_eq!(items.len(), 50);
    items.sort();
    items.dedup();
    assert_eq!(items.len(), 50, "some {{seq}} repeated");
}

#[test]
fn http2_open_loop_keeps_its_schedule() {
    let ngx = h2c("h2rate", "");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(
        &[&url, "--http2", "--rate", "500", "-c", "2", "-d", "2s"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["open_loop"]["kept_up"], true, "{}", json["open_loop"]);
    assert_eq!(ngx.log().len() as u64, n(&json["ok"]));
    assert_schema(&json);
}

/// nginx ends an HTTP/2 connection with GOAWAY (NO_ERROR) after keepalive_requests streams:
/// the client opens another, and the streams above the GOAWAY's last one, which nginx did not
/// process, go out again on it (as h2load does): no errors, every request answered once, the
/// GOAWAYs counted.
#[test]
fn http2_goaway_after_a_request_limit_reconnects_and_sends_the_rest_again() {
    let ngx = h2c("h2goaway", "keepalive_requests 100;");
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "350"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 350), "{json}");
    assert_eq!(n(&json["connect"]["count"]), 4, "{}", json["connect"]);
    assert_eq!(n(&json["http"]["server_closes"]), 3, "{}", json["http"]);
    assert_eq!(connections(&ngx.log()), 4);
    let before = ngx.log().len() as u64;
    let (json, code) = execute_json(&[&url, "--http2", "--pipeline", "8", "-n", "700"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert_eq!((n(&json["ok"]), n(&json["errors"]["total"])), (700, 0));
    assert_eq!(ngx.log().len() as u64 - before, 700);
    assert!(n(&json["connect"]["count"]) >= 7, "{}", json["connect"]);
    assert!(n(&json["http"]["server_closes"]) >= 6, "{}", json["http"]);
    assert_schema(&json);
}

/// The README's HTTP/2 example against nginx with a request limit, by time, as printed: exit
/// 0, no errors, the GOAWAYs counted in the JSON and on the terminal, ok equal to the log.
#[test]
fn http2_graceful_goaways_by_time_are_no_errors_and_are_counted() {
    let ngx = h2c("h2goawayd", "keepalive_requests 100;");
    let url = format!("{}/small.txt", ngx.url);
    let args = [&url, "--http2", "-c", "2", "--pipeline", "8", "-d", "1s"];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!((code, n(&json["errors"]["total"])), (0, 0), "{json}");
    let http = &json["http"];
    assert!(
        n(&http["server_closes"]) > 0 && n(&http["resent"]) > 0,
        "{http}"
    );
    assert_eq!(ngx.log().len() as u64, n(&json["ok"]));
    let mut all = vec!["run"];
    all.extend_from_slice(&args);
    let (out, _) = run_bounded(&all, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("errors 0 "), "{text}");
    assert!(
        text.contains("(GOAWAY NO_ERROR): a new connection each"),
        "{text}"
    );
}

/// Many streams on one connection: 64 requests in flight on a single connection, every one
/// answered and logged once, on that one connection.
#[test]
fn http2_many_streams_share_one_connection() {
    let ngx = h2c("h2many", "");
    let url = format!("{}/small.txt", ngx.url);
    let args = [
        "run",
        &url,
        "--http2",
        "-c",
        "1",
        "--pipeline",
        "64",
        "-n",
        "3000",
        "--json",
        "-q",
    ];
    let (out, _) = common::run_bounded_with(common::bin(), &args, LIMIT);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(n(&json["ok"]), 3000, "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 3000 * 100);
    assert_eq!(n(&json["connect"]["count"]), 1, "{}", json["connect"]);
    let log = ngx.log();
    assert_eq!(log.len(), 3000);
    assert_all_http2(&log);
    assert_eq!(connections(&log), 1);
}

/// With more streams wanted than the server allows at once, the rest wait their turn.
#[test]
fn http2_streams_beyond_the_servers_limit_wait_their_turn() {
    let ngx = h2c("h2limit", "http2_max_concurrent_streams 4;");
    let url = format!("{}/small.txt", ngx.url);
    // The client waits for nginx's SETTINGS before its first streams, so none is refused.
    let (json, code) = execute_json(&[&url, "--http2", "--pipeline", "16", "-n", "400"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 400), "{json}");
    assert_eq!(ngx.log().len(), 400);
    assert_eq!(n(&json["connect"]["count"]), 1);
}

/// What a scripted HTTP/2 peer does with each request.
#[derive(Clone, Copy)]
enum Misbehave {
    /// RST_STREAM REFUSED_STREAM; the connection goes on.
    RefuseStream,
    /// GOAWAY ENHANCE_YOUR_CALM (no stream processed), then the end of the connection.
    GoAway,
    /// GOAWAY NO_ERROR with no stream processed, then the end of the connection.
    GoAwayGraceful,
}

/// A minimal HTTP/2 peer on 127.0.0.1 that answers the preface with SETTINGS and each request
/// as `how` says; it stops when the returned flag is set. Returns the URL, the flag, and the
/// thread (which yields the connections it accepted).
fn misbehaving_h2(
    how: Misbehave,
) -> (
    String,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<usize>,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    use common::h2::{frame, Frames};
    let thread = std::thread::spawn(move || {
        let mut accepted = 0;
        while !flag.load(Ordering::Relaxed) {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            accepted += 1;
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            s.write_all(&frame(4, 0, 0, &[])).unwrap();
            let mut frames = Frames::new();
            let mut chunk = [0u8; 4096];
            'conn: loop {
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => frames.feed(&chunk[..k]),
                }
                while let Some(f) = frames.next_frame() {
                    let reply = match (f.kind, how) {
                        (4, _) if f.flags & 1 == 0 => frame(4, 1, 0, &[]),
                        (1, Misbehave::RefuseStream) => frame(3, 0, f.stream, &7u32.to_be_bytes()),
                        (1, Misbehave::GoAway | Misbehave::GoAwayGraceful) => {
                            let code = match how {
                                Misbehave::GoAway => 11u32,
                                _ => 0,
                            };
                            let mut p = 0u32.to_be_bytes().to_vec();
                            p.extend_from_slice(&code.to_be_bytes());
                            let _ = s.write_all(&frame(7, 0, 0, &p));
                            // Read on until the client closes, so no reset loses the GOAWAY.
                            let _ = s.shutdown(std::net::Shutdown::Write);
                            while matches!(s.read(&mut chunk), Ok(k) if k > 0) {}
                            break 'conn;
                        }
                        _ => continue,
                    };
                    if s.write_all(&reply).is_err() {
                        break 'conn;
                    }
                }
            }
        }
        accepted
    });
    (url, stop, thread)
}

#[test]
fn http2_refused_streams_and_failed_connections_are_errors_of_their_kind() {
    use std::sync::atomic::Ordering;
    // Refused streams: each request fails alone; the one connection goes on.
    let (url, stop, thread) = misbehaving_h2(Misbehave::RefuseStream);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "10"], LIMIT);
    stop.store(true, Ordering::Relaxed);
    let accepted = thread.join().unwrap();
    assert_eq!(code, 1, "{json}");
    assert_eq!(n(&json["ok"]), 0);
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "refused", "{json}");
    assert_eq!(n(&json["errors"]["by_kind"][0]["count"]), 10);
    let sample = json["errors"]["by_kind"][0]["sample"].as_str().unwrap();
    assert!(sample.contains("REFUSED_STREAM"), "{sample}");
    assert_eq!(n(&json["connect"]["count"]), 1);
    assert_eq!(accepted, 1, "one connection, no hidden probe");
    // A connection ended with an error: its request fails and the engine reconnects.
    let (url, stop, thread) = misbehaving_h2(Misbehave::GoAway);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "10"], LIMIT);
    stop.store(true, Ordering::Relaxed);
    let accepted = thread.join().unwrap();
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "reset", "{json}");
    assert_eq!(n(&json["errors"]["total"]), 10);
    let sample = json["errors"]["by_kind"][0]["sample"].as_str().unwrap();
    assert!(
        sample.contains("GOAWAY") && sample.contains("ENHANCE_YOUR_CALM"),
        "{sample}"
    );
    assert_eq!(n(&json["connect"]["count"]), 10);
    assert_eq!(accepted, 10);
    // A graceful GOAWAY on a connection that answered nothing: its stream is an error, not
    // sent again forever.
    let (url, stop, thread) = misbehaving_h2(Misbehave::GoAwayGraceful);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "10"], LIMIT);
    stop.store(true, Ordering::Relaxed);
    let accepted = thread.join().unwrap();
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "refused", "{json}");
    assert_eq!(n(&json["errors"]["total"]), 10);
    assert_eq!(n(&json["http"]["server_closes"]), 0, "{}", json["http"]);
    assert_eq!(accepted, 10);
}

/// A run by count is timed from its first send to its last completion, as the MINT study
/// timed its runs: one 8 MB download's measured time is its one request's latency, not the
/// generator's life (thread spawns and joins, a third of the time on main), and its rate is its
/// bytes over that time.
#[test]
fn a_run_by_count_is_timed_from_its_first_send_to_its_last_reply() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let url = format!("http://{}/bytes/8M", srv.addr);
    let (json, code) = execute_json(&[&url, "-n", "1"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let measured_ms = json["duration_s"].as_f64().unwrap() * 1e3;
    let latency_ms = json["latency"]["max_us"].as_f64().unwrap() / 1e3;
    assert!(
        measured_ms <= latency_ms + 5.0 && measured_ms >= latency_ms * 0.99 - 0.1,
        "measured {measured_ms} ms for one request of {latency_ms} ms"
    );
    let body = n(&json["http"]["body_bytes"]) as f64;
    assert_eq!(body, (8 << 20) as f64);
    let mb_s = json["http"]["goodput_mb_per_s"].as_f64().unwrap();
    let want = body / (measured_ms / 1e3) / 1e6;
    assert!(
        (mb_s - want).abs() <= want * 1e-3,
        "{mb_s} MB/s, want {want}"
    );
}

/// HTTP bytes are counted alike both ways: `sent_bytes`/`received_bytes` are bodies (a GET
/// sends none; `/bytes/0` answers none), `wire_sent_bytes`/`wire_received_bytes` the whole
/// messages with their heads, in the run and in each second of its series; the terminal names
/// both.
#[test]
fn http_bytes_are_bodies_as_payload_and_whole_messages_as_wire() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let url = format!("http://{}/bytes/0", srv.addr);
    let (json, code) = execute_json(&[&url, "-n", "50"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let t = &json["throughput"];
    assert_eq!(n(&json["ok"]), 50, "{json}");
    assert_eq!(n(&t["sent_bytes"]), 0, "a GET has no body: {t}");
    assert_eq!(n(&t["received_bytes"]), 0, "/bytes/0 has no body: {t}");
    let (ws, wr) = (n(&t["wire_sent_bytes"]), n(&t["wire_received_bytes"]));
    // Each reply is at least its status line; the same reply 50 times.
    assert!(wr >= 50 * 17 && wr % 50 == 0, "wire received {wr}: {t}");
    assert!(ws >= 50 * 16 && ws % 50 == 0, "wire sent {ws}: {t}");
    // The per-second series carries the wire bytes too, adding up to the run's.
    let series = json["series"].as_array().expect("series");
    let sum = |key: &str| series.iter().map(|p| n(&p[key])).sum::<u64>();
    assert_eq!(
        (sum("wire_sent_bytes"), sum("wire_received_bytes")),
        (ws, wr),
        "{series:?}"
    );
    let (out, _) = run_bounded(&["run", &url, "-n", "20"], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("body sent") && text.contains("wire (with headers): sent"),
        "{text}"
    );
}

/// HTTP/2 too: bodies as payload, frames and HPACK heads on the wire.
#[test]
fn http2_bytes_are_bodies_as_payload_and_frames_as_wire() {
    let ngx = Nginx::launch(
        "h2bytes",
        "",
        Listen {
            tls: false,
            http2: true,
        },
    );
    let url = format!("{}/small.txt", ngx.url);
    let (json, code) = execute_json(&[&url, "--http2", "-n", "20"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let t = &json["throughput"];
    assert_eq!(n(&t["sent_bytes"]), 0, "{t}");
    assert_eq!(n(&t["received_bytes"]), 2000, "{t}");
    assert!(n(&t["wire_received_bytes"]) > 2000, "{t}");
    assert!(n(&t["wire_sent_bytes"]) > 0, "{t}");
}

/// Warm-up by time, then `-n`: the replies to requests sent in the warm-up are warm-up bytes,
/// as their operations are; the measured part has exactly its own `-n` bodies.
#[test]
fn bytes_of_warm_up_replies_stay_out_of_the_measured_part() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let url = format!("http://{}/bytes/1000", srv.addr);
    let (json, code) = execute_json(&[&url, "-n", "100", "-c", "4", "--warmup", "300ms"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let ok = n(&json["ok"]);
    assert_eq!(ok, 100, "{json}");
    let t = &json["throughput"];
    assert_eq!(n(&t["received_bytes"]), 1000 * ok, "{t}");
    assert_eq!(
        n(&json["http"]["body_bytes"]),
        1000 * ok,
        "{}",
        json["http"]
    );
}
