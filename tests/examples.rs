//! The plan files of examples/: each passes `--dry-run`, and each runs, shortened (a copy with
//! short durations, few runs and the ports of servers this test started: `wirebench serve`, and
//! nginx serving small files from a temporary directory), and its report.md has the tables the
//! study is about.

mod common;

use common::{free_port, listens, run_bounded, ServerProcess};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// One example runs at a time: they share 2 CPUs, and the peak search needs a quiet machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A fresh directory under the system's temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wb-examples-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// examples/NAME.toml's text.
fn example(name: &str) -> String {
    let path = format!("{}/examples/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// `text` with each `key = …` line replaced by `key = value`, and each address replaced.
fn shorten(text: &str, keys: &[(&str, &str)], addrs: &[(&str, &str)]) -> String {
    let mut out: String = text
        .lines()
        .map(
            |l| match keys.iter().find(|(k, _)| l.starts_with(&format!("{k} ="))) {
                Some((k, v)) => format!("{k} = {v}"),
                None => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n");
    for (k, _) in keys {
        assert!(out.contains(&format!("\n{k} = ")), "no {k} in the example");
    }
    for (from, to) in addrs {
        assert!(out.contains(from), "no {from} in the example");
        out = out.replace(from, to);
    }
    out + "\n"
}

/// Runs `wirebench study` on `text` with --out; returns report.md (and checks study.json).
fn run_study(dir: &Path, text: &str, codes: &[i32]) -> String {
    let file = dir.join("plan.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let (o, _) = run_bounded(
        &[
            "study",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        LIMIT,
    );
    let code = o.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "exit {code}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    common::study::valid_study(&out);
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

/// An nginx of this test's own serving `root` on a free port (its address), stopped by its
/// PID with SIGTERM when dropped.
struct Nginx(Child, String);

impl Nginx {
    fn start(dir: &Path, root: &Path) -> Nginx {
        let d = dir.display();
        for _ in 0..5 {
            let port = free_port();
            let conf = format!(
                "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
                 events {{ worker_connections 1024; }}
                 http {{ access_log off; sendfile on; keepalive_requests 1000000;
                   client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
                   fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
                   server {{ listen 127.0.0.1:{port}; root {}; }} }}",
                root.display()
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let mut child = common::spawn_nginx(dir);
            if listens(&mut child, port) {
                return Nginx(child, format!("127.0.0.1:{port}"));
            }
            common::sigterm(&child);
            let _ = child.wait();
        }
        panic!("nginx did not start on any of 5 free ports");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM to the master is nginx's fast shutdown: its worker stops with it.
        common::sigterm(&self.0);
        let _ = self.0.wait();
    }
}

/// `wirebench serve http --dir ROOT` on a free port: the child and its address.
fn serve_http(root: &Path) -> (Child, String) {
    let mut child = common::serve_process("http", &["--dir", root.to_str().unwrap()]);
    let lines = common::stdout_lines(&mut child);
    let addr = common::first_line_addr(&mut child, &lines, "http", Duration::from_secs(10));
    (child, addr.to_string())
}

/// Stops a `wirebench serve` child by its PID.
fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The host:port of a `wirebench serve tcp` URL.
fn addr(server: &ServerProcess) -> String {
    server.url.trim_start_matches("tcp://").to_string()
}

/// A small file set in `dir` (the Flash example's is 256 MiB, made by bench/flash.sh).
fn small_set(dir: &Path) -> PathBuf {
    let set = dir.join("set");
    let made = common::bin()
        .args([
            "files",
            "make",
            set.to_str().unwrap(),
            "--total",
            "2M",
            "--seed",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    set
}

#[test]
fn every_example_passes_dry_run() {
    let dir = scratch("dry");
    for name in ["dim", "mint", "handle", "flash"] {
        let mut path = format!("{}/examples/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        if name == "flash" {
            // Its plans read the manifest: a small set of this test's own, its data sets within.
            let set = small_set(&dir);
            let keys = [
                ("manifest", format!("{:?}", set.to_str().unwrap())),
                ("dataset", "\"256k,512k,1M,2M\"".to_string()),
            ];
            let keys: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let file = dir.join("flash.toml");
            std::fs::write(&file, shorten(&example(name), &keys, &[])).unwrap();
            path = file.to_str().unwrap().to_string();
        }
        let (o, _) = run_bounded(&["study", &path, "--dry-run"], LIMIT);
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(text.contains("estimated time:"), "{name}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dim_runs_rr_and_server_push_by_size() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let echo = ServerProcess::start(&[]);
    let source = ServerProcess::start(&["--mode", "source"]);
    let dir = scratch("dim");
    let text = shorten(
        &example("dim"),
        &[
            ("size", "\"4,1k,64k\""),
            ("duration", "\"300ms\""),
            ("warmup", "\"100ms\""),
            ("runs", "2"),
        ],
        &[
            ("127.0.0.1:7000", &addr(&echo)),
            ("127.0.0.1:7001", &addr(&source)),
        ],
    );
    let report = run_study(&dir, &text, &[0]);
    for table in [
        "Operations per second by --size",
        // One direction for both rows, as the DIM table is: request/response's requests
        // beside the pushed messages (issue 40: rr added both directions, push one).
        "Payload throughput, one direction (request/response: its requests)",
        "| rr   |",
        "| push |",
        "| 4 ",
        "| 1k ",
        // Its title promises kB/s and `units = "kB"` keeps them at 64 KiB too (item 9).
        "in kB/s (1 kB = 1000 B)",
    ] {
        assert!(report.contains(table), "no {table:?} in:\n{report}");
    }
    assert!(!report.contains("MB/s"), "a DIM table in MB/s:\n{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mint_compares_a_download_from_nginx_and_serve_http() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("mint");
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("binaryitems"), vec![7u8; 4 << 20]).unwrap();
    let nginx = Nginx::start(&dir, &root);
    let (serve, serve_addr) = serve_http(&root);
    let text = shorten(
        &example("mint"),
        &[("runs", "3")],
        &[
            ("127.0.0.1:8080", &nginx.1),
            ("127.0.0.1:8081", &serve_addr),
        ],
    );
    let report = run_study(&dir, &text, &[0]);
    stop(serve);
    for table in [
        "Payload throughput, received, in MB/s",
        "per run:",
        "Against the baseline 'nginx'",
        "the mean latency",
    ] {
        assert!(report.contains(table), "no {table:?} in:\n{report}");
    }
    assert!(
        common::has_row(&report, &["", "Run 1", "Run 2", "Run 3"]),
        "no header row with three runs in:\n{report}"
    );
    // A verdict on serve, whichever way it goes here ("serve adds 4.1% (95% CI …); significant" or
    // "serve: no significant difference …"): the machine decides, not the test.
    assert!(
        report
            .lines()
            .any(|l| l.trim_start().starts_with("serve ") || l.trim_start().starts_with("serve:")),
        "no verdict on serve in:\n{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn handle_finds_the_peak_of_a_capped_server() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut server = common::serve_process("http", &["--max-rate", "2000"]);
    let lines = common::stdout_lines(&mut server);
    let server_addr = common::first_line_addr(&mut server, &lines, "http", Duration::from_secs(10));
    let dir = scratch("handle");
    let text = shorten(
        &example("handle"),
        &[
            ("step", "\"250ms\""),
            ("rest", "\"50ms\""),
            ("start_rate", "500"),
            ("warmup", "\"100\""),
        ],
        &[("127.0.0.1:7102", &server_addr.to_string())],
    );
    // 1 when the confirmation run misses on a loaded machine: the report is written still.
    let report = run_study(&dir, &text, &[0, 1]);
    stop(server);
    for table in [
        "peak ops/s",
        "mean latency",
        "curve:",
        "offered/s",
        "p99<=50ms, errors<=0.1%",
    ] {
        assert!(report.contains(table), "no {table:?} in:\n{report}");
    }
    // The kinds' rates and latencies at the peak are in the report, not only in the JSON
    // (issue 40), when a confirmation passed.
    if report.contains("yes (") {
        for kind in ["at the peak, by kind", "resolve", "create"] {
            assert!(report.contains(kind), "no {kind:?} in:\n{report}");
        }
    }
    // Both kinds of the mix ran, each reported apart.
    let study = std::fs::read_to_string(dir.join("out/study.json")).unwrap();
    for kind in ["\"resolve\"", "\"create\""] {
        assert!(study.contains(kind), "no {kind} kind in study.json");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// lighttpd (Debian's) serving `root` on a free port: the child and its address.
fn lighttpd(dir: &Path, root: &Path) -> (Child, String) {
    let port = free_port();
    let conf = format!(
        "server.document-root = \"{}\"\nserver.bind = \"127.0.0.1\"\nserver.port = {port}\nserver.errorlog = \"{}/lighttpd.err\"\n",
        root.display(),
        dir.display()
    );
    std::fs::write(dir.join("lighttpd.conf"), conf).unwrap();
    let mut child = Command::new("lighttpd")
        .args(["-D", "-f", dir.join("lighttpd.conf").to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lighttpd must be installed (apt-get install lighttpd; .ci/run does it)");
    assert!(
        listens(&mut child, port),
        "lighttpd did not start on {port}"
    );
    (child, format!("127.0.0.1:{port}"))
}

#[test]
fn flash_shows_throughput_and_latency_shape_per_server_and_data_set() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("flash");
    // A small set (the example's is 256 MiB): two data sets of its most popular files.
    let set = small_set(&dir);
    let nginx = Nginx::start(&dir, &set);
    let (serve, serve_addr) = serve_http(&set);
    let (light, light_addr) = lighttpd(&dir, &set);
    let text = shorten(
        &example("flash"),
        &[
            ("manifest", &format!("{:?}", set.to_str().unwrap())),
            ("dataset", "\"256k,2M\""),
            // Dropping the page cache (root) would slow every other test on the machine.
            ("cache", "\"warm\""),
            ("connections", "4"),
            ("duration", "\"300ms\""),
            ("runs", "2"),
        ],
        &[
            ("127.0.0.1:8090", &nginx.1),
            ("127.0.0.1:8091", &serve_addr),
            ("127.0.0.1:8092", &light_addr),
        ],
    );
    let report = run_study(&dir, &text, &[0]);
    stop(serve);
    common::sigterm(&light);
    stop(light);
    for table in [
        "| target ",
        "ops/s",
        "median",
        "| mean ",
        "| p95",
        "| nginx ",
        "| serve ",
        "| lighttpd ",
        "256k",
        "2M",
        "Against the baseline 'nginx'",
    ] {
        assert!(report.contains(table), "no {table:?} in:\n{report}");
    }
    // The study reads back as wirebench wrote it (the --dataset axis included), and its page
    // draws the study's view by data-set size: p95, and the mean above the median.
    let json = dir.join("out/study.json");
    let page = dir.join("page.html");
    let (o, _) = run_bounded(
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        LIMIT,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    for caption in [
        "<figcaption>p95 latency</figcaption>",
        "mean above the median",
    ] {
        assert!(html.contains(caption), "no {caption:?} in the page");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
