//! The README's "A quick tour", run as written: every command of its code block, with the
//! placeholders a reader fills in (PORT, the files, the third-party servers) pointed at servers
//! this test starts on 127.0.0.1, and durations shortened. So the tour cannot drift from the code:
//! a flag renamed, a syntax changed or a line that exits non-zero fails here.
//!
//! Servers: the reference servers (`wirebench serve ...`, each started from the binary),
//! memcached for the line on 11211, and nginx for the HTTP/2 lines (h2c on 8080, h2 over TLS on
//! 8443 with a fresh self-signed certificate as `ca.pem`). Redis is not installed: its PING line
//! (reply up to `\r\n`) goes to the reference TCP server framed by `--delimiter '\r\n'`, which
//! echoes `PING\r\n`, a reply that ends at the same delimiter.

mod common;

use common::{bin, first_line_addr, free_port, listens, run_bounded, stdout_lines};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);
/// Every `-d` of the tour becomes this; ramps and stages are fitted into it.
const SHORT: &str = "500ms";

/// The commands of the tour's code block, each split into words as a shell would (quotes
/// removed, `#` comments dropped).
fn tour() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## A quick tour")
        .nth(1)
        .expect("README has a section '## A quick tour'");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("the tour has a ```sh code block");
    block.lines().map(words).filter(|w| !w.is_empty()).collect()
}

/// Splits a line into words the way sh does for the quoting the README uses: '...' and "..."
/// group, an unquoted `#` at a word's start begins a comment.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => out.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unbalanced quote in: {line}");
    out.extend(word);
    out
}

/// A child process stopped by its PID when dropped: SIGTERM (so an nginx master stops its
/// worker), then SIGKILL if it lingers.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the PID of a child this test started and has not reaped.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.0.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The servers and files the tour's commands are pointed at.
struct Fixtures {
    dir: PathBuf,
    /// Reference servers by role: "tcp echo", "tcp sink", ..., with their URLs.
    urls: Vec<(&'static str, String)>,
    procs: Vec<Proc>,
}

impl Fixtures {
    fn start() -> Fixtures {
        let dir = std::env::temp_dir().join(format!("wb-tour-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("files")).unwrap();
        std::fs::write(dir.join("files/index.html"), "<p>hello</p>\n").unwrap();
        std::fs::write(dir.join("files/big.iso"), vec![7u8; 4 << 20]).unwrap();
        std::fs::write(dir.join("requests.txt"), "GET /bytes/100\n/index.html\n").unwrap();
        std::fs::write(dir.join("query.bin"), dns_query()).unwrap();
        let mut fx = Fixtures {
            dir,
            urls: Vec::new(),
            procs: Vec::new(),
        };
        let files = fx.path("files");
        for (role, kind, args) in [
            ("tcp echo", "tcp", vec![]),
            ("tcp sink", "tcp", vec!["--mode", "sink"]),
            ("tcp source", "tcp", vec!["--mode", "source"]),
            ("tcp crlf", "tcp", vec!["--delimiter", "\\r\\n"]),
            ("udp echo", "udp", vec![]),
            ("udp sink", "udp", vec!["--mode", "sink"]),
            ("http", "http", vec!["--dir", files.as_str()]),
        ] {
            let (child, url) = serve(kind, &args);
            fx.procs.push(child);
            fx.urls.push((role, url));
        }
        let port = memcached(&mut fx.procs);
        fx.urls
            .push(("memcached", format!("tcp://127.0.0.1:{port}")));
        let (h2c, h2tls) = nginx(&fx.dir, &mut fx.procs);
        fx.urls.push(("h2c", format!("http://127.0.0.1:{h2c}")));
        fx.urls
            .push(("h2 tls", format!("https://localhost:{h2tls}")));
        fx
    }

    fn url(&self, role: &str) -> &str {
        &self.urls.iter().find(|(r, _)| *r == role).unwrap().1
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        self.procs.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A DNS query for example.com, type A (RFC 1035 §4.1), as `--payload @query.bin` would send.
fn dns_query() -> Vec<u8> {
    let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in ["example", "com"] {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

/// Starts `wirebench serve KIND ARGS` and returns it with the URL of its first line.
fn serve(kind: &str, args: &[&str]) -> (Proc, String) {
    let mut child = common::serve_process(kind, args);
    let lines = stdout_lines(&mut child);
    let addr = first_line_addr(&mut child, &lines, kind, Duration::from_secs(10));
    (Proc(child), format!("{kind}://{addr}"))
}

/// A memcached of this test's own on a free port.
fn memcached(procs: &mut Vec<Proc>) -> u16 {
    let port = free_port();
    let mut child = Command::new("memcached")
        .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
        .args(["-u", "root", "-t", "1"])
        .stdin(Stdio::null())
        .spawn()
        .expect("memcached must be installed (apt-get install memcached; .ci/run does it)");
    let up = listens(&mut child, port);
    procs.push(Proc(child));
    assert!(up, "memcached did not start on port {port}");
    port
}

/// An nginx of this test's own serving `dir/files` over h2c and h2 over TLS, with a fresh
/// self-signed certificate for localhost in `dir/ca.pem`. Returns the two ports.
fn nginx(dir: &Path, procs: &mut Vec<Proc>) -> (u16, u16) {
    let d = dir.display();
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost", "-keyout", &format!("{d}/key.pem")])
        .args(["-out", &format!("{d}/ca.pem")])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl makes the test certificate");
    assert!(made.success(), "openssl failed");
    for _ in 0..5 {
        let (plain, tls) = (free_port(), free_port());
        // sendfile off: a cleartext h2 connection keeps Nagle on, and sendfile would hold each
        // small body for the client's delayed ACK (see tests/run_http.rs). keepalive_requests:
        // nginx's 1000 would end connections with GOAWAY mid-run, refusing the streams after.
        let conf = format!(
            "worker_processes 1; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
             events {{ worker_connections 1024; }}
             http {{ access_log off; sendfile off; keepalive_requests 1000000; client_body_temp_path {d}/body;
               proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
               uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
               server {{ listen 127.0.0.1:{plain} http2; listen 127.0.0.1:{tls} ssl http2;
                 ssl_certificate {d}/ca.pem; ssl_certificate_key {d}/key.pem;
                 root {d}/files; }} }}"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let mut child = Command::new("nginx")
            .args(["-c", &format!("{d}/nginx.conf"), "-p", &format!("{d}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx must be installed (apt-get install nginx-light; .ci/run does it)");
        let up = listens(&mut child, plain) && listens(&mut child, tls);
        procs.push(Proc(child));
        if up {
            return (plain, tls);
        }
        // Another test's server took a port first: this nginx goes, with a new pair of ports.
        procs.pop();
    }
    panic!("nginx did not start on any of 5 pairs of free ports");
}

/// A tour command's arguments (after `wirebench`) pointed at the fixtures, durations shortened.
fn adapt(cmd: &[String], fx: &Fixtures) -> Vec<String> {
    let mode = cmd
        .windows(2)
        .find(|w| w[0] == "--mode")
        .map(|w| w[1].as_str());
    let mut out: Vec<String> = Vec::new();
    let mut prev = "";
    for arg in cmd {
        let new = match (prev, arg.as_str()) {
            ("-d", _) => SHORT.to_string(),
            ("--rate", r) if r.contains('/') => format!("{}/{SHORT}", r.split('/').next().unwrap()),
            ("--stages", s) => stages(s),
            ("--dir", "./files") => fx.path("files"),
            ("--targets" | "--cacert", f) => fx.path(f),
            (_, a) if a.starts_with('@') => format!("@{}", fx.path(&a[1..])),
            (_, a) if a.contains("://") => target(a, mode, fx),
            (_, a) => a.to_string(),
        };
        out.push(new);
        prev = arg;
    }
    let bounded = ["-d", "-n", "--stages"]
        .iter()
        .any(|f| cmd.iter().any(|a| a == f));
    if cmd[0] == "run" && !bounded {
        out.extend(["-d".to_string(), SHORT.to_string()]);
    }
    out
}

/// `--stages 'D@r,D@r'` with the stages sharing [`SHORT`] evenly.
fn stages(s: &str) -> String {
    let parts: Vec<&str> = s.split(',').collect();
    let each = 500 / parts.len();
    parts
        .iter()
        .map(|p| format!("{each}ms@{}", p.split_once('@').expect("D@RATE").1))
        .collect::<Vec<_>>()
        .join(",")
}

/// The fixture a tour URL stands for, with its path kept.
fn target(url: &str, mode: Option<&str>, fx: &Fixtures) -> String {
    let (base, path) = match url
        .find("://")
        .and_then(|i| url[i + 3..].find('/').map(|j| i + 3 + j))
    {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let role = match (base, mode) {
        ("tcp://127.0.0.1:PORT", Some("stream")) => "tcp sink",
        ("tcp://127.0.0.1:PORT", Some("source")) => "tcp source",
        ("tcp://127.0.0.1:PORT", _) => "tcp echo",
        ("tcp://127.0.0.1:11211", _) => "memcached",
        ("tcp://127.0.0.1:6379", _) => "tcp crlf",
        ("udp://127.0.0.1:PORT", Some("stream")) => "udp sink",
        ("udp://127.0.0.1:PORT" | "udp://127.0.0.1:53", _) => "udp echo",
        ("http://127.0.0.1:PORT", _) => "http",
        ("http://127.0.0.1:8080", _) => "h2c",
        ("https://localhost:8443", _) => "h2 tls",
        _ => panic!("the tour names {base}, a server this test does not start: add it here"),
    };
    format!("{}{path}", fx.url(role))
}

/// Runs `wirebench run ...`: it must exit 0 and report operations (or messages) done.
fn check_run(line: &str, args: &[String]) {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, took) = run_bounded(&argv, LIMIT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!("tour line `{line}`, run as {argv:?} ({took:?}):\n{stdout}\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "{said}");
    if argv.contains(&"--json") {
        let json: serde_json::Value = serde_json::from_str(&stdout).expect(&said);
        assert!(json["ok"].as_u64() > Some(0), "{said}");
        assert_eq!(json["errors"]["total"].as_u64(), Some(0), "{said}");
        return;
    }
    assert!(stdout.starts_with("wirebench "), "{said}");
    // Request/response modes count replies as ok; stream and source count messages.
    let done = ["ok ", "messages/s "].iter().any(|label| {
        stdout.split(label).skip(1).any(|rest| {
            let n: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .collect();
            n.chars().any(|c| matches!(c, '1'..='9'))
        })
    });
    assert!(done, "no operation counted: {said}");
}

/// Starts `wirebench serve KIND ...` as the tour does, reads the URL of its first line, sends it
/// a few requests, and stops it by its PID.
fn check_serve(line: &str, args: &[String]) {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stdout_lines(&mut child);
    let kind = args[1].as_str();
    let addr = first_line_addr(&mut child, &lines, kind, Duration::from_secs(10));
    let server = Proc(child);
    let url = match kind {
        "http" => format!("http://{addr}/bytes/10"),
        _ => format!("{kind}://{addr}"),
    };
    check_run(line, &["run".into(), url, "-n".into(), "20".into()]);
    drop(server);
}

#[test]
fn every_tour_command_runs_as_written() {
    let started = Instant::now();
    let cmds = tour();
    assert!(
        cmds.len() >= 25,
        "the tour parsed into {} commands only: {cmds:?}",
        cmds.len()
    );
    let fx = Fixtures::start();
    for cmd in &cmds {
        let line = cmd.join(" ");
        assert_eq!(
            cmd[0], "wirebench",
            "a tour line that is not a wirebench command: {line}"
        );
        let args = adapt(&cmd[1..], &fx);
        match args[0].as_str() {
            "serve" => check_serve(&line, &args),
            "run" => check_run(&line, &args),
            _ => panic!("a tour command this test cannot run: {line}"),
        }
    }
    eprintln!("{} tour commands in {:?}", cmds.len(), started.elapsed());
}

#[test]
fn tour_lines_split_as_a_shell_does() {
    let w = words(r#"wirebench run 'http://h/{seq}' -H 'X-W: {worker}' --body '{"v": 1}'  # note"#);
    assert_eq!(
        w,
        [
            "wirebench",
            "run",
            "http://h/{seq}",
            "-H",
            "X-W: {worker}",
            "--body",
            r#"{"v": 1}"#
        ]
    );
    assert!(words("# a comment").is_empty());
    assert_eq!(words("a '' b"), ["a", "", "b"]);
    assert_eq!(stages("10s@1000,10s@5000"), "250ms@1000,250ms@5000");
}
