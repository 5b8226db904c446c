//! A comparison (`wirebench.compare/1`): the verdicts against the baseline (paired by round;
//! older documents: Welch's t-test), drawn as bars of the difference in % of the baseline with
//! their 95% CI, the Flash study's latency-shape table, then the runs it holds as a sweep.

use super::fields::finite;
use super::page::{table, Page};
use super::scale::{cell, Scale, Unit};
use super::svg::{BarChart, BarSeries};
use super::{sweep, RenderError};
use crate::summary::compare::{Comparison, Shape, Verdict};

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
fn interval(v: &Verdict) -> Option<(f64, f64)> {
    let d = finite(v.difference_percent)?;
    match v.ci95_percent {
        None => Some(((d - v.low_pct).max(0.0), (v.high_pct - d).max(0.0))),
        Some(e) => finite(e).map(|e| (e, e)),
    }
}

/// `+4.0% (+2.1% to +6.0%)`, or an older document's `+4.0% ± 1.9%`.
fn difference(v: &Verdict) -> String {
    let (d, lo, hi) = (v.difference_percent, v.low_pct, v.high_pct);
    match v.ci95_percent {
        None => format!("{d:+.1}% ({lo:+.1}% to {hi:+.1}%)"),
        Some(e) => format!("{d:+.1}% ± {e:.1}%"),
    }
}

/// Writes the sections of a comparison document.
pub fn render(page: &mut Page, doc: &Comparison) -> Result<(), RenderError> {
    page.heading(2, "Verdicts");
    page.para(&format!(
        "Against the baseline '{}' (method: {}); the interval is the 95% CI of the difference in % of the baseline.",
        doc.baseline, doc.method
    ));
    if let Some(line) = &doc.sweep.busy {
        page.para(line);
    }
    // The chart that answers a comparison first: how far each target is from the baseline.
    page.figures(difference_chart(&doc.verdicts));
    page.raw(&verdict_table(&doc.verdicts));
    page.heading(3, "Throughput and latency per target");
    page.para("Means over the kept runs; * where the mean exceeds p95: a few very slow requests dominate it.");
    page.raw(&shape_table(&doc.shapes));
    let charts = shape_charts(&doc.shapes);
    if !charts.is_empty() {
        page.figures(charts);
    }
    sweep::render_with(page, &doc.sweep, false)
}

/// A verdict's target, and its point when it has one: `b at --size 64`.
fn where_(v: &Verdict) -> String {
    match v.at.is_empty() {
        true => v.target.clone(),
        false => format!("{} at {}", v.target, v.at),
    }
}

/// A metric's name in words.
fn metric_name(key: &str) -> &str {
    METRICS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, n)| n)
}

/// The verdicts: target, point, metric, means, difference ± CI, significance, in words.
fn verdict_table(verdicts: &[Verdict]) -> String {
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
            let unit = if v.metric == "ops_per_s" {
                Unit::Count
            } else {
                Unit::Micros
            };
            let f = |x: f64| finite(x).map_or("-".to_string(), |x| cell(unit, x));
            // An older document's significance is its Welch's t-test's.
            let significant = v.welch.as_ref().map_or(v.significant, |w| w.significant);
            let called = match (&v.inconclusive, significant) {
                (Some(_), _) => "inconclusive",
                (None, true) => "yes",
                (None, false) => "no",
            };
            let dropped: Vec<String> = (v.dropped.iter())
                .map(|d| format!("; run {} dropped: {}", d.run, d.why))
                .collect();
            vec![
                v.target.clone(),
                v.at.clone(),
                metric_name(&v.metric).to_string(),
                f(v.baseline_mean),
                f(v.mean),
                difference(v),
                called.to_string(),
                match &v.without_outliers {
                    Some(w) => format!("{}; {}{}", v.text, w.text, dropped.concat()),
                    None => format!("{}{}", v.text, dropped.concat()),
                },
            ]
        })
        .collect();
    table("verdicts", &head, &rows)
}

/// Bars of each target's difference from the baseline, a group per metric, with 95% CI (as
/// small multiples when a sweep makes more targets and points than one chart draws); none
/// without verdicts.
fn difference_chart(verdicts: &[Verdict]) -> Vec<(String, String)> {
    let mut names: Vec<String> = Vec::new();
    for v in verdicts {
        let name = where_(v);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Vec::new();
    }
    let series = names
        .iter()
        .map(|name| BarSeries {
            name: name.clone(),
            values: METRICS
                .iter()
                .map(|(key, _)| {
                    let v = verdicts.iter().find(|v| {
                        v.metric == *key
                            && (v.target == *name || format!("{} at {}", v.target, v.at) == *name)
                    })?;
                    Some((finite(v.difference_percent)?, interval(v)))
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
    chart.figures("Difference from the baseline, with 95% CI")
}

/// The Flash study's view as charts, when the targets ran at several points (data-set sizes,
/// say): p95, and how far the mean lies above the median (a few slow requests pull it up),
/// a bar per target at each point.
fn shape_charts(shapes: &[Shape]) -> Vec<(String, String)> {
    let (mut points, mut targets): (Vec<&str>, Vec<&str>) = (vec![], vec![]);
    for s in shapes {
        if !points.contains(&s.at.as_str()) {
            points.push(&s.at);
        }
        if !targets.contains(&s.target.as_str()) {
            targets.push(&s.target);
        }
    }
    if points.len() < 2 {
        return vec![];
    }
    let chart = |kind: &'static str, title: &str, value: &dyn Fn(&Shape) -> Option<f64>| {
        let series = (targets.iter())
            .map(|t| BarSeries {
                name: t.to_string(),
                values: (points.iter())
                    .map(|at| {
                        let s = shapes.iter().find(|s| s.target == *t && s.at == *at)?;
                        Some((value(s)?.max(0.0), None))
                    })
                    .collect(),
            })
            .collect();
        let c = BarChart {
            kind,
            categories: points.iter().map(|p| p.to_string()).collect(),
            x_name: String::new(),
            series,
            y: (Unit::Micros, title.to_string()),
            scale: Scale::Linear,
            floor: 0.0,
        };
        c.figures(title)
    };
    [
        chart("shape-p95", "p95 latency", &|s| s.p95_us.and_then(finite)),
        chart(
            "shape-mean",
            "mean above the median (mean - median)",
            &|s| Some(s.mean_us.and_then(finite)? - s.p50_us.and_then(finite)?),
        ),
    ]
    .concat()
}

/// The Flash study's table: ops/s, median, mean (starred above p95), p95 per target.
fn shape_table(shapes: &[Shape]) -> String {
    let head = ["target", "at", "ops/s", "median", "mean", "p95"].map(String::from);
    let us = |v: Option<f64>| {
        v.and_then(finite)
            .map_or("-".to_string(), |x| cell(Unit::Micros, x))
    };
    let rows: Vec<Vec<String>> = (shapes.iter())
        .map(|s| {
            let star = if s.mean_above_p95 { " *" } else { "" };
            vec![
                s.target.clone(),
                s.at.clone(),
                finite(s.ops_per_s).map_or("-".to_string(), |x| format!("{x:.0}")),
                us(s.p50_us),
                format!("{}{star}", us(s.mean_us)),
                us(s.p95_us),
            ]
        })
        .collect();
    table("shapes", &head, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::read::tolerant;

    /// A verdict of an older document (Welch's t-test, schema/compare.v1.json's second form)
    /// shows its symmetric interval and the test's significance.
    #[test]
    fn an_older_verdict_shows_its_interval_and_welchs_significance() {
        let doc: Comparison = tolerant(&serde_json::json!({
            "schema": "wirebench.compare/1",
            "verdicts": [{
                "target": "b", "at": "", "metric": "p99_us", "baseline_mean": 100.0,
                "mean": 110.0, "ratio": 1.1, "difference_percent": 10.0, "ci95_percent": 1.9,
                "welch": { "difference": 10.0, "ci95": 1.9, "df": null, "t": 9.0,
                           "significant": true },
                "text": "b adds 10.0% to the p99 latency"
            }]
        }));
        let v = &doc.verdicts[0];
        assert_eq!(difference(v), "+10.0% ± 1.9%");
        assert_eq!(interval(v), Some((1.9, 1.9)));
        let rows = verdict_table(&doc.verdicts);
        assert!(rows.contains("<td>yes</td>"), "{rows}");
    }
}
