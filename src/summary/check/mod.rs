//! Documents read back (`report`, `merge`, `diff`, `show`, `export`, the history) are checked
//! against their committed JSON schema (`schema/*.v1.json`, embedded) before anything uses
//! them: types, required fields, ranges, and every histogram decoded. A corrupt document is
//! one line naming the field (`series[0].p99_us: …`), never a page drawn from garbage or a
//! render that spins on a value like 1.5e308.
//!
//! The validator covers the JSON Schema (draft 2020-12) keywords these schemas use: `type`,
//! `const`, `enum`, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, `minItems`, `maxItems`, `minLength`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `oneOf`, `allOf` with `if`/`then`, and local `$ref`s; `pattern` is
//! left to the decoding of what it guards (a histogram's base64).

mod validator;

use base64::Engine as _;
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;
use validator::Validator;

/// The schemas, by the `schema` name a document carries.
const SCHEMAS: [(&str, &str); 8] = [
    (
        "wirebench.result/1",
        include_str!("../../../schema/result.v1.json"),
    ),
    (
        "wirebench.sweep/1",
        include_str!("../../../schema/sweep.v1.json"),
    ),
    (
        "wirebench.compare/1",
        include_str!("../../../schema/compare.v1.json"),
    ),
    (
        "wirebench.peak/1",
        include_str!("../../../schema/peak.v1.json"),
    ),
    (
        "wirebench.study/1",
        include_str!("../../../schema/study.v1.json"),
    ),
    (
        "wirebench.diagnosis/1",
        include_str!("../../../schema/diagnosis.v1.json"),
    ),
    (
        "wirebench.diff/1",
        include_str!("../../../schema/diff.v1.json"),
    ),
    (
        "wirebench.history/1",
        include_str!("../../../schema/history.v1.json"),
    ),
];

/// The longest time a document can hold, in µs: the histograms' highest trackable value
/// (an hour), with room for their 3 significant digits.
const MAX_US: f64 = crate::record::HIST_HIGHEST_NS as f64 / 1000.0 * 1.01;

/// The largest figure a document may hold: 2^53, where JSON numbers stop being exact (9 PB,
/// 285 years of nanoseconds). 1e308 ops/s or an `ok` of 2^64-1 are not measurements.
const MAX_FIGURE: f64 = 9_007_199_254_740_992.0;

/// The histograms' encoding, as documents name it.
const HISTOGRAM: &str = "hdrhistogram-v2+base64";

/// A document that is not what its schema says, or holds a histogram wirebench did not write.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// A `$ref` the embedded schema does not define (a bug in the schema).
    #[error("the schema's reference {0} is not defined")]
    Reference(String),
    /// A field (or the document, `the document`) and what is wrong with it.
    #[error("{at}: {why}")]
    Field {
        /// Where: `latency.p50_us`, `points[2]`, `the document`.
        at: String,
        /// What is wrong there.
        why: Why,
    },
}

/// What is wrong with one field.
#[derive(Debug, thiserror::Error)]
pub enum Why {
    /// The schema allows nothing here.
    #[error("not allowed here")]
    NotAllowed,
    /// Another JSON type.
    #[error("{0} is not of type {1}")]
    Type(String, Value),
    /// Another value than the one constant.
    #[error("{0} where {1} is expected")]
    Const(String, Value),
    /// None of the values listed.
    #[error("{0} is not one of {1}")]
    Enum(String, Value),
    /// Below `minimum`.
    #[error("{0} is below its minimum {1}")]
    Below(f64, Value),
    /// Not above `exclusiveMinimum`.
    #[error("{0} is not above {1}")]
    NotAbove(f64, Value),
    /// Above `maximum`.
    #[error("{0} is above its maximum {1}")]
    Above(f64, Value),
    /// Shorter than `minLength`.
    #[error("shorter than {0} characters")]
    Short(u64),
    /// More than one of `oneOf`'s forms.
    #[error("matches more than one of its forms")]
    Several,
    /// Not an object.
    #[error("not an object")]
    NotObject,
    /// A required field, missing.
    #[error("missing")]
    Missing,
    /// A field the schema does not have.
    #[error("not a field of this document")]
    NotField,
    /// Fewer than `minItems`.
    #[error("fewer than {0} items")]
    Few(Value),
    /// More than `maxItems`.
    #[error("more than {0} items")]
    Many(Value),
    /// A time beyond the histograms' hour.
    #[error("{0:e} µs is beyond any time wirebench measures (at most {MAX_US:e} µs, the histograms' hour)")]
    Beyond(f64),
    /// A figure no run measures: beyond 2^53 (where JSON numbers stop being exact).
    #[error("{0:e} is beyond any figure wirebench writes (at most 2^53)")]
    Huge(f64),
    /// A result that measured for no time at all, yet completed operations.
    #[error("0 s with {0} ok operations: a run that completes operations takes time")]
    NoTime(u64),
    /// A histogram's data that is not a string.
    #[error("missing, or not a string")]
    NotString,
    /// A histogram's data that is not base64.
    #[error("not base64 ({0})")]
    Base64(base64::DecodeError),
    /// A histogram that does not read back.
    #[error("not a histogram wirebench wrote: {0}")]
    Histogram(crate::record::HistogramError),
}

/// `why` at `at`.
fn at(at: impl fmt::Display, why: Why) -> Invalid {
    Invalid::Field {
        at: at.to_string(),
        why,
    }
}

/// Checks `doc` against the schema it names, and every document and histogram inside it;
/// `Err` is `FIELD: what is wrong`. A document naming no known schema passes here: the
/// reader says what it expected.
pub fn document(doc: &Value) -> Result<(), Invalid> {
    let Some(schema) = schema_of(doc) else {
        return Ok(());
    };
    let v = Validator { root: schema };
    v.check(schema, doc, Path::Top)?;
    nested(doc, Path::Top, true, true)
}

/// [`document`] without decoding the per-second histograms, for a reader that checks each as
/// it adds it (`merge`: one pass over thousands of them, not two).
pub fn document_adding_seconds(doc: &Value) -> Result<(), Invalid> {
    let Some(schema) = schema_of(doc) else {
        return Ok(());
    };
    Validator { root: schema }.check(schema, doc, Path::Top)?;
    nested(doc, Path::Top, true, false)
}

/// The parsed schema `doc` names, if any: each parsed once per process (`merge` checks
/// hundreds of documents, and parsing a schema cost more than checking a document by it).
fn schema_of(doc: &Value) -> Option<&'static Value> {
    static PARSED: OnceLock<Vec<Option<Value>>> = OnceLock::new();
    let name = doc.get("schema")?.as_str()?;
    let at = SCHEMAS.iter().position(|(n, _)| *n == name)?;
    // The embedded schemas are committed JSON; tests/quick/schema.rs parses each of them too.
    let parsed = PARSED.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|(_, text)| serde_json::from_str(text).ok())
            .collect()
    });
    parsed[at].as_ref()
}

/// Documents inside `v` (a sweep's results, a study's document) checked against their own
/// schema, and every histogram decoded.
fn nested(v: &Value, path: Path, root: bool, seconds: bool) -> Result<(), Invalid> {
    match v {
        Value::Object(map) => {
            if !root {
                if let Some(schema) = schema_of(v) {
                    Validator { root: schema }.check(schema, v, path)?;
                }
            }
            if map.get("encoding").and_then(Value::as_str) == Some(HISTOGRAM) {
                histogram(map.get("data"), path)?;
            }
            // A series point's histogram is a string: the compressed form.
            if let Some(text) = map
                .get("histogram")
                .and_then(Value::as_str)
                .filter(|_| seconds)
            {
                crate::record::compact::check(text)
                    .map_err(|e| at(path.key("histogram"), Why::Histogram(e)))?;
            }
            if map.get("schema").and_then(Value::as_str) == Some(crate::summary::SCHEMA) {
                let ok = map.get("ok").and_then(Value::as_u64).unwrap_or(0);
                if map.get("duration_s").and_then(Value::as_f64) == Some(0.0) && ok > 0 {
                    return Err(at(path.key("duration_s"), Why::NoTime(ok)));
                }
            }
            for (k, x) in map {
                let field = path.key(k);
                // Seeds are any u64; every other figure is a count, a rate, a size or a time.
                if let Some(n) = x.as_f64().filter(|n| n.abs() > MAX_FIGURE) {
                    if k != "seed" {
                        return Err(at(field, Why::Huge(n)));
                    }
                }
                if let Some(us) = x.as_f64().filter(|_| k.ends_with("_us")) {
                    if us.abs() > MAX_US {
                        return Err(at(field, Why::Beyond(us)));
                    }
                }
                if x.is_object() || x.is_array() {
                    nested(x, field, false, seconds)?;
                }
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                nested(x, path.item(i), false, seconds)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A histogram's `data`: base64 of a V2 serialization that decodes.
fn histogram(data: Option<&Value>, path: Path) -> Result<(), Invalid> {
    let field = path.key("data");
    let Some(text) = data.and_then(Value::as_str) else {
        return Err(at(field, Why::NotString));
    };
    let bytes = match base64::engine::general_purpose::STANDARD.decode(text) {
        Ok(b) => b,
        Err(e) => return Err(at(field, Why::Base64(e))),
    };
    crate::record::decode_histogram(&bytes)
        .map(|_| ())
        .map_err(|e| at(field, Why::Histogram(e)))
}

/// Where a value sits in a document (`series[0].p99_us`), written out only when an error
/// names it: a document has thousands of fields, and checking them must not format each name.
#[derive(Clone, Copy)]
enum Path<'a> {
    /// The document itself.
    Top,
    /// A field of an object.
    Key(&'a Path<'a>, &'a str),
    /// An item of an array.
    Item(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The field `key` of the object here.
    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    /// The item `i` of the array here.
    fn item(&'a self, i: usize) -> Path<'a> {
        Path::Item(self, i)
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Top => Ok(()),
            Path::Key(Path::Top, k) => f.write_str(k),
            Path::Key(p, k) => write!(f, "{p}.{k}"),
            Path::Item(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(doc: &Value) -> String {
        document(doc).expect_err("a corrupt document").to_string()
    }

    #[test]
    fn the_field_is_named() {
        let s = json!({"type": "object", "properties": {"a": {"type": "array", "items": {
            "type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}}});
        let v = Validator { root: &s };
        let bad = json!({"a": [{"n": 1}, {"n": -2}]});
        assert_eq!(
            v.check(&s, &bad, Path::Top).unwrap_err().to_string(),
            "a[1].n: -2 is below its minimum 0"
        );
        let bad = json!({"a": [{"n": "7"}]});
        assert_eq!(
            v.check(&s, &bad, Path::Top).unwrap_err().to_string(),
            "a[0].n: \"7\" is not of type \"integer\""
        );
    }

    #[test]
    fn unknown_schemas_pass_and_bad_results_fail() {
        assert!(document(&json!({"schema": "other/1"})).is_ok());
        let e = err(&json!({"schema": "wirebench.result/1"}));
        assert!(e.ends_with(": missing"), "{e}");
    }
}
