//! The terminal reporter: a compact, readable report of one run.
//!
//! The shape, top to bottom: what was measured and how, the warm-up, the headline figures
//! (`headline.rs`), the latency table and a mix's kinds (`mix.rs`) (or, in bulk modes, throughput in messages/s, bytes/s and
//! bits/s), errors, the per-second series (`series.rs`), the generator's own resource use and
//! the notes. Tables use comfy-table
//! without colours, so the output is the same on a terminal, in a pipe and in a file; only
//! their width follows the terminal (and [`write_width`] fixes it, for golden files).
//!
//! Rates are shown in the unit their size calls for (`100.00 Mbit/s`, `64.00 kB/s`; decimal
//! multiples, as the JSON's MB and Gbit), and a per-second point's rates are over its true
//! length, which is less than a second for the last second of a run that ended between two.

use super::format::{kib_as_mb, plural, secs, size};
use crate::summary::{Distribution, Summary};
use crate::units::{format_us, thousands};
use comfy_table::{presets, CellAlignment, ColumnConstraint, ContentArrangement, Table};
use std::io::{self, Write};
use std::ops::RangeBounds;

/// Indentation of everything below the title line.
pub(super) const INDENT: &str = "  ";

/// Writes the human-readable report of `summary`, its tables fitted to the terminal if stdout
/// is one.
pub fn write(summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
    write_width(summary, out, Table::new().width())
}

/// Writes the report with tables at most `width` columns wide (None: as wide as they need),
/// whatever the terminal: the same summary always renders the same text.
pub fn write_width(summary: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    header(summary, out)?;
    writeln!(out)?;
    super::headline::write(summary, out)?;
    super::link::write(summary.throughput.link.as_ref(), out)?;
    distributions(summary, out, width)?;
    super::mix::write(summary, out, width)?;
    super::shards::write(summary, out, width)?;
    errors(summary, out, width)?;
    super::series::write(summary, out, width)?;
    writeln!(out)?;
    generator(summary, out)?;
    notes(summary, out)?;
    out.flush()
}

/// Bulk modes move a byte stream and have no per-operation latency.
pub(super) fn is_bulk(s: &Summary) -> bool {
    s.mode.bulk()
}

/// Title, settings and the warm-up line.
fn header(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "wirebench {} {} → {}", s.protocol, s.mode, s.target)?;
    writeln!(out, "{INDENT}{}", config_line(s))?;
    if let Some(w) = &s.warmup {
        let p50 = w.p50_us.map(|p| format!(", p50 {}", format_us(p)));
        writeln!(
            out,
            "{INDENT}warm-up: {} ok, {} errors in {}{} (kept out of the statistics)",
            thousands(w.ok),
            thousands(w.errors),
            secs(w.duration_s),
            p50.unwrap_or_default(),
        )?;
        if let Some(st) = &w.steady {
            writeln!(out, "{INDENT}{}", steady_line(st))?;
        }
    }
    Ok(())
}

/// How `--warmup auto` ended: `warm-up steady: ops/s varied 1.2% (CoV) over its last 3 s (≤ 5%)`.
fn steady_line(st: &crate::summary::Steady) -> String {
    let cov = st.cov_pct.map_or("not measurable".to_string(), |c| {
        format!("varied {c:.1}% (CoV)")
    });
    match st.steady {
        true => format!(
            "warm-up steady: {} {cov} over its last {} s (≤ {:.0}%)",
            st.judged, st.window_s, st.bound_pct
        ),
        false => format!(
            "warm-up NOT steady when it ended: {} {cov} over its last {} s (bound {:.0}%); the figures may still move: lengthen the cap (--warmup auto:60s)",
            st.judged, st.window_s, st.bound_pct
        ),
    }
}

/// `10.00 s measured, 4 connections on 2 threads, 64 B requests / 64 B replies, pipeline 1`.
fn config_line(s: &Summary) -> String {
    let c = &s.config;
    let mut parts = vec![
        format!("{} measured", secs(s.duration_s)),
        format!(
            "{} on {}",
            plural(c.connections as u64, "connection", "connections"),
            plural(c.threads as u64, "thread", "threads")
        ),
        sizes(s),
    ];
    if !is_bulk(s) {
        // The UDP open loop sets no in-flight limit; its sentinel is no number to print.
        match c.pipeline {
            Some(n) => parts.push(format!("pipeline {n}")),
            None => parts.push("pipeline unlimited".into()),
        }
    }
    if let Some(t) = c.think_s {
        // `exp:10ms`: the mean of exponential pauses, as the flag is written.
        let law = match c.think_law.as_deref() {
            Some(l) => format!("{l}:"),
            None => String::new(),
        };
        match c.think_achieved_s {
            Some(a) => parts.push(format!(
                "think {law}{} (waited {})",
                format_us(t * 1e6),
                format_us(a * 1e6)
            )),
            None => parts.push(format!("think {law}{}", format_us(t * 1e6))),
        }
    }
    if let Some(n) = c.requests {
        parts.push(format!("limit {}", plural(n, "request", "requests")));
    }
    if let Some(b) = c.sndbuf {
        parts.push(format!("SO_SNDBUF {}", size(b as u64)));
    }
    if let Some(b) = c.rcvbuf {
        parts.push(format!("SO_RCVBUF {}", size(b as u64)));
    }
    if let Some(cache) = &c.cache {
        parts.push(format!("{cache} cache"));
    }
    if let Some(m) = c.server_memory_limit_bytes {
        parts.push(format!("server memory limit {} MiB", m >> 20));
    }
    if let Some(seed) = c.seed {
        parts.push(format!("seed {seed}"));
    }
    parts.join(", ")
}

/// `64 B requests / 64 B replies`, `64 B requests / replies up to "END\r\n"`, `64 KiB messages`.
pub(crate) fn sizes(s: &Summary) -> String {
    let c = &s.config;
    if let Some(h) = &s.http {
        let alive = if h.keepalive {
            "keep-alive"
        } else {
            "a connection per request"
        };
        if s.mix.is_some() {
            return format!("a mix: {}, HTTP/{}, {alive}", h.path, h.version);
        }
        if h.requests > 1 {
            // `--targets`: the path holds the list of requests, each with its method.
            return format!(
                "{} requests in turn: {}, HTTP/{}, {alive}",
                h.requests, h.path, h.version
            );
        }
        return format!("{} {}, HTTP/{}, {alive}", h.method, h.path, h.version);
    }
    let request = size(c.request_bytes as u64);
    if is_bulk(s) {
        return format!("{request} messages");
    }
    match (&c.reply_bytes, &c.reply_until) {
        (Some(n), _) => format!("{request} requests / {} replies", size(*n as u64)),
        (None, Some(until)) => format!("{request} requests / replies up to \"{until}\""),
        (None, None) => format!("{request} requests"),
    }
}

/// The latency table: one row per distribution present (latency, service time, connect).
fn distributions(s: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    let rows = [
        ("latency", &s.latency),
        ("service time", &s.service_time),
        ("connect", &s.connect),
    ];
    if s.latency.is_none() && !is_bulk(s) {
        writeln!(out, "{INDENT}latency: no operation completed")?;
    }
    let present: Vec<_> = rows
        .iter()
        .filter_map(|(name, d)| d.as_ref().map(|d| (*name, d)))
        .collect();
    if present.is_empty() {
        return Ok(());
    }
    let mut table = new_table(
        &[
            "", "min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99.9", "max",
        ],
        width,
    );
    for (name, d) in present {
        table.add_row(distribution_row(name, d));
    }
    print_table(out, &mut table, 1..)
}

/// One row of the latency table.
fn distribution_row(name: &str, d: &Distribution) -> Vec<String> {
    std::iter::once(name.to_string())
        .chain(d.figures().into_iter().map(format_us))
        .collect()
}

/// Errors by kind with a sample message each; nothing when there were none.
fn errors(s: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    if s.errors.by_kind.is_empty() {
        return Ok(());
    }
    let mut table = new_table(&["error", "count", "sample"], width);
    for e in &s.errors.by_kind {
        table.add_row(vec![
            e.kind.to_string(),
            thousands(e.count),
            e.sample.clone(),
        ]);
    }
    print_table(out, &mut table, 1..2)
}

/// `generator: 1.23 s user + 0.45 s sys = 84% of 2 threads, peak RSS 12.3 MB`.
fn generator(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    let g = &s.generator;
    writeln!(
        out,
        "{INDENT}generator: {} user + {} sys = {:.0}% of {}, peak RSS {}",
        secs(g.cpu_user_s),
        secs(g.cpu_sys_s),
        g.cpu_percent_of_threads,
        plural(g.threads as u64, "thread", "threads"),
        kib_as_mb(g.peak_rss_kib),
    )?;
    match g.machine_words() {
        Some(m) => writeln!(out, "{INDENT}machine: {m} (the host's, over the run)"),
        None => Ok(()),
    }
}

/// One `note: ` line per note.
fn notes(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    for note in &s.notes {
        writeln!(out, "{INDENT}note: {note}")?;
    }
    Ok(())
}

/// A condensed, colourless table at most `width` wide after indenting (None: no limit). It
/// never asks the terminal itself, so its layout depends only on what it is given.
pub(super) fn new_table(header: &[&str], width: Option<u16>) -> Table {
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    if let Some(width) = width {
        table.set_width(width.saturating_sub(INDENT.len() as u16));
    }
    table
}

/// Writes the table, indented. The `numeric` columns are right-aligned; they and the first
/// (label) column keep their width, so on a narrow terminal only free text (samples) wraps.
pub(super) fn print_table(
    out: &mut dyn Write,
    table: &mut Table,
    numeric: impl RangeBounds<usize>,
) -> io::Result<()> {
    for (i, column) in table.column_iter_mut().enumerate() {
        if numeric.contains(&i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        if i == 0 || numeric.contains(&i) {
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    for line in table.lines() {
        writeln!(out, "{INDENT}{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ErrorKind, OpError, Recorder, SeriesPoint};
    use crate::summary::{
        Config, ErrorSummary, Generator, ProtocolName, Throughput, Warmup, SCHEMA,
    };
    use std::time::Duration;

    fn recorder() -> Recorder {
        let mut rec = Recorder::new();
        for i in 0..1_234_567u64 {
            rec.ok(Duration::from_nanos(5_000 + i % 1000 * 10));
        }
        rec.error(OpError::new(ErrorKind::Timeout, "no reply within 1s"));
        rec.error(OpError::new(
            ErrorKind::Reset,
            "read reply: connection reset",
        ));
        rec.connected(Duration::from_micros(80));
        rec.sent_bytes = rec.ok * 64;
        rec.received_bytes = rec.ok * 64;
        rec
    }

    fn summary(mode: &'static str, rec: &Recorder) -> Summary {
        let elapsed = Duration::from_secs(10);
        Summary {
            schema: SCHEMA.into(),
            wirebench_version: "0.1.0".into(),
            started_unix_ms: 1_700_000_000_000,
            target: "tcp://127.0.0.1:40123".into(),
            protocol: ProtocolName::Tcp,
            mode: mode.parse().unwrap(),
            config: Config {
                connections: 4,
                threads: 2,
                pipeline: Some(1),
                request_bytes: 64,
                reply_bytes: Some(64),
                preamble: true,
                duration_s: Some(10.0),
                timeout_s: 1.0,
                nodelay: true,
                ..Config::default()
            },
            duration_s: 10.0,
            ok: rec.ok,
            errors: ErrorSummary::of(rec),
            throughput: Throughput::of(rec, elapsed, None),
            latency: Distribution::of(&rec.latency),
            service_time: None,
            connect: Distribution::of(&rec.connect),
            open_loop: None,
            datagrams: None,
            http: None,
            warmup: Some(Warmup {
                duration_s: 1.0,
                ok: 1_234,
                errors: 0,
                p50_us: Some(7.42),
                steady: None,
            }),
            series: (0..3).map(|i| SeriesPoint::of(i, rec)).collect(),
            generator: Generator {
                threads: 2,
                cpu_user_s: 1.23,
                cpu_sys_s: 0.45,
                cpu_percent_of_threads: 84.0,
                peak_rss_kib: 12_000,
                cpu_pressure_percent: None,
                steal_percent: None,
            },
            mix: None,
            notes: vec!["the target's CPU was busy".into(), "second note".into()],
            shard: None,
            shards: None,
            stopped: None,
        }
    }

    fn render(s: &Summary) -> String {
        let mut out = Vec::new();
        write(s, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rr_report_shows_the_key_figures() {
        let rec = recorder();
        let s = summary("rr", &rec);
        let text = render(&s);
        let p99 = format_us(s.latency.as_ref().unwrap().p99_us);
        for want in [
            "wirebench tcp rr → tcp://127.0.0.1:40123",
            "10.00 s measured, 4 connections on 2 threads, 64 B requests / 64 B replies, pipeline 1",
            "warm-up: 1,234 ok, 0 errors in 1.00 s, p50 7.4µs (kept out of the statistics)",
            "ok 1,234,567   errors 2   ops/s 123,456.7",
            "latency",
            "p99.9",
            &p99,
            "connect",
            "80.0µs",
            "timeout",
            "no reply within 1s",
            "read reply: connection reset",
            "per second:",
            "generator: 1.23 s user + 0.45 s sys = 84% of 2 threads, peak RSS 12.3 MB",
            "  note: the target's CPU was busy\n",
            "  note: second note\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(!text.contains("Gbit/s"), "{text}");
    }

    #[test]
    fn bulk_report_shows_throughput_instead_of_latency() {
        let mut rec = Recorder::new();
        rec.sent_bytes = 1_250_000_000;
        rec.messages = rec.sent_bytes / 65_536;
        let mut s = summary("stream", &rec);
        s.throughput = Throughput::of(&rec, Duration::from_secs(10), Some(65_536));
        s.config.request_bytes = 65_536;
        s.config.reply_bytes = None;
        s.errors = ErrorSummary::of(&rec);
        s.notes.clear();
        let text = render(&s);
        for want in [
            "64 KiB messages",
            "1.00 Gbit/s",
            "messages/s 1,907.3",
            "sent 125.00 MB/s",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        for unwanted in ["p99.9", "pipeline", "error ", "note:"] {
            assert!(
                !text.contains(unwanted),
                "unexpected {unwanted:?} in\n{text}"
            );
        }
    }

    #[test]
    fn long_series_is_left_to_json() {
        let rec = recorder();
        let mut s = summary("rr", &rec);
        s.series = (0..61)
            .map(|i| SeriesPoint::of(i, &Recorder::new()))
            .collect();
        let text = render(&s);
        assert!(text.contains("61 points"), "{text}");
        assert!(text.contains("--json"), "{text}");
    }

    #[test]
    fn rr_without_completions_says_so() {
        let mut rec = Recorder::new();
        rec.error(OpError::new(
            ErrorKind::Refused,
            "connect: connection refused",
        ));
        let mut s = summary("rr", &rec);
        s.series.clear();
        let text = render(&s);
        assert!(text.contains("no operation completed"), "{text}");
        assert!(text.contains("refused"), "{text}");
        assert!(text.contains("connect: connection refused"), "{text}");
    }
}
