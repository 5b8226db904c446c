//! Builds the [`Summary`] of a finished run from its plan and what it recorded: the rates,
//! distributions and sections each protocol and load model adds, then the diagnosis notes.

use super::{
    Datagrams, Distribution, ErrorSummary, OpenLoop, ServerCount, Summary, Throughput, SCHEMA,
};
use crate::driver::http::spec::HttpSpec;
use crate::driver::target::Family;
use crate::driver::workload::{ClientMode, Reply};
use crate::load::Schedule;
use crate::plan::Plan;
use crate::record::{ErrorKind, Recorder, RunRecord, SeriesPoint};
use std::time::Duration;

/// The summary of a run of `plan` that recorded `c`.
pub fn of(plan: &Plan, mut c: RunRecord) -> Summary {
    let (measured, warm_for) = (c.measured, c.warm_for);
    let unit = plan.workload.request.len();
    let bulk = match plan.workload.mode {
        ClientMode::Stream => Some(c.total.sent_bytes),
        ClientMode::Source => Some(c.total.received_bytes),
        _ => None,
    };
    if let Some(bytes) = bulk {
        c.total.messages = bytes / unit as u64;
    }
    let cpu_s = (c.cpu.user + c.cpu.sys).as_secs_f64();
    let mut s = Summary {
        schema: SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_ms: c.started_unix_ms,
        target: plan.target.url.clone(),
        protocol: plan.target.scheme.protocol.into(),
        mode: plan.workload.mode.name().into(),
        config: config(plan, &c.total),
        duration_s: measured.as_secs_f64(),
        ok: c.total.ok,
        errors: ErrorSummary::of(&c.total),
        // Only streams to a wirebench sink carry the receiver's count; elsewhere it is a no-op.
        throughput: Throughput::of(&c.total, measured, bulk.map(|_| unit))
            .with_receiver(&c.total, measured, unit),
        latency: Distribution::of(&c.total.latency),
        service_time: Distribution::of(&c.total.service),
        connect: Distribution::of(&c.total.connect),
        open_loop: plan
            .load
            .schedule()
            .map(|sched| open_loop(plan, sched, &c.total, measured)),
        datagrams: (plan.target.family() == Family::Datagram).then(|| datagrams(&c.total)),
        http: plan
            .workload
            .spec_of::<HttpSpec>()
            .map(|spec| http_summary(spec, &c.total, measured)),
        mix: (plan.workload.spec_of::<HttpSpec>())
            .and_then(|spec| super::mix::of(spec, &c.total, measured)),
        warmup: plan.warmup.map(|_| super::Warmup {
            duration_s: warm_for.as_secs_f64(),
            ok: c.warm.ok,
            errors: c.warm.errors.total(),
            p50_us: (!c.warm.latency.is_empty())
                .then(|| c.warm.latency.value_at_quantile(0.5) as f64 / 1000.0),
            steady: c.settled.map(|s| super::Steady {
                steady: s.steady,
                cov_pct: s.cov.map(|c| c * 100.0),
                judged: s.judged.to_string(),
                window_s: s.window as u32,
                bound_pct: s.bound * 100.0,
            }),
        }),
        series: with_messages(
            plan,
            with_offered(plan, c.series, c.measured_from, measured),
        ),
        generator: super::Generator {
            threads: plan.threads,
            cpu_user_s: c.cpu.user.as_secs_f64(),
            cpu_sys_s: c.cpu.sys.as_secs_f64(),
            cpu_percent_of_threads: 100.0 * cpu_s
                / (measured.as_secs_f64() * plan.threads as f64).max(1e-9),
            peak_rss_kib: c.peak_rss_kib,
            cpu_pressure_percent: c.machine.cpu_pressure_percent,
            steal_percent: c.machine.steal_percent,
        },
        notes: Vec::new(),
        shard: None,
        shards: None,
        stopped: None,
    };
    if plan.workload.mode == ClientMode::Source {
        // A download's receiver is this client: the bytes it read within the window.
        let t = std::mem::take(&mut s.throughput);
        s.throughput = t.in_window(c.total.received_bytes, measured, unit);
    }
    if bulk.is_some() {
        // A message is the operation of a bulk run: ok counts them, as ops/s rates them.
        s.ok = s
            .throughput
            .window_bytes
            .map_or(c.total.messages, |b| b / unit.max(1) as u64);
    }
    if plan.target.family() == Family::Datagram && plan.workload.mode == ClientMode::Stream {
        let sessions = plan.connections as u64;
        super::udp_stream::apply(&mut s, &c.total, measured, unit, sessions);
    } else if plan.workload.mode == ClientMode::Stream {
        if plan.workload.preamble().is_some() {
            missing_count(&mut s, c.total.peer.stream_failed);
        }
        sent_in_window(&mut s, measured, unit);
    }
    s.throughput.link = link(plan, &s.throughput, &c.total, bulk.is_some());
    s.notes = super::diagnose::notes(&s);
    if let Some((limit, owed)) = c.deadline_passed {
        s.notes.insert(0, deadline_note(plan, limit, owed));
    }
    if let Some(grace) = c.gone {
        let why = gone_note(plan, grace, &s);
        s.notes.insert(0, why.clone());
        s.stopped = Some(why);
    }
    s
}

/// A byte stream whose receiver's window count is known (TCP_INFO's acknowledged bytes, or the
/// sink's count): its sent rate and per-second rows become that count's, as its headline is.
/// What was written but reached the receiver only after the window (`drained_bytes`, named
/// in the report) was the last written on each connection (a byte stream keeps its order), so
/// it comes off the last rows. Before issue 38 the headline read 4.45 Gbit/s in-window while
/// "sent 557.84 MB/s" beside it counted the 4 MB still in buffers.
fn sent_in_window(s: &mut Summary, measured: Duration, unit: usize) {
    let Some(window) = s.throughput.window_bytes else {
        return;
    };
    let secs = measured.as_secs_f64().max(1e-9);
    s.throughput.sent_mb_per_s = window as f64 / secs / 1e6;
    let unit = unit.max(1) as u64;
    let mut excess = s
        .series
        .iter()
        .map(|p| p.sent_bytes)
        .sum::<u64>()
        .saturating_sub(window);
    for p in s.series.iter_mut().rev() {
        if excess == 0 {
            break;
        }
        let off = excess.min(p.sent_bytes);
        p.sent_bytes -= off;
        p.wire_sent_bytes = p.wire_sent_bytes.saturating_sub(off);
        p.ok = p.sent_bytes / unit;
        excess -= off;
    }
}

/// Why a run by count stopped early: its target stopped answering (see `engine::vitals`).
fn gone_note(plan: &Plan, grace: Duration, s: &Summary) -> String {
    let kinds: Vec<String> = s
        .errors
        .by_kind
        .iter()
        .map(|e| format!("{} {}", e.kind, crate::units::thousands(e.count)))
        .collect();
    let done = s.ok + s.errors.total;
    let of = plan.stop.requests.map_or(String::new(), |n| {
        format!(" of {}", crate::units::thousands(n))
    });
    format!(
        "the target stopped answering: nothing came back for {} while every connection failed ({}); the run stopped there with {}{of} requests done, and kept what it measured",
        crate::units::format_us(grace.as_secs_f64() * 1e6),
        kinds.join(", "),
        crate::units::thousands(done),
    )
}

/// A TCP stream to a wirebench sink that asked for the sink's count: a connection whose count
/// never came (the sink frozen, or dead) is an error of the run, as for a UDP stream; else a
/// frozen sink's run ended with exit 0 and the bytes the kernel buffered taken as delivered.
/// The `failed` connections are not counted again: each has its failure (timeout, reset …)
/// counted already, the kind that says what happened; one failed connection is one error.
fn missing_count(s: &mut Summary, failed: u64) {
    let missing = s.throughput.receiver_unreported.saturating_sub(failed);
    if missing == 0 {
        return;
    }
    super::udp_stream::add_error(
        s,
        "no_receiver_count",
        missing,
        format!(
            "the sink did not report what it received for {} connection(s) (is it `wirebench serve tcp --mode sink`, and running?)",
            crate::units::thousands(missing)
        ),
    );
}

/// The note of a run its overall limit (`--deadline`) ended: first, since it explains the rest.
fn deadline_note(plan: &Plan, limit: Duration, owed: u64) -> String {
    let Some(n) = plan.stop.requests else {
        return format!(
            "the run's deadline ({}) passed before its warm-up finished: nothing was measured; the target may be dead or frozen, else raise --deadline",
            crate::units::format_us(limit.as_secs_f64() * 1e6),
        );
    };
    let of = format!(" of {}", crate::units::thousands(n));
    format!(
        "the run's deadline ({}) passed before it finished: {} requests{of} unfinished (never sent, or not answered) count as timeout errors; the target may be dead or frozen, else raise --deadline",
        crate::units::format_us(limit.as_secs_f64() * 1e6),
        crate::units::thousands(owed),
    )
}

/// With `--link`: the rates against the link. An upload's payload is what the receiver
/// acknowledged (TCP_INFO), not what was written.
fn link(plan: &Plan, t: &Throughput, total: &Recorder, bulk: bool) -> Option<super::link::Link> {
    let link = plan.link.as_ref()?;
    // The headline's rule: a stream's bytes acknowledged within the window, over it.
    let acked_per_s = (plan.workload.mode == ClientMode::Stream)
        .then(|| total.peer.acked_in_window())
        .flatten()
        .map(|_| t.gbit_per_s * 1e9 / 8.0);
    let mut traffic = super::link::traffic(t, bulk, acked_per_s);
    // Requests sent in the window whose replies came after it are in the sent bytes but not
    // in ops/s: a request's size is the bytes sent over every request answered.
    if traffic.direction == "sent" && traffic.message_bytes.is_some() && total.ok > 0 {
        traffic.message_bytes = Some(total.sent_bytes as f64 / total.ok as f64);
    }
    let (family, addr) = (plan.target.family(), plan.target.addr);
    Some(super::link::of(link, traffic, total.segment, family, addr))
}

/// An HTTP run's statuses, first-byte times and goodput.
fn http_summary(spec: &HttpSpec, total: &Recorder, measured: Duration) -> super::Http {
    let first = &spec.requests[0];
    let one_method = spec.requests.iter().all(|r| r.method == first.method);
    super::Http {
        // Several requests in turn (`--targets`): their methods are in `path`'s list.
        method: if one_method {
            first.method.clone()
        } else {
            "mixed".into()
        },
        path: spec.path_text.clone(),
        requests: spec.requests.len(),
        keepalive: spec.keepalive,
        version: match (spec.http2, spec.http3) {
            (_, true) => "3",
            (true, _) => "2",
            _ => "1.1",
        }
        .into(),
        status: total
            .status
            .iter()
            .map(|(code, count)| super::StatusCount { code, count })
            .collect(),
        status_2xx: total.status.class(2),
        status_3xx: total.status.class(3),
        status_4xx: total.status.class(4),
        status_5xx: total.status.class(5),
        body_bytes: total.received_bytes,
        // What arrived within the window: a body still coming at the deadline counts its
        // bytes read by then (the rest is `drained_bytes`).
        goodput_mb_per_s: total
            .received_bytes
            .saturating_sub(total.received_after_bytes) as f64
            / measured.as_secs_f64().max(1e-9)
            / 1e6,
        ttfb: Distribution::of(&total.ttfb),
        server_closes: total.server_closes,
        resent: total.resent,
    }
}

/// What became of a UDP run's datagrams.
fn datagrams(total: &Recorder) -> Datagrams {
    let percent = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
    let lost = total.errors.count(ErrorKind::Timeout);
    let peer = &total.peer;
    Datagrams {
        sent: total.issued,
        answered: total.ok,
        lost,
        loss_percent: percent(lost, total.ok + lost),
        late: total.late,
        duplicated: total.duplicates,
        reordered: total.reordered,
        host_queue_full: peer.held_back,
        server: (peer.reports > 0).then(|| ServerCount {
            sent: peer.sent,
            received: peer.received,
            lost: peer.lost(),
            loss_percent: percent(peer.lost(), peer.sent),
            out_of_order: peer.out_of_order,
            duplicated: peer.duplicated,
            jitter_us: peer.jitter_us,
        }),
    }
}

/// How the open loop kept to `schedule` over the measured time.
fn open_loop(plan: &Plan, schedule: &Schedule, total: &Recorder, measured: Duration) -> OpenLoop {
    let secs = measured.as_secs_f64().max(1e-9);
    let mut offered = schedule.due_before(measured);
    if let Some(n) = plan.stop.requests {
        offered = offered.min(n);
    }
    OpenLoop::of(
        plan.schedule_text.clone().unwrap_or_default(),
        offered,
        total,
        secs,
        kept_up(plan.workload.mode, total, offered),
    )
}

/// Whether the run kept up with `offered`: ok replies reached 99 % of it. A stream has no
/// replies, so there it is what was sent that must reach 99 %, and of that the server (when it
/// counts) must have received 99 %.
fn kept_up(mode: ClientMode, total: &Recorder, offered: u64) -> bool {
    let enough = |n: u64, of: u64| n as f64 >= 0.99 * of as f64;
    match mode {
        ClientMode::Stream | ClientMode::Source => {
            let peer = &total.peer;
            enough(total.issued, offered)
                && (peer.reports == 0 || enough(peer.sent - peer.lost(), peer.sent))
        }
        _ => enough(total.ok, offered),
    }
}

/// Gives each second of the series its true length (the part of it inside the measured span,
/// which begins `from` after the series' origin: the first and last may be partial) and, in the
/// open loop, the requests its schedule offered in that part.
fn with_offered(
    plan: &Plan,
    mut series: Vec<SeriesPoint>,
    from: Duration,
    measured: Duration,
) -> Vec<SeriesPoint> {
    let shift = SeriesPoint::fit_to_span(&mut series, from, measured);
    if let Some(s) = plan.load.schedule() {
        // Read in order: Poisson arrivals' counts then cost one pass, not one per second.
        let mut clock = crate::load::schedule::Clock::new(s.clone());
        let end = from + measured;
        for p in &mut series {
            let second = Duration::from_secs(p.second + shift);
            let begin = second.max(from).min(end);
            let to = (second + Duration::from_secs(1)).min(end).max(begin);
            let before = clock.due(begin, false);
            p.offered = Some(clock.due(to, false) - before);
        }
    }
    series
}

/// A bulk run's seconds count messages as their operations (bytes moved / message size), so
/// that per-second ops agree with the run's.
fn with_messages(plan: &Plan, mut series: Vec<SeriesPoint>) -> Vec<SeriesPoint> {
    let unit = plan.workload.request.len().max(1) as u64;
    for p in &mut series {
        match plan.workload.mode {
            ClientMode::Stream => p.ok = p.sent_bytes / unit,
            ClientMode::Source => p.ok = p.received_bytes / unit,
            _ => {}
        }
    }
    series
}

/// The run's settings, as the report shows them.
fn config(plan: &Plan, total: &crate::record::Recorder) -> super::Config {
    let files = plan
        .workload
        .spec_of::<HttpSpec>()
        .and_then(|h| h.files.as_deref());
    super::Config {
        connections: plan.connections,
        threads: plan.threads,
        pipeline: plan.load.in_flight_limit(),
        think_s: plan.load.think().map(|d| d.as_secs_f64()),
        think_achieved_s: (total.thinks > 0)
            .then(|| total.think_ns as f64 / total.thinks as f64 / 1e9),
        request_bytes: plan.workload.request.len(),
        reply_bytes: match &plan.workload.reply {
            // A datagram is one reply whatever its size: say what came back, not what was
            // expected (a third-party server may answer 30 B with 46 B).
            Reply::Size(_)
                if plan.target.family() == Family::Datagram
                    && plan.workload.mode == ClientMode::Rr
                    && total.received_bytes > 0 =>
            {
                let replies = total.ok + total.late + total.duplicates;
                Some((total.received_bytes as f64 / replies.max(1) as f64).round() as usize)
            }
            // A reply of no stated size (0: DICOM's responses are the peer's) has none to report.
            Reply::Size(n)
                if *n > 0
                    && !matches!(plan.workload.mode, ClientMode::Stream | ClientMode::Source) =>
            {
                Some(*n)
            }
            _ => None,
        },
        reply_until: match &plan.workload.reply {
            Reply::Until(d) => Some(crate::units::escape(d)),
            Reply::Size(_) => None,
        },
        preamble: plan.workload.preamble().is_some(),
        duration_s: plan.stop.duration.map(|d| d.as_secs_f64()),
        requests: plan.stop.requests,
        timeout_s: plan.timeout.as_secs_f64(),
        nodelay: plan.socket.nodelay,
        sndbuf: plan.socket.sndbuf,
        rcvbuf: plan.socket.rcvbuf,
        seed: plan.is_random().then_some(plan.seed),
        think_law: plan
            .load
            .thinking()
            .filter(|t| t.exp_seed.is_some())
            .map(|t| t.law().to_string()),
        dataset_bytes: files.map(|f| f.bytes),
        dataset_files: files.map(|f| f.files),
        popularity: files.map(|f| f.popularity.text()),
        cache: plan.cache.map(|c| c.name().to_string()),
        // Read for the runs it speaks to (a data set served from memory or disk, a cache state):
        // finding the listener walks every process's open files, ~300 readlink calls on a quiet
        // machine and thousands on a busy one, which a plain run's client paid for in its CPU
        // time (~1% of a 3 s crr run's) and its end.
        server_memory_limit_bytes: (files.is_some() || plan.cache.is_some())
            .then(|| server_memory_limit(plan))
            .flatten(),
    }
}

/// The memory limit of the server listening on the target's port, when it runs here.
fn server_memory_limit(plan: &Plan) -> Option<u64> {
    let addr = plan.target.addr;
    if !addr.ip().is_loopback() {
        return None;
    }
    crate::sys::cgroup::listener_of(addr.port()).and_then(crate::sys::cgroup::memory_limit_of)
}
