//! A study (`wirebench.study/1`): a wrapper around one of the other documents, with a title,
//! a methodology and the targets. Read into [`Study`]; every field but the title, the
//! document and the diagnoses is shown in the methodology as the document writes it (text,
//! lists, tables of objects, long text such as the plan file as a preformatted block), so a
//! field added to the study later appears without a line here.

use super::page::{kv, table, text, Page};
use super::{body, Doc, RenderError};
use crate::summary::study::Study;
use serde_json::Value;

/// The whole page of a study: title, the inner document's sections, the study's methodology.
pub fn page(study: &Study) -> Result<Page, RenderError> {
    let title = match study.title.is_empty() {
        true => "wirebench study",
        false => &study.title,
    };
    let inner = Doc::of_study(&study.document);
    let lede = inner.map_or_else(String::new, super::fields::lede);
    let mut page = Page::new(title, &lede);
    if let Some(d) = inner {
        body(&mut page, d)?;
    }
    // `diagnose = true`: each target's diagnosis after the results.
    for d in &study.diagnoses {
        let target = if d.target.is_empty() {
            "a target"
        } else {
            &d.target
        };
        page.heading(2, &format!("Diagnosis: {target}"));
        super::diagnosis::render(&mut page, d);
    }
    page.heading(2, "How the study was made");
    methodology(&mut page, study);
    Ok(page)
}

/// The names of the wrapper's fields (and its methodology's) in words; any other field is
/// shown under its own name, with a capital.
const NAMES: [(&str, &str); 11] = [
    ("command", "Command line"),
    ("date", "Date"),
    ("file", "Plan file"),
    ("plan", "Plan"),
    ("version", "wirebench"),
    ("kernel", "Kernel"),
    ("cpu", "CPU"),
    ("cpus", "CPUs"),
    ("pinning", "CPU pinning"),
    ("link", "Link"),
    ("targets", "Targets"),
];

/// A field's name in words.
fn name(key: &str) -> String {
    NAMES
        .iter()
        .find(|(k, _)| *k == key)
        .map_or_else(|| super::fields::words(key), |(_, n)| n.to_string())
}

/// Every field of the wrapper but its title and inner document: one table of the short
/// fields (the methodology's own among them, not a section of its own), then the long ones
/// (the plan, the targets) each under its name.
fn methodology(page: &mut Page, study: &Study) {
    // The fields as the document writes them, each shown by its kind of value.
    let Ok(Value::Object(mut obj)) = serde_json::to_value(study) else {
        return;
    };
    obj.remove("document");
    let mut pairs = vec![("Schema".to_string(), study.schema.to_string())];
    if !study.command.is_empty() {
        pairs.push((
            "Study of".to_string(),
            format!("wirebench {}", study.command),
        ));
    }
    let skip = ["schema", "title", "diagnoses", "command"];
    let fields = (obj.iter()).filter(|(k, _)| !skip.contains(&k.as_str()));
    // The methodology object's fields join the wrapper's short ones.
    let flat: Vec<(&String, &Value)> = fields
        .flat_map(|(k, v)| match (k.as_str(), v.as_object()) {
            ("methodology", Some(m)) => m.iter().collect::<Vec<_>>(),
            _ => vec![(k, v)],
        })
        .collect();
    let block =
        |v: &Value| v.is_object() || v.is_array() || v.as_str().is_some_and(|s| s.contains('\n'));
    for (k, v) in flat.iter().filter(|(_, v)| !block(v)) {
        field(page, &mut pairs, k, v);
    }
    flush(page, &mut pairs);
    for (k, v) in flat.iter().filter(|(_, v)| block(v)) {
        field(page, &mut pairs, k, v);
    }
    flush(page, &mut pairs);
}

/// One field: a row of `pairs`, or (for long text, objects and lists of objects) a block of
/// its own after flushing the rows gathered so far.
fn field(page: &mut Page, pairs: &mut Vec<(String, String)>, key: &str, value: &Value) {
    let name = name(key);
    match value {
        Value::String(s) if s.contains('\n') => {
            flush(page, pairs);
            page.heading(3, &name);
            page.pre(s);
        }
        Value::Object(o) => {
            flush(page, pairs);
            page.heading(3, &name);
            for (k, v) in o {
                field(page, pairs, k, v);
            }
            flush(page, pairs);
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            flush(page, pairs);
            page.heading(3, &name);
            page.raw(&objects(items));
        }
        Value::Null => pairs.push((name, "-".to_string())),
        v => pairs.push((name, text(v))),
    }
}

/// Writes the rows gathered so far as a key–value table.
fn flush(page: &mut Page, pairs: &mut Vec<(String, String)>) {
    if !pairs.is_empty() {
        page.raw(&kv("study-methodology", pairs));
        pairs.clear();
    }
}

/// A list of objects as a table: a column per key (in first-seen order).
fn objects(items: &[Value]) -> String {
    let mut keys: Vec<String> = Vec::new();
    for o in items.iter().filter_map(Value::as_object) {
        for k in o.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| keys.iter().map(|k| text(&i[k])).collect())
        .collect();
    let head: Vec<String> = (keys.iter())
        .map(|k| match k.as_str() {
            "url" => "URL".to_string(),
            k => super::fields::words(k),
        })
        .collect();
    table("study-list", &head, &rows)
}
