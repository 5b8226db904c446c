//! Golden files of the commands that run several measurements: `compare`, `peak`, `study` (its
//! report.md) and `diagnose`, compared byte for byte with `tests/golden/NAME.txt`. Each
//! document is built here from fixed run summaries (tests/golden_common) and judged by the
//! same functions the commands call (`study::compare::judge`, `Step::judge` with
//! `load::search`, `app::peak::conclusion`, `diagnosis::variants_for` and `findings`), then
//! rendered by the command's own report functions: no network, no timing.
//!
//! Each document is also checked against its committed schema and read back into its type
//! unchanged ([`golden_common::round_trips`]).
//!
//! After an intended change to a report, rewrite the files and review the diff:
//! `UPDATE_GOLDEN=1 cargo test --profile ci --test quick golden_studies::`.

use super::golden_common;

use golden_common::*;
use std::time::Duration;
use wirebench::load::search::{Next, Search, Why};
use wirebench::study::peak::{conclusion, Bounds};
use wirebench::summary::diagnosis::{
    self as dx, Change, Diagnosis, Evidence, Figures, TcpEvidence, Variant,
};
use wirebench::summary::peak::{Peak, PeakSearch, Step, PEAK_SCHEMA};
use wirebench::summary::slo::Slo;
use wirebench::summary::study::{Document, Methodology, Study, TargetInfo};
use wirebench::summary::{Config, Summary};

/// A closed-loop `--mode rr` run of 64 B each way at `per_s`, latencies `base` to `base +
/// spread` ns; with `slow_every`, every k-th request waits 50 ms instead (a heavy tail).
fn rr(target: &str, per_s: u64, base: u64, spread: u64, slow_every: Option<u64>) -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        let n = (per_s as f64 * length) as u64;
        for i in 0..n {
            let slow = slow_every.is_some_and(|k| i % k == 0);
            rec.ok(match slow {
                true => Duration::from_millis(50),
                false => latency(i + second * n, base, spread),
            });
            rec.issued(Duration::ZERO);
        }
        rec.sent_bytes += n * 64;
        rec.received_bytes += n * 64;
        if second == 0 {
            (0..4).for_each(|i| rec.connected(latency(i, 60_000, 20_000)));
        }
    });
    finish(summary(
        target,
        "rr",
        config(64, Some(64)),
        &total,
        series,
        None,
    ))
}

/// The text `render` writes.
fn text(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    render(&mut out).expect("writing to memory");
    String::from_utf8(out).expect("the report is UTF-8")
}

/// `wirebench compare base=… fast=… tail=…` with the default 5 runs: `fast` answers 10%
/// more at lower latency, `tail` is slower, with 3% of its requests at 50 ms (its mean above
/// its p95). Each run differs a little from the others, as runs do.
fn compare() -> String {
    const OPS: [i64; 5] = [0, 310, -180, 140, -260];
    const NS: [i64; 5] = [0, 400, -300, 200, -350];
    let mut points = Vec::new();
    for round in 0..5 {
        let at = |v: i64, k: usize| (v + OPS[(round + k) % 5]) as u64;
        let ns = |v: i64, k: usize| (v + NS[(round + k) % 5]) as u64;
        let base = rr(
            "tcp://127.0.0.1:7000",
            at(40_000, 0),
            ns(20_000, 0),
            30_000,
            None,
        );
        let fast = rr(
            "tcp://127.0.0.1:7001",
            at(44_000, 1),
            ns(18_000, 1),
            27_000,
            None,
        );
        let slow = Some(33);
        let tail = rr(
            "tcp://127.0.0.1:7002",
            at(2_500, 2),
            ns(20_000, 2),
            30_000,
            slow,
        );
        for (ti, s) in [base, fast, tail].into_iter().enumerate() {
            points.push((ti, Vec::new(), round + 1, s));
        }
    }
    let mut sweep = sweep_of(&["base", "fast", "tail"], &[], 5, 0, points);
    // As `compare --seed 17` would have run them (the fixture's order is the one given).
    sweep.seed = Some(17);
    let comparison = wirebench::study::compare::judge(sweep, 0, Default::default());
    round_trips(&comparison, "compare");
    // As `wirebench compare` renders it (app::compare::main).
    text(|out| {
        wirebench::report::sweep::write_as(&comparison.sweep, "compare", out)?;
        wirebench::report::compare::write(&comparison, out)
    })
}

/// The target of the peak search: it answers up to this many requests a second.
const CAPACITY: f64 = 10_500.0;

/// One open-loop step at `rate` against a target of [`CAPACITY`]: below it, every request is
/// answered in 40-100 µs (90-390 µs near it); above it, a queue grows for the whole step, so
/// each answer waits longer than the one before. `stalled`: the machine stalled in the step,
/// and one request in 50 waited 300 ms more.
fn step_run(rate: f64, stalled: bool) -> Summary {
    let kept_up = rate <= CAPACITY;
    let near = rate > 0.9 * CAPACITY;
    let (total, mut series) = seconds(|second, length, rec| {
        let sent = due_in(rate, second, length);
        let n = match kept_up {
            true => sent,
            false => (CAPACITY * length) as u64,
        };
        // Above capacity the queue at the end of the step holds (rate − capacity) × 2.5 s.
        let queue_s = (1.0 - CAPACITY / rate) * MEASURED.as_secs_f64();
        for i in 0..n {
            let done = (second as f64 + length * i as f64 / n as f64) / MEASURED.as_secs_f64();
            let service = match near {
                true => latency(i, 90_000, 300_000),
                false => latency(i, 40_000, 60_000),
            };
            let mut waited = match kept_up {
                true => service,
                false => service + Duration::from_secs_f64(queue_s * done),
            };
            if stalled && i % 50 == 0 {
                waited += Duration::from_millis(300);
            }
            rec.ok(waited);
            record_service(rec, service);
        }
        for _ in 0..sent {
            rec.issued(Duration::from_micros(20));
        }
        rec.sent_bytes += sent * 64;
        rec.received_bytes += n * 64;
        if second == 0 {
            (0..4).for_each(|i| rec.connected(latency(i, 60_000, 20_000)));
        }
    });
    offered(&mut series, rate);
    let target = "tcp://127.0.0.1:7000";
    let mut s = summary(target, "rr", config(64, Some(64)), &total, series, None);
    s.service_time = wirebench::summary::Distribution::of(&total.service);
    s.open_loop = Some(open_loop(&format!("{rate}/s"), rate, &total, kept_up));
    finish(s)
}

/// The run flags of `wirebench peak URL --slo p99<=1ms`, as its command line gives them.
fn peak_args(url: &str) -> wirebench::cli::RunArgs {
    use clap::Parser;
    let argv = ["wirebench", "peak", url, "--slo", "p99<=1ms"];
    match wirebench::cli::Cli::try_parse_from(argv).map(|c| c.command) {
        Ok(wirebench::cli::Command::Peak(p)) => p.run,
        _ => panic!("peak's command line parses"),
    }
}

/// `wirebench peak tcp://… --slo 'p99<=1ms' --step 2.5s`: the rates `load::search` picks
/// against a target of [`CAPACITY`], each step judged by `Step::judge` (the seventh in a stall
/// of the machine, so its rate is measured again and named as a contradiction), the failure
/// bounding the peak measured twice, then the confirmation by three trials;
/// the step lines (stderr) followed by the report (stdout), as a terminal shows them.
fn peak() -> String {
    let setup = Bounds {
        run: peak_args("tcp://127.0.0.1:7000"),
        slos: vec![Slo::parse("p99<=1ms").expect("a valid objective")],
        step: MEASURED,
        rest: Duration::ZERO,
        search: Search {
            start: 1_000.0,
            tolerance: 0.02,
            ceiling: 1e7,
            floor: 1.0,
        },
        sharded: None,
    };
    let (mut steps, mut tried): (Vec<Step>, Vec<(f64, bool)>) = (Vec::new(), Vec::new());
    // No step falls behind its timetable, so the calm step (app::peak) is never read: None.
    let judge = |rate: f64, steps: &[Step], why: Option<Why>| {
        let first = steps.first().map(|s| &s.result);
        let confirm = why == Some(Why::Confirm);
        // The seventh step meets a stall of the machine: it fails a rate the target sustains.
        let stalled = steps.len() == 6;
        let mut step = Step::judge(step_run(rate, stalled), &setup.slos, first, None, confirm);
        step.retry = why.map(|w| w.name().into());
        step
    };
    let found = loop {
        let (rate, why) = match setup.search.next(&tried) {
            Next::Done(found) => break found.expect("a rate passed"),
            Next::Try(r) => ((r * 100.0).round() / 100.0, None),
            Next::Retry(r, why) => (r, Some(why)),
        };
        let step = judge(rate, &steps, why);
        tried.push((rate, step.passed));
        steps.push(step);
    };
    let at: Vec<&Step> = (tried.iter().zip(&steps))
        .filter(|(t, _)| t.0 == found)
        .map(|(_, s)| s)
        .collect();
    let peak = Peak::of(&at, true);
    let outcomes: Vec<(f64, bool, usize)> = (tried.iter().enumerate())
        .map(|(i, t)| (t.0, t.1, i))
        .collect();
    let contradictions = wirebench::study::peak::contradictions(&outcomes);
    let study = PeakSearch {
        schema: PEAK_SCHEMA.into(),
        wirebench_version: "0.1.0".into(),
        target: "tcp://127.0.0.1:7000".into(),
        objectives: setup.slos.iter().map(|s| s.text.clone()).collect(),
        step_s: setup.step.as_secs_f64(),
        tolerance: setup.search.tolerance,
        generator_limited: false,
        conclusion: conclusion(peak.as_ref(), false, &steps, &setup, &Default::default()),
        peak,
        steps,
        stopped: None,
        contradictions,
    };
    let lines: String = study
        .steps
        .iter()
        .map(|s| wirebench::report::peak::step_line(s) + "\n")
        .collect();
    round_trips(&study, "peak");
    lines + &text(|out| wirebench::report::peak::write(&study, out))
}

/// A run whose every exchange waits for a delayed ACK (the DCMTK case): 1 connection without
/// TCP_NODELAY, 23 exchanges a second of 41-44 ms each.
fn stalled(nodelay: bool, per_s: u64, base: u64, spread: u64) -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        let n = (per_s as f64 * length) as u64;
        for i in 0..n {
            rec.ok(latency(i + second * n, base, spread));
            rec.issued(Duration::ZERO);
        }
        rec.sent_bytes += n * 65_536;
        rec.received_bytes += n * 16;
        if second == 0 {
            rec.connected(Duration::from_micros(64));
        }
    });
    let config = Config {
        connections: 1,
        threads: 1,
        nodelay,
        ..config(65_536, Some(16))
    };
    let mut s = summary("tcp://127.0.0.1:7000", "rr", config, &total, series, None);
    s.generator.threads = 1;
    s.generator.cpu_percent_of_threads = 0.6;
    finish(s)
}

/// `wirebench diagnose tcp://… --size 64k --reply-size 16 -c 1 -t 1 --no-nodelay`: the
/// baseline stalls on delayed ACKs; the variants `variants_for` asks for, each measured as a
/// fixed run (TCP_NODELAY on removes the stall, large buffers do not); the kernel's evidence
/// as Linux shows it for such a run.
fn diagnose() -> String {
    let base = stalled(false, 23, 41_000_000, 3_000_000);
    let evidence = Evidence {
        delayed_acks: Some(57),
        delayed_acks_per_exchange: Some(57.0 / base.ok as f64),
        tcp_info: Some(TcpEvidence {
            sockets: 1,
            rtt_us: 38,
            ato_us: 40_000,
            unacked: 1,
            busy_ms: 2_410.0,
            rwnd_limited_percent: 0.0,
            sndbuf_limited_percent: 0.0,
            peer_window_bytes: 65_483,
        }),
        port_range: Some([32_768, 60_999]),
        rmem_default: Some(131_072),
        tw_reuse: Some(2),
        time_wait: 0,
        cpus: 2,
        loopback: true,
        cpu_pressure_percent: Some(3.1),
        generator_busy_percent: Some(0.4),
        generator_sleeps_per_s: Some(23.0),
    };
    let variants: Vec<Variant> = dx::variants_for(&base, &evidence)
        .into_iter()
        .map(|(hypothesis, change)| {
            let s = match change {
                Change::Nodelay(true) => stalled(true, 2_191, 380_000, 120_000),
                _ => stalled(false, 23, 41_000_000, 3_000_000),
            };
            Variant {
                hypothesis: hypothesis.into(),
                flags: change.flags(),
                figures: Figures::of(&s),
                change,
            }
        })
        .collect();
    let d = Diagnosis {
        schema: dx::DIAGNOSIS_SCHEMA.into(),
        wirebench_version: "0.1.0".into(),
        target: base.target.clone(),
        protocol: base.protocol,
        mode: base.mode,
        step_s: base.duration_s,
        baseline: Figures::of(&base),
        findings: dx::findings(&base, &evidence, &variants),
        evidence,
        variants,
    };
    round_trips(&d, "diagnosis");
    text(|out| wirebench::report::diagnosis::write(&d, out))
}

/// `wirebench study dim.toml --out DIR`'s report.md: a DIM-like plan (64 B request/response
/// and server push of 64 KiB messages, over 1 and 4 connections, 3 runs, the first
/// discarded), on a fixed host.
fn study() -> String {
    let mut points = Vec::new();
    for run in 1..=3u64 {
        for c in 0..2 {
            let wobble = 150 * run;
            let per_s = [21_000, 60_000][c] - wobble;
            let echo = rr("tcp://127.0.0.1:7000", per_s, 40_000, 20_000, None);
            let push = tcp_bulk("source", [800_000_000, 1_900_000_000][c] + wobble * 1_000);
            points.push((0, vec![c], run as usize, echo));
            points.push((1, vec![c], run as usize, push));
        }
    }
    let axes: &[(&str, &[&str])] = &[("--connections", &["1", "4"])];
    let sweep = sweep_of(&["rr", "push"], axes, 3, 1, points);
    let plan = "title = \"DIM: message rate by connections\"\n\n[targets]\nrr = { url = \"tcp://127.0.0.1:7000\", server = \"wirebench serve tcp (echo)\" }\npush = { url = \"tcp://127.0.0.1:7001\", server = \"wirebench serve tcp --mode source\", run = { mode = \"source\", size = \"64k\" } }\n\n[run]\nmode = \"rr\"\nsize = \"64\"\nconnections = \"1,4\"\nduration = \"2.5s\"\nruns = 3\ndiscard = 1\n";
    let study = Study {
        schema: wirebench::summary::study::SCHEMA.into(),
        title: "DIM: message rate by connections".into(),
        command: "run".into(),
        methodology: Methodology {
            date: wirebench::sys::host::utc(1_700_000_000),
            command: "wirebench study dim.toml --out results/dim".into(),
            file: "dim.toml".into(),
            plan: plan.into(),
            version: "0.1.0".into(),
            kernel: "Linux 6.1.0-27-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1".into(),
            cpu: "AMD EPYC 7B13".into(),
            cpus: 2,
            pinning:
                "none: the generator's threads may run on any CPU (0-1); wirebench pins no thread"
                    .into(),
            link: "none given (no --link): rates are not set against a line rate".into(),
            cache: None,
            server_memory: None,
        },
        targets: vec![
            TargetInfo {
                name: "rr".into(),
                url: "tcp://127.0.0.1:7000".into(),
                server: Some("wirebench serve tcp (echo)".into()),
                version: None,
            },
            TargetInfo {
                name: "push".into(),
                url: "tcp://127.0.0.1:7001".into(),
                server: Some("wirebench serve tcp --mode source".into()),
                version: Some("0.1.0".into()),
            },
        ],
        document: Document::Run(sweep),
        diagnoses: Vec::new(),
        interrupted: false,
    };
    round_trips(&study, "study");
    if let Document::Run(sweep) = &study.document {
        round_trips(sweep, "sweep");
    }
    text(|out| wirebench::report::study::write(&study, out))
}

#[test]
fn each_studys_report_matches_its_golden_file() {
    check_goldens([
        ("compare", compare()),
        ("peak", peak()),
        ("study", study()),
        ("diagnose", diagnose()),
    ]);
}
