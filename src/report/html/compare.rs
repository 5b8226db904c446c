//! A comparison (`wirebench.compare/1`): the verdicts against the baseline (paired by round;
//! older documents: Welch's t-test), drawn as bars of the difference in % of the baseline with
//! their 95% CI, the Flash study's latency-shape table, then the runs it holds as a sweep.

use super::fields::{num, text};
use super::page::{table, Page};
use super::scale::{cell, Scale, Unit};
use super::svg::{BarChart, BarSeries};
use super::{sweep, RenderError};
use serde_json::Value;

/// The metrics a verdict may be about, in the order the terminal prints them.
const METRICS: [(&str, &str); 5] = [
    ("ops_per_s", "throughput"),
    ("mean_us", "mean latency"),
    ("p50_us", "median latency"),
    ("p95_us", "p95 latency"),
    ("p99_us", "p99 latency"),
];

/// A verdict's 95% interval as distances below and above its difference, in points of %:
/// the bounds where the document has them (`low_pct`, `high_pct`), else an older document's
/// symmetric `ci95_percent`.
fn interval(v: &Value) -> Option<(f64, f64)> {
    let d = num(&v["difference_percent"])?;
    match (num(&v["low_pct"]), num(&v["high_pct"])) {
        (Some(lo), Some(hi)) => Some(((d - lo).max(0.0), (hi - d).max(0.0))),
        _ => num(&v["ci95_percent"]).map(|e| (e, e)),
    }
}

/// `+4.0% (+2.1% to +6.0%)`, or an older document's `+4.0% ± 1.9%`.
fn difference(v: &Value) -> String {
    let d = num(&v["difference_percent"]).unwrap_or(f64::NAN);
    match (num(&v["low_pct"]), num(&v["high_pct"])) {
        (Some(lo), Some(hi)) => format!("{d:+.1}% ({lo:+.1}% to {hi:+.1}%)"),
        _ => format!(
            "{d:+.1}% ± {:.1}%",
            num(&v["ci95_percent"]).unwrap_or(f64::NAN)
        ),
    }
}

/// Writes the sections of a comparison document.
pub fn render(page: &mut Page, doc: &Value) -> Result<(), RenderError> {
    let verdicts: Vec<&Value> = doc["verdicts"].as_array().into_iter().flatten().collect();
    page.heading(2, "Verdicts");
    page.para(&format!(
        "Against the baseline '{}' (method: {}); the interval is the 95% CI of the difference in % of the baseline.",
        text(&doc["baseline"]),
        text(&doc["method"])
    ));
    // The chart that answers a comparison first: how far each target is from the baseline.
    if let Some(svg) = difference_chart(&verdicts) {
        page.figures(vec![(
            "Difference from the baseline, with 95% CI".to_string(),
            svg,
        )]);
    }
    page.raw(&verdict_table(&verdicts));
    page.heading(3, "Throughput and latency per target");
    page.para("Means over the kept runs; * where the mean exceeds p95: a few very slow requests dominate it.");
    page.raw(&shape_table(doc));
    let charts = shape_charts(doc);
    if !charts.is_empty() {
        page.figures(charts);
    }
    sweep::render(page, &doc["sweep"])
}

/// A metric's name in words.
fn metric_name(key: &str) -> &str {
    METRICS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, n)| n)
}

/// The verdicts: target, point, metric, means, difference ± CI, significance, in words.
fn verdict_table(verdicts: &[&Value]) -> String {
    let head = [
        "target",
        "at",
        "metric",
        "baseline",
        "target's",
        "difference",
        "significant",
        "verdict",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            let key = v["metric"].as_str().unwrap_or("");
            let unit = if key == "ops_per_s" {
                Unit::Count
            } else {
                Unit::Micros
            };
            let f = |x: &Value| num(x).map_or("-".to_string(), |x| cell(unit, x));
            vec![
                text(&v["target"]),
                text(&v["at"]),
                metric_name(key).to_string(),
                f(&v["baseline_mean"]),
                f(&v["mean"]),
                difference(v),
                match (v["significant"].as_bool()).or(v["welch"]["significant"].as_bool()) {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                }
                .to_string(),
                match v["without_outliers"]["text"].as_str() {
                    Some(w) => format!("{}; {w}", text(&v["text"])),
                    None => text(&v["text"]),
                },
            ]
        })
        .collect();
    table("verdicts", &head, &rows)
}

/// Bars of each target's difference from the baseline, a group per metric, with 95% CI.
fn difference_chart(verdicts: &[&Value]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for v in verdicts {
        let name = match text(&v["at"]) {
            at if at.is_empty() => text(&v["target"]),
            at => format!("{} at {at}", text(&v["target"])),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return None;
    }
    let series = names
        .iter()
        .map(|name| BarSeries {
            name: name.clone(),
            values: METRICS
                .iter()
                .map(|(key, _)| {
                    let v = verdicts.iter().find(|v| {
                        v["metric"] == *key
                            && (text(&v["target"]) == *name
                                || format!("{} at {}", text(&v["target"]), text(&v["at"])) == *name)
                    })?;
                    Some((num(&v["difference_percent"])?, interval(v)))
                })
                .collect(),
        })
        .collect();
    let chart = BarChart {
        kind: "difference",
        categories: METRICS.iter().map(|(_, n)| n.to_string()).collect(),
        x_name: String::new(),
        series,
        y: (Unit::Percent, "difference from the baseline".to_string()),
        scale: Scale::Linear,
        // Every metric here is a rate or a time, never below 0: at most 100% less.
        floor: -100.0,
    };
    Some(chart.svg("Difference from the baseline, with 95% CI"))
}

/// The Flash study's view as charts, when the targets ran at several points (data-set sizes,
/// say): p95, and how far the mean lies above the median (a few slow requests pull it up),
/// a bar per target at each point.
fn shape_charts(doc: &Value) -> Vec<(String, String)> {
    let shapes: Vec<&Value> = doc["shapes"].as_array().into_iter().flatten().collect();
    let (mut points, mut targets): (Vec<String>, Vec<String>) = (vec![], vec![]);
    for s in &shapes {
        let (at, t) = (text(&s["at"]), text(&s["target"]));
        if !points.contains(&at) {
            points.push(at);
        }
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    if points.len() < 2 {
        return vec![];
    }
    let chart = |kind: &'static str, title: &str, value: &dyn Fn(&Value) -> Option<f64>| {
        let series = (targets.iter())
            .map(|t| BarSeries {
                name: t.clone(),
                values: (points.iter())
                    .map(|at| {
                        let s = shapes
                            .iter()
                            .find(|s| text(&s["target"]) == *t && text(&s["at"]) == *at)?;
                        Some((value(s)?.max(0.0), None))
                    })
                    .collect(),
            })
            .collect();
        let c = BarChart {
            kind,
            categories: points.clone(),
            x_name: String::new(),
            series,
            y: (Unit::Micros, title.to_string()),
            scale: Scale::Linear,
            floor: 0.0,
        };
        (title.to_string(), c.svg(title))
    };
    vec![
        chart("shape-p95", "p95 latency", &|s| num(&s["p95_us"])),
        chart(
            "shape-mean",
            "mean above the median (mean - median)",
            &|s| Some(num(&s["mean_us"])? - num(&s["p50_us"])?),
        ),
    ]
}

/// The Flash study's table: ops/s, median, mean (starred above p95), p95 per target.
fn shape_table(doc: &Value) -> String {
    let head = ["target", "at", "ops/s", "median", "mean", "p95"].map(String::from);
    let us = |v: &Value| num(v).map_or("-".to_string(), |x| cell(Unit::Micros, x));
    let rows: Vec<Vec<String>> = (doc["shapes"].as_array().into_iter().flatten())
        .map(|s| {
            let star = if s["mean_above_p95"] == true {
                " *"
            } else {
                ""
            };
            vec![
                text(&s["target"]),
                text(&s["at"]),
                num(&s["ops_per_s"]).map_or("-".to_string(), |x| format!("{x:.0}")),
                us(&s["p50_us"]),
                format!("{}{star}", us(&s["mean_us"])),
                us(&s["p95_us"]),
            ]
        })
        .collect();
    table("shapes", &head, &rows)
}
