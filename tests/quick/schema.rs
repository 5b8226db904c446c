//! The JSON reporter's output validates against `schema/result.v1.json`, and the schema rejects
//! documents that break it, so the schema is a contract rather than decoration.

use super::common;

use serde_json::{json, Value};
use std::time::Duration;
use wirebench::record::{ErrorKind, OpError, Recorder, SeriesPoint};
use wirebench::report;
use wirebench::summary::{
    ClientMode, Config, Distribution, ErrorSummary, Generator, OpenLoop, ProtocolName, Summary,
    Throughput, Warmup, SCHEMA,
};

/// The schema file, parsed.
fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.v1.json");
    let text = std::fs::read_to_string(path).expect("schema/result.v1.json is readable");
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// A draft 2020-12 validator for the schema.
fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema is a valid draft 2020-12 schema")
}

/// Renders a summary with the JSON reporter and parses it back.
fn render(summary: &Summary) -> Value {
    let mut out = Vec::new();
    report::json::write(summary, &mut out).expect("writing to memory cannot fail");
    let text = String::from_utf8(out).expect("JSON is UTF-8");
    assert!(text.ends_with("}\n"), "ends with a newline: {text:?}");
    serde_json::from_str(&text).expect("the reporter writes JSON")
}

/// Panics with every validation error when `doc` does not validate.
fn assert_valid(doc: &Value) {
    let v = validator();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:#?}\nin {doc:#}");
}

fn config(reply_bytes: Option<usize>) -> Config {
    Config {
        connections: 4,
        threads: 2,
        pipeline: Some(1),
        request_bytes: 64,
        reply_bytes,
        preamble: true,
        duration_s: Some(10.0),
        timeout_s: 1.0,
        nodelay: true,
        rcvbuf: Some(262_144),
        seed: Some(42),
        ..Config::default()
    }
}

fn generator() -> Generator {
    Generator {
        threads: 2,
        cpu_user_s: 1.23,
        cpu_sys_s: 0.45,
        cpu_percent_of_threads: 8.4,
        peak_rss_kib: 12_000,
        cpu_pressure_percent: None,
        steal_percent: None,
    }
}

/// A request/response run with everything filled in: latency, connect, warm-up, series, errors.
fn rr_summary() -> (Summary, Recorder) {
    let mut total = Recorder::new();
    let mut series = Vec::new();
    for second in 0..3u64 {
        let mut rec = Recorder::new();
        for i in 0..1_000u64 {
            rec.ok(Duration::from_nanos(5_000 + i * 37 + second * 1_000));
            rec.sent_bytes += 64;
            rec.received_bytes += 64;
        }
        rec.connected(Duration::from_micros(40 + second));
        if second == 1 {
            rec.error(OpError::new(ErrorKind::Timeout, "no reply within 1s"));
            rec.error(OpError::new(ErrorKind::Timeout, "no reply within 1s"));
            rec.error(OpError::new(
                ErrorKind::Reset,
                "read reply: connection reset by peer",
            ));
        }
        series.push(SeriesPoint::of(second, &rec));
        total += &rec;
    }
    series.push(SeriesPoint::of(3, &Recorder::new())); // a quiet second: p50/p99/max null
    let mut warm = Recorder::new();
    warm.ok(Duration::from_micros(7));
    let summary = Summary {
        schema: SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_ms: 1_700_000_000_000,
        target: "tcp://127.0.0.1:40123".into(),
        protocol: ProtocolName::Tcp,
        mode: ClientMode::Rr,
        config: Config {
            think_s: Some(0.001),
            think_achieved_s: Some(0.00105),
            reply_until: Some("END\\r\\n".into()),
            ..config(None)
        },
        duration_s: 3.0,
        ok: total.ok,
        errors: ErrorSummary::of(&total),
        throughput: Throughput::of(&total, Duration::from_secs(3), None),
        latency: Distribution::of(&total.latency),
        service_time: Distribution::of(&total.latency),
        connect: Distribution::of(&total.connect),
        open_loop: None,
        datagrams: None,
        http: None,
        warmup: Some(Warmup {
            duration_s: 1.0,
            ok: warm.ok,
            errors: 0,
            p50_us: Some(warm.latency.value_at_quantile(0.5) as f64 / 1000.0),
            steady: Some(wirebench::summary::Steady {
                steady: true,
                cov_pct: Some(1.5),
                judged: "ops/s".into(),
                window_s: 3,
                bound_pct: 5.0,
            }),
        }),
        series,
        generator: generator(),
        mix: None,
        notes: vec!["a note".into()],
        shard: None,
        shards: None,
        stopped: None,
    };
    (summary, total)
}

/// A bulk (stream) run: no latency, no warm-up, no errors.
fn bulk_summary() -> Summary {
    let mut rec = Recorder::new();
    rec.sent_bytes = 1_250_000_000;
    rec.messages = rec.sent_bytes / 65_536;
    rec.connected(Duration::from_micros(55));
    Summary {
        schema: SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_ms: 1_700_000_000_000,
        target: "tcp://127.0.0.1:40124".into(),
        protocol: ProtocolName::Tcp,
        mode: ClientMode::Stream,
        config: Config {
            request_bytes: 65_536,
            ..config(None)
        },
        duration_s: 10.0,
        ok: rec.ok,
        errors: ErrorSummary::of(&rec),
        throughput: Throughput::of(&rec, Duration::from_secs(10), Some(65_536)),
        latency: Distribution::of(&rec.latency),
        service_time: None,
        connect: Distribution::of(&rec.connect),
        open_loop: None,
        datagrams: None,
        http: None,
        warmup: None,
        series: vec![SeriesPoint::of(0, &rec)],
        generator: generator(),
        mix: None,
        notes: Vec::new(),
        shard: None,
        shards: None,
        stopped: None,
    }
}

#[test]
fn the_schema_is_valid_draft_2020_12() {
    let s = schema();
    assert_eq!(s["$id"], "wirebench.result/1");
    assert_eq!(s["properties"]["schema"]["const"], SCHEMA);
    // Building a validator checks the schema against the 2020-12 meta-schema...
    jsonschema::draft202012::new(&s).expect("the schema obeys the 2020-12 meta-schema");
    // ...which would catch a malformed schema.
    let mut broken = s.clone();
    broken["properties"]["ok"]["type"] = json!(5);
    assert!(jsonschema::draft202012::new(&broken).is_err());
}

#[test]
fn full_rr_result_validates() {
    let (summary, total) = rr_summary();
    let doc = render(&summary);
    assert_valid(&doc);
    assert_eq!(doc["schema"], SCHEMA);
    assert_eq!(doc["ok"], 3_000);
    assert_eq!(doc["errors"]["total"], 3);
    assert_eq!(doc["errors"]["by_kind"][0]["kind"], "reset");
    assert_eq!(doc["errors"]["by_kind"][1]["kind"], "timeout");
    assert_eq!(doc["errors"]["by_kind"][1]["count"], 2);
    assert_eq!(doc["series"].as_array().unwrap().len(), 4);
    assert!(doc["series"][3]["p99_us"].is_null());
    assert!(doc["warmup"]["p50_us"].as_f64().unwrap() > 6.9);
    assert_eq!(doc["connect"]["count"], 3);

    // The histogram decodes back to exactly what was recorded.
    let latency = summary.latency.as_ref().unwrap();
    let decoded = latency.histogram.decode().expect("the histogram decodes");
    assert_eq!(decoded.len(), summary.ok);
    assert_eq!(decoded, total.latency);
    assert_eq!(doc["latency"]["count"], summary.ok);
    assert_eq!(doc["latency"]["histogram"]["data"], latency.histogram.data);
    assert_reads_back(&doc);
}

/// The document reads back into a [`Summary`] (as report, the store and merge read it) that
/// writes the same JSON again.
fn assert_reads_back(doc: &Value) {
    let read: Summary = serde_json::from_value(doc.clone()).expect("the result reads back");
    assert_eq!(render(&read), *doc, "read back, the result differs");
}

#[test]
fn bulk_result_with_null_latency_validates() {
    let summary = bulk_summary();
    assert!(summary.latency.is_none());
    let doc = render(&summary);
    assert_valid(&doc);
    for field in ["latency", "service_time", "warmup"] {
        assert!(doc[field].is_null(), "{field} is null in bulk mode");
    }
    assert!(doc["series"][0]["p50_us"].is_null());
    assert!((doc["throughput"]["gbit_per_s"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    let connect = summary.connect.as_ref().unwrap();
    assert_eq!(connect.histogram.decode().unwrap().len(), 1);
    assert_reads_back(&doc);
}

/// An open-loop run: the timetable's figures with the send-lag distribution, or without it
/// (nothing sent) as null; the schema insists on the field.
#[test]
fn open_loop_result_with_send_lag_validates() {
    let (mut summary, _) = rr_summary();
    let mut rec = Recorder::new();
    for i in 0..1_000u64 {
        rec.issued(Duration::from_nanos(20_000 + i * 500));
        wirebench::record::record_duration(
            &mut rec.send_lag,
            Duration::from_nanos(20_000 + i * 500),
        );
    }
    let open = OpenLoop {
        schedule: "1000/s".into(),
        offered: 1_000,
        offered_per_s: 1_000.0,
        sent: rec.issued,
        sent_per_s: 1_000.0,
        achieved_per_s: 1_000.0,
        behind_schedule: rec.behind,
        max_lag_us: rec.max_lag_ns as f64 / 1000.0,
        send_lag: Distribution::of(&rec.send_lag),
        wake_lag: Distribution::of(&rec.send_lag),
        kept_up: true,
        replies_after_window: 0,
        owed_at_end: 0,
    };
    summary.open_loop = Some(open.clone());
    let doc = render(&summary);
    assert_valid(&doc);
    assert_eq!(doc["open_loop"]["send_lag"]["count"], 1_000);
    let lag = open.send_lag.as_ref().unwrap();
    assert_eq!(lag.histogram.decode().unwrap(), rec.send_lag);
    assert!(lag.max_us >= 519.0 && lag.p50_us < lag.p99_us, "{lag:?}");

    summary.open_loop = Some(OpenLoop {
        send_lag: None,
        sent: 0,
        ..open
    });
    let mut doc = render(&summary);
    assert_valid(&doc);
    doc["open_loop"].as_object_mut().unwrap().remove("send_lag");
    assert!(!validator().is_valid(&doc), "send_lag may not be left out");
}

/// Applies `edit` to a valid document and asserts the schema now rejects it.
fn assert_rejected(what: &str, edit: impl FnOnce(&mut Value)) {
    let (summary, _) = rr_summary();
    let mut doc = render(&summary);
    assert!(validator().is_valid(&doc), "the unedited document is valid");
    edit(&mut doc);
    assert!(
        !validator().is_valid(&doc),
        "the schema accepts a document with {what}"
    );
}

#[test]
fn the_schema_rejects_broken_documents() {
    assert_rejected("a missing top-level field", |d| {
        d.as_object_mut().unwrap().remove("throughput");
    });
    assert_rejected("a missing nullable field", |d| {
        d.as_object_mut().unwrap().remove("service_time");
    });
    assert_rejected("a missing nested field", |d| {
        d["latency"].as_object_mut().unwrap().remove("p99_us");
    });
    assert_rejected("a wrong type", |d| d["ok"] = json!("3000"));
    assert_rejected("a negative count", |d| d["ok"] = json!(-1));
    assert_rejected("a fractional count", |d| d["errors"]["total"] = json!(2.5));
    assert_rejected("a null that may not be null", |d| {
        d["throughput"] = Value::Null
    });
    assert_rejected("a wrong schema id", |d| {
        d["schema"] = json!("wirebench.result/2")
    });
    assert_rejected("an unknown field", |d| d["extra"] = json!(1));
    assert_rejected("an unknown nested field", |d| {
        d["config"]["extra"] = json!(1)
    });
    assert_rejected("an unknown mode", |d| d["mode"] = json!("udp"));
    assert_rejected("an unknown error kind", |d| {
        d["errors"]["by_kind"][0]["kind"] = json!("boom")
    });
    assert_rejected("a wrong histogram encoding", |d| {
        d["latency"]["histogram"]["encoding"] = json!("hdrhistogram-v1")
    });
    assert_rejected("histogram data that is not base64", |d| {
        d["latency"]["histogram"]["data"] = json!("not base64!")
    });
    assert_rejected("a series point of the wrong shape", |d| {
        d["series"][0]["p50_us"] = json!("7.4µs")
    });
    assert_rejected("a series point without its length", |d| {
        d["series"][0].as_object_mut().unwrap().remove("duration_s");
    });
    assert_rejected("a series point of no length", |d| {
        d["series"][0]["duration_s"] = json!(0.0)
    });
    assert_rejected("a pipeline of 0", |d| d["config"]["pipeline"] = json!(0));
}

/// The real binary's `--json` output of UDP runs: the open loop sets no in-flight limit, which
/// is null (it was usize::MAX, 18446744073709551615), and a stream's last point is partial.
#[test]
fn the_binarys_udp_json_output_validates() {
    use wirebench::serve::udp::{spawn, UdpServerOptions};
    use wirebench::serve::Mode as ServerMode;
    for (server_mode, args) in [
        (ServerMode::Echo, &["--rate", "1000", "-d", "300ms"][..]),
        (
            ServerMode::Sink,
            &["--mode", "stream", "--bandwidth", "10Mbit", "-d", "1200ms"],
        ),
    ] {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let options = UdpServerOptions {
            mode: server_mode,
            ..UdpServerOptions::default()
        };
        let srv = spawn(socket, options).unwrap();
        let out = common::bin()
            .arg("run")
            .arg(format!("udp://{}", srv.addr))
            .args(args)
            .args(["--json", "-q", "--timeout", "2s"])
            .output()
            .unwrap();
        srv.stop();
        let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_valid(&doc);
        assert!(
            doc["config"]["pipeline"].is_null(),
            "{args:?}: {}",
            doc["config"]
        );
        let last = doc["series"].as_array().unwrap().last().unwrap().clone();
        let length = last["duration_s"].as_f64().unwrap();
        assert!(length > 0.0 && length < 1.0, "{args:?}: {last}");
    }
}

/// The real binary's `--json` output, for each client mode, against the reference server.
#[test]
fn the_binarys_json_output_validates() {
    use wirebench::serve::tcp::{spawn, TcpServerOptions};
    use wirebench::serve::Mode as ServerMode;
    for (server_mode, args) in [
        (
            ServerMode::Echo,
            &["--mode", "rr", "-n", "200", "--warmup", "20"][..],
        ),
        (ServerMode::Echo, &["--mode", "crr", "-n", "50"]),
        (
            ServerMode::Echo,
            &["--rate", "2000", "-c", "2", "-d", "300ms"],
        ),
        (ServerMode::Sink, &["--mode", "stream", "-d", "300ms"]),
        (ServerMode::Source, &["--mode", "source", "-d", "300ms"]),
    ] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let srv = spawn(
            listener,
            TcpServerOptions {
                mode: server_mode,
                ..TcpServerOptions::default()
            },
        )
        .unwrap();
        let out = common::bin()
            .arg("run")
            .arg(format!("tcp://{}", srv.addr))
            .args(args)
            .args(["--json", "-q", "--timeout", "2s"])
            .output()
            .unwrap();
        srv.stop();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_valid(&doc);
    }
}
