//! One run (`wirebench.result/1`): the terminal report's tables (the headline figures, the
//! latency distributions, a mix's kinds, errors by kind, the per-second series), its charts
//! (the percentile spectrum, each kind of a mix in it too; ops/s and p99 per second) and its
//! methodology.

use super::fields::{self, finite, micros, rate};
use super::page::{kv, table, Page};
use super::scale::{Axis, Scale, Unit};
use super::svg::{LineChart, Series};
use super::{hist, RenderError};
use crate::record::SeriesPoint;
use crate::summary::{Distribution, Summary};
use crate::units::thousands;
use serde_json::Value;

/// The distributions a result holds, with their row names.
fn distributions_of(r: &Summary) -> [(&'static str, Option<&Distribution>); 6] {
    [
        ("latency", r.latency.as_ref()),
        ("service time", r.service_time.as_ref()),
        ("connect", r.connect.as_ref()),
        (
            "time to first byte",
            r.http.as_ref().and_then(|h| h.ttfb.as_ref()),
        ),
        (
            "send lag (behind schedule)",
            r.open_loop.as_ref().and_then(|o| o.send_lag.as_ref()),
        ),
        (
            "send lag (generator woke late)",
            r.open_loop.as_ref().and_then(|o| o.wake_lag.as_ref()),
        ),
    ]
}

/// Writes the sections of one result document.
pub fn render(page: &mut Page, r: &Summary) -> Result<(), RenderError> {
    page.heading(2, "Result");
    page.raw(&kv("headline", &headline(r)));
    page.raw(&distributions(r));
    mix(page, r);
    errors(page, r);
    extras(page, r);
    super::shards::render(page, r);
    let mut charts = Vec::new();
    let mut spectra: Vec<(String, &Distribution)> = distributions_of(r)
        .into_iter()
        .filter(|(name, _)| *name != "connect" && !name.starts_with("send lag"))
        .filter_map(|(name, d)| Some((name.to_string(), d?)))
        .collect();
    // A mix's kinds beside the totals, each its own curve.
    for k in r.mix.iter().flatten() {
        if let Some(latency) = &k.latency {
            spectra.push((format!("latency: {}", k.name), latency));
        }
    }
    if let Some(c) = hist::chart(&spectra) {
        charts.extend(c.figures("Latency by percentile", &[]));
    }
    charts.extend(per_second_charts(&[(r.target.clone(), r)]));
    if !charts.is_empty() {
        page.heading(2, "Charts");
        page.figures(charts);
    }
    page.heading(2, "Per second");
    page.raw(&per_second(r));
    page.notes(&r.notes);
    page.heading(2, "Methodology");
    let mut pairs = vec![("Schema".to_string(), r.schema.to_string())];
    pairs.extend(fields::methodology(r));
    page.raw(&kv("methodology", &pairs));
    Ok(())
}

/// The headline figures: counts, rates, time.
fn headline(r: &Summary) -> Vec<(String, String)> {
    let t = &r.throughput;
    vec![
        ("ok".to_string(), thousands(r.ok)),
        ("errors".to_string(), thousands(r.errors.total)),
        ("ops/s".to_string(), rate(fields::ops(r))),
        (
            "sent, received".to_string(),
            format!(
                "{}, {}",
                byte_rate(t.sent_mb_per_s),
                byte_rate(t.received_mb_per_s)
            ),
        ),
        ("measured".to_string(), fields::seconds(r.duration_s)),
    ]
}

/// A rate given in MB/s, written in the unit its size calls for.
fn byte_rate(mb: f64) -> String {
    finite(mb).map_or("-".to_string(), |mb| {
        crate::report::format::byte_rate(mb * 1e6)
    })
}

/// A distribution's figures, min … max, each in its unit (`-` for all when it is absent).
fn figures(d: Option<&Distribution>) -> impl Iterator<Item = String> + '_ {
    (0..9).map(move |i| micros(d.map(|d| d.figures()[i])))
}

/// The distribution table: a row per distribution, min … max.
pub fn distributions(r: &Summary) -> String {
    let head: Vec<String> = [
        "", "min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99.9", "max",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = distributions_of(r)
        .into_iter()
        .filter_map(|(name, d)| {
            let mut row = vec![name.to_string()];
            row.extend(figures(Some(d?)));
            Some(row)
        })
        .collect();
    table("distributions", &head, &rows)
}

/// A mix's kinds: each one's share asked and got, counts, rate and latency, then the totals;
/// nothing without a mix.
fn mix(page: &mut Page, r: &Summary) {
    let Some(kinds) = &r.mix else {
        return;
    };
    let head = [
        "kind", "weight", "share", "ok", "errors", "ops/s", "mean", "p50", "p95", "p99", "max",
    ]
    .map(String::from);
    let percent = |v: f64| finite(v).map_or("-".to_string(), |p| format!("{p:.1}%"));
    let row = |name: String, w: String, share: String, counts: [u64; 2], ops: String, d| {
        let mut row = vec![name, w, share, thousands(counts[0]), thousands(counts[1])];
        row.push(ops);
        // mean, p50, p95, p99, max of the distribution's figures.
        let f: Vec<String> = figures(d).collect();
        row.extend([1, 3, 5, 6, 8].map(|i| f[i].clone()));
        row
    };
    let mut rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            let (w, share) = (percent(k.weight_percent), percent(k.share_percent));
            let ops = format!("{}/s", rate(finite(k.ops_per_s)));
            let counts = [k.ok, k.errors.total];
            row(k.name.clone(), w, share, counts, ops, k.latency.as_ref())
        })
        .collect();
    let ops = format!("{}/s", rate(fields::ops(r)));
    let all = "100%".to_string();
    let counts = [r.ok, r.errors.total];
    rows.push(row(
        "all".into(),
        all.clone(),
        all,
        counts,
        ops,
        r.latency.as_ref(),
    ));
    page.heading(3, "Mix");
    page.raw(&table("mix", &head, &rows));
}

/// Errors by kind, with the first message of each; nothing when there were none.
fn errors(page: &mut Page, r: &Summary) {
    if r.errors.by_kind.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = (r.errors.by_kind.iter())
        .map(|k| vec![k.kind.to_string(), thousands(k.count), k.sample.clone()])
        .collect();
    page.heading(3, "Errors");
    let head = ["kind", "count", "first message"].map(String::from);
    page.raw(&table("errors", &head, &rows));
}

/// The open-loop, datagram, HTTP and warm-up figures, where the run has them: every field
/// but the nested ones (distributions, tables), as the document writes it, so a field added
/// to one of these sections appears without a line here.
fn extras(page: &mut Page, r: &Summary) {
    let sections = [
        ("open_loop", "Open loop", serde_json::to_value(&r.open_loop)),
        ("datagrams", "Datagrams", serde_json::to_value(&r.datagrams)),
        ("http", "HTTP", serde_json::to_value(&r.http)),
        ("warmup", "Warm-up", serde_json::to_value(&r.warmup)),
    ];
    for (field, name, value) in sections {
        let Ok(Value::Object(obj)) = value else {
            continue;
        };
        let pairs: Vec<(String, String)> = obj
            .iter()
            .filter(|(_, v)| !v.is_object())
            .map(|(k, v)| fields::pair(k, v))
            .collect();
        page.heading(3, name);
        page.raw(&kv(field, &pairs));
    }
}

/// The per-second table: ok/s, errors, p50, p99, max.
fn per_second(r: &Summary) -> String {
    let head = ["second", "ok/s", "errors", "p50", "p99", "max"].map(String::from);
    let rows: Vec<Vec<String>> = (r.series.iter())
        .map(|p| {
            let per_s = finite(p.duration_s).map(|d| p.ok as f64 / d);
            vec![
                p.second.to_string(),
                rate(per_s).trim_end_matches(".0").to_string(),
                thousands(p.errors),
                micros(p.p50_us),
                micros(p.p99_us),
                micros(p.max_us),
            ]
        })
        .collect();
    table("per-second", &head, &rows)
}

/// Two charts of the per-second series of `runs` ((name, result) pairs): ok/s and p99 by
/// second, one series per run that has two seconds or more to draw; a run of 1 s or less is
/// one point at second 0, so it is left out and the figure says so (in place of the chart
/// when no run is long enough).
pub fn per_second_charts(runs: &[(String, &Summary)]) -> Vec<(String, String)> {
    let with_series = (runs.iter()).filter(|(_, r)| !r.series.is_empty()).count();
    let ops = per_second_lines(runs, &|p| Some(p.ok as f64 / finite(p.duration_s)?));
    let p99 = per_second_lines(runs, &|p| p.p99_us.and_then(finite));
    let mut charts = Vec::new();
    for (kind, caption, data, unit, scale) in [
        (
            "ops-per-second",
            "Operations per second, by second",
            ops,
            Unit::Count,
            Scale::Linear,
        ),
        (
            "p99-per-second",
            "p99 latency, by second",
            p99,
            Unit::Micros,
            Scale::Log,
        ),
    ] {
        let note = not_drawn(with_series.saturating_sub(data.len()), data.len());
        if data.is_empty() {
            if !note.is_empty() {
                charts.push((caption.to_string(), note));
            }
            continue;
        }
        let xs = data.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = data.iter().flat_map(|s| s.points.iter().map(|p| p.1));
        let chart = LineChart {
            kind,
            x: (
                Axis::fit(Scale::Linear, Unit::Seconds, xs, true),
                "second of the run".to_string(),
            ),
            y: (
                Axis::fit(scale, unit, ys, true),
                caption.split(',').next().unwrap_or("").to_string(),
            ),
            series: data,
            references: Vec::new(),
        };
        let mut panels = chart.figures(caption, &[]);
        if let Some(last) = panels.last_mut() {
            last.1 += &note;
        }
        charts.extend(panels);
    }
    charts
}

/// A line per run of figure `f` by second, the runs with fewer than 2 points left out.
fn per_second_lines(
    runs: &[(String, &Summary)],
    f: &dyn Fn(&SeriesPoint) -> Option<f64>,
) -> Vec<Series> {
    runs.iter()
        .map(|(name, r)| Series {
            name: name.clone(),
            points: (r.series.iter())
                .filter_map(|p| Some((p.second as f64, f(p)?)))
                .collect(),
        })
        .filter(|s| s.points.len() >= 2)
        .collect()
}

/// The note under a per-second chart when `left_out` runs had one point each (`drawn` runs
/// were drawn); empty when none was left out.
fn not_drawn(left_out: usize, drawn: usize) -> String {
    match (left_out, drawn) {
        (0, _) => String::new(),
        (n, 0) => format!(
            r#"<p class="none">Not drawn: {} lasted 1 s or less, one point each (their figures are in the tables).</p>"#,
            if n == 1 {
                "the run".to_string()
            } else {
                format!("all {n} runs")
            }
        ),
        (n, _) => {
            format!(r#"<p class="none">{n} run(s) of 1 s or less not drawn: one point each.</p>"#)
        }
    }
}
