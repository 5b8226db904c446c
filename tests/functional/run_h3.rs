//! HTTP/3 (`--http3`) against real servers over QUIC on 127.0.0.1: `wirebench serve http3`
//! (its self-signed certificate trusted with --cacert) and Caddy from Debian's packages (a
//! generated Caddyfile and certificate), whose access log must count what wirebench counted.

use super::common;

use common::{bin, first_line_addr, stdout_lines, stop_with_sigterm, usage_error};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

/// A `wirebench serve http3 ARGS` child: its URL, its certificate's path and its stdout lines.
struct Server {
    child: Child,
    lines: mpsc::Receiver<String>,
    url: String,
    cert: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = bin()
            .args(["serve", "http3"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        let addr = first_line_addr(&mut child, &lines, "https", LIMIT);
        let second = lines.recv_timeout(LIMIT).expect("a second line");
        let cert = second
            .split("self-signed certificate ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no certificate path in: {second}"))
            .to_string();
        Server {
            child,
            lines,
            url: format!("https://{addr}"),
            cert,
        }
    }

    /// Stops the server; the requests it counted.
    fn stop(mut self) -> u64 {
        let last = stop_with_sigterm(&mut self.child, &self.lines, LIMIT);
        count_after(&last, "connections (")
            .and_then(|_| last.split("), ").nth(1))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no request count in: {last}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn count_after(text: &str, marker: &str) -> Option<usize> {
    text.find(marker)
}

/// `wirebench run ARGS --json -q`: the document, which must come with exit 0.
fn run_ok(args: &[&str]) -> Value {
    let (doc, code) = common::run_json(args, LIMIT);
    assert_eq!(code, 0, "{args:?}: {doc}");
    doc
}

fn ok_of(doc: &Value) -> u64 {
    doc["ok"]
        .as_u64()
        .unwrap_or_else(|| panic!("no ok in {doc}"))
}

fn errors_of(doc: &Value) -> u64 {
    doc["errors"]["total"].as_u64().unwrap_or(0)
}

/// Every request the client counted, the server counted: closed loop with streams in flight
/// on several connections, a POST echoed back, and a status outside --accept.
#[test]
fn counts_equal_the_servers() {
    let server = Server::start(&[]);
    let url = format!("{}/bytes/100", server.url);
    let cert = server.cert.clone();
    let doc = run_ok(&[
        &url,
        "--http3",
        "--cacert",
        &cert,
        "-d",
        "1s",
        "-c",
        "4",
        "--pipeline",
        "8",
        "--no-save",
    ]);
    let got = ok_of(&doc);
    assert!(got > 100, "{doc}");
    assert_eq!(errors_of(&doc), 0, "{doc}");
    assert_eq!(doc["http"]["version"], "3", "{doc}");
    let echo = format!("{}/echo", server.url);
    let posted = run_ok(&[
        &echo,
        "--http3",
        "--insecure",
        "--body",
        "hello h3",
        "-n",
        "50",
        "--no-save",
    ]);
    assert_eq!(ok_of(&posted), 50, "{posted}");
    assert_eq!(posted["http"]["body_bytes"], 50 * 8, "{posted}");
    let missing = format!("{}/status/404", server.url);
    let (refused, code) = common::run_json(
        &[&missing, "--http3", "--insecure", "-n", "20", "--no-save"],
        LIMIT,
    );
    assert_eq!(code, 1, "{refused}");
    let served = server.stop();
    let sent = got + 50 + 20;
    // Requests still in flight when the run ended reached the server and were counted there,
    // not in the run's window (at most the streams in flight: 4 x 8).
    assert!(
        (sent..=sent + 32).contains(&served),
        "client {sent}, server {served}"
    );
}

/// A 64 MiB body is counted whole, at the client's constant memory (bodies are counted as
/// they arrive, never kept).
#[test]
fn a_large_download_at_constant_memory() {
    let server = Server::start(&[]);
    let url = format!("{}/bytes/64M", server.url);
    let doc = run_ok(&[&url, "--http3", "--insecure", "-n", "2", "--no-save"]);
    assert_eq!(ok_of(&doc), 2, "{doc}");
    assert_eq!(doc["http"]["body_bytes"], 2 * (64 << 20), "{doc}");
    let rss = doc["generator"]["peak_rss_kib"].as_u64().unwrap_or(0);
    assert!(
        rss > 0 && rss < 100 << 10,
        "peak RSS {rss} KiB for 128 MiB received"
    );
    drop(server);
}

/// Bad input is one line and exit 2: a URL without TLS, a port nobody answers on over UDP,
/// a certificate nobody vouches for, a server that does not speak h3.
#[test]
fn bad_input_is_one_line() {
    let out = usage_error(&["run", "http://127.0.0.1:9/", "--http3", "-n", "1"], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("https://"));
    // A UDP port with nothing behind it: no answer at all.
    let quiet = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/", quiet.local_addr().unwrap());
    let started = Instant::now();
    let out = usage_error(&["run", &url, "--http3", "-n", "1", "--no-save"], LIMIT);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no QUIC answer") && text.contains("UDP"),
        "{text}"
    );
    assert!(started.elapsed() < Duration::from_secs(20), "{text}");
    let server = Server::start(&[]);
    let url = format!("{}/", server.url);
    let out = usage_error(&["run", &url, "--http3", "-n", "1", "--no-save"], LIMIT);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("--insecure") && text.contains("--cacert"),
        "{text}"
    );
    drop(server);
}

/// Caddy, a third-party HTTP/3 server: its access log holds one line per request wirebench
/// counted (plus those still in flight when the run ended).
#[test]
fn caddy_counts_what_wirebench_counted() {
    let dir = std::env::temp_dir().join(format!("wirebench-caddy-h3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_udp_tcp_port();
    let d = dir.display();
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl must be installed (.ci/run does it)");
    assert!(status.success());
    let caddyfile = format!(
        "{{\n\tadmin off\n\tauto_https off\n\tdefault_sni 127.0.0.1\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
         https://127.0.0.1:{port} {{\n\tbind 127.0.0.1\n\ttls {d}/cert.pem {d}/key.pem\n\tlog {{\n\t\toutput file {d}/access.log\n\t\tformat json\n\t}}\n\trespond \"hello\" 200\n}}\n"
    );
    std::fs::write(dir.join("Caddyfile"), caddyfile).unwrap();
    let mut caddy = Command::new("caddy")
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(dir.join("Caddyfile"))
        .env("HOME", &dir)
        .env("XDG_DATA_HOME", &dir)
        .env("XDG_CONFIG_HOME", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("caddy must be installed (apt-get install caddy; .ci/run does it)");
    let url = format!("https://127.0.0.1:{port}/");
    let cacert = dir.join("cert.pem").display().to_string();
    // Caddy is up once its TCP side takes a connection (the UDP side opens with it).
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(up.elapsed() < LIMIT, "caddy did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let doc = run_ok(&[
        &url,
        "--http3",
        "--cacert",
        &cacert,
        "-d",
        "1s",
        "-c",
        "2",
        "--pipeline",
        "4",
        "--no-save",
    ]);
    let got = ok_of(&doc);
    assert!(got > 50 && errors_of(&doc) == 0, "{doc}");
    // The log is written as requests end; give the last few a moment.
    std::thread::sleep(Duration::from_millis(500));
    let _ = caddy.kill();
    let _ = caddy.wait();
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap_or_default();
    let logged = log.lines().filter(|l| l.contains("\"HTTP/3")).count() as u64;
    assert!(
        (got..=got + 8).contains(&logged),
        "wirebench {got}, Caddy's log {logged}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A port free on 127.0.0.1 for TCP (Caddy listens on both).
fn free_udp_tcp_port() -> u16 {
    loop {
        let port = common::free_port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
