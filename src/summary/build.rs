//! Builds the [`Summary`] of a finished run from its plan and what it recorded: the rates,
//! distributions and sections each protocol and load model adds, then the diagnosis notes.
//!
//! A pure function of the two: what the run's operations were comes from the plan as the
//! drivers describe it ([`Exchange`]: protocol, family, mode, a protocol's own facts), and
//! what the machine showed (the server's memory limit, the port range) from the record, read
//! by the engine; nothing here reads the operating system or names a driver.

use super::{
    Datagrams, Distribution, ErrorSummary, OpenLoop, ServerCount, Summary, Throughput, SCHEMA,
};
use crate::load::Schedule;
use crate::plan::Plan;
use crate::record::exchange::{ClientMode, Exchange, Family, HttpFacts, Reply};
use crate::record::{ErrorKind, Recorder, RunRecord, SeriesPoint};
use std::time::Duration;

/// The summary of a run of `plan` that recorded `c`.
pub fn of(plan: &Plan, mut c: RunRecord) -> Summary {
    let x = plan.exchange();
    let measured = c.measured;
    let unit = x.request_bytes;
    let bulk = match x.mode {
        ClientMode::Stream => Some(c.total.sent_bytes),
        ClientMode::Source => Some(c.total.received_bytes),
        _ => None,
    };
    if let Some(bytes) = bulk {
        c.total.messages = bytes / unit as u64;
    }
    let series = std::mem::take(&mut c.series);
    let mut s = Summary {
        schema: SCHEMA.into(),
        wirebench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_ms: c.started_unix_ms,
        target: x.url.clone(),
        protocol: x.protocol,
        mode: x.mode,
        config: config(plan, &x, &c),
        duration_s: measured.as_secs_f64(),
        ok: c.total.ok,
        errors: ErrorSummary::of(&c.total),
        // Only streams to a wirebench sink carry the receiver's count; elsewhere it is a no-op.
        throughput: Throughput::of(&c.total, measured, bulk.map(|_| unit))
            .with_receiver(&c.total, measured, unit),
        latency: Distribution::of(&c.total.latency),
        service_time: Distribution::of(&c.total.service),
        connect: Distribution::of(&c.total.connect),
        open_loop: (plan.load.schedule())
            .map(|sched| open_loop(plan, x.mode, sched, &c.total, measured)),
        datagrams: (x.family == Family::Datagram).then(|| datagrams(&c.total)),
        http: (x.http.as_ref()).map(|h| http_summary(h, &c.total, measured)),
        mix: (x.mix.as_ref()).map(|m| super::mix::of(m, &c.total, measured)),
        warmup: plan.warmup.map(|_| warmup(&c)),
        series: with_messages(&x, with_offered(plan, series, c.measured_from, measured)),
        generator: generator(plan, &c),
        notes: Vec::new(),
        shard: None,
        shards: None,
        stopped: None,
    };
    in_window(&mut s, plan, &x, &c.total, measured, bulk.is_some());
    s.throughput.link = link(plan, &x, &s.throughput, &c.total, bulk.is_some());
    with_notes(&mut s, plan, &c);
    s
}

/// What a bulk run moved within its window: a download's bytes read in it, a stream's bytes
/// its receiver counted (a message is the operation of a bulk run: ok counts them, as ops/s
/// rates them); a UDP stream's losses.
fn in_window(
    s: &mut Summary,
    plan: &Plan,
    x: &Exchange,
    total: &Recorder,
    measured: Duration,
    bulk: bool,
) {
    let unit = x.request_bytes;
    if x.mode == ClientMode::Source {
        // A download's receiver is this client: the bytes it read within the window.
        let t = std::mem::take(&mut s.throughput);
        s.throughput = t.in_window(total.received_bytes, measured, unit);
    }
    if bulk {
        s.ok = s
            .throughput
            .window_bytes
            .map_or(total.messages, |b| b / unit.max(1) as u64);
    }
    if x.family == Family::Datagram && x.mode == ClientMode::Stream {
        let sessions = plan.connections as u64;
        super::udp_stream::apply(s, total, measured, unit, sessions);
    } else if x.mode == ClientMode::Stream {
        if x.preamble {
            missing_count(s, total.peer.stream_failed);
        }
        sent_in_window(s, measured, unit);
    }
}

/// The notes: the diagnosis's, then why the run ended early (its deadline, its target gone).
fn with_notes(s: &mut Summary, plan: &Plan, c: &RunRecord) {
    s.notes = super::diagnose::notes(s, &c.host);
    if let Some((limit, owed)) = c.deadline_passed {
        s.notes.insert(0, deadline_note(plan, limit, owed));
    }
    if let Some(grace) = c.gone {
        let why = gone_note(plan, grace, s);
        s.notes.insert(0, why.clone());
        s.stopped = Some(why);
    }
}

/// The warm-up's own line, and how a warm-up until steady state ended.
fn warmup(c: &RunRecord) -> super::Warmup {
    super::Warmup {
        duration_s: c.warm_for.as_secs_f64(),
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
    }
}

/// What the generator itself used: its threads' CPU time and share, its memory, and how
/// contended the machine was.
fn generator(plan: &Plan, c: &RunRecord) -> super::Generator {
    let cpu_s = (c.cpu.user + c.cpu.sys).as_secs_f64();
    super::Generator {
        threads: plan.threads,
        cpu_user_s: c.cpu.user.as_secs_f64(),
        cpu_sys_s: c.cpu.sys.as_secs_f64(),
        cpu_percent_of_threads: 100.0 * cpu_s
            / (c.measured.as_secs_f64() * plan.threads as f64).max(1e-9),
        peak_rss_kib: c.peak_rss_kib,
        cpu_pressure_percent: c.machine.cpu_pressure_percent,
        steal_percent: c.machine.steal_percent,
    }
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
fn link(
    plan: &Plan,
    x: &Exchange,
    t: &Throughput,
    total: &Recorder,
    bulk: bool,
) -> Option<super::link::Link> {
    let link = plan.link.as_ref()?;
    // The headline's rule: a stream's bytes acknowledged within the window, over it.
    let acked_per_s = (x.mode == ClientMode::Stream)
        .then(|| total.peer.acked_in_window())
        .flatten()
        .map(|_| t.gbit_per_s * 1e9 / 8.0);
    let mut traffic = super::link::traffic(t, bulk, acked_per_s);
    // Requests sent in the window whose replies came after it are in the sent bytes but not
    // in ops/s: a request's size is the bytes sent over every request answered.
    if traffic.direction == "sent" && traffic.message_bytes.is_some() && total.ok > 0 {
        traffic.message_bytes = Some(total.sent_bytes as f64 / total.ok as f64);
    }
    Some(super::link::of(
        link,
        traffic,
        total.segment,
        x.family,
        x.addr,
    ))
}

/// An HTTP run's statuses, first-byte times and goodput.
fn http_summary(h: &HttpFacts, total: &Recorder, measured: Duration) -> super::Http {
    super::Http {
        method: h.method.clone(),
        path: h.path.clone(),
        requests: h.requests,
        keepalive: h.keepalive,
        version: h.version.into(),
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
fn open_loop(
    plan: &Plan,
    mode: ClientMode,
    schedule: &Schedule,
    total: &Recorder,
    measured: Duration,
) -> OpenLoop {
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
        kept_up(mode, total, offered),
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
fn with_messages(x: &Exchange, mut series: Vec<SeriesPoint>) -> Vec<SeriesPoint> {
    let unit = x.request_bytes.max(1) as u64;
    for p in &mut series {
        match x.mode {
            ClientMode::Stream => p.ok = p.sent_bytes / unit,
            ClientMode::Source => p.ok = p.received_bytes / unit,
            _ => {}
        }
    }
    series
}

/// The run's settings, as the report shows them.
fn config(plan: &Plan, x: &Exchange, c: &RunRecord) -> super::Config {
    let (total, files) = (&c.total, x.files.as_ref());
    super::Config {
        connections: plan.connections,
        threads: plan.threads,
        pipeline: plan.load.in_flight_limit(),
        think_s: plan.load.think().map(|d| d.as_secs_f64()),
        think_achieved_s: (total.thinks > 0)
            .then(|| total.think_ns as f64 / total.thinks as f64 / 1e9),
        request_bytes: x.request_bytes,
        reply_bytes: reply_bytes(x, total),
        reply_until: match &x.reply {
            Reply::Until(d) => Some(crate::units::escape(d)),
            Reply::Size(_) => None,
        },
        preamble: x.preamble,
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
        popularity: files.map(|f| f.popularity.clone()),
        cache: plan.cache.map(|c| c.name().to_string()),
        // Read by the engine for the runs it speaks to (a data set, a cache state).
        server_memory_limit_bytes: c.host.server_memory_limit_bytes,
    }
}

/// The reply size the report states.
fn reply_bytes(x: &Exchange, total: &Recorder) -> Option<usize> {
    match &x.reply {
        // A datagram is one reply whatever its size: say what came back, not what was
        // expected (a third-party server may answer 30 B with 46 B).
        Reply::Size(_)
            if x.family == Family::Datagram
                && x.mode == ClientMode::Rr
                && total.received_bytes > 0 =>
        {
            let replies = total.ok + total.late + total.duplicates;
            Some((total.received_bytes as f64 / replies.max(1) as f64).round() as usize)
        }
        // A reply of no stated size (0: DICOM's responses are the peer's) has none to report.
        Reply::Size(n) if *n > 0 && !x.mode.bulk() => Some(*n),
        _ => None,
    }
}
