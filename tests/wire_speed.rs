//! `--link`: the payload and wire rates against a link's nominal rate. The ground truth is a
//! link this test makes: two network namespaces joined by a veth pair shaped by
//! `tc qdisc … tbf rate 100mbit` (as tests/common/netns_link.sh), where iperf3 gets about
//! 95.5 Mbit/s of TCP payload. Needs root and `ip`/`tc`; skips with a reason otherwise.

mod common;

use common::{run_bounded, run_json, usage_error, ServerProcess};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// The floor, Mbit/s, of a TCP stream's payload over the 100 Mbit link: generous for a shared
/// 2-CPU host (on 2026-11-24 it gave 84.7–94.3; ~95.5 is what the link carries). Checked on the
/// run [`run_in_above`] keeps, and used by it to decide whether to run again.
const TCP_FLOOR_MBIT: f64 = 80.0;

/// The floor, Mbit/s, of a UDP stream's and an HTTP download's headline over the link.
const HEADLINE_FLOOR_MBIT: f64 = 70.0;

/// One test at a time: the loopback streams here take both CPUs of a small machine, which
/// would starve the sender on the shaped link and make it miss the link's rate.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Panics unless `doc` validates against `schema/result.v1.json`.
fn assert_valid(doc: &serde_json::Value) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.v1.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs `ip ARGS`, failing the test if it fails.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why the namespaced tests cannot run here, if they cannot.
fn cannot_make_namespaces() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: network namespaces need CAP_NET_ADMIN".into());
    }
    for tool in ["ip", "tc"] {
        let found = Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !found {
            return Some(format!("`{tool}` is not installed"));
        }
    }
    None
}

/// Two namespaces, `a` (198.18.7.1) and `b` (198.18.7.2), over a veth pair shaped to `rate`
/// each way; removed (with their veth) when dropped, whatever the test did.
struct Link {
    a: String,
    b: String,
    veth_a: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Link {
    fn up(rate: &str) -> Link {
        let id = format!(
            "{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let link = Link {
            a: format!("wbwa{id}"),
            b: format!("wbwb{id}"),
            veth_a: format!("wwa{id}"),
        };
        let veth_b = format!("wwb{id}");
        ip(&["netns", "add", &link.a]);
        ip(&["netns", "add", &link.b]);
        ip(&[
            "link",
            "add",
            &link.veth_a,
            "type",
            "veth",
            "peer",
            "name",
            &veth_b,
        ]);
        ip(&["link", "set", &link.veth_a, "netns", &link.a]);
        ip(&["link", "set", &veth_b, "netns", &link.b]);
        for (ns, dev, addr) in [
            (&link.a, &link.veth_a, "198.18.7.1/24"),
            (&link.b, &veth_b, "198.18.7.2/24"),
        ] {
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            let tc = Command::new("ip")
                .args([
                    "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root",
                ])
                .args(["tbf", "rate", rate, "burst", "32kbit", "latency", "50ms"])
                .output()
                .expect("run tc");
            assert!(
                tc.status.success(),
                "tc: {}",
                String::from_utf8_lossy(&tc.stderr)
            );
        }
        link
    }

    /// `CMD ARGS` inside namespace `ns`.
    fn exec(ns: &str, args: &[&str]) -> Command {
        let mut c = common::bin_via(&["ip", "netns", "exec", ns]);
        c.args(args);
        c
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end in it, and with it its peer.
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// A process killed (by its PID) when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `wirebench ARGS` in `ns` within `LIMIT`; returns its stdout and exit code.
fn run_in(ns: &str, args: &[&str]) -> (String, i32) {
    let mut child = Killed(
        Link::exec(ns, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start wirebench in the namespace"),
    );
    let started = std::time::Instant::now();
    while child.0.try_wait().expect("wait").is_none() {
        assert!(
            started.elapsed() < LIMIT,
            "wirebench {args:?} ran past {LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    let code = child.0.wait().unwrap().code().unwrap_or(-1);
    (out, code)
}

#[test]
fn stream_over_a_100_mbit_link_fills_it() {
    let _serial = serial();
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("skipped: {why}");
        return;
    }
    let link = Link::up("100mbit");
    let mut server = Killed(
        Link::exec(
            &link.b,
            &["serve", "tcp", "--mode", "sink", "-l", "198.18.7.2:7000"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the sink"),
    );
    let mut first = String::new();
    BufReader::new(server.0.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("tcp://198.18.7.2:7000"), "{first}");
    let url = "tcp://198.18.7.2:7000";
    let (out, code) = run_in_above(
        &link.a,
        &[
            "run", url, "--mode", "stream", "--link", "100Mbit", "-d", "3s", "--json", "-q",
        ],
        TCP_FLOOR_MBIT,
        |j| {
            let bits = j["throughput"]["link"]["payload_bits_per_s"].as_f64();
            bits.map(|b| b / 1e6)
        },
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid(&json);
    let l = &json["throughput"]["link"];
    let payload = f(&l["payload_bits_per_s"]) / 1e6;
    let frames = f(&l["frames"]["percent"]);
    let line = f(&l["line"]["percent"]);
    eprintln!(
        "payload {payload:.2} Mbit/s, frames {frames:.2}%, line {line:.2}% of 100 Mbit/s; {l}"
    );
    // Never above what the link can carry (95.5 Mbit/s of payload on a 100 Mbit tbf link);
    // below it by whatever the shared 2-CPU host takes: on 2026-11-24 this host gave 84.7–94.3
    // Mbit/s with this build and the one before it alike, so the floor is a generous one.
    assert!(
        (TCP_FLOOR_MBIT..=96.5).contains(&payload),
        "payload {payload} Mbit/s"
    );
    assert!(frames >= 85.0, "wire rate {frames}% of the link");
    assert!(line > frames);
    assert_eq!(f(&l["bits_per_s"]), 100e6);
    assert_eq!(f(&l["packet"]["ip_header_bytes"]), 20.0);
    let mss = f(&l["packet"]["payload_bytes"]);
    assert!(mss == 1448.0 || mss == 1460.0, "MSS {mss}");

    // auto: the veth reports 10000 Mbit/s in sysfs, so the figures are against 10 Gbit/s.
    let (out, code) = run_in(
        &link.a,
        &[
            "run", url, "--mode", "stream", "--link", "auto", "-d", "1s", "--json", "-q",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid(&json);
    let l = &json["throughput"]["link"];
    assert!(l["source"].as_str().unwrap().contains(&link.veth_a), "{l}");
    assert!(f(&l["bits_per_s"]) > 0.0, "{l}");
    assert!(f(&l["payload_percent"]) > 0.0, "{l}");
}

/// [`run_in`], and once more if the run's `rate` (Mbit/s, read from its JSON) is below `floor`.
/// A floor on a wire-speed test checks that wirebench can fill the link; the shared host can
/// stall a namespace for part of a run (a CI run once got 65 Mbit/s of payload over the 100 Mbit
/// link, and three runs of the same build just after it got 89–95), and that is not the tool's
/// doing. A tool that cannot fill the link fails both runs. The figures of the run that is kept
/// are checked in full by the caller.
fn run_in_above(
    ns: &str,
    args: &[&str],
    floor: f64,
    rate: impl Fn(&serde_json::Value) -> Option<f64>,
) -> (String, i32) {
    let (out, code) = run_in(ns, args);
    let first = serde_json::from_str(&out).ok().and_then(|j| rate(&j));
    match first {
        Some(r) if r < floor => {
            eprintln!("{r:.2} Mbit/s, below the floor of {floor}: run once more");
            run_in(ns, args)
        }
        _ => (out, code),
    }
}

/// The run's headline rate, Mbit/s.
fn headline_mbit(json: &serde_json::Value) -> Option<f64> {
    json["throughput"]["gbit_per_s"].as_f64().map(|g| g * 1e3)
}

/// Starts `wirebench serve KIND --mode sink` in `ns` on `addr`, once it has said where it is.
fn sink_in(ns: &str, kind: &str, addr: &str) -> Killed {
    serve_in(ns, &[kind, "--mode", "sink"], kind, addr)
}

/// Starts `wirebench serve http` in `ns` on `addr`, once it has said where it is.
fn http_in(ns: &str, addr: &str) -> Killed {
    serve_in(ns, &["http"], "http", addr)
}

/// Starts `wirebench serve ARGS -l addr` in `ns` and waits for its first line, `scheme://addr…`.
fn serve_in(ns: &str, args: &[&str], scheme: &str, addr: &str) -> Killed {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    all.extend(["-l", addr]);
    let mut server = Killed(
        Link::exec(ns, &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server"),
    );
    let mut first = String::new();
    BufReader::new(server.0.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with(&format!("{scheme}://{addr}")), "{first}");
    server
}

/// The payload a 100 Mbit/s tbf link carries at most, Mbit/s: tbf counts 1514-byte frames
/// (1448 B of payload under IPv4, TCP with timestamps, and the Ethernet header), so
/// 100 × 1448 / 1514.
const LINK_PAYLOAD_MBIT: f64 = 100.0 * 1448.0 / 1514.0;

#[test]
fn a_stream_headline_is_what_arrived_within_the_window() {
    let _serial = serial();
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("skipped: {why}");
        return;
    }
    let link = Link::up("100mbit");
    let _server = sink_in(&link.b, "tcp", "198.18.7.2:7001");
    let url = "tcp://198.18.7.2:7001";
    let (out, code) = run_in_above(
        &link.a,
        &["run", url, "--mode", "stream", "-d", "3s", "--json", "-q"],
        TCP_FLOOR_MBIT,
        headline_mbit,
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid(&json);
    let t = &json["throughput"];
    let secs = f(&json["duration_s"]);
    let (window, count, drained) = (
        f(&t["window_bytes"]),
        f(&t["receiver_bytes"]),
        f(&t["drained_bytes"]),
    );
    let headline = f(&t["gbit_per_s"]) * 1e3;
    eprintln!(
        "headline {headline:.2} Mbit/s over {secs} s; window {window} B, receiver {count} B, drained {drained} B"
    );
    // The rate is its own numerator over the window: what the receiver got within it.
    let expected = window * 8.0 / secs / 1e6;
    assert!(
        (headline - expected).abs() < 1e-6 * expected,
        "{headline} vs {expected}"
    );
    // Never above physics (the sink's final count over the window gave 96–97 Mbit/s here).
    assert!(headline <= LINK_PAYLOAD_MBIT, "headline {headline} Mbit/s");
    // Generous floor for a shared 2-CPU host (the same as the --link test's).
    assert!(headline >= TCP_FLOOR_MBIT, "headline {headline} Mbit/s");
    // The final count is the window's bytes and what drained from buffers after it: when the
    // sender stops, its full send buffer is still on its way (about a megabyte here).
    assert_eq!(window + drained, count, "{t}");
    assert!(drained > 0.0, "{t}");
    assert!(count * 8.0 / secs / 1e6 > headline, "{t}");
    // The messages are the window's too.
    let messages = f(&t["messages_per_s"]) * secs;
    let unit = f(&json["config"]["request_bytes"]);
    assert!((messages - (window / unit).floor()).abs() < 1.0, "{t}");

    // The terminal says the same, with the drained bytes on their own line.
    let (out, code) = run_in(&link.a, &["run", url, "--mode", "stream", "-d", "1s", "-q"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("that arrived within the window (acknowledged)"),
        "{out}"
    );
    assert!(out.contains("drained after the window: "), "{out}");
}

#[test]
fn a_udp_stream_above_the_link_headlines_what_arrived_within_the_window() {
    let _serial = serial();
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("skipped: {why}");
        return;
    }
    let link = Link::up("100mbit");
    let _server = sink_in(&link.b, "udp", "198.18.7.2:7002");
    // 150 Mbit/s offered: the queue toward the link is full when the sender stops, and what
    // it held arrives after the window (the sink's count over the window gave ~115 Mbit/s).
    let url = "udp://198.18.7.2:7002";
    let args = [
        "run", url, "--mode", "stream", "--size", "1400", "-b", "150Mbit", "-d", "2s", "--json",
        "-q",
    ];
    let (out, code) = run_in_above(&link.a, &args, HEADLINE_FLOOR_MBIT, headline_mbit);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    // A few datagrams the full queue dropped are errors of the run (exit 1), nothing else.
    let kinds: Vec<&str> = json["errors"]["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.iter().all(|&k| k == "lost"), "{out}");
    assert_eq!(code, i32::from(!kinds.is_empty()), "{out}");
    assert_valid(&json);
    let t = &json["throughput"];
    let secs = f(&json["duration_s"]);
    let (window, count, drained) = (
        f(&t["window_bytes"]),
        f(&t["receiver_bytes"]),
        f(&t["drained_bytes"]),
    );
    let headline = f(&t["gbit_per_s"]) * 1e3;
    eprintln!("udp headline {headline:.2} Mbit/s; window {window} B, receiver {count} B, drained {drained} B; {t}");
    // 1400-byte datagrams in 1442-byte frames (UDP 8, IPv4 20, Ethernet 14) as tbf counts them,
    // plus the one bucket (burst 32 kbit) tbf may let through on top of its rate in a window:
    // without it, a run measured 97.098 against 97.087 Mbit/s. And 0.1% for when the receiver
    // reads: the window holds what the receiver read within it, and a receiver slowed by other
    // tests (the suite runs them in parallel) reads at its start a few datagrams tbf let out
    // before it (97.104 and 97.138 against 97.103 Mbit/s in this file run beside its others).
    // Far below the 109 Mbit/s sent, which is what this test guards against.
    let limit = (100.0 * 1400.0 / 1442.0 + 0.032 / secs) * 1.001;
    assert!(
        headline <= limit,
        "headline {headline} Mbit/s above {limit}"
    );
    assert!(
        headline >= HEADLINE_FLOOR_MBIT,
        "headline {headline} Mbit/s"
    );
    let expected = window * 8.0 / secs / 1e6;
    assert!((headline - expected).abs() < 1e-6 * expected, "{t}");
    assert_eq!(window + drained, count, "{t}");
    assert!(drained > 0.0, "{t}");
    assert_eq!(f(&json["ok"]), window / 1400.0, "{json}");
}

#[test]
fn an_http_download_rates_the_body_bytes_read_within_the_window() {
    let _serial = serial();
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("skipped: {why}");
        return;
    }
    let link = Link::up("100mbit");
    let _server = http_in(&link.b, "198.18.7.2:8080");
    // 5 MB bodies take ~0.44 s each over the link: the deadline falls inside one, which then
    // finishes in its --timeout; all its bytes counted over the window gave ~105 Mbit/s.
    let url = "http://198.18.7.2:8080/bytes/5M";
    let (out, code) = run_in_above(
        &link.a,
        &["run", url, "-d", "2s", "--json", "-q"],
        HEADLINE_FLOOR_MBIT,
        headline_mbit,
    );
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid(&json);
    let t = &json["throughput"];
    let secs = f(&json["duration_s"]);
    let received = f(&t["received_bytes"]);
    let drained = t["drained_bytes"].as_f64().unwrap_or(0.0);
    let headline = f(&t["gbit_per_s"]) * 1e3;
    let goodput = f(&json["http"]["goodput_mb_per_s"]) * 8.0;
    eprintln!("http {headline:.2} Mbit/s, goodput {goodput:.2}; received {received} B, drained {drained} B");
    assert!(headline <= LINK_PAYLOAD_MBIT, "headline {headline} Mbit/s");
    assert!(goodput <= LINK_PAYLOAD_MBIT, "goodput {goodput} Mbit/s");
    assert!(
        headline >= HEADLINE_FLOOR_MBIT,
        "headline {headline} Mbit/s"
    );
    // A GET sends no body: the rate is the body bytes read within the window over it.
    let expected = (received - drained) * 8.0 / secs / 1e6;
    assert!((headline - expected).abs() < 1e-6 * expected, "{t}");
    assert!((goodput - expected).abs() < 1e-6 * expected, "{json}");
    assert_eq!(f(&json["http"]["body_bytes"]), received, "{json}");
}

#[test]
fn auto_on_loopback_says_there_is_no_link_speed() {
    let _serial = serial();
    let srv = ServerProcess::start(&["--mode", "sink"]);
    let (json, code) = run_json(
        &[
            &srv.url, "--mode", "stream", "--link", "auto", "-d", "300ms",
        ],
        LIMIT,
    );
    assert_eq!(code, 0);
    assert_valid(&json);
    let l = &json["throughput"]["link"];
    assert!(l["bits_per_s"].is_null(), "{l}");
    assert!(l["payload_percent"].is_null(), "{l}");
    assert!(l["source"].as_str().unwrap().contains("loopback"), "{l}");
    let (out, _) = run_bounded(
        &[
            "run", &srv.url, "--mode", "stream", "--link", "auto", "-d", "300ms", "-q",
        ],
        LIMIT,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("loopback has no link speed"), "{text}");
    assert!(!text.contains("% of the link"), "{text}");
}

#[test]
fn request_response_gets_the_link_lines_too() {
    let _serial = serial();
    let srv = ServerProcess::start(&[]);
    let (json, code) = run_json(&[&srv.url, "--link", "1Gbit", "-d", "300ms"], LIMIT);
    assert_eq!(code, 0);
    assert_valid(&json);
    let l = &json["throughput"]["link"];
    let ops = f(&json["throughput"]["ops_per_s"]);
    // 64-byte echoes: one packet per request, padded to nothing (64 + 52 + 14 > 60).
    assert!(
        (f(&l["packet"]["payload_bytes"]) - 64.0).abs() < 1e-6,
        "{l}"
    );
    let per_s = f(&l["packet"]["per_s"]);
    assert!(
        (per_s / ops - 1.0).abs() < 0.01,
        "{per_s} packets/s for {ops} ops/s"
    );
    assert!(f(&l["line"]["bits_per_s"]) > f(&l["payload_bits_per_s"]));
    let (out, _) = run_bounded(
        &["run", &srv.url, "--link", "1Gbit", "-d", "300ms", "-q"],
        LIMIT,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("wire rate incl. Ethernet header+FCS, preamble and gap"),
        "{text}"
    );
}

#[test]
fn without_link_there_is_no_link_section() {
    let _serial = serial();
    let srv = ServerProcess::start(&[]);
    let (json, _) = run_json(&[&srv.url, "-d", "200ms"], LIMIT);
    assert!(json["throughput"].get("link").is_none());
}

#[test]
fn a_bad_link_rate_is_a_usage_error() {
    let _serial = serial();
    for bad in ["fast", "0", "100"] {
        let out = usage_error(&["run", "tcp://127.0.0.1:9", "--link", bad], LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--link"), "{stderr}");
    }
}

#[test]
fn datagrams_count_a_udp_header() {
    let _serial = serial();
    let mut child = common::serve_process("udp", &[]);
    let lines = common::stdout_lines(&mut child);
    let addr = common::first_line_addr(&mut child, &lines, "udp", LIMIT);
    let _server = Killed(child);
    let url = format!("udp://{addr}");
    let (json, code) = run_json(&[&url, "--link", "1Gbit", "-d", "300ms"], LIMIT);
    assert_eq!(code, 0);
    assert_valid(&json);
    let p = &json["throughput"]["link"]["packet"];
    assert_eq!(f(&p["transport_header_bytes"]), 8.0, "{p}");
    assert_eq!(f(&p["payload_bytes"]), 64.0, "{p}");
}
