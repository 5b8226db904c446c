//! One run (`wirebench.result/1`): the terminal report's tables (the headline figures, the
//! latency distributions, a mix's kinds, errors by kind, the per-second series), its charts
//! (the percentile spectrum, each kind of a mix in it too; ops/s and p99 per second) and its
//! methodology.

use super::fields::{self, num, rate, text, us, whole};
use super::page::{kv, table, Page};
use super::scale::{Axis, Scale, Unit};
use super::svg::{LineChart, Series};
use super::{hist, RenderError};
use serde_json::Value;

/// The distributions a result may hold: (field path, row name).
const DISTRIBUTIONS: [(&str, &str); 5] = [
    ("/latency", "latency"),
    ("/service_time", "service time"),
    ("/connect", "connect"),
    ("/http/ttfb", "time to first byte"),
    ("/open_loop/send_lag", "send lag (behind schedule)"),
];

/// Writes the sections of one result document.
pub fn render(page: &mut Page, r: &Value) -> Result<(), RenderError> {
    page.heading(2, "Result");
    page.raw(&kv("headline", &headline(r)));
    page.raw(&distributions(r));
    mix(page, r);
    errors(page, r);
    extras(page, r);
    super::shards::render(page, r);
    let mut charts = Vec::new();
    let mut spectra: Vec<(String, &Value)> = DISTRIBUTIONS
        .iter()
        .filter(|(_, name)| *name != "connect" && !name.starts_with("send lag"))
        .filter_map(|(path, name)| {
            Some((name.to_string(), r.pointer(path).filter(|d| d.is_object())?))
        })
        .collect();
    // A mix's kinds beside the totals, each its own curve.
    for k in r["mix"].as_array().into_iter().flatten() {
        if k["latency"].is_object() {
            spectra.push((format!("latency: {}", text(&k["name"])), &k["latency"]));
        }
    }
    if let Some(c) = hist::chart(&spectra) {
        charts.push((
            "Latency by percentile".to_string(),
            c.svg("Latency by percentile"),
        ));
    }
    charts.extend(per_second_charts(&[(text(&r["target"]), r)]));
    if !charts.is_empty() {
        page.heading(2, "Charts");
        page.figures(charts);
    }
    page.heading(2, "Per second");
    page.raw(&per_second(r));
    page.notes(&notes(r));
    page.heading(2, "Methodology");
    let mut pairs = vec![("Schema".to_string(), text(&r["schema"]))];
    pairs.extend(fields::methodology(r));
    page.raw(&kv("methodology", &pairs));
    Ok(())
}

/// The headline figures: counts, rates, time.
fn headline(r: &Value) -> Vec<(String, String)> {
    let t = &r["throughput"];
    vec![
        ("ok".to_string(), whole(&r["ok"])),
        ("errors".to_string(), whole(&r["errors"]["total"])),
        ("ops/s".to_string(), rate(fields::ops(r))),
        (
            "sent, received".to_string(),
            format!(
                "{}, {}",
                byte_rate(&t["sent_mb_per_s"]),
                byte_rate(&t["received_mb_per_s"])
            ),
        ),
        ("measured".to_string(), fields::secs(&r["duration_s"])),
    ]
}

/// A rate given in MB/s, written in the unit its size calls for.
fn byte_rate(mb: &Value) -> String {
    num(mb).map_or("-".to_string(), |mb| {
        crate::report::format::byte_rate(mb * 1e6)
    })
}

/// The distribution table: a row per distribution, min … max.
pub fn distributions(r: &Value) -> String {
    let head: Vec<String> = [
        "", "min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99.9", "max",
    ]
    .map(String::from)
    .to_vec();
    let keys = [
        "min_us",
        "mean_us",
        "stddev_us",
        "p50_us",
        "p90_us",
        "p95_us",
        "p99_us",
        "p999_us",
        "max_us",
    ];
    let rows: Vec<Vec<String>> = DISTRIBUTIONS
        .iter()
        .filter_map(|(path, name)| {
            let d = r.pointer(path).filter(|d| d.is_object())?;
            let mut row = vec![name.to_string()];
            row.extend(keys.iter().map(|k| us(&d[*k])));
            Some(row)
        })
        .collect();
    table("distributions", &head, &rows)
}

/// A mix's kinds: each one's share asked and got, counts, rate and latency, then the totals;
/// nothing without a mix.
fn mix(page: &mut Page, r: &Value) {
    let Some(kinds) = r["mix"].as_array() else {
        return;
    };
    let head = [
        "kind", "weight", "share", "ok", "errors", "ops/s", "mean", "p50", "p95", "p99", "max",
    ]
    .map(String::from);
    let percent = |v: &Value| num(v).map_or("-".to_string(), |p| format!("{p:.1}%"));
    let row = |name: String, w: String, share: String, k: &Value, ops: String, d: &Value| {
        let mut row = vec![
            name,
            w,
            share,
            whole(&k["ok"]),
            whole(&k["errors"]["total"]),
        ];
        row.push(ops);
        row.extend(["mean_us", "p50_us", "p95_us", "p99_us", "max_us"].map(|f| us(&d[f])));
        row
    };
    let mut rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| {
            let (w, share) = (percent(&k["weight_percent"]), percent(&k["share_percent"]));
            let ops = format!("{}/s", rate(num(&k["ops_per_s"])));
            row(text(&k["name"]), w, share, k, ops, &k["latency"])
        })
        .collect();
    let ops = format!("{}/s", rate(fields::ops(r)));
    let all = "100%".to_string();
    rows.push(row("all".into(), all.clone(), all, r, ops, &r["latency"]));
    page.heading(3, "Mix");
    page.raw(&table("mix", &head, &rows));
}

/// Errors by kind, with the first message of each; nothing when there were none.
fn errors(page: &mut Page, r: &Value) {
    let Some(kinds) = r["errors"]["by_kind"].as_array().filter(|k| !k.is_empty()) else {
        return;
    };
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| vec![text(&k["kind"]), whole(&k["count"]), text(&k["sample"])])
        .collect();
    page.heading(3, "Errors");
    let head = ["kind", "count", "first message"].map(String::from);
    page.raw(&table("errors", &head, &rows));
}

/// The open-loop, datagram, HTTP and warm-up figures, where the run has them.
fn extras(page: &mut Page, r: &Value) {
    for (field, name) in [
        ("open_loop", "Open loop"),
        ("datagrams", "Datagrams"),
        ("http", "HTTP"),
        ("warmup", "Warm-up"),
    ] {
        let Some(obj) = r[field].as_object() else {
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
fn per_second(r: &Value) -> String {
    let head = ["second", "ok/s", "errors", "p50", "p99", "max"].map(String::from);
    let rows: Vec<Vec<String>> = (r["series"].as_array().into_iter().flatten())
        .map(|p| {
            let per_s = num(&p["ok"])
                .zip(num(&p["duration_s"]))
                .map(|(ok, d)| ok / d);
            vec![
                text(&p["second"]),
                rate(per_s).trim_end_matches(".0").to_string(),
                whole(&p["errors"]),
                us(&p["p50_us"]),
                us(&p["p99_us"]),
                us(&p["max_us"]),
            ]
        })
        .collect();
    table("per-second", &head, &rows)
}

/// The run's notes (diagnoses, caveats).
fn notes(r: &Value) -> Vec<String> {
    (r["notes"].as_array().into_iter().flatten())
        .map(text)
        .collect()
}

/// Two charts of the per-second series of `runs` ((name, result) pairs): ok/s and p99 by
/// second, one series per run that has two seconds or more to draw; a run of 1 s or less is
/// one point at second 0, so it is left out and the figure says so (in place of the chart
/// when no run is long enough).
pub fn per_second_charts(runs: &[(String, &Value)]) -> Vec<(String, String)> {
    let with_series = (runs.iter())
        .filter(|(_, r)| r["series"].as_array().is_some_and(|s| !s.is_empty()))
        .count();
    let series = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<Series> {
        runs.iter()
            .map(|(name, r)| Series {
                name: name.clone(),
                points: (r["series"].as_array().into_iter().flatten())
                    .filter_map(|p| Some((num(&p["second"])?, f(p)?)))
                    .collect(),
            })
            .filter(|s| s.points.len() >= 2)
            .collect()
    };
    let ops = series(&|p| Some(num(&p["ok"])? / num(&p["duration_s"])?));
    let p99 = series(&|p| num(&p["p99_us"]));
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
        let left_out = with_series.saturating_sub(data.len());
        let note = match (left_out, data.len()) {
            (0, _) => String::new(),
            (n, 0) => format!(
                r#"<p class="none">Not drawn: {} lasted 1 s or less, one point each (their figures are in the tables).</p>"#,
                if n == 1 {
                    "the run".to_string()
                } else {
                    format!("all {n} runs")
                }
            ),
            (n, _) => format!(
                r#"<p class="none">{n} run(s) of 1 s or less not drawn: one point each.</p>"#
            ),
        };
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
        charts.push((caption.to_string(), chart.svg(caption) + &note));
    }
    charts
}
