//! Reading the documents' fields: the figures a table or chart needs, taken from a typed
//! document ([`Doc`]: a result, or a document holding results), written with `-` where a
//! figure is absent or not finite; and any serialized field written in its unit ([`pair`]).

use super::Doc;
use crate::load::sweep::Axis;
use crate::summary::sweep::Sweep;
use crate::summary::Summary;
use crate::units::format_us;
use serde_json::Value;

/// A number, when `v` is one.
pub fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// A figure, when it is finite.
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Microseconds written in their unit, or `-`.
pub fn us(v: &Value) -> String {
    num(v).map_or("-".to_string(), format_us)
}

/// Microseconds written in their unit, or `-` when absent or not finite.
pub fn micros(v: Option<f64>) -> String {
    v.and_then(finite).map_or("-".to_string(), format_us)
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
pub fn targets(doc: Doc) -> Vec<String> {
    let names = |s: &Sweep| s.targets.iter().map(|t| t.name.clone()).collect();
    match doc {
        Doc::Sweep(s) => names(s),
        Doc::Compare(c) => names(&c.sweep),
        Doc::Result(r) => vec![r.target.clone()],
        Doc::Peak(p) => vec![p.target.clone()],
        Doc::Diagnosis(d) => vec![d.target.clone()],
    }
}

/// Whether a result measured bulk transfer (stream, source), where operations are messages.
pub fn bulk(result: &Summary) -> bool {
    result.mode.bulk()
}

/// A result's operations (or, in bulk, messages) per second.
pub fn ops(result: &Summary) -> Option<f64> {
    match bulk(result) {
        true => finite(result.throughput.messages_per_s),
        false => finite(result.throughput.ops_per_s),
    }
}

/// A result's payload bytes per second, both directions added.
pub fn bytes_per_s(result: &Summary) -> Option<f64> {
    let t = &result.throughput;
    Some((finite(t.sent_mb_per_s)? + finite(t.received_mb_per_s)?) * 1e6)
}

/// A result's payload bytes per second one way: a bulk run's (the bytes went one way), a
/// request/response run's requests.
pub fn one_way_bytes_per_s(result: &Summary) -> Option<f64> {
    match bulk(result) {
        true => bytes_per_s(result),
        false => Some(finite(result.throughput.sent_mb_per_s)? * 1e6),
    }
}

/// The first result a document holds (itself, a sweep's first point, a peak's first step).
pub fn first_result<'a>(doc: Doc<'a>) -> Option<&'a Summary> {
    match doc {
        Doc::Result(r) => Some(r),
        Doc::Sweep(s) => s.points.first().map(|p| &p.result),
        Doc::Compare(c) => c.sweep.points.first().map(|p| &p.result),
        Doc::Peak(p) => p.steps.first().map(|s| &s.result),
        Doc::Diagnosis(_) => None,
    }
}

/// The lede: protocol, mode and shape of the load, and when it started. What a sweep or
/// a peak search varies is written as its range (`16 B–256 KiB requests (15 sizes)`), not
/// as its first point's value; what each request was is said as its protocol has it (`GET
/// /, HTTP/1.1, keep-alive`, `64 B requests / 64 B replies`), sizes in their units.
pub fn lede(doc: Doc) -> String {
    let Some(r) = first_result(doc) else {
        return String::new();
    };
    let c = &r.config;
    let when = format!(
        ", started {}",
        crate::sys::host::utc(r.started_unix_ms / 1000)
    );
    let axes = swept(doc);
    let range = |flag: &str| {
        axes.iter()
            .find(|a| a.flag == flag)
            .map(|a| a.values.as_slice())
    };
    let connections = match range("--connections") {
        Some(v) => format!("{} connections ({} values)", span(v, None), v.len()),
        None if c.connections == 1 => "1 connection".to_string(),
        None => format!(
            "{} connections",
            crate::units::thousands(c.connections as u64)
        ),
    };
    // What was sent, as the protocol has it: the method and path of an HTTP request, the
    // sizes of a request and its reply, or of a stream's messages (the terminal's words).
    let size = match range("--size") {
        Some(v) => {
            let what = if bulk(r) { "messages" } else { "requests" };
            format!("{} {what} ({} sizes)", span(v, Some(bytes)), v.len())
        }
        None => crate::report::table::sizes(r),
    };
    let mut parts = vec![connections, size];
    for a in axes
        .iter()
        .filter(|a| a.flag != "--connections" && a.flag != "--size")
    {
        parts.push(format!(
            "{} {} ({} values)",
            a.flag,
            span(&a.values, None),
            a.values.len()
        ));
    }
    parts.extend(peak_steps(doc));
    format!(
        "{} {}: {}, wirebench {}{when}",
        r.protocol,
        r.mode,
        parts.join(", "),
        r.wirebench_version,
    )
}

/// A peak search's open-loop steps, lowest to highest rate; None for other documents, or a
/// search with no step.
fn peak_steps(doc: Doc) -> Option<String> {
    let Doc::Peak(p) = doc else {
        return None;
    };
    let rates: Vec<f64> = p.steps.iter().map(|s| s.offered_per_s).collect();
    let (lo, hi) = rates
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), r| (a.min(*r), b.max(*r)));
    (!rates.is_empty()).then(|| {
        format!(
            "open-loop steps {}/s–{}/s ({} steps)",
            super::scale::count(lo),
            super::scale::count(hi),
            rates.len()
        )
    })
}

/// The swept flags of a sweep (or a comparison's sweep) and their values.
fn swept<'a>(doc: Doc<'a>) -> &'a [Axis] {
    match doc {
        Doc::Sweep(s) => &s.axes,
        Doc::Compare(c) => &c.sweep.axes,
        _ => &[],
    }
}

/// `16 B–256 KiB`, or the one value: the first and last of `values`, written by `write`.
fn span(values: &[String], write: Option<fn(&str) -> String>) -> String {
    let w = |v: &String| write.map_or(v.clone(), |f| f(v));
    match (values.first(), values.last()) {
        (Some(a), Some(b)) if a != b => format!("{}–{}", w(a), w(b)),
        (Some(a), _) => w(a),
        _ => "-".to_string(),
    }
}

/// A size as the sweep wrote it (`1024`, or `1k`) in binary units: `1 KiB`.
fn bytes(v: &str) -> String {
    v.parse::<f64>()
        .ok()
        .or_else(|| crate::units::parse_size(v).ok().map(|b| b as f64))
        .map_or(v.to_string(), |b| {
            super::scale::label(super::scale::Unit::Bytes, b)
        })
}

/// Seconds as a reader wants them: `44.92 s`, `0.862 s` (not `44.919703665 s`).
pub fn secs(v: &Value) -> String {
    num(v).map_or("-".to_string(), seconds)
}

/// Seconds as a reader wants them (see [`secs`]), or `-` when not finite.
pub fn seconds(s: f64) -> String {
    match finite(s) {
        None => "-".to_string(),
        Some(s) if s >= 10.0 => format!("{s:.2} s"),
        Some(s) => format!("{s:.3} s"),
    }
}

/// Writes a field's value in its unit.
type Writer = fn(&Value) -> String;

/// A document's field as a row a reader can take in: its name in words with a capital
/// (`max_lag_us` → `Max lag`) and its value in the unit the name's suffix gives (`_us` as a
/// latency, `_per_s` as a rate, `_s` in seconds, `_bytes` in bytes, `_percent` in %).
pub fn pair(key: &str, v: &Value) -> (String, String) {
    let suffixes: [(&str, Writer); 7] = [
        ("_mb_per_s", |v| {
            num(v).map_or("-".to_string(), |mb| {
                crate::report::format::byte_rate(mb * 1e6)
            })
        }),
        ("_per_s", |v| format!("{}/s", rate(num(v)))),
        ("_us", us),
        ("_s", secs),
        ("_bytes", |v| {
            num(v).map_or("-".to_string(), |b| {
                super::scale::label(super::scale::Unit::Bytes, b)
            })
        }),
        ("_percent", |v| {
            num(v).map_or("-".to_string(), |p| format!("{p:.2}%"))
        }),
        ("_kib", |v| format!("{} KiB", text(v))),
    ];
    let found =
        (suffixes.iter()).find(|(suffix, _)| key.ends_with(suffix) && key.len() > suffix.len());
    let (name, value) = match (found, v) {
        (Some((suffix, write)), _) => (&key[..key.len() - suffix.len()], write(v)),
        (None, Value::Bool(b)) => (key, if *b { "yes" } else { "no" }.to_string()),
        // A seed is typed back as it is: no thousands separators.
        (None, v) if key == "seed" => (key, text(v)),
        (None, v) if v.is_u64() => (key, whole(v)),
        (None, v) => (key, text(v)),
    };
    (words(name), value)
}

/// A field name in words with a capital: `behind_schedule` → `Behind schedule`.
pub fn words(key: &str) -> String {
    let spaced = key.replace('_', " ");
    let mut chars = spaced.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

/// A value as text (see [`super::page::text`]).
pub fn text(v: &Value) -> String {
    super::page::text(v)
}

/// What a result document says about how it was measured, as (what, value) pairs: the
/// methodology a reader needs to repeat it. The schema is the caller's to give: a peak or
/// a sweep is not a `wirebench.result/1` because its runs are.
pub fn methodology(r: &Summary) -> Vec<(String, String)> {
    let g = &r.generator;
    let mut pairs = vec![
        ("wirebench".to_string(), r.wirebench_version.to_string()),
        (
            "Started".to_string(),
            crate::sys::host::utc(r.started_unix_ms / 1000),
        ),
        ("Target".to_string(), r.target.clone()),
        (
            "Protocol, mode".to_string(),
            format!("{} {}", r.protocol, r.mode),
        ),
        ("Measured".to_string(), seconds(r.duration_s)),
    ];
    // The settings as the document writes them, each in its unit (see [`pair`]), so a
    // setting added to the config appears without a line here.
    if let Ok(Value::Object(config)) = serde_json::to_value(&r.config) {
        let settings: Vec<String> = config
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| {
                let (k, v) = pair(k, v);
                format!("{} {v}", k.to_lowercase())
            })
            .collect();
        pairs.push(("Settings".to_string(), settings.join(", ")));
    }
    pairs.push((
        "Generator".to_string(),
        format!(
            "{} threads, {:.0}% CPU of its threads, peak RSS {} KiB",
            g.threads,
            finite(g.cpu_percent_of_threads).unwrap_or(0.0),
            g.peak_rss_kib
        ),
    ));
    if let Some(m) = g.machine_words() {
        pairs.push((
            "Machine".to_string(),
            format!("{m} (the host's, over the run)"),
        ));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{ClientMode, ProtocolName};

    #[test]
    fn fields_read_as_words_with_units() {
        let row = |k: &str, v: Value| pair(k, &v);
        assert_eq!(
            row("max_lag_us", 9596.051.into()),
            ("Max lag".to_string(), format_us(9596.051))
        );
        assert_eq!(row("behind_schedule", 29.into()).0, "Behind schedule");
        assert_eq!(row("kept_up", true.into()).1, "yes");
        assert_eq!(secs(&44.919703665.into()), "44.92 s");
        assert_eq!(secs(&0.861940427.into()), "0.862 s");
    }

    /// The lede says what was sent as the protocol has it: an HTTP GET is not "64 B
    /// requests", and a size is written in its unit.
    #[test]
    fn the_lede_is_true_to_the_protocol() {
        let mut r = Summary::default();
        (r.protocol, r.mode) = (ProtocolName::Http, ClientMode::Rr);
        (r.config.connections, r.config.request_bytes) = (1, 64);
        r.http = Some(
            serde_json::from_value(serde_json::json!({
                "method": "GET", "path": "/index.html", "requests": 1, "keepalive": true,
                "version": "1.1", "status": [], "status_2xx": 1, "status_3xx": 0,
                "status_4xx": 0, "status_5xx": 0, "body_bytes": 0, "goodput_mb_per_s": 0.0,
                "ttfb": null
            }))
            .unwrap(),
        );
        let lede = lede(Doc::Result(&r));
        assert!(
            lede.contains("1 connection, GET /index.html, HTTP/1.1"),
            "{lede}"
        );
        assert!(!lede.contains(" B requests"), "{lede}");
        r.http = None;
        r.config.request_bytes = 524_288;
        r.config.connections = 4;
        let lede = super::lede(Doc::Result(&r));
        assert!(lede.contains("4 connections, 512 KiB requests"), "{lede}");
    }
}
