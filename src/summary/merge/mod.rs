//! Several results added into one (`wirebench merge`), as wrk2 adds its threads' histograms:
//! the results are taken as measured at the same time against one target (several load
//! generators, vegeta's composable results), so counts, bytes and histograms add exactly
//! (HdrHistogram addition: every percentile of the merged result is exact, never an average of
//! percentiles), and the rates are the added counts over the longest measured time.
//!
//! Each second of the series carries its latency histogram, so seconds add exactly too (the
//! per-second p50/p99 of the merge are those of all samples of that second). What cannot be
//! added exactly is left out rather than guessed: the per-second p50/p99 of results written
//! before seconds kept histograms, the `--link` section, the warm-up's median and the
//! diagnosis notes (a note says the result is merged).

mod series;

use super::{Distribution, ErrorEntry, Summary, Throughput, Warmup};
use series::series;

/// Results that do not add into one.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No result at all.
    #[error("nothing to merge")]
    Nothing,
    /// Concurrent results whose windows share no instant.
    #[error("these results did not run together: {late} was measured {gap_s:.1} s after {early} had ended, and merge adds runs measured at the same time (several generators, one load); to add runs made one after another (rates over their summed time), add --sequential")]
    NotTogether {
        /// The target of the result that began last.
        late: String,
        /// The target of the result that ended first.
        early: String,
        /// Seconds between them.
        gap_s: f64,
    },
    /// Results of another protocol or mode.
    #[error("cannot merge a {} {} result with a {} {} one: merge results of one protocol and mode", .first.0, .first.1, .other.0, .other.1)]
    Unlike {
        /// The first result's protocol and mode.
        first: (String, String),
        /// The other's.
        other: (String, String),
    },
    /// A distribution's histogram that does not read back.
    #[error(transparent)]
    Encoded(#[from] super::EncodedError),
    /// Histograms of bounds that do not add.
    #[error("histograms do not add: {0:?}")]
    Add(hdrhistogram::AdditionError),
    /// A second's histogram that does not read back.
    #[error("result {result}, series[{point}].histogram: {error}")]
    Second {
        /// The result, from 1.
        result: usize,
        /// The point of its series.
        point: usize,
        /// What is wrong.
        error: crate::record::HistogramError,
    },
    /// The seconds' histograms added beyond the bounds.
    #[error(transparent)]
    Histogram(#[from] crate::record::HistogramError),
    /// The parts' seconds span far more seconds than they hold points.
    #[error("the results' per-second series span {span} seconds but hold {held} points: not results of one time, or a damaged document (a series' second, or a start, far off)")]
    Span {
        /// Seconds spanned.
        span: usize,
        /// Points held.
        held: usize,
    },
    /// A thread adding seconds stopped (a bug: nothing it reads can make it panic).
    #[error("a thread adding the seconds' histograms stopped: merge again")]
    Thread,
}

/// The wall-clock measured window of a result, ms since the Unix epoch: [start, end).
fn window(p: &Summary) -> (f64, f64) {
    let start = p.started_unix_ms as f64;
    (start, start + p.duration_s * 1000.0)
}

/// Refuses results whose measured windows share no instant: they did not run together, and
/// adding them as concurrent would claim a load (and rates) no target ever saw.
fn check_together(parts: &[Summary]) -> Result<(), MergeError> {
    let latest = parts
        .iter()
        .max_by(|a, b| window(a).0.total_cmp(&window(b).0));
    let earliest = parts
        .iter()
        .min_by(|a, b| window(a).1.total_cmp(&window(b).1));
    let (Some(late), Some(early)) = (latest, earliest) else {
        return Ok(());
    };
    let gap_s = (window(late).0 - window(early).1) / 1000.0;
    if gap_s < 0.0 {
        return Ok(());
    }
    Err(MergeError::NotTogether {
        late: late.target.clone(),
        early: early.target.clone(),
        gap_s,
    })
}

/// Adds `parts` into one result; they must measure the same protocol and mode, and have run
/// at the same time unless `sequential` (then their measured times add up, one after another).
pub fn merge(parts: &[Summary], sequential: bool) -> Result<Summary, MergeError> {
    if !sequential {
        check_together(parts)?;
    }
    add_parts(parts, sequential)
}

/// Adds `parts` that were started together by agreement (shards released at one `--start-at`):
/// their windows need not overlap, since a short run (a few requests) can end before a shard
/// released a few ms later begins; each shard's lateness is its own figure (`skew_ms`).
pub fn merge_released_together(parts: &[Summary]) -> Result<Summary, MergeError> {
    add_parts(parts, false)
}

/// [`merge`] without the check that the parts ran at the same time.
fn add_parts(parts: &[Summary], sequential: bool) -> Result<Summary, MergeError> {
    let first = parts.first().ok_or(MergeError::Nothing)?;
    if let Some(p) = parts
        .iter()
        .find(|p| p.protocol != first.protocol || p.mode != first.mode)
    {
        return Err(MergeError::Unlike {
            first: (first.protocol.to_string(), first.mode.to_string()),
            other: (p.protocol.to_string(), p.mode.to_string()),
        });
    }
    let mut m = first.clone();
    let duration = match sequential {
        true => parts.iter().map(|p| p.duration_s).sum(),
        false => parts.iter().map(|p| p.duration_s).fold(0.0, f64::max),
    };
    m.duration_s = duration;
    m.started_unix_ms = parts.iter().map(|p| p.started_unix_ms).min().unwrap_or(0);
    let mut targets: Vec<&str> = parts.iter().map(|p| p.target.as_str()).collect();
    targets.dedup();
    m.target = targets.join(" + ");
    m.ok = parts.iter().map(|p| p.ok).sum();
    m.config.connections = parts.iter().map(|p| p.config.connections).sum();
    m.config.threads = parts.iter().map(|p| p.config.threads).sum();
    m.errors = errors(parts);
    // The rates are of what arrived within each part's window; replies after it are counted.
    let after: u64 = parts.iter().map(ok_after_window).sum();
    let in_window = m.ok.saturating_sub(after);
    m.throughput = throughput(parts, in_window, after, duration);
    m.latency = add(parts.iter().map(|p| p.latency.as_ref()))?;
    m.service_time = add(parts.iter().map(|p| p.service_time.as_ref()))?;
    m.connect = add(parts.iter().map(|p| p.connect.as_ref()))?;
    m.open_loop = open_loop(parts, in_window, after, duration)?;
    m.datagrams = datagrams(parts);
    m.http = http(parts, duration)?;
    m.warmup = m.warmup.map(|w| warmup(parts, w));
    m.series = series(parts, sequential)?;
    m.stopped = parts.iter().find_map(|p| p.stopped.clone());
    m.generator = generator(parts, duration);
    m.notes = vec![merge_note(&m, parts.len(), sequential, duration)];
    m.notes.extend(parts_notes(parts));
    Ok(m)
}

/// The merged warm-up line (`w`, the first part's): the parts' counts added; no median, which
/// cannot be added.
fn warmup(parts: &[Summary], mut w: Warmup) -> Warmup {
    w.ok = parts
        .iter()
        .filter_map(|p| p.warmup.as_ref())
        .map(|w| w.ok)
        .sum();
    w.errors = parts
        .iter()
        .filter_map(|p| p.warmup.as_ref())
        .map(|w| w.errors)
        .sum();
    w.p50_us = None;
    w
}

/// The note that says how `m` was merged from `parts` results over `duration` seconds.
fn merge_note(m: &Summary, parts: usize, sequential: bool, duration: f64) -> String {
    let kept = m
        .series
        .iter()
        .all(|p| p.p50_us.is_some() || p.max_us.is_none());
    let over = match sequential {
        true => "run one after another: rates over their summed measured time",
        false => "rates over the longest measured time",
    };
    format!(
        "merged from {parts} results: counts and histograms added exactly; {over} ({duration:.2} s); {}",
        match kept {
            true => "per-second p50/p99 from the seconds' histograms added",
            false => "per-second p50/p99 not kept (a result without per-second histograms)",
        }
    )
}

/// The parts' own notes (requests never sent, a generator at its limit, a warm-up that never
/// settled …), each named by its part: a note is of one generator's run and is not added or
/// re-derived, but it stays true of the merge (before issue 38 a merge dropped them all). At
/// most [`PART_NOTES`], then how many more the parts hold.
fn parts_notes(parts: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    let mut more = 0usize;
    for (i, p) in parts.iter().enumerate() {
        let name = match &p.shard {
            Some(sh) => format!("shard {} of {} ({})", sh.rank, sh.world, sh.host),
            None => format!("result {}", i + 1),
        };
        // A part that is itself a merge carries the merge's own lines: not of one run.
        let own = p.notes.iter().filter(|n| !is_merge_note(n));
        for n in own {
            match out.len() < PART_NOTES {
                true => out.push(format!("{name}: {n}")),
                false => more += 1,
            }
        }
    }
    if more > 0 {
        out.push(format!(
            "and {more} more notes of the parts (in each part's own document)"
        ));
    }
    out
}

/// The parts' notes a merge keeps at most, so that 200 shards make no page of notes.
const PART_NOTES: usize = 40;

/// Whether `note` is one a merge writes about itself (not a part's run).
fn is_merge_note(note: &str) -> bool {
    note.starts_with("merged from ")
        || note.contains(" shards of one plan (")
        || note.contains("began later than --max-skew")
        || note.starts_with("shard ")
        || note.starts_with("result ")
}

/// The schedule of several open loops run together: their rates added when each is a
/// constant `R/s` (`3000/s (3 × 1000/s)`, `3000/s (1000/s + 2000/s)`), else the parts'
/// schedules named (`3 × 1000..5000/30s`). Before issue 38 a merge showed the first shard's
/// `1000/s` beside 3000/s offered.
fn schedule(parts: &[&super::OpenLoop]) -> String {
    let texts: Vec<&str> = parts.iter().map(|o| o.schedule.as_str()).collect();
    let Some(first) = texts.first() else {
        return String::new();
    };
    if texts.len() == 1 || first.is_empty() {
        return first.to_string();
    }
    let same = texts.iter().all(|t| t == first);
    // `1000/s`, or `1000/s Poisson` (arrivals of one law add up to that law at the sum).
    let rate_of = |t: &str| -> Option<(f64, bool)> {
        let (t, poisson) = match t.strip_suffix(" Poisson") {
            Some(t) => (t, true),
            None => (t, false),
        };
        let r = t.strip_suffix("/s")?.trim().parse::<f64>().ok()?;
        r.is_finite().then_some((r, poisson))
    };
    let constant: Option<Vec<(f64, bool)>> = texts.iter().map(|t| rate_of(t)).collect();
    let parts_text = match same {
        true => format!("{} × {first}", texts.len()),
        false => texts.join(" + "),
    };
    match constant {
        Some(rates) if rates.iter().all(|r| r.1 == rates[0].1) => {
            let poisson = rates[0].1;
            let sum: f64 = rates.iter().map(|r| r.0).sum();
            let sum = match (sum - sum.round()).abs() < 1e-6 {
                true => crate::units::thousands(sum.round() as u64),
                false => format!("{sum:.1}"),
            };
            let law = if poisson { " Poisson" } else { "" };
            format!("{sum}/s{law} ({parts_text})")
        }
        _ => parts_text,
    }
}

/// The distributions added: decoded, histograms added, summarised again.
fn add<'a>(
    ds: impl Iterator<Item = Option<&'a Distribution>>,
) -> Result<Option<Distribution>, MergeError> {
    let mut total: Option<hdrhistogram::Histogram<u64>> = None;
    for d in ds.flatten() {
        let h = d.histogram.decode()?;
        match total.as_mut() {
            None => total = Some(h),
            Some(t) => t.add(&h).map_err(MergeError::Add)?,
        }
    }
    Ok(total.and_then(|h| Distribution::of(&h)))
}

/// Errors by kind, counts added, the first sample kept.
fn errors(parts: &[Summary]) -> super::ErrorSummary {
    let mut by_kind: Vec<ErrorEntry> = Vec::new();
    for e in parts.iter().flat_map(|p| &p.errors.by_kind) {
        match by_kind.iter_mut().find(|k| k.kind == e.kind) {
            Some(k) => k.count += e.count,
            None => by_kind.push(e.clone()),
        }
    }
    super::ErrorSummary {
        total: parts.iter().map(|p| p.errors.total).sum(),
        by_kind,
    }
}

/// A part's ok replies after its window (results before issue 38 say so in their open loop only).
fn ok_after_window(p: &Summary) -> u64 {
    let open = p.open_loop.as_ref().map_or(0, |o| o.replies_after_window);
    p.throughput.ok_after_window.max(open)
}

/// Rates over `secs` of the added counts: `ok` replies within the windows, `after` after them.
fn throughput(parts: &[Summary], ok: u64, after: u64, secs: f64) -> Throughput {
    let secs = secs.max(1e-9);
    let sum = |f: &dyn Fn(&Throughput) -> f64| parts.iter().map(|p| f(&p.throughput)).sum::<f64>();
    let (sent, received) = (
        parts.iter().map(|p| p.throughput.sent_bytes).sum::<u64>(),
        parts
            .iter()
            .map(|p| p.throughput.received_bytes)
            .sum::<u64>(),
    );
    // Messages per part are its rate × its time; added, then over the longest time.
    let messages = parts
        .iter()
        .map(|p| p.throughput.messages_per_s * p.duration_s)
        .sum::<f64>();
    let receiver: Option<u64> = parts.iter().map(|p| p.throughput.receiver_bytes).sum();
    let window: Option<u64> = parts.iter().map(|p| p.throughput.window_bytes).sum();
    Throughput {
        ops_per_s: ok as f64 / secs,
        messages_per_s: messages / secs,
        sent_bytes: sent,
        received_bytes: received,
        wire_sent_bytes: parts.iter().map(|p| p.throughput.wire_sent_bytes).sum(),
        wire_received_bytes: parts.iter().map(|p| p.throughput.wire_received_bytes).sum(),
        sent_mb_per_s: sent as f64 / secs / 1e6,
        received_mb_per_s: received as f64 / secs / 1e6,
        gbit_per_s: match window {
            Some(b) => b as f64 * 8.0 / secs / 1e9,
            None => (sent + received) as f64 * 8.0 / secs / 1e9,
        },
        window_bytes: window,
        receiver_bytes: receiver,
        drained_bytes: parts.iter().map(|p| p.throughput.drained_bytes).sum(),
        ok_after_window: after,
        receiver_unreported: sum(&|t| t.receiver_unreported as f64) as u64,
        sender_messages_per_s: None,
        sender_gbit_per_s: None,
        link: None,
    }
}

/// The open-loop sections added; rates over `secs`: `ok` replies within the windows, `after`
/// after them (kept up, as one run judges it, counts both).
fn open_loop(
    parts: &[Summary],
    ok: u64,
    after: u64,
    secs: f64,
) -> Result<Option<super::OpenLoop>, MergeError> {
    let all: Vec<&super::OpenLoop> = parts.iter().filter_map(|p| p.open_loop.as_ref()).collect();
    if all.is_empty() {
        return Ok(None);
    }
    let secs = secs.max(1e-9);
    let offered: u64 = all.iter().map(|o| o.offered).sum();
    let sent: u64 = all.iter().map(|o| o.sent).sum();
    let achieved = ok as f64 / secs;
    Ok(Some(super::OpenLoop {
        schedule: schedule(&all),
        offered,
        offered_per_s: offered as f64 / secs,
        sent,
        sent_per_s: sent as f64 / secs,
        achieved_per_s: achieved,
        behind_schedule: all.iter().map(|o| o.behind_schedule).sum(),
        max_lag_us: all.iter().map(|o| o.max_lag_us).fold(0.0, f64::max),
        send_lag: add(all.iter().map(|o| o.send_lag.as_ref()))?,
        wake_lag: add(all.iter().map(|o| o.wake_lag.as_ref()))?,
        kept_up: (ok + after) as f64 >= 0.99 * offered as f64,
        replies_after_window: all.iter().map(|o| o.replies_after_window).sum(),
        owed_at_end: all.iter().map(|o| o.owed_at_end).sum(),
    }))
}

/// The datagram sections added; percentages recomputed.
fn datagrams(parts: &[Summary]) -> Option<super::Datagrams> {
    let all: Vec<&super::Datagrams> = parts.iter().filter_map(|p| p.datagrams.as_ref()).collect();
    all.first()?;
    let sum = |f: &dyn Fn(&super::Datagrams) -> u64| all.iter().map(|d| f(d)).sum::<u64>();
    let (sent, lost) = (sum(&|d| d.sent), sum(&|d| d.lost));
    let servers: Option<Vec<&super::ServerCount>> = all.iter().map(|d| d.server.as_ref()).collect();
    let server = servers.map(|s| {
        let sum = |f: &dyn Fn(&super::ServerCount) -> u64| s.iter().map(|c| f(c)).sum::<u64>();
        let (sent, lost) = (sum(&|c| c.sent), sum(&|c| c.lost));
        super::ServerCount {
            sent,
            received: sum(&|c| c.received),
            lost,
            loss_percent: 100.0 * lost as f64 / sent.max(1) as f64,
            out_of_order: sum(&|c| c.out_of_order),
            duplicated: sum(&|c| c.duplicated),
            jitter_us: s.iter().map(|c| c.jitter_us).fold(0.0, f64::max),
        }
    });
    Some(super::Datagrams {
        sent,
        answered: sum(&|d| d.answered),
        lost,
        loss_percent: 100.0 * lost as f64 / sent.max(1) as f64,
        late: sum(&|d| d.late),
        duplicated: sum(&|d| d.duplicated),
        reordered: sum(&|d| d.reordered),
        host_queue_full: sum(&|d| d.host_queue_full),
        server,
    })
}

/// The HTTP sections added: statuses, classes, bytes, first-byte times.
fn http(parts: &[Summary], secs: f64) -> Result<Option<super::Http>, MergeError> {
    let all: Vec<&super::Http> = parts.iter().filter_map(|p| p.http.as_ref()).collect();
    let Some(first) = all.first() else {
        return Ok(None);
    };
    let mut h = (*first).clone();
    h.status.clear();
    for s in all.iter().flat_map(|x| &x.status) {
        match h.status.iter_mut().find(|c| c.code == s.code) {
            Some(c) => c.count += s.count,
            None => h.status.push(s.clone()),
        }
    }
    h.status.sort_by_key(|c| c.code);
    h.status_2xx = all.iter().map(|x| x.status_2xx).sum();
    h.status_3xx = all.iter().map(|x| x.status_3xx).sum();
    h.status_4xx = all.iter().map(|x| x.status_4xx).sum();
    h.status_5xx = all.iter().map(|x| x.status_5xx).sum();
    h.body_bytes = all.iter().map(|x| x.body_bytes).sum();
    h.goodput_mb_per_s = h.body_bytes as f64 / secs.max(1e-9) / 1e6;
    h.ttfb = add(all.iter().map(|x| x.ttfb.as_ref()))?;
    Ok(Some(h))
}

/// The generators' use added.
fn generator(parts: &[Summary], secs: f64) -> super::Generator {
    let threads = parts.iter().map(|p| p.generator.threads).sum::<usize>();
    let user = parts.iter().map(|p| p.generator.cpu_user_s).sum::<f64>();
    let sys = parts.iter().map(|p| p.generator.cpu_sys_s).sum::<f64>();
    super::Generator {
        threads,
        cpu_user_s: user,
        cpu_sys_s: sys,
        cpu_percent_of_threads: 100.0 * (user + sys) / (secs * threads as f64).max(1e-9),
        peak_rss_kib: parts
            .iter()
            .map(|p| p.generator.peak_rss_kib)
            .max()
            .unwrap_or(0),
        // The busiest machine's: a shard's contended host is what the merged figures carry.
        cpu_pressure_percent: busiest(parts, |g| g.cpu_pressure_percent),
        steal_percent: busiest(parts, |g| g.steal_percent),
    }
}

/// The highest of the parts' figures `f`, None when no part has it.
fn busiest(parts: &[Summary], f: impl Fn(&super::Generator) -> Option<f64>) -> Option<f64> {
    parts
        .iter()
        .filter_map(|p| f(&p.generator))
        .reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{new_histogram, SeriesPoint};

    #[test]
    fn histograms_add_exactly() {
        let (mut a, mut b, mut both) = (new_histogram(), new_histogram(), new_histogram());
        for v in [1_000u64, 2_000, 3_000] {
            a.record(v).unwrap();
            both.record(v).unwrap();
        }
        for v in [50_000u64, 900_000] {
            b.record(v).unwrap();
            both.record(v).unwrap();
        }
        let (da, db) = (Distribution::of(&a), Distribution::of(&b));
        let merged = add([da.as_ref(), db.as_ref(), None].into_iter())
            .unwrap()
            .unwrap();
        assert_eq!(merged.histogram.decode().unwrap(), both);
        assert_eq!(merged.count, 5);
        assert_eq!(merged.p50_us, Distribution::of(&both).unwrap().p50_us);
    }

    proptest::proptest! {
        /// Issue 19: the percentiles of a merge are those of one histogram holding every
        /// sample, through the documents' own encodings (a part's whole histogram, and a
        /// second's compressed one), whatever the samples and however they are cut.
        #[test]
        fn a_merge_is_one_histogram_of_all_samples(
            parts in proptest::collection::vec(
                proptest::collection::vec(1u64..crate::record::HIST_HIGHEST_NS, 0..200), 1..8)
        ) {
            let mut all = new_histogram();
            let mut dists = Vec::new();
            let mut second = new_histogram();
            for samples in &parts {
                let mut h = new_histogram();
                for &v in samples {
                    h.record(v).unwrap();
                    all.record(v).unwrap();
                }
                dists.push(Distribution::of(&h));
                let text = crate::record::compact::encode(&h);
                second.add(crate::record::compact::decode(&text).unwrap()).unwrap();
            }
            let merged = add(dists.iter().map(Option::as_ref)).unwrap();
            let one = Distribution::of(&all);
            proptest::prop_assert_eq!(merged.is_some(), one.is_some());
            if let (Some(m), Some(o)) = (merged, one) {
                proptest::prop_assert_eq!(m.count, o.count);
                let figures = |d: &Distribution| [d.min_us, d.p50_us, d.p90_us, d.p95_us, d.p99_us, d.p999_us, d.max_us];
                proptest::prop_assert_eq!(figures(&m), figures(&o));
            }
            let (mut merged_point, mut one_point) = (SeriesPoint::of(0, &crate::record::Recorder::new()), SeriesPoint::of(0, &crate::record::Recorder::new()));
            merged_point.set_latency(&second);
            one_point.set_latency(&all);
            proptest::prop_assert_eq!((merged_point.p50_us, merged_point.p99_us, merged_point.max_us), (one_point.p50_us, one_point.p99_us, one_point.max_us));
        }
    }
}
