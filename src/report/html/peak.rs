//! A peak search (`wirebench.peak/1`): the conclusion, the steps table as the terminal shows
//! it, and the search's curves: achieved against offered rate (with the line where they are
//! equal), p50 and p99 against offered rate with each latency objective drawn as a line, and
//! each step's percentile spectrum.

use super::fields::{self, num, text};
use super::page::{kv, table, Page};
use super::scale::{label, Axis, Scale, Unit};
use super::svg::{LineChart, Reference, Series};
use super::{hist, RenderError};
use crate::summary::slo::Slo;
use serde_json::Value;

/// Writes the sections of a peak-search document.
pub fn render(page: &mut Page, doc: &Value) -> Result<(), RenderError> {
    let steps: Vec<&Value> = doc["steps"].as_array().into_iter().flatten().collect();
    page.heading(2, "Peak");
    page.para(&text(&doc["conclusion"]));
    page.raw(&kv("peak", &peak(doc)));
    page.heading(3, "Steps, in the order they ran");
    page.raw(&steps_table(&steps));
    page.heading(2, "Charts");
    let mut charts = curves(doc, &steps);
    let spectra: Vec<(String, &Value)> = (steps.iter())
        .map(|s| (step_name(s), &s["result"]["latency"]))
        .collect();
    if let Some(c) = hist::chart(&spectra) {
        charts.push((
            "Latency by percentile, per step".to_string(),
            c.svg("Latency by percentile, per step"),
        ));
    }
    page.figures(charts);
    page.heading(2, "Methodology");
    let mut pairs = vec![
        ("Objectives".to_string(), text(&doc["objectives"])),
        ("Step".to_string(), format!("{} s each", text(&doc["step_s"]))),
        ("Tolerance".to_string(), text(&doc["tolerance"])),
        ("Method".to_string(), "open-loop steps at rates doubled until one fails, then bisected; the peak confirmed by one more run (mutilate --search; RFC 2544)".to_string()),
    ];
    if let Some(first) = steps.first() {
        pairs.extend(fields::methodology(&first["result"]));
    }
    page.raw(&kv("methodology", &pairs));
    Ok(())
}

/// A step's name in a legend: its offered rate.
fn step_name(step: &Value) -> String {
    let c = if step["confirmation"] == true {
        " (confirmation)"
    } else {
        ""
    };
    format!(
        "{}/s{c}",
        num(&step["offered_per_s"]).map_or("-".to_string(), |r| label(Unit::Count, r))
    )
}

/// The peak's figures.
fn peak(doc: &Value) -> Vec<(String, String)> {
    let p = &doc["peak"];
    if p.is_null() {
        return vec![("peak".to_string(), "none found".to_string())];
    }
    vec![
        (
            "offered".to_string(),
            format!("{}/s", fields::rate(num(&p["offered_per_s"]))),
        ),
        (
            "achieved".to_string(),
            format!("{} ops/s", fields::rate(num(&p["ops_per_s"]))),
        ),
        (
            "p50, mean, p99".to_string(),
            format!(
                "{}, {}, {}",
                fields::us(&p["p50_us"]),
                fields::us(&p["mean_us"]),
                fields::us(&p["p99_us"])
            ),
        ),
        ("confirmed".to_string(), text(&p["confirmed"])),
        (
            "generator limited".to_string(),
            text(&doc["generator_limited"]),
        ),
    ]
}

/// The steps: offered, achieved, p50, p99, errors, kept up, each objective, verdict.
fn steps_table(steps: &[&Value]) -> String {
    let objectives: Vec<String> = (steps
        .first()
        .and_then(|s| s["objectives"].as_array())
        .into_iter()
        .flatten())
    .map(|o| text(&o["slo"]))
    .collect();
    let mut head: Vec<String> = ["offered/s", "achieved/s", "p50", "p99", "errors", "kept up"]
        .map(String::from)
        .to_vec();
    head.extend(objectives.iter().cloned());
    head.push("verdict".to_string());
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            let mut row = vec![
                step_name(s),
                fields::rate(num(&s["achieved_per_s"])),
                fields::us(&s["p50_us"]),
                fields::us(&s["p99_us"]),
                format!("{:.2}%", num(&s["error_percent"]).unwrap_or(0.0)),
                if s["kept_up"] == true { "yes" } else { "no" }.to_string(),
            ];
            for o in s["objectives"].as_array().into_iter().flatten() {
                let slo = Slo::parse(&text(&o["slo"])).ok();
                let m = num(&o["measured"]).map_or("-".to_string(), |m| {
                    slo.as_ref().map_or(m.to_string(), |s| s.show(m))
                });
                row.push(m);
            }
            row.push(
                match (s["passed"] == true, s["generator_limited"] == true) {
                    (true, _) => "pass",
                    (false, true) => "generator-limited",
                    (false, false) => "FAIL",
                }
                .to_string(),
            );
            row
        })
        .collect();
    table("steps", &head, &rows)
}

/// The search steps in order of offered rate (the confirmation left out: it repeats one).
fn by_offered<'a>(steps: &[&'a Value]) -> Vec<&'a Value> {
    let mut s: Vec<&Value> = steps
        .iter()
        .copied()
        .filter(|s| s["confirmation"] != true)
        .collect();
    s.sort_by(|a, b| {
        num(&a["offered_per_s"])
            .partial_cmp(&num(&b["offered_per_s"]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    s
}

/// The achieved-vs-offered and latency-vs-offered curves.
fn curves(doc: &Value, steps: &[&Value]) -> Vec<(String, String)> {
    let steps = by_offered(steps);
    let line = |name: &str, key: &str| Series {
        name: name.to_string(),
        points: steps
            .iter()
            .filter_map(|s| Some((num(&s["offered_per_s"])?, num(&s[key])?)))
            .collect(),
    };
    let offered: Vec<f64> = steps
        .iter()
        .filter_map(|s| num(&s["offered_per_s"]))
        .collect();
    let (lo, hi) = offered
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let xscale = if lo > 0.0 && hi / lo >= 10.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    let x = |_: ()| {
        (
            Axis::fit(
                xscale,
                Unit::Count,
                offered.iter().cloned(),
                xscale == Scale::Linear,
            ),
            "offered rate, requests/s".to_string(),
        )
    };
    let achieved = line("achieved ops/s", "achieved_per_s");
    let ys = achieved
        .points
        .iter()
        .map(|p| p.1)
        .chain(offered.iter().cloned());
    let rates = LineChart {
        kind: "achieved",
        x: x(()),
        y: (
            Axis::fit(xscale, Unit::Count, ys, xscale == Scale::Linear),
            "achieved, ops/s".to_string(),
        ),
        series: vec![achieved],
        references: vec![Reference {
            name: "achieved = offered".to_string(),
            from: (lo, lo),
            to: (hi, hi),
        }],
    };
    let slos: Vec<Slo> = (doc["objectives"].as_array().into_iter().flatten())
        .filter_map(|o| Slo::parse(o.as_str()?).ok())
        .filter(Slo::is_latency)
        .collect();
    let latency = vec![line("p50", "p50_us"), line("p99", "p99_us")];
    let ys = latency
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(slos.iter().map(|s| s.bound));
    let lat = LineChart {
        kind: "latency-by-rate",
        x: x(()),
        y: (
            Axis::fit(Scale::Log, Unit::Micros, ys, false),
            "latency".to_string(),
        ),
        series: latency,
        references: slos
            .iter()
            .map(|s| Reference {
                name: format!("objective {}", s.text),
                from: (lo, s.bound),
                to: (hi, s.bound),
            })
            .collect(),
    };
    vec![
        (
            "Achieved against offered rate".to_string(),
            rates.svg("Achieved against offered rate"),
        ),
        (
            "Latency against offered rate, with the objective".to_string(),
            lat.svg("Latency against offered rate"),
        ),
    ]
}
