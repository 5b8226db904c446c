//! Workloads with a shape (issue 20): key distributions in templates, Poisson arrivals and
//! mixes of request kinds, seeded so that a run can be repeated exactly.

mod common;

use common::{execute_json, first_line_addr, serve_process, stdout_lines, usage_error};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// A bare HTTP/1.1 server on 127.0.0.1:0 that answers every request 200 with no body and keeps
/// each request line, so a test sees exactly what the client sent.
struct Recorder {
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let kept = kept.clone();
                std::thread::spawn(move || serve(conn, &kept));
            }
        });
        Recorder { url, lines }
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

/// Answers the requests of one connection (no bodies are sent to it) until it closes.
fn serve(conn: std::net::TcpStream, kept: &Mutex<Vec<String>>) {
    let mut out = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let first = line.trim_end().to_string();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
        }
        kept.lock().unwrap().push(first);
        if out
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
    }
}

/// The keys of the request lines `GET /k/KEY HTTP/1.1`, sorted.
fn keys(lines: &[String]) -> Vec<u64> {
    let mut k: Vec<u64> = lines
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap()[3..].parse().unwrap())
        .collect();
    k.sort_unstable();
    k
}

#[test]
fn zipf_keys_follow_the_law_and_repeat_from_the_seed() {
    let srv = Recorder::start();
    let url = format!("{}/k/{{zipf:50:1.0}}", srv.url);
    let run = |seed: &str| {
        let (json, code) = execute_json(&[&url, "-c", "2", "-n", "3000", "--seed", seed], LIMIT);
        assert_eq!(code, 0, "{json}");
        assert_eq!(json["config"]["seed"].as_u64(), seed.parse().ok(), "{json}");
        keys(&srv.take())
    };
    let first = run("5");
    assert_eq!(first.len(), 3000);
    assert!(first.iter().all(|&k| k < 50), "keys below N");
    // Key 0 is the most popular: 1/H(50, 1) = 22.2 % of draws; key 49 0.44 %.
    let count = |k: u64| first.iter().filter(|&&x| x == k).count();
    assert!(
        (560..780).contains(&count(0)),
        "key 0 drawn {} times",
        count(0)
    );
    assert!(count(49) < 40, "key 49 drawn {} times", count(49));
    assert_eq!(run("5"), first, "the same seed draws the same keys");
    assert_ne!(run("6"), first, "another seed draws others");
}

#[test]
fn a_run_without_random_placeholders_records_no_seed() {
    let srv = Recorder::start();
    let (json, code) = execute_json(&[&format!("{}/k/1", srv.url), "-n", "10"], LIMIT);
    assert_eq!(code, 0, "{json}");
    assert!(json["config"].get("seed").is_none(), "{}", json["config"]);
    // Drawn afresh when not given, and recorded.
    let url = format!("{}/k/{{uniform:10}}", srv.url);
    let (json, _) = execute_json(&[&url, "-n", "10"], LIMIT);
    assert!(json["config"]["seed"].is_u64(), "{}", json["config"]);
}

#[test]
fn a_distribution_without_its_parameters_is_one_line_and_exit_2() {
    for (arg, want) in [
        ("http://127.0.0.1:9/{zipf}", "{zipf:N:s}"),
        ("http://127.0.0.1:9/{zipf:0}", "{zipf:N:s}"),
        ("http://127.0.0.1:9/{zipf:10:0}", "s > 0"),
        ("http://127.0.0.1:9/{zipf:10:x}", "{zipf:1000:0.99}"),
        ("http://127.0.0.1:9/{uniform}", "{uniform:N}"),
        ("http://127.0.0.1:9/{uniform:0}", "{uniform:100}"),
    ] {
        let out = usage_error(&["run", arg, "-n", "1"], LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{arg}: {err}");
    }
    let out = usage_error(
        &["run", "http://127.0.0.1:9/", "--body", "{\"k\": {zipf}}"],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--body"));
}

/// `wirebench serve http` as a child process, stopped (by its PID) when dropped.
struct ServeHttp {
    child: std::process::Child,
    url: String,
}

impl ServeHttp {
    fn start() -> ServeHttp {
        let mut child = serve_process("http", &["-t", "1"]);
        let lines = stdout_lines(&mut child);
        let addr = first_line_addr(&mut child, &lines, "http", LIMIT);
        ServeHttp {
            child,
            url: format!("http://{addr}"),
        }
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        common::sigterm(&self.child);
        let _ = common::wait_exit(&mut self.child, Duration::from_secs(5));
    }
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn poisson_arrivals_offer_the_rate_against_serve_http() {
    let srv = ServeHttp::start();
    let url = format!("{}/bytes/16", srv.url);
    let args = [
        url.as_str(),
        "--rate",
        "2000",
        "--arrival",
        "poisson",
        "-c",
        "4",
        "-d",
        "2s",
        "--seed",
        "3",
    ];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!(code, 0, "{json}");
    let o = &json["open_loop"];
    assert_eq!(o["schedule"], "2000/s Poisson", "{o}");
    assert_eq!(json["config"]["seed"], 3);
    // 4000 expected in 2 s; a Poisson count's sd is sqrt(4000) = 63, so 5 % is 3 sd.
    let sent = n(&o["sent"]);
    assert!((3800..=4200).contains(&sent), "sent {sent}: {o}");
    assert_eq!(n(&json["ok"]), sent, "{json}");
    assert!(
        n(&o["offered"]) >= sent && n(&o["offered"]) - sent <= 40,
        "{o}"
    );
    // The seed fixes the arrivals: the same count offered again.
    let (again, code) = execute_json(&args, LIMIT);
    assert_eq!(code, 0, "{again}");
    assert_eq!(again["open_loop"]["offered"], o["offered"]);
}

#[test]
fn poisson_arrivals_need_an_open_loop() {
    let out = usage_error(
        &[
            "run",
            "http://127.0.0.1:9/",
            "--arrival",
            "poisson",
            "-n",
            "1",
        ],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate 1000 --arrival poisson"));
    let out = usage_error(
        &[
            "run",
            "http://127.0.0.1:9/",
            "--arrival",
            "gamma",
            "--rate",
            "9",
        ],
        LIMIT,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--arrival"));
}

/// The kind named `name` of a result's mix.
fn kind<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let kinds = json["mix"].as_array().expect("a mix section");
    kinds
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no kind {name} in {kinds:?}"))
}

#[test]
fn a_mix_keeps_its_ratio_and_reports_each_kind() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let url = format!("http://{}/", srv.addr);
    let args = [
        url.as_str(),
        "--mix",
        "read=70 GET /status/200",
        "--mix",
        "moved=20 /status/302",
        "--mix",
        "gone=10 GET /status/404",
        "--accept",
        "2xx,3xx",
        "-c",
        "4",
        "-n",
        "10000",
        "--seed",
        "9",
    ];
    let (json, code) = execute_json(&args, LIMIT);
    assert_eq!(code, 1, "the 404s are errors: {json}");
    common::study::assert_valid("result.v1.json", &json);
    let stats = srv.stop();
    let (read, moved, gone) = (
        kind(&json, "read"),
        kind(&json, "moved"),
        kind(&json, "gone"),
    );
    // The server counted what each kind asked for: its statuses by class.
    assert_eq!(n(&read["ok"]), stats.status_2xx, "{stats:?}");
    assert_eq!(n(&moved["ok"]), stats.status_3xx, "{stats:?}");
    assert_eq!(n(&gone["errors"]["total"]), stats.status_4xx, "{stats:?}");
    assert_eq!(stats.requests, 10_000);
    // Each kind's share of the 10,000 within 1 % of its weight's.
    for (k, want) in [(read, 70.0), (moved, 20.0), (gone, 10.0)] {
        let share = k["share_percent"].as_f64().unwrap();
        assert!(
            (share - want).abs() < 1.0,
            "{}: {share}% for {want}%",
            k["name"]
        );
        assert_eq!(k["weight_percent"].as_f64(), Some(want));
    }
    // Each kind its own counts, errors and latency; the totals are their sums.
    assert_eq!(
        n(&read["errors"]["total"]) + n(&moved["errors"]["total"]),
        0
    );
    assert_eq!(gone["errors"]["by_kind"][0]["kind"], "status");
    assert!(gone["latency"].is_null() && read["latency"]["p50_us"].is_number());
    assert_eq!(n(&read["ok"]) + n(&moved["ok"]), n(&json["ok"]));
    assert_eq!(n(&gone["errors"]["total"]), n(&json["errors"]["total"]));
    let counted = n(&read["latency"]["count"]) + n(&moved["latency"]["count"]);
    assert_eq!(counted, n(&json["latency"]["count"]));
    // The terminal shows a row per kind and the totals.
    let mut text_args = vec!["run"];
    text_args.extend_from_slice(&args[..args.len() - 4]);
    text_args.extend_from_slice(&["-n", "200", "-q"]);
    let srv = spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let url = format!("http://{}/", srv.addr);
    text_args[1] = &url;
    let (out, _) = common::run_bounded(&text_args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    for row in [
        "│ read ",
        "│ moved ",
        "│ gone ",
        "│ all ",
        "a mix: read 70: GET /status/200",
    ] {
        assert!(text.contains(row), "no {row:?} in:\n{text}");
    }
}

#[test]
fn a_plan_files_mix_tables_run_and_render() {
    use wirebench::serve::http::{spawn, HttpServerOptions};
    let srv = spawn(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        HttpServerOptions::default(),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("wirebench-mix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("handle.toml");
    std::fs::write(
        &plan,
        format!(
            "title = \"resolutions and creations\"\n[targets]\nlocal = \"http://{}/\"\n\
             [run]\nrequests = 2000\nconnections = 2\nseed = 4\n\
             [mix.resolve]\nweight = 80\nurl = \"/bytes/{{zipf:100:1}}\"\n\
             [mix.create]\nweight = 20\nmethod = \"PUT\"\nurl = \"/echo\"\n\
             headers = [\"X-Handle: {{seq}}\"]\nbody = \"{{\\\"v\\\": {{uniform:9}}}}\"\n",
            srv.addr
        ),
    )
    .unwrap();
    let out_dir = dir.join("out");
    let (out, _) = common::run_bounded(
        &[
            "study",
            plan.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        LIMIT,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let study = common::study::valid_study(&out_dir);
    let result = &study["document"]["points"][0]["runs"][0]["result"];
    let result = if result.is_object() {
        result
    } else {
        // The sweep's layout: find the one result wherever it is.
        find_result(&study["document"]).expect("a result in study.json")
    };
    let create = kind(result, "create");
    assert!(
        (18.0..22.0).contains(&create["share_percent"].as_f64().unwrap()),
        "{create}"
    );
    assert_eq!(
        n(&create["errors"]["total"]),
        0,
        "PUT /echo answers 200: {create}"
    );
    assert_eq!(result["config"]["seed"], 4);
    // The HTML report has the kinds' table and their curves.
    let json = dir.join("result.json");
    std::fs::write(&json, serde_json::to_vec(result).unwrap()).unwrap();
    let (out, _) = common::run_bounded(&["report", json.to_str().unwrap()], LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(json.with_extension("html")).unwrap();
    for part in ["<h3>Mix</h3>", "resolve", "create", "latency: create"] {
        assert!(html.contains(part), "no {part:?} in the HTML report");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first object with a `mix` key anywhere in `v`.
fn find_result(v: &serde_json::Value) -> Option<&serde_json::Value> {
    match v {
        serde_json::Value::Object(m) if m.contains_key("mix") => Some(v),
        serde_json::Value::Object(m) => m.values().find_map(find_result),
        serde_json::Value::Array(a) => a.iter().find_map(find_result),
        _ => None,
    }
}

#[test]
fn a_bad_mix_is_one_line_and_exit_2() {
    let u = "http://127.0.0.1:9/";
    for (extra, want) in [
        (vec!["--mix", "read GET /a"], "NAME=WEIGHT"),
        (vec!["--mix", "read=x GET /a"], "NAME=WEIGHT"),
        (vec!["--mix", "read=0 GET /a"], "weight 0"),
        (vec!["--mix", "a=1 /a", "--mix", "a=2 /b"], "given twice"),
        (vec!["--mix", "a=1 /a", "--targets", "t.txt"], "--targets"),
        (vec!["--mix", "a=1 /a", "--http2"], "--http2"),
        (vec!["--mix", "a=1 nopath"], "neither a path"),
        (vec!["--mix", "a=1 /{zipf}"], "{zipf:N:s}"),
        (vec!["--mix", "a={\"weight\": 1}"], "url"),
    ] {
        let mut args = vec!["run", u, "-n", "1"];
        args.extend_from_slice(&extra);
        let out = usage_error(&args, LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    let out = usage_error(&["run", "tcp://127.0.0.1:9", "--mix", "a=1 /a"], LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to http://"));
}
