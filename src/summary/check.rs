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

use base64::Engine as _;
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;

/// The schemas, by the `schema` name a document carries.
const SCHEMAS: [(&str, &str); 8] = [
    (
        "wirebench.result/1",
        include_str!("../../schema/result.v1.json"),
    ),
    (
        "wirebench.sweep/1",
        include_str!("../../schema/sweep.v1.json"),
    ),
    (
        "wirebench.compare/1",
        include_str!("../../schema/compare.v1.json"),
    ),
    (
        "wirebench.peak/1",
        include_str!("../../schema/peak.v1.json"),
    ),
    (
        "wirebench.study/1",
        include_str!("../../schema/study.v1.json"),
    ),
    (
        "wirebench.diagnosis/1",
        include_str!("../../schema/diagnosis.v1.json"),
    ),
    (
        "wirebench.diff/1",
        include_str!("../../schema/diff.v1.json"),
    ),
    (
        "wirebench.history/1",
        include_str!("../../schema/history.v1.json"),
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

/// Validates instances against the schema `root` (for its `$ref`s).
struct Validator<'s> {
    root: &'s Value,
}

impl Validator<'_> {
    /// Checks `v` (at `path`) against `schema`.
    fn check(&self, schema: &Value, v: &Value, path: Path) -> Result<(), Invalid> {
        let Some(s) = schema.as_object() else {
            return match schema {
                Value::Bool(false) => Err(at(shown(path), Why::NotAllowed)),
                _ => Ok(()),
            };
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            self.check(self.resolve(r)?, v, path)?;
        }
        self.scalar(s, v, path)?;
        if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
            self.one_of(alts, v, path)?;
        }
        for part in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.check(part, v, path)?;
        }
        if let Some(cond) = s.get("if") {
            if self.check(cond, v, path).is_ok() {
                if let Some(then) = s.get("then") {
                    self.check(then, v, path)?;
                }
            }
        }
        match v {
            Value::Object(_) => self.object(s, v, path),
            Value::Array(items) => self.array(s, items, path),
            _ => Ok(()),
        }
    }

    /// `#/$defs/NAME`.
    fn resolve(&self, r: &str) -> Result<&Value, Invalid> {
        r.strip_prefix("#/$defs/")
            .and_then(|name| self.root.get("$defs")?.get(name))
            .ok_or_else(|| Invalid::Reference(r.into()))
    }

    /// `type`, `const`, `enum` and the ranges.
    fn scalar(
        &self,
        s: &serde_json::Map<String, Value>,
        v: &Value,
        path: Path,
    ) -> Result<(), Invalid> {
        let here = |why| Err(at(shown(path), why));
        if let Some(t) = s.get("type") {
            let ok = match t {
                Value::String(t) => is_type(v, t),
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| is_type(v, t)),
                _ => true,
            };
            if !ok {
                return here(Why::Type(brief(v), t.clone()));
            }
        }
        if let Some(c) = s.get("const").filter(|c| *c != v) {
            return here(Why::Const(brief(v), c.clone()));
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            if !e.contains(v) {
                return here(Why::Enum(brief(v), Value::from(e.clone())));
            }
        }
        if let Some(x) = v.as_f64() {
            let bound = |k: &str| s.get(k).and_then(Value::as_f64);
            if bound("minimum").is_some_and(|m| x < m) {
                return here(Why::Below(x, s["minimum"].clone()));
            }
            if bound("exclusiveMinimum").is_some_and(|m| x <= m) {
                return here(Why::NotAbove(x, s["exclusiveMinimum"].clone()));
            }
            if bound("maximum").is_some_and(|m| x > m) {
                return here(Why::Above(x, s["maximum"].clone()));
            }
        }
        let min_len = s.get("minLength").and_then(Value::as_u64);
        if let (Some(n), Some(text)) = (min_len, v.as_str()) {
            if (text.chars().count() as u64) < n {
                return here(Why::Short(n));
            }
        }
        Ok(())
    }

    /// Exactly one alternative holds; when none does, the error of the first that is not
    /// `null` (the alternative a value was meant to be) is the one said.
    fn one_of(&self, alts: &[Value], v: &Value, path: Path) -> Result<(), Invalid> {
        let results: Vec<_> = alts.iter().map(|a| self.check(a, v, path)).collect();
        match results.iter().filter(|r| r.is_ok()).count() {
            1 => Ok(()),
            0 => {
                let meant = alts
                    .iter()
                    .position(|a| a.get("type") != Some(&"null".into()));
                let mut results = results;
                results.swap_remove(meant.unwrap_or(0))
            }
            _ => Err(at(shown(path), Why::Several)),
        }
    }

    /// `required`, `properties`, `additionalProperties`.
    fn object(
        &self,
        s: &serde_json::Map<String, Value>,
        v: &Value,
        path: Path,
    ) -> Result<(), Invalid> {
        let Some(map) = v.as_object() else {
            return Err(at(shown(path), Why::NotObject));
        };
        for name in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap_or_default();
            if !map.contains_key(name) {
                return Err(at(path.key(name), Why::Missing));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in map {
            match props.and_then(|p| p.get(k)) {
                Some(p) => self.check(p, x, path.key(k))?,
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(at(path.key(k), Why::NotField)),
                    Some(extra) => self.check(extra, x, path.key(k))?,
                    None => {}
                },
            }
        }
        Ok(())
    }

    /// `prefixItems`, `items`, `minItems`, `maxItems`.
    fn array(
        &self,
        s: &serde_json::Map<String, Value>,
        items: &[Value],
        path: Path,
    ) -> Result<(), Invalid> {
        let here = |why| Err(at(shown(path), why));
        let count = |k: &str| s.get(k).and_then(Value::as_u64);
        if count("minItems").is_some_and(|n| (items.len() as u64) < n) {
            return here(Why::Few(s["minItems"].clone()));
        }
        if count("maxItems").is_some_and(|n| (items.len() as u64) > n) {
            return here(Why::Many(s["maxItems"].clone()));
        }
        let prefix = s.get("prefixItems").and_then(Value::as_array);
        let skip = prefix.map_or(0, Vec::len);
        for (i, (p, x)) in prefix.into_iter().flatten().zip(items).enumerate() {
            self.check(p, x, path.item(i))?;
        }
        if let Some(each) = s.get("items") {
            for (i, x) in items.iter().enumerate().skip(skip) {
                self.check(each, x, path.item(i))?;
            }
        }
        Ok(())
    }
}

/// Whether `v` is of JSON Schema type `t` (an integer is a number with no fraction).
fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0),
        _ => true,
    }
}

/// The document's top, or the field, as an error message names it.
fn shown(path: Path) -> Shown {
    Shown(path)
}

/// [`shown`]'s text, written out only when a message is.
struct Shown<'a>(Path<'a>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Path::Top => f.write_str("the document"),
            p => p.fmt(f),
        }
    }
}

/// A value as an error message shows it: short. Only its first characters are written out
/// (a failed `oneOf` alternative names a value that may be a whole series).
fn brief(v: &Value) -> String {
    /// Keeps the first `room` bytes written to it, then refuses the rest.
    struct Head {
        text: Vec<u8>,
        room: usize,
    }
    impl std::io::Write for Head {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.room - self.text.len());
            self.text.extend_from_slice(&buf[..n]);
            match n {
                0 if !buf.is_empty() => Err(std::io::ErrorKind::WriteZero.into()),
                n => Ok(n),
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // 41 characters are at most 164 bytes of UTF-8.
    let mut head = Head {
        text: Vec::new(),
        room: 41 * 4,
    };
    let _ = serde_json::to_writer(&mut head, v);
    let text = String::from_utf8_lossy(&head.text);
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.into_owned(),
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
