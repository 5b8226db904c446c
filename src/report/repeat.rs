//! Repeated runs' report, in the shape of the MINT study's table (docs/studies.md): per
//! metric and point, a row per target with Run 1 … Run N, then the mean, median, standard
//! deviation and 95% confidence interval of the kept runs; discarded runs are shown in
//! parentheses and kept out of those figures.

use super::sweep::{at, bytes_unit, cell, what};
use crate::load::sweep::matrix;
use crate::summary::stats;
use crate::summary::sweep::{Metric, Sweep};
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// The metrics shown run by run (errors are summed in the sweep tables instead).
const METRICS: [Metric; 4] = [Metric::Rate, Metric::Bytes, Metric::P50, Metric::P99];

/// Writes one table per metric and point, then what the figures mean.
pub fn write(sweep: &Sweep, out: &mut dyn Write) -> io::Result<()> {
    let lens: Vec<usize> = sweep.axes.iter().map(|a| a.values.len()).collect();
    let points = matrix(&lens);
    // One unit for every table, as the sweep tables have (a point's own unit made the tables
    // of one study switch between kB/s and MB/s).
    let scale = bytes_unit(sweep);
    for metric in METRICS {
        for point in &points {
            let Some(table) = table(sweep, metric, point, scale.0) else {
                continue;
            };
            let at = at(sweep, 0, point);
            let at = match at.is_empty() {
                true => String::new(),
                false => format!(", at {at}"),
            };
            writeln!(out, "{} per run{at}:\n", what(sweep, metric, scale.1))?;
            writeln!(out, "{table}\n")?;
        }
    }
    let discarded = match sweep.discard {
        0 => None,
        1 => Some("the first run of each, discarded".to_string()),
        k => Some(format!("the first {k} runs of each, discarded")),
    };
    if let Some(d) = discarded {
        writeln!(
            out,
            "Runs in parentheses are {d}: kept out of the mean, median, stddev and CI."
        )?;
    }
    writeln!(
        out,
        "95% CI: mean ± t(0.975, n−1) · s / √n over the n kept runs (Student's t; s the sample \
         standard deviation)."
    )
}

/// A row per target: each run, then the kept runs' figures; None when no run has `metric`.
fn table(sweep: &Sweep, metric: Metric, point: &[usize], scale: f64) -> Option<Table> {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec![String::new()];
    header.extend((1..=sweep.runs).map(|r| format!("Run {r}")));
    header.extend(["mean", "median", "stddev", "95% CI"].map(String::from));
    t.set_header(header);
    let mut any = false;
    for (ti, target) in sweep.targets.iter().enumerate() {
        let mut row = vec![target.name.clone()];
        for p in sweep.runs_of(ti, point) {
            let v = sweep.value(metric, p);
            any |= v.is_some();
            let text = v.map_or("—".to_string(), |v| cell(metric, v, scale));
            row.push(match p.discarded {
                true => format!("({text})"),
                false => text,
            });
        }
        let s = stats::of(&sweep.kept(metric, ti, point));
        let f = |v: f64| cell(metric, v, scale);
        row.extend(match s {
            Some(s) => [
                f(s.mean),
                f(s.median),
                f(s.stddev),
                s.ci95.map_or("—".to_string(), |h| {
                    format!("±{} (±{:.1}%)", f(h), 100.0 * h / s.mean.abs())
                }),
            ],
            None => ["—", "—", "—", "—"].map(String::from),
        });
        t.add_row(row);
    }
    any.then_some(t)
}
