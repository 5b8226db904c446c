//! Request templates: text with placeholders filled in per request, so requests can differ
//! ("create a different handle with the same values", as in the Handle.Net study).
//!
//! Placeholders: `{seq}` a number unique to each request of the run, `{worker}` the worker
//! thread, `{rand:N}` and `{uniform:N}` a random integer below N, `{zipf:N:s}` a key below N
//! drawn by Zipf's law with exponent s (1 when left out; key 0 the most popular, as YCSB's),
//! `{uuid}` a random UUID (version 4), `{file}` the path of a file of the run's file set
//! (`--manifest`), drawn by its popularity. The draws come from the run's seed and the request's
//! number, so `--seed` repeats them whichever connection sends the request. Any other
//! brace is text, so `--body '{"v": {rand:100}}'` is JSON as written. A template with `{{`
//! in it is read in the older escaped form: `{{` and `}}` each stand for one brace (`{{seq}}`
//! is the text `{seq}`). A template is parsed once; rendering appends to a buffer without allocating.

use crate::driver::files::FileSet;
pub use crate::random::Rng;
use crate::random::Zipf;
use std::io::Write;
use std::sync::Arc;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Seq,
    Worker,
    Rand(u64),
    Uniform(u64),
    Zipf(Zipf),
    Uuid,
    /// `{file}`: a file of the run's set, once the plan has bound one.
    File(Option<Arc<FileSet>>),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

/// Per-request values for the placeholders.
pub struct Vars<'a> {
    /// The request's unique number.
    pub seq: u64,
    /// The worker thread's index.
    pub worker: usize,
    /// The session's random numbers.
    pub rng: &'a mut Rng,
}

/// A random placeholder written without what it needs; each names the flag it is in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{zipf…}` without a key count and an exponent.
    #[error("{what}: '{{{name}}}' needs a key count and an exponent: write {{zipf:N:s}} with N ≥ 1 keys and s > 0, e.g. {{zipf:1000:0.99}}")]
    Zipf {
        /// The flag.
        what: String,
        /// The placeholder, without braces.
        name: String,
    },
    /// `{rand…}` or `{uniform…}` without a bound.
    #[error(
        "{what}: '{{{name}}}' needs a bound: write {{{kind}:N}} with N ≥ 1, e.g. {{{kind}:100}}"
    )]
    Bound {
        /// The flag.
        what: String,
        /// The placeholder, without braces.
        name: String,
        /// `rand` or `uniform`.
        kind: String,
    },
}

impl Template {
    /// Parses `text`; `what` names the flag in error messages.
    ///
    /// Only the known placeholders are taken out; every other brace is kept as written, so a
    /// JSON body needs no escaping. A template that holds `{{` anywhere is read in the escaped
    /// form earlier versions required, where `{{` and `}}` each stand for one brace (so
    /// `{{"v": {rand:9}}}` still renders as `{"v": 4}`). JSON has no `{{` outside its strings,
    /// while nested objects end in `}}`: the form cannot be told by `}}`.
    pub fn parse(what: &str, text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let escaped = text.contains("{{");
        let mut rest = text;
        while let Some(i) = rest.find(['{', '}']) {
            lit.extend_from_slice(&rest.as_bytes()[..i]);
            let tail = &rest[i..];
            let mut used = 1;
            if escaped && (tail.starts_with("{{") || tail.starts_with("}}")) {
                used = 2;
            } else if let Some((part, len)) = tail
                .starts_with('{')
                .then(|| placeholder(what, tail))
                .transpose()?
                .flatten()
            {
                if !lit.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut lit)));
                }
                parts.push(part);
                rest = &tail[len..];
                continue;
            }
            lit.push(tail.as_bytes()[0]);
            rest = &tail[used..];
        }
        lit.extend_from_slice(rest.as_bytes());
        if !lit.is_empty() {
            parts.push(Part::Literal(lit));
        }
        Ok(Template { parts })
    }

    /// A template of fixed bytes.
    pub fn literal(bytes: &[u8]) -> Template {
        Template {
            parts: vec![Part::Literal(bytes.to_vec())],
        }
    }

    /// True when the template has no placeholders.
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// True when rendering draws random numbers (so the run's seed matters).
    pub fn is_random(&self) -> bool {
        self.parts.iter().any(|p| {
            matches!(
                p,
                Part::Rand(_) | Part::Uniform(_) | Part::Zipf(_) | Part::Uuid | Part::File(_)
            )
        })
    }

    /// Whether the template names `{file}`.
    pub fn has_file(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::File(_)))
    }

    /// Draws `{file}` from `set` (the plan binds the run's file set once it has read it).
    pub fn bind_files(&mut self, set: &Arc<FileSet>) {
        for p in &mut self.parts {
            if let Part::File(f) = p {
                *f = Some(set.clone());
            }
        }
    }

    /// Appends the rendered template to `out`.
    pub fn render(&self, vars: &mut Vars<'_>, out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Literal(b) => out.extend_from_slice(b),
                Part::Seq => {
                    let _ = write!(out, "{}", vars.seq);
                }
                Part::Worker => {
                    let _ = write!(out, "{}", vars.worker);
                }
                Part::Rand(n) => {
                    let _ = write!(out, "{}", vars.rng.next_u64() % n);
                }
                Part::Uniform(n) => {
                    let _ = write!(out, "{}", vars.rng.below(*n));
                }
                Part::Zipf(z) => {
                    let _ = write!(out, "{}", z.sample(vars.rng) - 1);
                }
                Part::File(Some(set)) => {
                    crate::driver::files::write_path(out, set.pick(vars.rng));
                }
                // A plan always binds a set (a `{file}` without --manifest is bad input).
                Part::File(None) => {}
                Part::Uuid => {
                    let (a, b) = (vars.rng.next_u64(), vars.rng.next_u64());
                    // Version 4, variant 10xx (RFC 9562).
                    let a = (a & !0xf000) | 0x4000;
                    let b = (b & !(0xc << 60)) | (0x8 << 60);
                    let _ = write!(
                        out,
                        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                        a >> 32,
                        (a >> 16) & 0xffff,
                        a & 0xffff,
                        b >> 48,
                        b & 0xffff_ffff_ffff
                    );
                }
            }
        }
    }
}

/// The placeholder `tail` starts with, and its length in bytes; `None` when the brace there is
/// text. A `{rand...}` without a usable bound is an error, not text: it can only be a mistake.
fn placeholder(what: &str, tail: &str) -> Result<Option<(Part, usize)>, TemplateError> {
    let Some(end) = tail.find('}') else {
        return Ok(None);
    };
    let part = match &tail[1..end] {
        "seq" => Part::Seq,
        "worker" => Part::Worker,
        "uuid" => Part::Uuid,
        "file" => Part::File(None),
        name if is_rand(name) => random(what, name)?,
        _ => return Ok(None),
    };
    Ok(Some((part, end + 1)))
}

/// The random placeholder `name` (`rand:N`, `uniform:N`, `zipf:N` or `zipf:N:s`), or the
/// line that says how to write it.
fn random(what: &str, name: &str) -> Result<Part, TemplateError> {
    let (kind, args) = name.split_once(':').unwrap_or((name, ""));
    let mut args = args.split(':');
    let n = args
        .next()
        .and_then(|t| t.parse::<u64>().ok())
        .filter(|&n| n > 0);
    let part = match (kind, n, args.next(), args.next()) {
        ("rand", Some(n), None, _) => Some(Part::Rand(n)),
        ("uniform", Some(n), None, _) => Some(Part::Uniform(n)),
        ("zipf", Some(n), s, None) => s
            .map_or(Some(1.0), |s| s.parse::<f64>().ok())
            .and_then(|s| Zipf::new(n, s))
            .map(Part::Zipf),
        _ => None,
    };
    let (what, name) = (what.to_string(), name.to_string());
    part.ok_or_else(|| match kind {
        "zipf" => TemplateError::Zipf { what, name },
        _ => TemplateError::Bound {
            what,
            name,
            kind: kind.into(),
        },
    })
}

/// `rand`, `uniform` or `zipf`, alone or with `:` and words (`rand:0`, `zipf:10:x`): meant as
/// a random placeholder. `{rand: 5}`, with a space, is text (a YAML flow mapping, say).
fn is_rand(name: &str) -> bool {
    let (kind, args) = name.split_once(':').unwrap_or((name, ""));
    ["rand", "uniform", "zipf"].contains(&kind)
        && args
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.+-:".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &str, seq: u64) -> String {
        let mut rng = Rng::new();
        let mut out = Vec::new();
        let mut vars = Vars {
            seq,
            worker: 3,
            rng: &mut rng,
        };
        Template::parse("--x", t)
            .unwrap()
            .render(&mut vars, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fills_placeholders() {
        assert_eq!(render("/handles/{seq}?w={worker}", 42), "/handles/42?w=3");
        assert_eq!(render("{{literal}}", 0), "{literal}");
        let r: u64 = render("{rand:10}", 0).parse().unwrap();
        assert!(r < 10);
        let u = render("{uuid}", 0);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "{u}");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
        assert!(Template::parse("--x", "/plain").unwrap().is_literal());
    }

    #[test]
    fn rejects_a_rand_without_a_bound() {
        for bad in [
            "{rand:0}",
            "{rand:x}",
            "{rand}",
            "{rand:}",
            "{rand:-1}",
            "a{rand:1.5}",
        ] {
            let e = Template::parse("--body", bad).expect_err(bad).to_string();
            assert!(e.starts_with("--body: '{rand"), "{e}");
            assert!(e.contains("{rand:100}"), "{e}");
        }
    }

    #[test]
    fn other_braces_are_text() {
        for text in [
            "{nope}",
            "{seq",
            "a}b",
            "}}",
            "}{",
            "{rand: 5}",
            "{\"v\": 1}",
            "{\"a\":{\"b\":{\"c\":[1,{}]}}}",
            "{ seq }",
            "{Seq}",
        ] {
            let t = Template::parse("--body", text).unwrap();
            assert!(t.is_literal(), "{text}");
            assert_eq!(render(text, 7), text);
        }
    }

    #[test]
    fn json_bodies_need_no_doubling() {
        // The README's tour line, and the form earlier versions required: both are JSON.
        assert_eq!(render("{\"v\": {seq}}", 7), "{\"v\": 7}");
        assert_eq!(render("{{\"v\": {seq}}}", 7), "{\"v\": 7}");
        let v: serde_json::Value = serde_json::from_str(&render("{\"v\": {rand:100}}", 0)).unwrap();
        assert!(v["v"].as_u64().unwrap() < 100, "{v}");
        assert_eq!(
            render("{\"a\": {\"w\": {worker}, \"id\": \"{uuid}\"}}", 0).len(),
            "{\"a\": {\"w\": 3, \"id\": \"\"}}".len() + 36
        );
        // Doubled braces around a placeholder's name keep it as text.
        assert_eq!(render("{{seq}}={seq}", 5), "{seq}=5");
        assert_eq!(render("{{{seq}}}", 5), "{5}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use serde_json::Value;

        /// A number no generated leaf has, standing where a template holds `{seq}`.
        const SEQ: u64 = 987_654_321;

        /// JSON documents nested a few levels deep; some numbers are `SEQ`.
        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                (0u64..1000).prop_map(Value::from),
                Just(Value::from(SEQ)),
                // Braces in strings too, but no `{{` and no placeholder: those are not text.
                "[a-z :{}]{0,6}"
                    .prop_filter("no {{ or placeholder", |s| {
                        !["{{", "{seq}", "{worker}", "{uuid}", "{rand"]
                            .iter()
                            .any(|p| s.contains(p))
                    })
                    .prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
            ];
            leaf.prop_recursive(4, 40, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    proptest::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            /// Text whose braces form no placeholder and no `{{` comes out as written.
            #[test]
            fn plain_text_is_kept(text in "[{}\":,ab1 \\[\\]]{0,40}") {
                prop_assume!(!text.contains("{{"));
                let t = Template::parse("--body", &text).unwrap();
                prop_assert!(t.is_literal());
                prop_assert_eq!(render(&text, 0), text);
            }

            /// A JSON body with `{seq}` where a value goes renders as that JSON, written plainly
            /// or with every brace doubled (the escapes of earlier versions).
            #[test]
            fn json_renders_as_written(doc in json()) {
                let text = doc.to_string();
                let plain = text.replace(&SEQ.to_string(), "{seq}");
                prop_assert_eq!(render(&plain, SEQ), text.clone());
                // Only a `{{` marks the escaped form: a doubled text with no opening brace
                // (`"}}"`) reads as written.
                let doubled = text.replace('{', "{{").replace('}', "}}");
                if doubled.contains("{{") {
                    let doubled = doubled.replace(&SEQ.to_string(), "{seq}");
                    prop_assert_eq!(render(&doubled, SEQ), text);
                }
            }
        }
    }
}
