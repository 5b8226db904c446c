//! The HTTP client against nginx (from Debian's packages, started by each test on a free port
//! with a temporary configuration and its own access log): counts agree with the server's log.

mod common;

use common::{free_port, run_bounded, run_json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

/// An nginx of this test's own: one worker, a temporary root and log, stopped by its PID.
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
        let dir = std::env::temp_dir().join(format!("wb-nginx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("www/small.txt"), "x".repeat(100)).unwrap();
        let port = free_port();
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
            format!("ssl; ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem")
        } else {
            String::new()
        };
        let conf = format!(
            "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
             events {{ worker_connections 1024; }}
             http {{
               log_format wb '$connection $request_uri $status';
               access_log {d}/access.log wb;
               client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
               fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
               keepalive_requests 1000000; sendfile on;
               server {{ listen 127.0.0.1:{port} {ssl}; root {d}/www;
                 location = /status/503 {{ return 503; }}
                 {extra}
               }}
             }}"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        // Its workers must not hold the test harness's output pipes open.
        let child = Command::new("nginx")
            .args(["-c", &format!("{d}/nginx.conf"), "-p", &format!("{d}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx must be installed (apt-get install nginx-light; .ci/run does it)");
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let scheme = if tls { "https" } else { "http" };
        Nginx {
            child,
            dir,
            url: format!("{scheme}://127.0.0.1:{port}"),
        }
    }

    /// The access log's lines (nginx writes each line as the request completes).
    fn log(&self) -> Vec<String> {
        let path = self.dir.join("access.log");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
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
    let (json, code) = run_json(&[&url, "-c", "4", "-d", "1s", "--warmup", "100"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let ok = n(&json["ok"]) + n(&json["warmup"]["ok"]);
    // Requests cut off at the deadline may still have been logged: at most one per connection.
    let lines = ngx.log().len() as u64;
    assert!((ok..=ok + 4).contains(&lines), "log {lines}, client {ok}");
    let http = &json["http"];
    assert_eq!(n(&http["status_2xx"]), n(&json["ok"]), "{http}");
    assert_eq!(n(&http["body_bytes"]), 100 * n(&json["ok"]));
    assert!(http["ttfb"]["p50_us"].as_f64().unwrap() > 0.0);
}

#[test]
fn statuses_are_counted_and_judged_by_accept() {
    let ngx = Nginx::start("status", "");
    let url = format!("{}/status/503", ngx.url);
    let (json, code) = run_json(&[&url, "-n", "50"], LIMIT);
    assert_eq!(code, 1, "503 is an error by default");
    assert_eq!(json["errors"]["by_kind"][0]["kind"], "status");
    assert_eq!(n(&json["errors"]["by_kind"][0]["count"]), 50);
    assert_eq!(json["http"]["status"][0]["code"], 503);
    let (json, code) = run_json(&[&url, "-n", "50", "--accept", "2xx,503"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 50), "{json}");
    assert_eq!(n(&json["http"]["status_5xx"]), 50);
}

#[test]
fn templated_paths_never_repeat_across_workers() {
    let ngx = Nginx::start("seq", "");
    let url = format!("{}/item/{{seq}}?w={{worker}}&r={{rand:1000}}", ngx.url);
    let (json, code) = run_json(
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
    let (json, code) = run_json(&[&url, "--no-keepalive", "-c", "2", "-n", "100"], LIMIT);
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
    let (json, code) = run_json(
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
    let (out, _) = run_bounded(&["run", &url, "-n", "5"], LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("TLS handshake") && err.contains("--insecure"),
        "{err}"
    );
    let (json, code) = run_json(&[&url, "-c", "2", "-n", "200", "--insecure"], LIMIT);
    assert_eq!((code, n(&json["ok"])), (0, 200), "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 200 * 100);
    // Trusting its certificate as a CA works too, by name.
    let cert = ngx.dir.join("cert.pem").display().to_string();
    let by_name = url.replace("127.0.0.1", "localhost");
    let (json, code) = run_json(
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
        (
            vec!["run", "http://127.0.0.1:9/{nope}"],
            "unknown placeholder",
        ),
        (
            vec!["run", "http://127.0.0.1:9/", "--size", "10"],
            "applies to tcp://",
        ),
        (
            vec!["run", "tcp://127.0.0.1:9", "-X", "GET"],
            "applies to http://",
        ),
    ] {
        let (out, _) = run_bounded(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
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
    let (json, code) = run_json(
        &[&format!("{base}/bytes/1k"), "-c", "4", "-n", "1000"],
        LIMIT,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(n(&json["http"]["body_bytes"]), 1000 * 1024);
    // A templated body, echoed: "id=" and a number of 1 to 3 digits for 0..999.
    let echo = format!("{base}/echo");
    let (json, code) = run_json(&[&echo, "--body", "id={seq}", "-n", "1000"], LIMIT);
    assert_eq!(code, 0, "{json}");
    let digits: u64 = (0..1000u64).map(|i| i.to_string().len() as u64).sum();
    assert_eq!(n(&json["http"]["body_bytes"]), 3 * 1000 + digits);
    let (json, code) = run_json(
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
        let (json, code) = run_json(
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
    // Per run: the pre-flight connect (which sends nothing) and one keep-alive connection.
    let stats = srv.stop();
    assert_eq!(stats.connections, 4, "{stats:?}");
    assert_eq!(stats.requests, 60, "{stats:?}");
}
