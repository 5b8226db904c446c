//! The JSON Schema validator of [`super`]: the draft 2020-12 keywords wirebench's schemas use,
//! checked on a document's values, the first failure named by its field.

use super::{at, Invalid, Path, Why};
use serde_json::Value;
use std::fmt;

/// Validates instances against the schema `root` (for its `$ref`s).
pub(super) struct Validator<'s> {
    /// The schema its `$ref`s resolve in.
    pub(super) root: &'s Value,
}

impl Validator<'_> {
    /// Checks `v` (at `path`) against `schema`.
    pub(super) fn check(&self, schema: &Value, v: &Value, path: Path) -> Result<(), Invalid> {
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
