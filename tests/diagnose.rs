//! `wirebench diagnose` against servers built to show each finding, and against healthy ones
//! (wirebench's own server with its defaults, nginx, memcached) where it must raise none. Its
//! JSON is checked against schema/diagnosis.v1.json.

mod common;

use common::{free_port, listens, run_bounded, usage_error, ServerProcess};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// Runs `wirebench diagnose ARGS --json -q`, checks the document against the schema, and
/// returns it.
fn diagnose(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["diagnose"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-q"]);
    let (out, _) = run_bounded(&all, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{all:?}: no JSON ({e}): {text}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_valid(&doc);
    doc
}

fn assert_valid(doc: &serde_json::Value) {
    let path = format!("{}/schema/diagnosis.v1.json", env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}\n{doc:#}");
}

/// The finding with this id, if raised.
fn finding<'a>(doc: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
}

fn ids(doc: &serde_json::Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} ({})", f["id"], f["confidence"]))
        .collect()
}

/// No false alarm: nothing but (at most) low-confidence shape findings, which a contended
/// host earns any target.
fn assert_healthy(doc: &serde_json::Value) {
    for f in doc["findings"].as_array().unwrap() {
        assert!(
            f["confidence"] == "low"
                && !["nagle_delayed_ack", "socket_buffers", "port_exhaustion"]
                    .contains(&f["id"].as_str().unwrap()),
            "a healthy target got {:?}: {doc:#}",
            ids(doc)
        );
    }
}

fn p50(doc: &serde_json::Value) -> f64 {
    doc["baseline"]["p50_us"].as_f64().unwrap()
}

/// The DCMTK pattern: the server writes each reply in two pieces with Nagle on. Diagnose names
/// Nagle and delayed ACK, the server as the side holding the segment, and the server's
/// TCP_NODELAY as the fix; with it (the server's default) p50 falls from ~40 ms to < 1 ms and
/// the finding is gone.
#[test]
fn nagle_and_delayed_ack_are_named_on_the_server_and_its_nodelay_cures_them() {
    let bad = ServerProcess::start(&["--reply-writes", "2", "--no-nodelay", "-t", "1"]);
    let doc = diagnose(&[&bad.url, "-d", "2s"]);
    let f = finding(&doc, "nagle_delayed_ack").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(f["side"], "server", "{f:#}");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("TCP_NODELAY on the server"),
        "{f:#}"
    );
    assert!((35_000.0..100_000.0).contains(&p50(&doc)), "{doc:#}");
    let per = doc["evidence"]["delayed_acks_per_exchange"]
        .as_f64()
        .unwrap();
    assert!(per > 0.5, "DelayedACKs per exchange {per}: {doc:#}");
    // The variants: the client's TCP_NODELAY flipped and larger buffers, neither a cure.
    let flags: Vec<&str> = doc["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["flags"].as_str().unwrap())
        .collect();
    assert!(flags.contains(&"--no-nodelay"), "{flags:?}");
    assert!(flags.iter().any(|f| f.starts_with("--sndbuf")), "{flags:?}");

    // The fix: the same reply in two writes, with the server's TCP_NODELAY on.
    let fixed = ServerProcess::start(&["--reply-writes", "2", "-t", "1"]);
    let doc = diagnose(&[&fixed.url, "-d", "1s"]);
    assert!(p50(&doc) < 1_000.0, "{doc:#}");
    assert_healthy(&doc);
}

#[test]
fn the_default_server_is_healthy() {
    let srv = ServerProcess::start(&["-t", "1"]);
    let doc = diagnose(&[&srv.url, "-d", "2s"]);
    assert!(p50(&doc) < 1_000.0, "{doc:#}");
    assert!(doc["variants"].as_array().unwrap().is_empty(), "{doc:#}");
    assert_healthy(&doc);
}

/// One request in 100 takes 100 ms: the mean is far above p95 (the Flash study's pattern).
#[test]
fn a_rare_slow_request_is_named_as_the_tail() {
    let srv = ServerProcess::start(&["--delay", "100ms", "--delay-every", "100", "-t", "1"]);
    let doc = diagnose(&[&srv.url, "-d", "3s"]);
    let f = finding(&doc, "mean_above_p95").unwrap_or_else(|| panic!("{doc:#}"));
    assert!(f["evidence"][0].as_str().unwrap().contains("p95"), "{f:#}");
    assert!(finding(&doc, "nagle_delayed_ack").is_none(), "{doc:#}");
}

/// A server that holds every reply for 200 ms once a second: stalls recur in the series.
#[test]
fn recurring_stalls_are_named() {
    let srv = ServerProcess::start(&["--stall-every", "1s", "--stall-for", "200ms", "-t", "1"]);
    let doc = diagnose(&[&srv.url, "-d", "4s"]);
    assert!(
        finding(&doc, "periodic_stalls").is_some(),
        "{:?}: {doc:#}",
        ids(&doc)
    );
}

/// A sink with a 4 KiB receive buffer caps a bulk transfer; the client's buffers are swept
/// and none helps, so the server's buffer is named. The same sink auto-tuned is healthy.
#[test]
fn a_small_server_receive_buffer_is_named() {
    let small = ServerProcess::start(&["--mode", "sink", "--rcvbuf", "4k", "-t", "1"]);
    let doc = diagnose(&[&small.url, "--mode", "stream", "-d", "1s"]);
    let f = finding(&doc, "socket_buffers").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(f["side"], "server", "{f:#}");
    assert!(
        f["fix"]
            .as_str()
            .unwrap()
            .contains("SO_RCVBUF on the server"),
        "{f:#}"
    );
    assert!(f["evidence"][0].as_str().unwrap().contains("16k"), "{f:#}");
    assert_eq!(doc["variants"].as_array().unwrap().len(), 5, "{doc:#}");

    let auto = ServerProcess::start(&["--mode", "sink", "-t", "1"]);
    let doc = diagnose(&[&auto.url, "--mode", "stream", "-d", "1s"]);
    assert!(finding(&doc, "socket_buffers").is_none(), "{doc:#}");

    // The client's own 16 KiB send buffer on loopback (MTU 64 KiB) crawls: the knee is named.
    let doc = diagnose(&[&auto.url, "--mode", "stream", "--sndbuf", "16k", "-d", "1s"]);
    let f = finding(&doc, "socket_buffers").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(f["side"], "client", "{f:#}");
    assert!(f["evidence"][0].as_str().unwrap().contains("knee"), "{f:#}");
}

/// A UDP stream at 20 Gbit/s on one thread: the generator never waits, so it is the limit.
#[test]
fn a_saturated_generator_is_named() {
    let mut udp = common::serve_process("udp", &["--mode", "sink"]);
    let lines = common::stdout_lines(&mut udp);
    let addr = common::first_line_addr(&mut udp, &lines, "udp", Duration::from_secs(10));
    let url = format!("udp://{addr}");
    let doc = diagnose(&[
        &url,
        "--mode",
        "stream",
        "--bandwidth",
        "20Gbit",
        "-t",
        "1",
        "-d",
        "2s",
    ]);
    let _ = udp.kill();
    let _ = udp.wait();
    let f = finding(&doc, "generator_bound").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(f["side"], "client", "{f:#}");
    assert!(f["fix"].as_str().unwrap().contains("--threads"), "{f:#}");
}

#[test]
fn memcached_is_healthy() {
    let port = free_port();
    let mut mc = Command::new("memcached")
        .args([
            "-l",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "0",
            "-u",
            "root",
            "-t",
            "1",
        ])
        .spawn()
        .expect("memcached must be installed (apt-get install memcached; .ci/run does it)");
    assert!(listens(&mut mc, port), "memcached did not start");
    let url = format!("tcp://127.0.0.1:{port}");
    let doc = diagnose(&[
        &url,
        "--payload",
        "get k\\r\\n",
        "--until",
        "END\\r\\n",
        "-d",
        "2s",
    ]);
    let _ = mc.kill();
    let _ = mc.wait();
    assert!(
        doc["baseline"]["ops_per_s"].as_f64().unwrap() > 100.0,
        "{doc:#}"
    );
    assert_healthy(&doc);
}

/// nginx serving a small file over keep-alive HTTP/1.1.
#[test]
fn nginx_is_healthy() {
    let dir = std::env::temp_dir().join(format!("wb-diag-nginx-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("www")).unwrap();
    std::fs::write(dir.join("www/small.txt"), "hello\n").unwrap();
    let d = dir.display();
    let port = free_port();
    let conf = format!(
        "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
         events {{ worker_connections 64; }}
         http {{ access_log off; client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
           fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
           keepalive_requests 1000000;
           server {{ listen 127.0.0.1:{port}; root {d}/www; }} }}"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let mut ngx: Child = common::spawn_nginx(&dir);
    assert!(listens(&mut ngx, port), "nginx did not start on {port}");
    let doc = diagnose(&[&format!("http://127.0.0.1:{port}/small.txt"), "-d", "2s"]);
    // SAFETY: kill(2) on the PID of the nginx master this test started (SIGTERM stops its worker).
    unsafe { libc::kill(ngx.id() as i32, libc::SIGTERM) };
    let _ = ngx.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        doc["baseline"]["ops_per_s"].as_f64().unwrap() > 100.0,
        "{doc:#}"
    );
    assert_healthy(&doc);
}

/// Connection per request in a namespace with 10 ephemeral ports and no TIME_WAIT reuse.
#[test]
fn port_exhaustion_is_named_with_the_range() {
    let ns = format!("wb-diag-{}", std::process::id());
    let ip = |args: &[&str]| {
        Command::new("ip")
            .args(args)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    assert!(
        ip(&["netns", "add", &ns]),
        "this test needs root and iproute2"
    );
    let exec = |args: &[&str]| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &ns]).args(args);
        c
    };
    for args in [
        &["ip", "link", "set", "lo", "up"][..],
        &["sysctl", "-qw", "net.ipv4.ip_local_port_range=40000 40009"],
        &["sysctl", "-qw", "net.ipv4.tcp_tw_reuse=0"],
    ] {
        assert!(exec(args).status().unwrap().success(), "{args:?}");
    }
    let wirebench = |args: &[&str]| {
        let mut c = common::bin_via(&["ip", "netns", "exec", &ns]);
        c.args(args);
        c
    };
    let mut server = wirebench(&["serve", "tcp", "--listen", "127.0.0.1:7000", "-t", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = common::stdout_lines(&mut server);
    let _ = common::first_line_addr(&mut server, &lines, "tcp", Duration::from_secs(10));
    let out = wirebench(&[
        "diagnose",
        "tcp://127.0.0.1:7000",
        "--mode",
        "crr",
        "-d",
        "1s",
        "--json",
        "-q",
    ])
    .output()
    .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let _ = Command::new("ip").args(["netns", "del", &ns]).status();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_valid(&doc);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the baseline saw failures: {doc:#}"
    );
    let f = finding(&doc, "port_exhaustion").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(f["confidence"], "high", "{f:#}");
    let text = f["evidence"].to_string();
    assert!(text.contains("40000-40009: 10 ports"), "{text}");
    assert!(text.contains("EADDRNOTAVAIL"), "{text}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    let limit = Duration::from_secs(10);
    usage_error(
        &["diagnose", "tcp://127.0.0.1:9", "tcp://127.0.0.1:10"],
        limit,
    );
    usage_error(&["diagnose", "tcp://127.0.0.1:9", "-c", "1,2"], limit);
    usage_error(&["diagnose", "tcp://127.0.0.1:9", "--runs", "3"], limit);
    usage_error(&["diagnose", "nope://x"], limit);
    usage_error(&["diagnose"], limit);
}
