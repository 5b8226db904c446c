//! A sweep (`wirebench.sweep/1`): the DIM study's tables (docs/studies.md: one per metric,
//! a row per target, a column per value of the first swept flag, a table per value of a second
//! one), the MINT table for repeated runs (Run 1 … Run N, mean, median, stddev, 95% CI), and
//! charts: each metric against the swept value (log x for sizes and other doubling ranges),
//! the means with their 95% CI as bars, each run's percentile spectrum and per-second series.

use super::fields::{self, finite};
use super::page::{kv, table, Page};
use super::scale::{cell, Unit};
use super::{sweep_charts, RenderError};
use crate::summary::stats;
use crate::summary::{self, Summary};

/// A figure read from each run's result.
#[derive(Clone, Copy)]
pub struct Metric {
    /// Its name in titles.
    pub name: &'static str,
    /// Its `data-chart` name.
    pub kind: &'static str,
    /// Its name on a chart's y axis, short enough to fit.
    pub axis: &'static str,
    /// How it is written.
    pub unit: Unit,
    /// Reads it from a result.
    pub read: fn(&Summary) -> Option<f64>,
}

/// The metrics of the DIM tables, in their order.
pub const METRICS: [Metric; 5] = [
    Metric {
        name: "Operations per second",
        kind: "ops",
        axis: "ops/s",
        unit: Unit::Count,
        read: fields::ops,
    },
    Metric {
        name: "Payload throughput (both directions)",
        kind: "bytes",
        axis: "payload, both directions",
        unit: Unit::ByteRate,
        read: fields::bytes_per_s,
    },
    Metric {
        name: "Median latency (p50)",
        kind: "p50",
        axis: "p50 latency",
        unit: Unit::Micros,
        read: |r| r.latency.as_ref().and_then(|d| finite(d.p50_us)),
    },
    Metric {
        name: "99th percentile latency (p99)",
        kind: "p99",
        axis: "p99 latency",
        unit: Unit::Micros,
        read: |r| r.latency.as_ref().and_then(|d| finite(d.p99_us)),
    },
    Metric {
        name: "Errors",
        kind: "errors",
        axis: "errors",
        unit: Unit::Count,
        read: |r| Some(r.errors.total as f64),
    },
];

/// The payload throughput of a sweep whose runs mix request/response with bulk (push or
/// upload; [`summary::sweep::Sweep::one_way`]): request/response counts its requests alone,
/// as a pushed message is one, so that the rows compare (the DIM study's table), as the
/// terminal's and report.md's tables do.
pub const ONE_WAY_BYTES: Metric = Metric {
    name: "Payload throughput (one direction; request/response: its requests)",
    kind: "bytes",
    axis: "payload, one direction",
    unit: Unit::ByteRate,
    read: fields::one_way_bytes_per_s,
};

/// A sweep document, read: its targets, axes and points.
pub struct Sweep {
    /// Its metrics, in [`METRICS`]'s order: [`ONE_WAY_BYTES`] for payload throughput where
    /// the runs mix request/response with bulk.
    pub metrics: [Metric; 5],
    /// Target names, the tables' rows.
    pub targets: Vec<String>,
    /// Swept flags and their values.
    pub axes: Vec<(String, Vec<String>)>,
    /// Runs per target and point.
    pub runs: u64,
    /// The points: (target, {flag: value}, run, discarded, result).
    pub points: Vec<Point>,
}

/// One run of a sweep.
pub struct Point {
    /// The target's name.
    pub target: String,
    /// Each axis's value, in axis order.
    pub at: Vec<String>,
    /// Which run of this target and point.
    pub run: u64,
    /// Kept out of the statistics.
    pub discarded: bool,
    /// The run's result.
    pub result: Summary,
}

impl Sweep {
    /// The page's view of a sweep: its points located by their axes' values, in axis order.
    pub fn of(sweep: &summary::sweep::Sweep) -> Sweep {
        let axes: Vec<(String, Vec<String>)> = (sweep.axes.iter())
            .map(|a| (a.flag.to_string(), a.values.clone()))
            .collect();
        let points = (sweep.points.iter())
            .map(|p| Point {
                at: (axes.iter())
                    .map(|(f, _)| {
                        p.values
                            .get(f.as_str())
                            .map_or("-".to_string(), String::clone)
                    })
                    .collect(),
                target: p.target.clone(),
                run: p.run as u64,
                discarded: p.discarded,
                result: p.result.clone(),
            })
            .collect();
        let mut metrics = METRICS;
        if sweep.one_way() {
            metrics[1] = ONE_WAY_BYTES;
        }
        Sweep {
            metrics,
            targets: sweep.targets.iter().map(|t| t.name.clone()).collect(),
            axes,
            // A sweep runs each point once at least; a document without the field did.
            runs: (sweep.runs as u64).max(1),
            points,
        }
    }

    /// The kept runs' values of `metric` for `target` at `at`.
    pub fn values(&self, target: &str, at: &[String], metric: Metric) -> Vec<f64> {
        (self.points.iter())
            .filter(|p| p.target == target && p.at == at && !p.discarded)
            .filter_map(|p| (metric.read)(&p.result))
            .collect()
    }

    /// Whether the point is a single run whose `metric` is too spread second to second to
    /// stand for it alone (the terminal's `*`, [`crate::summary::sweep::noisy`]).
    pub fn one_noisy_run(&self, target: &str, at: &[String], metric: Metric) -> bool {
        let Some(m) = summary_metric(metric).filter(|_| self.runs == 1) else {
            return false;
        };
        let mut runs = (self.points.iter()).filter(|p| p.target == target && p.at == at);
        match (runs.next(), runs.next()) {
            (Some(p), None) => crate::summary::sweep::noisy(m, &p.result),
            _ => false,
        }
    }

    /// Every combination of axis values, the first axis varying fastest; one empty point
    /// when nothing is swept.
    pub fn combinations(&self, skip: usize) -> Vec<Vec<String>> {
        let mut all = vec![Vec::new()];
        for (_, values) in self.axes.iter().skip(skip).rev() {
            all = values
                .iter()
                .flat_map(|v| {
                    all.iter()
                        .map(move |rest| [vec![v.clone()], rest.clone()].concat())
                })
                .collect();
        }
        all
    }

    /// `--size 16, -c 4`: the point's values with their flags, from axis `skip` on.
    pub fn label(&self, at: &[String], skip: usize) -> String {
        (self.axes.iter().skip(skip).zip(at))
            .map(|((flag, _), v)| format!("{flag} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Writes the sections of a sweep document.
pub fn render(page: &mut Page, doc: &summary::sweep::Sweep) -> Result<(), RenderError> {
    render_with(page, doc, true)
}

/// [`render`], with the busy machine's line or without it (a comparison's page says it above
/// its verdicts).
pub fn render_with(
    page: &mut Page,
    doc: &summary::sweep::Sweep,
    busy: bool,
) -> Result<(), RenderError> {
    let sweep = Sweep::of(doc);
    page.heading(2, "Results");
    page.para(&method(&sweep));
    if let Some(line) = doc.busy.as_ref().filter(|_| busy) {
        page.para(line);
    }
    let lead = sweep_charts::lead(&sweep);
    page.figures(lead.clone());
    if sweep.runs == 1 || !sweep.axes.is_empty() {
        for metric in sweep.metrics {
            for group in sweep.combinations(1) {
                tables_by_value(page, &sweep, metric, &group);
            }
        }
    }
    if sweep.runs > 1 {
        page.heading(2, "Repeated runs");
        for metric in sweep.metrics.iter().take(4) {
            repeat_table(page, &sweep, *metric);
        }
        page.para("95% CI: mean ± t(0.975, n−1) · s / √n over the n kept runs (Student's t; s the sample standard deviation); runs in parentheses were discarded.");
    }
    page.heading(2, "Charts");
    let rest = sweep_charts::charts(&sweep);
    page.figures(rest.into_iter().filter(|c| !lead.contains(c)).collect());
    page.heading(2, "Methodology");
    let mut pairs = vec![
        (
            "Schema".to_string(),
            match doc.schema.is_empty() {
                true => "-".to_string(),
                false => doc.schema.to_string(),
            },
        ),
        ("Runs".to_string(), method(&sweep)),
    ];
    if let Some(first) = sweep.points.first() {
        let swept: Vec<&str> = sweep.axes.iter().map(|a| a.0.as_str()).collect();
        pairs.extend(
            (fields::methodology(&first.result).into_iter())
                .filter(|(k, _)| k != "Target")
                .map(|(k, v)| match k.as_str() {
                    "Measured" => ("Measured, each run".to_string(), v),
                    "Settings" if !swept.is_empty() => (
                        format!("Settings of the first run ({} swept)", swept.join(", ")),
                        v,
                    ),
                    _ => (k, v),
                }),
        );
    }
    page.raw(&kv("methodology", &pairs));
    Ok(())
}

/// The method line: targets, swept flags, runs.
fn method(sweep: &Sweep) -> String {
    let swept: Vec<String> = (sweep.axes.iter())
        .map(|(f, v)| format!("{f} ({} values)", v.len()))
        .collect();
    format!(
        "{} target(s) ({}) × {} × {} run(s) each; {} runs in all, interleaved across targets.",
        sweep.targets.len(),
        sweep.targets.join(", "),
        if swept.is_empty() {
            "one point".to_string()
        } else {
            swept.join(" × ")
        },
        sweep.runs,
        sweep.points.len()
    )
}

/// One DIM table: `metric` by the first swept flag, at `group`'s values of the others.
fn tables_by_value(page: &mut Page, sweep: &Sweep, metric: Metric, group: &[String]) {
    let columns: Vec<String> = sweep
        .axes
        .first()
        .map_or(vec![String::new()], |a| a.1.clone());
    let mut head = vec![String::new()];
    head.extend(
        sweep
            .axes
            .first()
            .map_or(vec!["all".to_string()], |a| a.1.clone()),
    );
    let mut noisy = false;
    let rows: Vec<Vec<String>> = (sweep.targets.iter())
        .map(|t| {
            let mut row = vec![t.clone()];
            for c in &columns {
                let at: Vec<String> = match sweep.axes.is_empty() {
                    true => Vec::new(),
                    false => [vec![c.clone()], group.to_vec()].concat(),
                };
                let mean = stats::of(&sweep.values(t, &at, metric)).map(|s| s.mean);
                let mark = match sweep.one_noisy_run(t, &at, metric) {
                    true => " *",
                    false => "",
                };
                noisy |= !mark.is_empty();
                row.push(mean.map_or("-".to_string(), |m| cell(metric.unit, m) + mark));
            }
            row
        })
        .collect();
    let by = sweep
        .axes
        .first()
        .map_or(String::new(), |a| format!(" by {}", a.0));
    let at = sweep.label(group, 1);
    let at = if at.is_empty() {
        String::new()
    } else {
        format!(", at {at}")
    };
    let mean = if sweep.runs > 1 {
        " (mean of the kept runs)"
    } else {
        ""
    };
    page.heading(3, &format!("{}{by}{at}{mean}", metric.name));
    page.raw(&table(&format!("sweep {}", metric.kind), &head, &rows));
    if let Some(m) = noisy.then(|| summary_metric(metric)).flatten() {
        page.para(crate::report::sweep::noisy_note(m).trim());
    }
}

/// The summary's metric that `metric` shows (the one the noise marks are judged on).
fn summary_metric(metric: Metric) -> Option<crate::summary::sweep::Metric> {
    use crate::summary::sweep::Metric as M;
    match metric.kind {
        "ops" => Some(M::Rate),
        "bytes" => Some(M::Bytes),
        "p50" => Some(M::P50),
        "p99" => Some(M::P99),
        _ => None,
    }
}

/// The MINT table of `metric`: a row per target and point, Run 1 … Run N and the statistics.
fn repeat_table(page: &mut Page, sweep: &Sweep, metric: Metric) {
    let mut head = vec![String::new()];
    head.extend((1..=sweep.runs).map(|i| format!("Run {i}")));
    head.extend(["mean", "median", "stddev", "95% CI"].map(String::from));
    let mut rows = Vec::new();
    for at in sweep.combinations(0) {
        for t in &sweep.targets {
            let name = match sweep.label(&at, 0) {
                l if l.is_empty() => t.clone(),
                l => format!("{t} at {l}"),
            };
            let mut row = vec![name];
            for run in 1..=sweep.runs {
                let p =
                    (sweep.points.iter()).find(|p| &p.target == t && p.at == at && p.run == run);
                let v = p
                    .and_then(|p| (metric.read)(&p.result))
                    .map_or("-".to_string(), |v| cell(metric.unit, v));
                row.push(match p.is_some_and(|p| p.discarded) {
                    true => format!("({v})"),
                    false => v,
                });
            }
            let s = stats::of(&sweep.values(t, &at, metric));
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| cell(metric.unit, v));
            row.push(f(s.map(|s| s.mean)));
            row.push(f(s.map(|s| s.median)));
            row.push(f(s.map(|s| s.stddev)));
            row.push(s.and_then(|s| s.ci95).map_or("-".to_string(), |c| {
                format!(
                    "±{} (±{:.1}%)",
                    cell(metric.unit, c),
                    100.0 * c / s.map_or(1.0, |s| s.mean).abs().max(1e-12)
                )
            }));
            rows.push(row);
        }
    }
    page.heading(3, &format!("{} per run", metric.name));
    page.raw(&table(&format!("repeat {}", metric.kind), &head, &rows));
}
