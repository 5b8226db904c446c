//! What the golden-file tests share: run summaries built from recorders filled with fixed
//! values, through the same constructors the engine uses (`Throughput::of`,
//! `Distribution::of`, `SeriesPoint::of` and `set_lengths`, `diagnose::notes`), so every
//! figure is deterministic; a sweep built from such summaries; and the byte-for-byte check
//! against `tests/golden/NAME.txt` (rewritten with `UPDATE_GOLDEN=1`).
#![allow(dead_code)] // tests/quick/golden.rs and tests/quick/golden_studies.rs each use a part of it

use std::path::PathBuf;
use std::time::Duration;
use wirebench::load::Schedule;
use wirebench::record::{Recorder, SeriesPoint};
use wirebench::summary::sweep::Sweep;
use wirebench::summary::{
    Config, Distribution, ErrorSummary, Generator, OpenLoop, Summary, Throughput, SCHEMA,
};

/// Every run's measured time: two whole seconds and a half.
pub const MEASURED: Duration = Duration::from_millis(2_500);

/// The length of each second of a [`MEASURED`] run.
pub const LENGTHS: [f64; 3] = [1.0, 1.0, 0.5];

/// Latencies spread over `spread` ns above `base` ns, the same on every call.
pub fn latency(i: u64, base: u64, spread: u64) -> Duration {
    Duration::from_nanos(base + (i * 7_919) % spread)
}

/// One recorder per second of the run, each filled by `fill(second, length)`; the run's total,
/// and its series with true lengths.
pub fn seconds(fill: impl Fn(u64, f64, &mut Recorder)) -> (Recorder, Vec<SeriesPoint>) {
    let mut total = Recorder::new();
    let mut series = Vec::new();
    for (second, length) in LENGTHS.into_iter().enumerate() {
        let mut rec = Recorder::new();
        fill(second as u64, length, &mut rec);
        series.push(SeriesPoint::of(second as u64, &rec));
        total += &rec;
    }
    SeriesPoint::set_lengths(&mut series, MEASURED);
    (total, series)
}

/// Request/response traffic: `per_s` ok operations a second of `bytes` each way.
pub fn exchanges(rec: &mut Recorder, second: u64, length: f64, per_s: u64, bytes: u64) {
    let n = (per_s as f64 * length) as u64;
    for i in 0..n {
        rec.ok(latency(i + second * n, 20_000, 30_000));
        rec.issued(Duration::ZERO);
    }
    rec.sent_bytes += n * bytes;
    rec.received_bytes += n * bytes;
}

/// A closed-loop run's configuration: 4 connections on 2 threads for 2.5 s.
pub fn config(request_bytes: usize, reply_bytes: Option<usize>) -> Config {
    Config {
        connections: 4,
        threads: 2,
        pipeline: Some(1),
        request_bytes,
        reply_bytes,
        preamble: true,
        duration_s: Some(2.5),
        timeout_s: 1.0,
        nodelay: true,
        ..Config::default()
    }
}

/// The summary of a run that recorded `total` and `series`; `bulk` is the message size of the
/// bulk modes. Mode-specific parts are added by the caller, then [`finish`] writes the notes.
pub fn summary(
    target: &str,
    mode: &'static str,
    config: Config,
    total: &Recorder,
    series: Vec<SeriesPoint>,
    bulk: Option<usize>,
) -> Summary {
    let protocol = match target.split_once("://").map(|(scheme, _)| scheme) {
        Some("udp") => "udp",
        Some("http") => "http",
        _ => "tcp",
    };
    Summary {
        schema: SCHEMA.into(),
        wirebench_version: "0.1.0".into(),
        started_unix_ms: 1_700_000_000_000,
        target: target.into(),
        protocol: protocol.parse().unwrap(),
        mode: mode.parse().unwrap(),
        config,
        duration_s: MEASURED.as_secs_f64(),
        ok: total.ok,
        errors: ErrorSummary::of(total),
        throughput: Throughput::of(total, MEASURED, bulk).with_receiver(
            total,
            MEASURED,
            bulk.unwrap_or(1),
        ),
        latency: Distribution::of(&total.latency),
        service_time: None,
        connect: Distribution::of(&total.connect),
        open_loop: None,
        datagrams: None,
        http: None,
        warmup: None,
        series,
        generator: Generator {
            threads: 2,
            cpu_user_s: 0.41,
            cpu_sys_s: 1.73,
            cpu_percent_of_threads: 42.8,
            peak_rss_kib: 11_500,
            cpu_pressure_percent: None,
            steal_percent: None,
        },
        mix: None,
        notes: Vec::new(),
        shard: None,
        shards: None,
        stopped: None,
    }
}

/// The summary of `--mode rr` over TCP of 64-byte messages to 127.0.0.1:7000 that recorded
/// `total` and `series`.
#[allow(dead_code)] // not every golden test has an rr run
pub fn tcp_rr_summary(total: &Recorder, series: Vec<SeriesPoint>) -> Summary {
    summary(
        "tcp://127.0.0.1:7000",
        "rr",
        config(64, Some(64)),
        total,
        series,
        None,
    )
}

/// Adds the notes the diagnosis makes of the finished summary.
pub fn finish(mut s: Summary) -> Summary {
    s.notes = wirebench::summary::diagnose::notes(&s, &Default::default());
    s
}

/// A bulk run moving `bytes_per_s` in 64 KiB messages, sent (`stream`) or received (`source`).
pub fn tcp_bulk(mode: &'static str, bytes_per_s: u64) -> Summary {
    let (mut total, series) = seconds(|second, length, rec| {
        let bytes = (bytes_per_s as f64 * length) as u64;
        match mode {
            "stream" => rec.sent_bytes += bytes,
            _ => rec.received_bytes += bytes,
        }
        if second == 0 {
            rec.connected(Duration::from_micros(71));
        }
    });
    if mode == "stream" {
        // The sink counted every byte, 1.36 MB of them drained from buffers after the window
        // (as over a 100 Mbit link): the rates are what was acknowledged within it.
        total.peer.stream(Some(total.sent_bytes));
        total.peer.stream_acked_sessions = 4;
        total.peer.stream_acked = total.sent_bytes - 1_362_000;
    }
    total.messages = (total.sent_bytes + total.received_bytes) / 65_536;
    let config = config(65_536, None);
    let target = "tcp://127.0.0.1:7000";
    finish(summary(target, mode, config, &total, series, Some(65_536)))
}

/// Requests a constant `rate` offers in [from, to) seconds, counted as the engine counts them.
pub fn due(rate: f64, from: f64, to: f64) -> u64 {
    let schedule = Schedule::Constant { rate };
    let at = Duration::from_secs_f64;
    schedule.due_before(at(to)) - schedule.due_before(at(from))
}

/// Requests offered at `rate` in `second` of `length`.
pub fn due_in(rate: f64, second: u64, length: f64) -> u64 {
    due(rate, second as f64, second as f64 + length)
}

/// How an open loop at `rate`/s over [`MEASURED`] went, from what `total` recorded.
pub fn open_loop(schedule: &str, rate: f64, total: &Recorder, kept_up: bool) -> OpenLoop {
    let secs = MEASURED.as_secs_f64();
    let offered = due(rate, 0.0, secs);
    OpenLoop::of(schedule.into(), offered, total, secs, kept_up)
}

/// Adds per-second offered counts to an open loop's series at `rate`/s.
pub fn offered(series: &mut [SeriesPoint], rate: f64) {
    for p in series {
        p.offered = Some(due_in(rate, p.second, p.duration_s));
    }
}

/// Records a service time (the open loop's, from the actual send).
pub fn record_service(rec: &mut Recorder, d: Duration) {
    wirebench::record::record_duration(&mut rec.service, d);
}

/// A sweep of `names` as targets (`tcp://127.0.0.1:700N`), `axes` (flag, values), `runs`
/// repeats of which the first `discard` are discarded, and each run's summary by (target,
/// index into each axis, run number from 1), in the order they ran.
pub fn sweep_of(
    names: &[&str],
    axes: &[(&'static str, &[&str])],
    runs: usize,
    discard: usize,
    points: Vec<(usize, Vec<usize>, usize, Summary)>,
) -> Sweep {
    use wirebench::load::sweep::Axis;
    use wirebench::summary::sweep::{NamedTarget, Point, SCHEMA};
    let targets: Vec<NamedTarget> = names
        .iter()
        .enumerate()
        .map(|(i, n)| NamedTarget {
            name: n.to_string(),
            url: format!("tcp://127.0.0.1:700{i}"),
        })
        .collect();
    let axes: Vec<Axis> = axes
        .iter()
        .map(|(flag, values)| Axis {
            flag: (*flag).into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        })
        .collect();
    let points = points
        .into_iter()
        .map(|(ti, at, run, result)| Point {
            target: targets[ti].name.clone(),
            values: axes
                .iter()
                .zip(&at)
                .map(|(a, &i)| (a.flag.clone(), a.values[i].clone()))
                .collect(),
            run,
            discarded: run <= discard,
            result,
            target_index: ti,
            at,
        })
        .collect();
    Sweep {
        schema: SCHEMA.into(),
        wirebench_version: "0.0.0".into(),
        targets,
        axes,
        runs,
        discard,
        points,
        stopped: None,
        busy: None,
        units: None,
        seed: None,
    }
}

/// The golden file of `name`.
pub fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"))
}

/// Compares each text with its golden file byte for byte (with `UPDATE_GOLDEN=1`, writes
/// them instead); panics with every difference.
pub fn check_goldens(texts: impl IntoIterator<Item = (&'static str, String)>) {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for (name, text) in texts {
        let path = golden_path(name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; write it with UPDATE_GOLDEN=1", path.display()));
        if text != want {
            differ.push(format!("── {name}: expected\n{want}── got\n{text}"));
        }
    }
    assert!(
        differ.is_empty(),
        "reports differ from tests/golden (if intended: UPDATE_GOLDEN=1 cargo test --profile ci --test quick golden)\n{}",
        differ.join("\n")
    );
}

/// Checks a typed document against its committed schema (`schema/NAME.v1.json`, draft
/// 2020-12) and that it reads back into its type unchanged: written, read and written again,
/// the same JSON. So the types the reporters and the store read and the schema stay one model.
pub fn round_trips<T>(doc: &T, schema: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let path = format!("{}/schema/{schema}.v1.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the schema is readable");
    let schema_doc: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    let validator = jsonschema::draft202012::new(&schema_doc).expect("a valid schema");
    let written = serde_json::to_value(doc).expect("a document serializes");
    let errors: Vec<String> = validator
        .iter_errors(&written)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:#?}");
    let read: T = serde_json::from_value(written.clone())
        .unwrap_or_else(|e| panic!("{schema}: the document does not read back: {e}"));
    let again = serde_json::to_value(&read).expect("a document serializes");
    assert_eq!(written, again, "{schema}: read back, it differs");
}
