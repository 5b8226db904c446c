//! A peak search (`wirebench.peak/1`): the conclusion, the steps table as the terminal shows
//! it, and the search's curves: achieved against offered rate (with the line where they are
//! equal), p50 and p99 against offered rate with each latency objective drawn as a line, and
//! each step's percentile spectrum.

use super::fields::{self, finite, micros};
use super::page::{kv, table, Page};
use super::scale::{label, Axis, Scale, Unit};
use super::svg::{LineChart, Reference, Series};
use super::{hist, RenderError};
use crate::summary::peak::{Limit, Peak, PeakSearch, Step};
use crate::summary::slo::Slo;
use crate::summary::Distribution;

/// Writes the sections of a peak-search document.
pub fn render(page: &mut Page, doc: &PeakSearch) -> Result<(), RenderError> {
    let steps: Vec<&Step> = doc.steps.iter().collect();
    page.heading(2, "Peak");
    page.para(&doc.conclusion);
    page.raw(&kv("peak", &peak(doc)));
    if let Some(rows) = contradictions(doc) {
        page.heading(3, "Contradictions: rates whose trials disagreed");
        page.raw(&rows);
    }
    // The curves that answer a peak search lead: where achieved leaves offered, and where
    // latency crosses the objective.
    page.figures(curves(doc, &steps));
    page.heading(3, "Steps, in the order they ran");
    page.raw(&steps_table(&steps));
    let mut charts = Vec::new();
    let spectra: Vec<(String, &Distribution)> = (steps.iter())
        .filter_map(|s| Some((step_name(s), s.result.latency.as_ref()?)))
        .collect();
    if let Some(c) = hist::chart(&spectra) {
        charts.extend(c.figures("Latency by percentile, per step", &[]));
    }
    if !charts.is_empty() {
        page.heading(2, "Charts");
    }
    page.figures(charts);
    page.heading(2, "Methodology");
    let mut pairs = vec![
        ("Schema".to_string(), doc.schema.to_string()),
        ("Objectives".to_string(), doc.objectives.join(", ")),
        ("Step".to_string(), format!("{} each", fields::seconds(doc.step_s))),
        ("Tolerance".to_string(), format!("{}%", doc.tolerance * 100.0)),
        ("Method".to_string(), "open-loop steps at rates doubled until one fails, then bisected (mutilate --search; RFC 2544); a step fails when replies drained after its window leave a backlog; a rate whose trials disagree, or that failed below a pass, is measured again until a majority decides, and the peak is confirmed by a majority of three trials (draft-ietf-bmwg-mlrsearch)".to_string()),
    ];
    if let Some(first) = steps.first() {
        pairs.extend(fields::methodology(&first.result).into_iter().map(
            |(k, v)| match k.as_str() {
                "Measured" => ("Measured, each step".to_string(), v),
                "Settings" => ("Settings of the first step".to_string(), v),
                _ => (k, v),
            },
        ));
    }
    page.raw(&kv("methodology", &pairs));
    Ok(())
}

/// A step's name in a legend: its offered rate.
fn step_name(step: &Step) -> String {
    let c = match &step.retry {
        Some(why) => format!(" ({})", why.replace('_', " ")),
        None if step.confirmation => " (confirmation)".to_string(),
        None => String::new(),
    };
    let rate = finite(step.offered_per_s).map_or("-".to_string(), |r| label(Unit::Count, r));
    format!("{rate}/s{c}")
}

/// The peak's figures.
fn peak(doc: &PeakSearch) -> Vec<(String, String)> {
    let Some(p) = &doc.peak else {
        return vec![("peak".to_string(), "none found".to_string())];
    };
    vec![
        (
            "offered".to_string(),
            format!("{}/s", fields::rate(finite(p.offered_per_s))),
        ),
        (
            "achieved".to_string(),
            format!("{} ops/s", fields::rate(finite(p.ops_per_s))),
        ),
        (
            "p50, mean, p99".to_string(),
            format!(
                "{}, {}, {}",
                micros(Some(p.p50_us)),
                micros(Some(p.mean_us)),
                micros(Some(p.p99_us))
            ),
        ),
        ("confirmed".to_string(), confirmed(p)),
        (
            "generator limited".to_string(),
            doc.generator_limited.to_string(),
        ),
    ]
}

/// Whether the peak was confirmed, by how many of its trials, and their spread.
fn confirmed(p: &Peak) -> String {
    // A document from before trials were counted: a peak is found by one trial at least.
    if p.trials == 0 {
        return p.confirmed.to_string();
    }
    let range =
        |r: [f64; 2], show: &dyn Fn(f64) -> String| format!("{}–{}", show(r[0]), show(r[1]));
    format!(
        "{} ({} of {} trials passed; ops/s {}, p99 {})",
        p.confirmed,
        p.passed_trials,
        p.trials,
        range(p.ops_per_s_range, &|v| fields::rate(finite(v))),
        range(p.p99_us_range, &|v| micros(Some(v)))
    )
}

/// The contradictions table, when the search met any.
fn contradictions(doc: &PeakSearch) -> Option<String> {
    if doc.contradictions.is_empty() {
        return None;
    }
    let head = ["rate/s", "passed", "failed", "decided"].map(String::from);
    let rows: Vec<Vec<String>> = (doc.contradictions.iter())
        .map(|c| {
            vec![
                fields::rate(finite(c.rate_per_s)),
                c.passed.to_string(),
                c.failed.to_string(),
                c.decided.clone(),
            ]
        })
        .collect();
    Some(table("contradictions", &head, &rows))
}

/// The steps: offered, achieved, p50, p99, errors, kept up, each objective, verdict.
fn steps_table(steps: &[&Step]) -> String {
    let objectives: Vec<String> = (steps.first().into_iter())
        .flat_map(|s| s.objectives.iter().map(|o| o.slo.clone()))
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
                fields::rate(finite(s.achieved_per_s)),
                micros(s.p50_us),
                micros(s.p99_us),
                format!("{:.2}%", finite(s.error_percent).unwrap_or(0.0)),
                if s.kept_up { "yes" } else { "no" }.to_string(),
            ];
            for o in &s.objectives {
                let slo = Slo::parse(&o.slo).ok();
                let m = o.measured.and_then(finite).map_or("-".to_string(), |m| {
                    slo.as_ref().map_or(m.to_string(), |s| s.show(m))
                });
                row.push(m);
            }
            row.push(
                match (s.passed, s.generator_limited) {
                    (true, _) => "pass",
                    (false, true) if s.limit == Some(Limit::Lag) => {
                        "generator-limited (busy machine)"
                    }
                    (false, true) => "generator-limited",
                    (false, false) if s.backlog => "FAIL (backlog)",
                    (false, false) => "FAIL",
                }
                .to_string(),
            );
            row
        })
        .collect();
    table("steps", &head, &rows)
}

/// The search steps in order of offered rate (the rates measured again left out: they repeat
/// one).
fn by_offered<'a>(steps: &[&'a Step]) -> Vec<&'a Step> {
    let mut s: Vec<&Step> = steps
        .iter()
        .copied()
        .filter(|s| !s.confirmation && s.retry.is_none())
        .collect();
    s.sort_by(|a, b| {
        finite(a.offered_per_s)
            .partial_cmp(&finite(b.offered_per_s))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    s
}

/// The search steps' curves along the offered rate: the x axis they share, and each curve.
struct Curves<'a> {
    /// The steps, by offered rate.
    steps: Vec<&'a Step>,
    /// The lowest and highest rate offered.
    lo: f64,
    hi: f64,
    /// Log when the rates span a decade (a search from far below the peak).
    scale: Scale,
}

impl<'a> Curves<'a> {
    fn new(steps: &[&'a Step]) -> Curves<'a> {
        let steps = by_offered(steps);
        let (lo, hi) = (steps.iter().filter_map(|s| finite(s.offered_per_s)))
            .fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
        let scale = match lo > 0.0 && hi / lo >= 10.0 {
            true => Scale::Log,
            false => Scale::Linear,
        };
        Curves {
            steps,
            lo,
            hi,
            scale,
        }
    }

    /// The x axis: offered rate.
    fn x(&self) -> (Axis, String) {
        let xs = [self.lo, self.hi].into_iter();
        let axis = Axis::fit(self.scale, Unit::Count, xs, self.scale == Scale::Linear);
        (axis, "offered rate, requests/s".to_string())
    }

    /// A step's figure against the offered rate.
    fn line(&self, name: &str, figure: fn(&Step) -> Option<f64>) -> Series {
        Series {
            name: name.to_string(),
            points: (self.steps.iter())
                .filter_map(|s| Some((finite(s.offered_per_s)?, figure(s).and_then(finite)?)))
                .collect(),
        }
    }

    /// Achieved against offered, with the line where they are equal.
    fn rates(&self) -> LineChart {
        let achieved = self.line("achieved ops/s", |s| Some(s.achieved_per_s));
        let ys = achieved
            .points
            .iter()
            .map(|p| p.1)
            .chain([self.lo, self.hi]);
        LineChart {
            kind: "achieved",
            x: self.x(),
            y: (
                Axis::fit(self.scale, Unit::Count, ys, self.scale == Scale::Linear),
                "achieved, ops/s".to_string(),
            ),
            series: vec![achieved],
            references: vec![Reference {
                name: "achieved = offered".to_string(),
                from: (self.lo, self.lo),
                to: (self.hi, self.hi),
            }],
        }
    }

    /// p50 and p99 against offered, each latency objective a level line.
    fn latency(&self, doc: &PeakSearch) -> LineChart {
        let slos: Vec<Slo> = (doc.objectives.iter())
            .filter_map(|o| Slo::parse(o).ok())
            .filter(Slo::is_latency)
            .collect();
        let series = vec![
            self.line("p50", |s| s.p50_us),
            self.line("p99", |s| s.p99_us),
        ];
        let ys = (series.iter().flat_map(|s| s.points.iter().map(|p| p.1)))
            .chain(slos.iter().map(|s| s.bound));
        LineChart {
            kind: "latency-by-rate",
            x: self.x(),
            y: (
                Axis::fit(Scale::Log, Unit::Micros, ys, false),
                "latency".to_string(),
            ),
            series,
            references: (slos.iter())
                .map(|s| Reference {
                    name: format!("objective {}", s.text),
                    from: (self.lo, s.bound),
                    to: (self.hi, s.bound),
                })
                .collect(),
        }
    }
}

/// The achieved-vs-offered and latency-vs-offered curves.
fn curves(doc: &PeakSearch, steps: &[&Step]) -> Vec<(String, String)> {
    let c = Curves::new(steps);
    let rates = "Achieved against offered rate";
    let latency = "Latency against offered rate, with the objective";
    vec![
        (rates.to_string(), c.rates().svg(rates)),
        (latency.to_string(), c.latency(doc).svg(latency)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::read::tolerant;
    use serde_json::json;

    #[test]
    fn the_contradictions_and_the_peaks_trials_are_shown() {
        let doc: PeakSearch = tolerant(&json!({
            "peak": { "confirmed": true, "trials": 3, "passed_trials": 2,
                      "ops_per_s_range": [962.0, 991.0], "p99_us_range": [900.0, 301000.0] },
            "contradictions": [
                { "rate_per_s": 1012.5, "passed": 2, "failed": 1,
                  "decided": "passed by majority (2 of 3)" }
            ]
        }));
        let rows = contradictions(&doc).expect("a table");
        assert!(rows.contains("class=\"contradictions\""), "{rows}");
        assert!(rows.contains("passed by majority (2 of 3)"), "{rows}");
        let shown = confirmed(doc.peak.as_ref().unwrap());
        assert!(shown.starts_with("true (2 of 3 trials passed"), "{shown}");
        assert!(shown.contains("962") && shown.contains("991"), "{shown}");
    }

    /// A document from before issue 17: no contradictions, no trial counts.
    #[test]
    fn an_older_document_shows_what_it_has() {
        let doc: PeakSearch = tolerant(&json!({ "peak": { "confirmed": true } }));
        assert!(contradictions(&doc).is_none());
        assert_eq!(confirmed(doc.peak.as_ref().unwrap()), "true");
        let doc: PeakSearch = tolerant(&json!({ "contradictions": [] }));
        assert!(contradictions(&doc).is_none());
    }
}
