//! `wirebench export --format csv|md`: one line per result a stored document holds (a run;
//! each run of a sweep, comparison or study; each step of a peak search), with its headline
//! figures. JSON export is the stored document itself and needs no rendering.

use crate::store::Kind;
use serde_json::Value;
use std::io::{self, Write};

/// The columns, in order.
const COLUMNS: [&str; 14] = [
    "target",
    "point",
    "run",
    "discarded",
    "duration_s",
    "ok",
    "errors",
    "ops_per_s",
    "mb_per_s",
    "p50_us",
    "p99_us",
    "p999_us",
    "max_us",
    "schema",
];

/// One result of a document, with where it sits.
struct Line<'a> {
    target: String,
    point: String,
    run: String,
    discarded: bool,
    result: &'a Value,
}

/// The results of `doc`, labelled.
fn lines(kind: Kind, doc: &Value) -> Vec<Line<'_>> {
    let (kind, doc) = crate::store::headline::inner(kind, doc);
    fn sweep_points(sweep: &Value) -> Vec<Line<'_>> {
        let Some(points) = sweep["points"].as_array() else {
            return Vec::new();
        };
        points
            .iter()
            .map(|p| {
                let values: Vec<String> = p["values"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("")))
                            .collect()
                    })
                    .unwrap_or_default();
                Line {
                    target: p["target"].as_str().unwrap_or("").to_string(),
                    point: values.join(" "),
                    run: p["run"].to_string(),
                    discarded: p["discarded"].as_bool().unwrap_or(false),
                    result: &p["result"],
                }
            })
            .collect()
    }
    match kind {
        Kind::Result => vec![Line {
            target: doc["target"].as_str().unwrap_or("").to_string(),
            point: String::new(),
            run: "1".into(),
            discarded: false,
            result: doc,
        }],
        Kind::Sweep | Kind::Study => sweep_points(doc),
        Kind::Compare => sweep_points(&doc["sweep"]),
        Kind::Peak => doc["steps"]
            .as_array()
            .map(|steps| {
                steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| Line {
                        target: doc["target"].as_str().unwrap_or("").to_string(),
                        point: format!("--rate {:.0}", s["offered_per_s"].as_f64().unwrap_or(0.0)),
                        run: (i + 1).to_string(),
                        discarded: false,
                        result: &s["result"],
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A line's cells, in [`COLUMNS`] order.
fn cells(l: &Line) -> Vec<String> {
    let r = l.result;
    let num = |v: &Value| v.as_f64().map_or_else(String::new, |x| format!("{x:.3}"));
    let t = &r["throughput"];
    let mb =
        t["sent_mb_per_s"].as_f64().unwrap_or(0.0) + t["received_mb_per_s"].as_f64().unwrap_or(0.0);
    vec![
        l.target.clone(),
        l.point.clone(),
        l.run.clone(),
        l.discarded.to_string(),
        num(&r["duration_s"]),
        r["ok"].to_string(),
        r["errors"]["total"].to_string(),
        num(&t["ops_per_s"]),
        format!("{mb:.3}"),
        num(&r["latency"]["p50_us"]),
        num(&r["latency"]["p99_us"]),
        num(&r["latency"]["p999_us"]),
        num(&r["latency"]["max_us"]),
        r["schema"].as_str().unwrap_or("").to_string(),
    ]
}

/// A CSV field, quoted when it must be (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `doc`'s results as CSV with a header line.
pub fn csv(kind: Kind, doc: &Value, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    for l in lines(kind, doc) {
        let row: Vec<String> = cells(&l).iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}

/// Writes `doc`'s results as a Markdown table.
pub fn markdown(kind: Kind, doc: &Value, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "| {} |", COLUMNS.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(COLUMNS.len()))?;
    for l in lines(kind, doc) {
        let row: Vec<String> = cells(&l).iter().map(|c| c.replace('|', "\\|")).collect();
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    Ok(())
}
