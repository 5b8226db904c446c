//! The figures `wirebench history` lists, read from a document when it is stored: ok and
//! failed operations, the rate, the p99 latency and the measured time. A sweep (compare,
//! study) lists its best rate and its worst p99 over the kept runs; a peak search its peak.

use super::Kind;
use serde_json::Value;

/// Headline figures of a stored run; None where the document has no such figure.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Headline {
    /// Ok operations (all runs added).
    pub ok: Option<i64>,
    /// Failed operations (all runs added).
    pub errors: Option<i64>,
    /// Ok operations per second (a sweep's best kept run; a peak search's peak).
    pub ops_per_s: Option<f64>,
    /// 99th percentile latency, µs (a sweep's worst kept run).
    pub p99_us: Option<f64>,
    /// Measured seconds (all runs added).
    pub duration_s: Option<f64>,
}

/// A study's own document (`wirebench.study/1`, as `study --out` saves it) holds the command's
/// document under `document`: that one, and its kind; any other document as it is.
pub fn inner(kind: Kind, doc: &Value) -> (Kind, &Value) {
    if kind != Kind::Study || doc["schema"] != "wirebench.study/1" {
        return (kind, doc);
    }
    let inner = &doc["document"];
    let kind = match inner["schema"].as_str() {
        Some("wirebench.compare/1") => Kind::Compare,
        Some("wirebench.peak/1") => Kind::Peak,
        _ => Kind::Sweep,
    };
    (kind, inner)
}

/// The result documents (`wirebench.result/1`) inside a document, and whether each is kept.
pub fn results(kind: Kind, doc: &Value) -> Vec<(&Value, bool)> {
    let (kind, doc) = inner(kind, doc);
    fn points(sweep: &Value) -> Vec<(&Value, bool)> {
        sweep["points"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| (&p["result"], !p["discarded"].as_bool().unwrap_or(false)))
                    .collect()
            })
            .unwrap_or_default()
    }
    match kind {
        Kind::Result => vec![(doc, true)],
        Kind::Sweep | Kind::Study => points(doc),
        Kind::Compare => points(&doc["sweep"]),
        Kind::Peak => doc["steps"]
            .as_array()
            // The confirmation run is the measurement at the peak; the other steps probed.
            .map(|s| {
                s.iter()
                    .map(|st| (&st["result"], st["confirmation"].as_bool().unwrap_or(false)))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The target URLs a document measured.
pub fn targets(kind: Kind, doc: &Value) -> Vec<String> {
    let (kind, doc) = inner(kind, doc);
    let urls = |sweep: &Value| -> Vec<String> {
        sweep["targets"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["url"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    match kind {
        Kind::Result | Kind::Peak => doc["target"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
        Kind::Sweep | Kind::Study => urls(doc),
        Kind::Compare => urls(&doc["sweep"]),
    }
}

impl Headline {
    /// The headline figures of `doc`.
    pub fn of(kind: Kind, doc: &Value) -> Headline {
        let (kind, doc) = inner(kind, doc);
        let runs = results(kind, doc);
        let sum_i = |f: &dyn Fn(&Value) -> Option<i64>| -> Option<i64> {
            runs.iter().map(|(r, _)| f(r)).sum::<Option<i64>>()
        };
        let kept = || runs.iter().filter(|(_, k)| *k).map(|(r, _)| *r);
        let best = kept()
            .filter_map(|r| r["throughput"]["ops_per_s"].as_f64())
            .reduce(f64::max);
        let worst_p99 = kept()
            .filter_map(|r| r["latency"]["p99_us"].as_f64())
            .reduce(f64::max);
        let ops_per_s = match kind {
            Kind::Peak => doc["peak"]["ops_per_s"].as_f64(),
            _ => best,
        };
        Headline {
            ok: sum_i(&|r| r["ok"].as_i64()),
            errors: sum_i(&|r| r["errors"]["total"].as_i64()),
            ops_per_s,
            p99_us: worst_p99,
            duration_s: runs.iter().map(|(r, _)| r["duration_s"].as_f64()).sum(),
        }
    }
}
