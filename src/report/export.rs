//! `wirebench export --format csv|md`: one line per result a stored document holds (a run;
//! each run of a sweep, comparison or study; each step of a peak search), with its headline
//! figures. JSON export is the stored document itself and needs no rendering.

use crate::store::{Kind, Typed};
use crate::summary::sweep::Sweep;
use crate::summary::{Distribution, Summary};
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
    result: &'a Summary,
}

/// The results of `doc`, labelled.
fn lines(doc: &Typed) -> Vec<Line<'_>> {
    fn sweep_points(sweep: &Sweep) -> Vec<Line<'_>> {
        (sweep.points.iter())
            .map(|p| {
                let values: Vec<String> =
                    (p.values.iter()).map(|(k, v)| format!("{k} {v}")).collect();
                Line {
                    target: p.target.clone(),
                    point: values.join(" "),
                    run: p.run.to_string(),
                    discarded: p.discarded,
                    result: &p.result,
                }
            })
            .collect()
    }
    match doc {
        Typed::Result(r) => vec![Line {
            target: r.target.clone(),
            point: String::new(),
            run: "1".into(),
            discarded: false,
            result: r,
        }],
        Typed::Sweep(s) => sweep_points(s),
        Typed::Compare(c) => sweep_points(&c.sweep),
        Typed::Peak(p) => (p.steps.iter().enumerate())
            .map(|(i, s)| Line {
                target: p.target.clone(),
                point: format!("--rate {:.0}", s.offered_per_s),
                run: (i + 1).to_string(),
                discarded: false,
                result: &s.result,
            })
            .collect(),
    }
}

/// A line's cells, in [`COLUMNS`] order.
fn cells(l: &Line) -> Vec<String> {
    let r = l.result;
    let num = |x: f64| format!("{x:.3}");
    let latency =
        |f: fn(&Distribution) -> f64| r.latency.as_ref().map_or_else(String::new, |d| num(f(d)));
    let t = &r.throughput;
    vec![
        l.target.clone(),
        l.point.clone(),
        l.run.clone(),
        l.discarded.to_string(),
        num(r.duration_s),
        r.ok.to_string(),
        r.errors.total.to_string(),
        num(t.ops_per_s),
        num(t.sent_mb_per_s + t.received_mb_per_s),
        latency(|d| d.p50_us),
        latency(|d| d.p99_us),
        latency(|d| d.p999_us),
        latency(|d| d.max_us),
        r.schema.to_string(),
    ]
}

/// A CSV field: quoted when it must be (RFC 4180), a would-be formula written as text.
fn csv_field(s: &str) -> String {
    super::csv::field(s)
}

/// Writes `doc`'s results as CSV with a header line.
pub fn csv(kind: Kind, doc: &Value, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    for l in lines(&Typed::read(kind, doc)) {
        let row: Vec<String> = cells(&l).iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}

/// Writes `doc`'s results as a Markdown table.
pub fn markdown(kind: Kind, doc: &Value, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "| {} |", COLUMNS.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(COLUMNS.len()))?;
    for l in lines(&Typed::read(kind, doc)) {
        let row: Vec<String> = cells(&l).iter().map(|c| super::study::md(c)).collect();
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    Ok(())
}
