//! A sweep's charts: each metric against the swept value (log x for sizes and other
//! doubling ranges), the means with their 95% CI as bars, each run's percentile spectrum and
//! per-second series, and the chart that leads the page (see [`lead`]).

use super::scale::{Axis, Scale, Unit};
use super::svg::{BarChart, BarSeries, LineChart, Series};
use super::sweep::{Metric, Point, Sweep};
use super::{hist, result};
use crate::summary::stats;
use crate::summary::{Distribution, Summary};

/// All the sweep's charts, as (caption, svg).
pub fn charts(sweep: &Sweep) -> Vec<(String, String)> {
    let mut charts = by_value_charts(sweep);
    if sweep.runs > 1 {
        charts.extend(bar_charts(sweep));
    }
    for t in &sweep.targets {
        let runs: Vec<(String, &Distribution)> = (sweep.points.iter())
            .filter(|p| &p.target == t)
            .filter_map(|p| Some((run_name(sweep, p, false), p.result.latency.as_ref()?)))
            .collect();
        if let Some(c) = hist::chart(&runs) {
            charts.extend(c.figures(&format!("Latency by percentile: {t}"), &[]));
        }
    }
    let runs: Vec<(String, &Summary)> = (sweep.points.iter())
        .map(|p| (run_name(sweep, p, true), &p.result))
        .collect();
    charts.extend(result::per_second_charts(&runs));
    charts
}

/// A run's name in a legend: target (when asked), point, run number.
fn run_name(sweep: &Sweep, p: &Point, with_target: bool) -> String {
    let mut parts = Vec::new();
    if with_target && sweep.targets.len() > 1 {
        parts.push(p.target.clone());
    }
    let at = sweep.label(&p.at, 0);
    if !at.is_empty() {
        parts.push(at);
    }
    if sweep.runs > 1 {
        parts.push(format!("run {}", p.run));
    }
    match parts.is_empty() {
        true => p.target.clone(),
        false => parts.join(" "),
    }
}

/// The first axis's values as numbers for a chart's x axis, with their unit; None when a
/// value is not a number (then the tables say it all).
fn x_values(flag: &str, values: &[String]) -> Option<(Vec<f64>, Unit)> {
    let unit = match flag {
        "--size" | "--sndbuf" | "--rcvbuf" | "--dataset" => Unit::Bytes,
        "--think" => Unit::Micros,
        _ => Unit::Count,
    };
    let xs: Option<Vec<f64>> = values
        .iter()
        .map(|v| match unit {
            Unit::Micros => crate::units::parse_duration(v)
                .ok()
                .map(|d| d.as_secs_f64() * 1e6),
            _ => v
                .parse::<f64>()
                .ok()
                .or_else(|| crate::units::parse_size(v).ok().map(|b| b as f64)),
        })
        .collect();
    xs.map(|xs| (xs, unit))
}

/// Each metric (ops/s, throughput, p99) against the first swept flag: a series per target
/// and value of the other flags; log x when the values span a decade or more.
fn by_value_charts(sweep: &Sweep) -> Vec<(String, String)> {
    let Some((flag, values)) = sweep.axes.first() else {
        return Vec::new();
    };
    let Some((xs, unit)) = x_values(flag, values) else {
        return Vec::new();
    };
    let positive = xs.iter().all(|x| *x > 0.0);
    let spread = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        / xs.iter().cloned().fold(f64::INFINITY, f64::min);
    let scale = if positive && spread >= 10.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    let mut charts = Vec::new();
    let m = sweep.metrics;
    for metric in [m[0], m[1], m[3]] {
        let (series, bands) = by_value_lines(sweep, metric, values, &xs);
        let band_ys = bands.iter().flatten().flat_map(|&(_, lo, hi)| [lo, hi]);
        let ys = (series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
            .chain(band_ys.filter(|y| *y > 0.0));
        let yscale = if metric.unit == Unit::Micros {
            Scale::Log
        } else {
            Scale::Linear
        };
        let chart = LineChart {
            kind: metric.kind,
            x: (
                Axis::fit(scale, unit, xs.iter().cloned(), false),
                flag.clone(),
            ),
            y: (
                Axis::fit(yscale, metric.unit, ys, true),
                metric.axis.to_string(),
            ),
            series,
            references: Vec::new(),
        };
        let caption = match bands.iter().any(|b| b.len() > 1) {
            true => format!(
                "{} by {flag} (mean of the runs, 95% CI shaded)",
                metric.name
            ),
            false => format!("{} by {flag}", metric.name),
        };
        charts.extend(chart.figures(&caption, &bands));
    }
    charts
}

/// One metric's lines against the first axis's values (`xs` their positions): a line per
/// target and combination of the other axes' values, the mean of the kept runs at each value,
/// and each line's 95% CI of that mean as a band (with --runs).
fn by_value_lines(
    sweep: &Sweep,
    metric: Metric,
    values: &[String],
    xs: &[f64],
) -> (Vec<Series>, Vec<Band>) {
    let mut series = Vec::new();
    let mut bands: Vec<Band> = Vec::new();
    for group in sweep.combinations(1) {
        for t in &sweep.targets {
            let figures: Vec<(f64, stats::Stats)> = (values.iter().zip(xs))
                .filter_map(|(v, x)| {
                    let at = [vec![v.clone()], group.clone()].concat();
                    Some((*x, stats::of(&sweep.values(t, &at, metric))?))
                })
                .collect();
            let points = figures.iter().map(|(x, st)| (*x, st.mean)).collect();
            // With --runs: the 95% CI of the mean over the kept runs, as a band.
            bands.push(
                (figures.iter())
                    .filter_map(|(x, st)| Some((*x, st.mean - st.ci95?, st.mean + st.ci95?)))
                    .collect(),
            );
            let g = sweep.label(&group, 1);
            let name = if g.is_empty() {
                t.clone()
            } else {
                format!("{t} {g}")
            };
            series.push(Series { name, points });
        }
    }
    (series, bands)
}

/// A line's band: (x, low, high) at each of its points.
type Band = Vec<(f64, f64, f64)>;

/// The mean of the kept runs with its 95% CI as bars: a group per point, a bar per target.
/// With one swept flag the groups are named by its values and the axis by the flag.
fn bar_charts(sweep: &Sweep) -> Vec<(String, String)> {
    let points = sweep.combinations(0);
    let one_axis = sweep.axes.len() == 1;
    let categories: Vec<String> = (points.iter())
        .map(|at| match (one_axis, sweep.label(at, 0)) {
            (true, _) => at.join(", "),
            (false, l) if l.is_empty() => "all runs".to_string(),
            (false, l) => l,
        })
        .collect();
    let x_name = match one_axis {
        true => sweep.axes[0].0.clone(),
        false => String::new(),
    };
    let m = sweep.metrics;
    [m[0], m[2], m[3]]
        .iter()
        .map(|metric| {
            let series = (sweep.targets.iter())
                .map(|t| BarSeries {
                    name: t.clone(),
                    values: (points.iter())
                        .map(|at| {
                            stats::of(&sweep.values(t, at, *metric))
                                .map(|s| (s.mean, s.ci95.map(|e| (e, e))))
                        })
                        .collect(),
                })
                .collect();
            let chart = BarChart {
                kind: "means",
                categories: categories.clone(),
                x_name: x_name.clone(),
                series,
                y: (metric.unit, metric.axis.to_string()),
                scale: Scale::Linear,
                floor: 0.0,
            };
            chart.figures(&format!("{}: mean with 95% CI", metric.name))
        })
        .collect::<Vec<_>>()
        .concat()
}

/// The chart that answers a sweep's question, for the top of the page: with nothing swept,
/// each target's operations per second as bars (on a log scale when they span a decade or
/// more: 22 against 2,191 images/s); with a swept flag, the metric against it (payload
/// throughput for sizes, operations per second otherwise), all its panels when it is drawn
/// as small multiples.
pub fn lead(sweep: &Sweep) -> Vec<(String, String)> {
    if !sweep.axes.is_empty() {
        let kind = match sweep.axes[0].0.as_str() {
            "--size" => "bytes",
            _ => "ops",
        };
        return by_value_charts(sweep)
            .into_iter()
            .filter(|(_, svg)| svg.contains(&format!("data-chart=\"{kind}\"")))
            .collect();
    }
    if sweep.targets.len() < 2 {
        return Vec::new();
    }
    let metric = sweep.metrics[0];
    let stats: Vec<Option<stats::Stats>> = (sweep.targets.iter())
        .map(|t| stats::of(&sweep.values(t, &[], metric)))
        .collect();
    let means: Vec<f64> = stats.iter().flatten().map(|s| s.mean).collect();
    let (lo, hi) = means
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), m| (a.min(*m), b.max(*m)));
    let scale = match lo > 0.0 && hi / lo >= 10.0 {
        true => Scale::Log,
        false => Scale::Linear,
    };
    let name = match sweep.runs {
        1 => metric.axis.to_string(),
        _ => format!("{}, mean with 95% CI", metric.axis),
    };
    let chart = BarChart {
        kind: "by-target",
        categories: sweep.targets.clone(),
        x_name: String::new(),
        series: vec![BarSeries {
            name: name.clone(),
            values: (stats.iter())
                .map(|s| s.map(|s| (s.mean, s.ci95.map(|e| (e, e)))))
                .collect(),
        }],
        y: (metric.unit, name),
        scale,
        floor: 0.0,
    };
    let caption = match scale {
        Scale::Log => format!(
            "{} by target (log scale: they span {:.0}×)",
            metric.name,
            hi / lo
        ),
        _ => format!("{} by target", metric.name),
    };
    vec![(caption.clone(), chart.svg(&caption))]
}
