//! Reading a result document (`wirebench.result/1`) back into a [`Summary`] for a page or a
//! table. A document as wirebench writes it reads whole; an older or partial one (a field it
//! lacks, a figure written as `null`) still reads, each missing field taking its default
//! (zero, empty, absent), so a page of it renders rather than failing on one field.

use super::Summary;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

impl Summary {
    /// `doc` as a summary: as written when it reads whole, else with every field it lacks or
    /// cannot give its type taking its default (see the module's doc).
    pub fn tolerant(doc: &Value) -> Summary {
        tolerant(doc)
    }
}

/// `doc` as a `T` (a document kind): as written when it reads whole, else with every field
/// it lacks or cannot give its type taking its default.
pub fn tolerant<T: Default + Serialize + DeserializeOwned>(doc: &Value) -> T {
    if let Ok(t) = T::deserialize(doc) {
        return t;
    }
    let Ok(mut base) = serde_json::to_value(T::default()) else {
        return T::default();
    };
    overlay(&mut base, doc);
    T::deserialize(&base).unwrap_or_default()
}

/// Reads a result inside another document (a sweep's point, a peak's step) as
/// [`Summary::tolerant`] does.
pub(crate) fn tolerant_summary<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Summary, D::Error> {
    Ok(Summary::tolerant(&Value::deserialize(d)?))
}

/// Writes `doc`'s fields over `base`'s, object by object: a field `doc` lacks, or holds in
/// another kind than `base`'s (text for a count, `null` for a figure), keeps `base`'s value.
fn overlay(base: &mut Value, doc: &Value) {
    let (Value::Object(base), Value::Object(doc)) = (base, doc) else {
        return;
    };
    for (key, value) in doc {
        match base.get_mut(key) {
            Some(b @ Value::Object(_)) if value.is_object() => overlay(b, value),
            Some(b) if fits(b, value) => *b = value.clone(),
            Some(_) => {}
            None => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Whether `value` can stand where the default `base` stands: the same kind of JSON value
/// (a count where a count is, any number where a figure is), or anything where the default is
/// absent (`null`).
fn fits(base: &Value, value: &Value) -> bool {
    match base {
        Value::Null => true,
        Value::Number(n) if n.is_u64() => value.is_u64(),
        Value::Number(_) => value.is_number(),
        Value::Bool(_) => value.is_boolean(),
        Value::String(_) => value.is_string(),
        Value::Array(_) => value.is_array(),
        Value::Object(_) => value.is_object(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_document_reads_with_defaults() {
        let doc = serde_json::json!({
            "schema": "wirebench.result/1",
            "target": "tcp://127.0.0.1:1",
            "ok": 7,
            "throughput": { "ops_per_s": 3.5 },
        });
        let s = Summary::tolerant(&doc);
        assert_eq!(
            (s.ok, &*s.target, &*s.schema),
            (7, "tcp://127.0.0.1:1", "wirebench.result/1")
        );
        assert_eq!(s.throughput.ops_per_s, 3.5);
        assert!(s.latency.is_none() && s.series.is_empty());
        // A field of the wrong type: the rest of the document is not lost with it.
        let bad = serde_json::json!({ "ok": "many", "target": "t", "duration_s": null });
        let s = Summary::tolerant(&bad);
        assert_eq!((s.ok, &*s.target, s.duration_s), (0, "t", 0.0));
        assert_eq!(Summary::tolerant(&serde_json::json!([1])).ok, 0);
    }
}
