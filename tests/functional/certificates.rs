//! Certificates as users make them. The README's one openssl line makes a self-signed
//! certificate that says CA:TRUE (OpenSSL's default for `req -x509`); given with `--cacert`,
//! it is trusted as the server's own certificate, as curl trusts it, by either of the names it
//! carries. Every refusal (no `--cacert`, another certificate, another name, a file that is no
//! certificate, a server that speaks no TLS) is one line in words, exit 2: never a library's
//! debug value (`Other(OtherError(CaUsedAsEndEntity))`). Against nginx over TLS.

use super::common;

use common::{execute_json, no_debug_value, run_bounded, usage_error};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// The README's line, with the file names it uses.
const README_LINE: &str = "openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout key.pem -out ca.pem";

/// An nginx serving https on a free port of 127.0.0.1 with `cert`/`key`, killed (by its PID)
/// when dropped.
struct Nginx {
    child: Child,
    port: u16,
}

impl Nginx {
    fn start(dir: &Path, cert: &str, key: &str) -> Nginx {
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("www/index.html"), "hello\n").unwrap();
        let d = dir.display();
        for _ in 0..5 {
            let port = common::free_port();
            let conf = format!(
                // One process (no master): killed by its PID, nothing of it stays behind.
                "master_process off; daemon off; pid {d}/nginx.pid; error_log {d}/error.log;
                 events {{ worker_connections 64; }}
                 http {{ access_log off; client_body_temp_path {d}/body;
                   proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
                   uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
                   server {{ listen 127.0.0.1:{port} ssl; root {d}/www;
                     ssl_certificate {d}/{cert}; ssl_certificate_key {d}/{key}; }} }}"
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let mut child = Command::new("nginx")
                .args(["-c", &format!("{d}/nginx.conf"), "-p", &format!("{d}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("nginx must be installed (apt-get install nginx-light; .ci/run does it)");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Nginx { child, port };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("nginx did not start: {}", read(&dir.join("error.log")));
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// A fresh directory of this test's own.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wb-certs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs a shell line (openssl) in `dir`; it must succeed.
fn sh(dir: &Path, line: &str) {
    let out = Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README's certificate, made by its line as printed there.
fn readme_certificate(dir: &Path) {
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    assert!(
        readme.contains(README_LINE),
        "the README shows: {README_LINE}"
    );
    sh(dir, &format!("{README_LINE} 2>/dev/null"));
    let text = Command::new("openssl")
        .args(["x509", "-in", "ca.pem", "-noout", "-text"])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("CA:TRUE"),
        "the ordinary self-signed certificate: {text}"
    );
}

/// Exit 2 and one line in words, naming `want`.
fn refused(args: &[&str], want: &[&str]) {
    let out = usage_error(args, LIMIT);
    let err = String::from_utf8_lossy(&out.stderr);
    for w in want {
        assert!(err.contains(w), "{args:?}: want {w:?} in {err}");
    }
    no_debug_value(&format!("{args:?}"), &err);
    no_debug_value(&format!("{args:?}"), &String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_self_signed_ca_true_certificate_is_trusted_as_the_servers_own() {
    let d = dir("own");
    readme_certificate(&d);
    let ngx = Nginx::start(&d, "ca.pem", "key.pem");
    let ca = d.join("ca.pem").display().to_string();
    for host in ["localhost", "127.0.0.1"] {
        let url = format!("https://{host}:{}/index.html", ngx.port);
        let (json, code) = execute_json(&[&url, "-n", "20", "--cacert", &ca], LIMIT);
        assert_eq!(code, 0, "{host}: {json}");
        assert_eq!(json["ok"].as_u64(), Some(20), "{json}");
        // A full handshake on each connection checks it each time, not only the first.
        let args = [
            &url,
            "-n",
            "5",
            "--cacert",
            &ca,
            "--no-keepalive",
            "--no-tls-resume",
        ];
        let (json, code) = execute_json(&args, LIMIT);
        assert_eq!((code, json["ok"].as_u64()), (0, Some(5)), "{json}");
    }
    // Without it, the same certificate is refused: in words, with the fix.
    let url = format!("https://localhost:{}/", ngx.port);
    refused(
        &["run", &url, "-n", "5"],
        &["TLS handshake failed", "CA", "--cacert"],
    );
}

#[test]
fn a_trusted_certificate_still_names_its_hosts_and_others_are_refused() {
    let d = dir("refused");
    readme_certificate(&d);
    // A certificate for another host, and another self-signed one of the same name.
    sh(
        &d,
        "openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=elsewhere \
         -addext subjectAltName=DNS:elsewhere.example -keyout far.key -out far.pem 2>/dev/null",
    );
    sh(
        &d,
        "openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \
         -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout twin.key -out twin.pem 2>/dev/null",
    );
    std::fs::write(d.join("broken.pem"), "-----BEGIN CERTIFICATE-----\n@@@\n").unwrap();
    std::fs::write(d.join("none.pem"), "no certificate here\n").unwrap();
    let path = |f: &str| d.join(f).display().to_string();

    let far = Nginx::start(&d.join("far"), "../far.pem", "../far.key");
    let url = format!("https://127.0.0.1:{}/", far.port);
    refused(
        &["run", &url, "-n", "3", "--cacert", &path("far.pem")],
        &["not valid for 127.0.0.1", "elsewhere.example"],
    );
    drop(far);

    let ngx = Nginx::start(&d, "ca.pem", "key.pem");
    let url = format!("https://localhost:{}/", ngx.port);
    refused(
        &["run", &url, "-n", "3", "--cacert", &path("twin.pem")],
        &["TLS handshake failed", "--cacert"],
    );
    refused(
        &["run", &url, "-n", "3", "--cacert", &path("broken.pem")],
        &["--cacert", "not a PEM file"],
    );
    refused(
        &["run", &url, "-n", "3", "--cacert", &path("none.pem")],
        &["holds no certificate"],
    );
    refused(
        &["run", &url, "-n", "3", "--cacert", &path("key.pem")],
        &["holds no certificate"],
    );
}

/// A server that speaks no TLS where https:// was asked: the failure is in words too, whatever
/// ends the handshake (a reply in plain HTTP, or a closed connection).
#[test]
fn a_server_without_tls_is_told_in_words() {
    let mut server = common::serve_process("http", &["--listen", "127.0.0.1:0"]);
    let lines = common::stdout_lines(&mut server);
    let addr = common::first_line_addr(&mut server, &lines, "http", LIMIT);
    let url = format!("https://{addr}/bytes/10");
    let (out, _) = run_bounded(&["run", &url, "-n", "3", "--insecure"], LIMIT);
    let _ = server.kill();
    let _ = server.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("TLS"), "{err}");
    no_debug_value("https to plain http", &err);
    no_debug_value("https to plain http", &String::from_utf8_lossy(&out.stdout));
}
