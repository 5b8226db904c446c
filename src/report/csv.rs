//! A study's tables as CSV files (RFC 4180: comma-separated, CRLF line ends, a field quoted
//! when it holds a comma, a quote or a line break, quotes doubled), one file per table, for a
//! spreadsheet: the same rows and columns as report.md, the figures unrounded (rates per
//! second, latencies in µs, payload throughput in bytes/s). Swept tables: a header row of the
//! swept values, a row per target.

use crate::load::sweep::matrix;
use crate::summary::compare::Comparison;
use crate::summary::peak::PeakSearch;
use crate::summary::stats;
use crate::summary::study::Document;
use crate::summary::sweep::{Metric, Sweep, METRICS};

/// The metrics shown run by run (as `report::repeat`).
const RUN_METRICS: [Metric; 4] = [Metric::Rate, Metric::Bytes, Metric::P50, Metric::P99];

/// Every table of `doc`: (file name, CSV text).
pub fn tables(doc: &Document) -> Vec<(String, String)> {
    match doc {
        Document::Run(s) => sweep(s),
        Document::Compare(c) => {
            let mut all = sweep(&c.sweep);
            all.extend([verdicts(c), shapes(c)]);
            all
        }
        Document::Peak(p) => vec![peak(p), curve(p)],
    }
}

/// A metric's name in file names and headers.
pub fn key(m: Metric) -> &'static str {
    match m {
        Metric::Rate => "ops_per_s",
        Metric::Bytes => "bytes_per_s",
        Metric::P50 => "p50_us",
        Metric::P99 => "p99_us",
        Metric::Mean => "mean_us",
        Metric::P95 => "p95_us",
        Metric::Errors => "errors",
    }
}

/// One field, quoted per RFC 4180 §2 when it must be; a field a spreadsheet would read as a
/// formula (one that starts with `=`, `+`, `-`, `@`, a tab or a carriage return and is not a
/// number, e.g. a target named `+SUM(1+1)`) is written as text behind a `'`, as OWASP's "CSV
/// Injection" advises. Every CSV wirebench writes goes through this.
pub fn field(text: &str) -> String {
    let formula =
        text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text.parse::<f64>().is_err();
    let text = match formula {
        true => format!("'{text}"),
        false => text.to_string(),
    };
    match text.contains([',', '"', '\r', '\n']) {
        true => format!("\"{}\"", text.replace('"', "\"\"")),
        false => text,
    }
}

/// Rows of fields as CSV text.
fn csv(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| {
            let fields: Vec<String> = r.iter().map(|f| field(f)).collect();
            fields.join(",") + "\r\n"
        })
        .collect()
}

/// A figure unrounded; empty where there is none.
fn number(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

/// `_connections_10`: the values at `index` of the axes from `skip` on, for a file name.
fn suffix(s: &Sweep, skip: usize, index: &[usize]) -> String {
    let safe = |t: &str| t.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "_");
    s.axes
        .iter()
        .skip(skip)
        .zip(index)
        .map(|(a, &i)| {
            format!(
                "_{}_{}",
                safe(a.flag.trim_start_matches('-')),
                safe(&a.values[i])
            )
        })
        .collect()
}

/// The sweep tables (a row per target, a column per value of the first axis, a file per
/// metric and value of the other axes) and, with `--runs`, the per-run tables.
fn sweep(s: &Sweep) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let columns: Vec<String> = match s.axes.first() {
        Some(a) => a.values.clone(),
        None => vec!["result".to_string()],
    };
    let lens: Vec<usize> = s.axes.iter().skip(1).map(|a| a.values.len()).collect();
    for metric in METRICS {
        for group in matrix(&lens) {
            let mut rows = vec![[vec!["target".to_string()], columns.clone()].concat()];
            let mut any = false;
            for (ti, t) in s.targets.iter().enumerate() {
                let mut row = vec![t.name.clone()];
                for c in 0..columns.len() {
                    let at = match s.axes.is_empty() {
                        true => Vec::new(),
                        false => [&[c][..], &group].concat(),
                    };
                    let v = s.mean(metric, ti, &at);
                    any |= v.is_some();
                    row.push(number(v));
                }
                rows.push(row);
            }
            if any {
                out.push((
                    format!("{}{}.csv", key(metric), suffix(s, 1, &group)),
                    csv(&rows),
                ));
            }
        }
    }
    if s.runs > 1 {
        out.extend(runs(s));
    }
    out
}

/// Per metric and point: a row per target, Run 1 … Run N, then the kept runs' statistics.
fn runs(s: &Sweep) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let lens: Vec<usize> = s.axes.iter().map(|a| a.values.len()).collect();
    let mut header = vec!["target".to_string()];
    header.extend((1..=s.runs).map(|r| match r <= s.discard {
        true => format!("run {r} (discarded)"),
        false => format!("run {r}"),
    }));
    header.extend(["mean", "median", "stddev", "ci95"].map(String::from));
    for metric in RUN_METRICS {
        for point in matrix(&lens) {
            let mut rows = vec![header.clone()];
            let mut any = false;
            for (ti, t) in s.targets.iter().enumerate() {
                let mut row = vec![t.name.clone()];
                let runs = s.runs_of(ti, &point);
                row.extend(runs.iter().map(|p| number(s.value(metric, p))));
                let st = stats::of(&s.kept(metric, ti, &point));
                any |= st.is_some();
                row.extend([
                    number(st.map(|x| x.mean)),
                    number(st.map(|x| x.median)),
                    number(st.map(|x| x.stddev)),
                    number(st.and_then(|x| x.ci95)),
                ]);
                rows.push(row);
            }
            if any {
                let name = format!("runs_{}{}.csv", key(metric), suffix(s, 0, &point));
                out.push((name, csv(&rows)));
            }
        }
    }
    out
}

/// A comparison's verdicts: a row per target, metric and point.
fn verdicts(c: &Comparison) -> (String, String) {
    let mut rows = vec![[
        "target",
        "at",
        "metric",
        "baseline",
        "baseline_mean",
        "mean",
        "ratio",
        "difference_percent",
        "low_pct",
        "high_pct",
        "significant",
        "verdict",
    ]
    .map(String::from)
    .to_vec()];
    for v in &c.verdicts {
        rows.push(vec![
            v.target.clone(),
            v.at.clone(),
            v.metric.to_string(),
            c.baseline.clone(),
            number(Some(v.baseline_mean)),
            number(Some(v.mean)),
            number(Some(v.ratio)),
            number(Some(v.difference_percent)),
            number(Some(v.low_pct)),
            number(Some(v.high_pct)),
            v.significant.to_string(),
            v.text.clone(),
        ]);
    }
    ("verdicts.csv".into(), csv(&rows))
}

/// The Flash view: throughput, median, mean and p95 per target and point.
fn shapes(c: &Comparison) -> (String, String) {
    let mut rows = vec![[
        "target",
        "at",
        "ops_per_s",
        "p50_us",
        "mean_us",
        "p95_us",
        "mean_above_p95",
    ]
    .map(String::from)
    .to_vec()];
    for s in &c.shapes {
        rows.push(vec![
            s.target.clone(),
            s.at.clone(),
            number(Some(s.ops_per_s)),
            number(s.p50_us),
            number(s.mean_us),
            number(s.p95_us),
            s.mean_above_p95.to_string(),
        ]);
    }
    ("shapes.csv".into(), csv(&rows))
}

/// The Handle.Net table: the peak and the latency at it (no row when there is no peak).
fn peak(p: &PeakSearch) -> (String, String) {
    let mut rows = vec![[
        "target",
        "objectives",
        "offered_per_s",
        "ops_per_s",
        "mean_us",
        "p50_us",
        "p99_us",
        "confirmed",
    ]
    .map(String::from)
    .to_vec()];
    if let Some(k) = &p.peak {
        rows.push(vec![
            p.target.clone(),
            p.objectives.join(", "),
            number(Some(k.offered_per_s)),
            number(Some(k.ops_per_s)),
            number(Some(k.mean_us)),
            number(Some(k.p50_us)),
            number(Some(k.p99_us)),
            k.confirmed.to_string(),
        ]);
    }
    ("peak.csv".into(), csv(&rows))
}

/// The curve: a row per step, in the order run.
fn curve(p: &PeakSearch) -> (String, String) {
    let mut rows = vec![[
        "step",
        "offered_per_s",
        "achieved_per_s",
        "p50_us",
        "p99_us",
        "error_percent",
        "passed",
        "confirmation",
    ]
    .map(String::from)
    .to_vec()];
    for (i, s) in p.steps.iter().enumerate() {
        rows.push(vec![
            (i + 1).to_string(),
            number(Some(s.offered_per_s)),
            number(Some(s.achieved_per_s)),
            number(s.p50_us),
            number(s.p99_us),
            number(Some(s.error_percent)),
            s.passed.to_string(),
            s.confirmation.to_string(),
        ]);
    }
    ("curve.csv".into(), csv(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        let rows = vec![vec![
            "plain".to_string(),
            "a,b".to_string(),
            "say \"hi\"".to_string(),
            "two\nlines".to_string(),
        ]];
        assert_eq!(
            csv(&rows),
            "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
        );
    }

    #[test]
    fn cells_that_would_start_a_formula_are_text() {
        for (cell, written) in [
            ("+SUM(1+1)", "'+SUM(1+1)"),
            ("@SUM(1)", "'@SUM(1)"),
            ("=1+1", "'=1+1"),
            ("-2+3", "'-2+3"),
            ("\tx", "'\tx"),
            ("\r=1", "\"'\r=1\""),
            (
                "=HYPERLINK(\"x\",\"y\")",
                "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"",
            ),
            ("-12.5", "-12.5"),
            ("+3", "+3"),
            ("-1e-3", "-1e-3"),
            ("a=b", "a=b"),
        ] {
            assert_eq!(field(cell), written, "{cell:?}");
        }
    }
}
