//! The per-second series of the terminal report: one row per second of the measured part.
//!
//! A row's rates are its counts over the point's true length (`duration_s`): a whole second,
//! or less for the last second of a run that ended between two, which is labelled with its
//! length. Showing that part's count as a per-second rate would understate it (90 ok in 0.09 s
//! is 1,000/s, not 90/s).

use super::format::{decimal_scale, opt_us, secs};
use super::table::{is_bulk, new_table, print_table, INDENT};
use crate::record::SeriesPoint;
use crate::summary::Summary;
use crate::units::thousands;
use comfy_table::Table;
use std::io::{self, Write};

/// Per-second series longer than this are left to `--json`.
const MAX_SERIES_ROWS: usize = 60;

/// The per-second series, when it is short enough to read.
pub(super) fn write(s: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    if s.series.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    if s.series.len() > MAX_SERIES_ROWS {
        return writeln!(
            out,
            "{INDENT}per second: {} points, too many to show here; the series is in --json",
            s.series.len()
        );
    }
    writeln!(out, "{INDENT}per second:")?;
    let mut table = if is_bulk(s) {
        bulk_series_table(s, width)
    } else {
        series_table(s, width)
    };
    print_table(out, &mut table, 0..)
}

/// A point's label: its second, and its length when that is not a whole second.
fn second_label(p: &SeriesPoint) -> String {
    // Below what two decimals show as a whole second.
    if p.duration_s < 0.995 {
        format!("{} ({})", p.second, secs(p.duration_s))
    } else {
        p.second.to_string()
    }
}

/// `count` in `p` as a whole rate per second of the point's length.
fn per_s(p: &SeriesPoint, count: u64) -> String {
    thousands(p.per_s(count).round() as u64)
}

/// The per-second series of a request/response run: ok, errors and latency.
fn series_table(s: &Summary, width: Option<u16>) -> Table {
    let open = s.open_loop.is_some();
    let mut header = vec!["second"];
    if open {
        header.extend(["offered/s", "sent/s"]);
    }
    header.extend(["ok/s", "errors", "p50", "p99", "max"]);
    let mut table = new_table(&header, width);
    for p in &s.series {
        let mut row = vec![second_label(p)];
        if open {
            row.push(p.offered.map_or_else(|| "-".into(), |n| per_s(p, n)));
            row.push(per_s(p, p.sent));
        }
        row.extend([
            per_s(p, p.ok),
            thousands(p.errors),
            opt_us(p.p50_us),
            opt_us(p.p99_us),
            opt_us(p.max_us),
        ]);
        table.add_row(row);
    }
    table
}

/// The per-second series of a bulk run: bytes/s each way, in one unit chosen by the peak.
fn bulk_series_table(s: &Summary, width: Option<u16>) -> Table {
    let peak = s
        .series
        .iter()
        .map(|p| p.per_s(p.sent_bytes.max(p.received_bytes)))
        .fold(0.0, f64::max);
    let (scale, prefix) = decimal_scale(peak);
    let sent = format!("sent {prefix}B/s");
    let received = format!("received {prefix}B/s");
    let mut table = new_table(&["second", &sent, &received, "errors"], width);
    for p in &s.series {
        table.add_row(vec![
            second_label(p),
            format!("{:.2}", p.per_s(p.sent_bytes) / scale),
            format!("{:.2}", p.per_s(p.received_bytes) / scale),
            thousands(p.errors),
        ]);
    }
    table
}
