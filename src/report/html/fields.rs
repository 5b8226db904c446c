//! Reading the documents' fields: the figures a table or chart needs, taken from a result
//! document (`schema/result.v1.json`) or a document holding results, with `-` or None where
//! a field is absent, so an older or partial document still renders.

use crate::units::format_us;
use serde_json::Value;

/// A number, when `v` is one.
pub fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// Microseconds written in their unit, or `-`.
pub fn us(v: &Value) -> String {
    num(v).map_or("-".to_string(), format_us)
}

/// A count or rate with thousands separators, or `-`.
pub fn rate(v: Option<f64>) -> String {
    v.map_or("-".to_string(), crate::report::format::rate)
}

/// A whole number with thousands separators, or `-`.
pub fn whole(v: &Value) -> String {
    v.as_u64().map_or("-".to_string(), crate::units::thousands)
}

/// The names of the targets a document measured, in order.
pub fn targets(doc: &Value) -> Vec<String> {
    match doc["schema"].as_str() {
        Some("wirebench.sweep/1") => (doc["targets"].as_array().into_iter().flatten())
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect(),
        Some("wirebench.compare/1") => targets(&doc["sweep"]),
        _ => doc["target"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect(),
    }
}

/// Whether a result measured bulk transfer (stream, source), where operations are messages.
pub fn bulk(result: &Value) -> bool {
    matches!(result["mode"].as_str(), Some("stream" | "source"))
}

/// A result's operations (or, in bulk, messages) per second.
pub fn ops(result: &Value) -> Option<f64> {
    match bulk(result) {
        true => num(&result["throughput"]["messages_per_s"]),
        false => num(&result["throughput"]["ops_per_s"]),
    }
}

/// A result's payload bytes per second, both directions added.
pub fn bytes_per_s(result: &Value) -> Option<f64> {
    let t = &result["throughput"];
    Some((num(&t["sent_mb_per_s"])? + num(&t["received_mb_per_s"])?) * 1e6)
}

/// The first result a document holds (itself, a sweep's first point, a peak's first step).
pub fn first_result(doc: &Value) -> Option<&Value> {
    match doc["schema"].as_str()? {
        "wirebench.result/1" => Some(doc),
        "wirebench.sweep/1" => doc["points"].get(0).map(|p| &p["result"]),
        "wirebench.compare/1" => first_result(&doc["sweep"]),
        "wirebench.peak/1" => doc["steps"].get(0).map(|s| &s["result"]),
        _ => None,
    }
}

/// The lede: protocol, mode and shape of the load, and when it started.
pub fn lede(doc: &Value) -> String {
    let Some(r) = first_result(doc) else {
        return String::new();
    };
    let c = &r["config"];
    let when = r["started_unix_ms"].as_u64().map_or(String::new(), |ms| {
        format!(", started {}", crate::sys::host::utc(ms / 1000))
    });
    format!(
        "{} {}: {} connection(s), {} B requests, wirebench {}{when}",
        text(&r["protocol"]),
        text(&r["mode"]),
        text(&c["connections"]),
        text(&c["request_bytes"]),
        text(&r["wirebench_version"]),
    )
}

/// A value as text (see [`super::page::text`]).
pub fn text(v: &Value) -> String {
    super::page::text(v)
}

/// What a result document says about how it was measured, as (what, value) pairs: the
/// methodology a reader needs to repeat it.
pub fn methodology(r: &Value) -> Vec<(String, String)> {
    let c = &r["config"];
    let g = &r["generator"];
    let mut pairs = vec![
        ("Schema".to_string(), text(&r["schema"])),
        ("wirebench".to_string(), text(&r["wirebench_version"])),
        (
            "Started".to_string(),
            r["started_unix_ms"]
                .as_u64()
                .map_or("-".to_string(), |ms| crate::sys::host::utc(ms / 1000)),
        ),
        ("Target".to_string(), text(&r["target"])),
        (
            "Protocol, mode".to_string(),
            format!("{} {}", text(&r["protocol"]), text(&r["mode"])),
        ),
        (
            "Measured".to_string(),
            format!("{} s", text(&r["duration_s"])),
        ),
    ];
    if let Some(config) = c.as_object() {
        let settings: Vec<String> = config
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{k} {}", text(v)))
            .collect();
        pairs.push(("Settings".to_string(), settings.join(", ")));
    }
    pairs.push((
        "Generator".to_string(),
        format!(
            "{} threads, {:.0}% CPU of its threads, peak RSS {} KiB",
            text(&g["threads"]),
            num(&g["cpu_percent_of_threads"]).unwrap_or(0.0),
            text(&g["peak_rss_kib"])
        ),
    ));
    pairs
}
