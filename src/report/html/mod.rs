//! The HTML report (`wirebench report`): any wirebench JSON document rendered as one
//! self-contained page — inline CSS, charts as inline SVG drawn here, no script, and no
//! reference to anything outside the file (no fonts, images, style sheets or links to fetch),
//! so it opens offline, mails as one attachment, and prints.
//!
//! It reads the documents, not the summaries of a run in memory: each is read into its
//! kind's type ([`Doc`]; an older or partial one with defaults for what it lacks), so a page
//! can be made from a file written months ago, or from the history, by whatever wirebench
//! reads the same schema version (the `schema` field: `wirebench.KIND/VERSION`).
//!
//! - [`page`]: the shell, the style sheet (screen and print), escaping, tables.
//! - [`scale`], [`layout`] and [`svg`]: the chart writer (linear, log and "nines" axes,
//!   ticks, legends placed so no text touches, polylines, bars with error bars).
//! - [`hist`]: percentile spectra from the documents' HdrHistograms.
//! - one module per document kind: [`result`] (`wirebench.result/1`), [`sweep`]
//!   (`wirebench.sweep/1`, with repeated runs; its charts in [`sweep_charts`]), [`compare`] (`wirebench.compare/1`), [`peak`]
//!   (`wirebench.peak/1`), [`diagnosis`] (`wirebench.diagnosis/1`, also inside a study with
//!   `diagnose = true`), and [`study`] (`wirebench.study/1`: a title and methodology around
//!   one of the others).

pub mod compare;
pub mod diagnosis;
mod fields;
pub mod hist;
pub mod layout;
pub mod page;
pub mod peak;
pub mod result;
pub mod scale;
pub mod shards;
pub mod study;
pub mod svg;
pub mod sweep;
pub mod sweep_charts;

use crate::summary::compare::Comparison;
use crate::summary::diagnosis::Diagnosis;
use crate::summary::peak::PeakSearch;
use crate::summary::study::Document;
use crate::summary::sweep::Sweep;
use crate::summary::{read, Summary};
use serde_json::Value;
use std::io::{self, Write};

/// The document kinds the report reads, by their `schema` field.
pub const SCHEMAS: [&str; 6] = [
    "wirebench.result/1",
    "wirebench.diagnosis/1",
    "wirebench.sweep/1",
    "wirebench.compare/1",
    "wirebench.peak/1",
    "wirebench.study/1",
];

/// Why a document could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The document is not a JSON object with a string `schema` field.
    #[error("the document has no \"schema\" field; give a document written by wirebench run, compare or peak with --json, or a study's study.json")]
    NoSchema,
    /// The schema is not one this version reads.
    #[error("the document's schema is '{0}', which this wirebench does not read; it reads {list}", list = SCHEMAS.join(", "))]
    UnknownSchema(String),
    /// Writing the page failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The document's schema, checked: one of [`SCHEMAS`].
pub fn schema(doc: &Value) -> Result<&'static str, RenderError> {
    use serde::Deserialize;
    let head = crate::summary::study::Head::deserialize(doc).map_err(|_| RenderError::NoSchema)?;
    if head.schema.is_empty() {
        return Err(RenderError::NoSchema);
    }
    match SCHEMAS.iter().find(|s| **s == head.schema) {
        Some(schema) => Ok(schema),
        None => Err(RenderError::UnknownSchema(head.schema)),
    }
}

/// Renders `doc`, any wirebench JSON document of a kind in [`SCHEMAS`], as one
/// self-contained HTML page written to `out`. Nothing is written when the schema is unknown.
pub fn render(doc: &Value, out: &mut dyn Write) -> Result<(), RenderError> {
    let html = page_of(doc)?;
    out.write_all(html.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A document read into its kind's type: the one model the page reads. A field an older or
/// partial document lacks takes its default ([`read::tolerant`]).
#[derive(Clone, Copy)]
pub enum Doc<'a> {
    /// `wirebench.result/1`.
    Result(&'a Summary),
    /// `wirebench.diagnosis/1`.
    Diagnosis(&'a Diagnosis),
    /// `wirebench.sweep/1`.
    Sweep(&'a Sweep),
    /// `wirebench.compare/1`.
    Compare(&'a Comparison),
    /// `wirebench.peak/1`.
    Peak(&'a PeakSearch),
}

impl<'a> Doc<'a> {
    /// The document a study holds; None for a study without one (a partial document).
    pub fn of_study(document: &'a Document) -> Option<Doc<'a>> {
        match document {
            Document::Run(s) if s.schema.is_empty() => None,
            Document::Run(s) => Some(Doc::Sweep(s)),
            Document::Compare(c) => Some(Doc::Compare(c)),
            Document::Peak(p) => Some(Doc::Peak(p)),
        }
    }
}

/// The whole page for `doc`.
fn page_of(doc: &Value) -> Result<String, RenderError> {
    let page = match schema(doc)? {
        "wirebench.study/1" => study::page(&read::tolerant(doc))?,
        "wirebench.sweep/1" => alone(Doc::Sweep(&read::tolerant(doc)))?,
        "wirebench.compare/1" => alone(Doc::Compare(&read::tolerant(doc)))?,
        "wirebench.peak/1" => alone(Doc::Peak(&read::tolerant(doc)))?,
        "wirebench.diagnosis/1" => alone(Doc::Diagnosis(&read::tolerant(doc)))?,
        _ => alone(Doc::Result(&Summary::tolerant(doc)))?,
    };
    Ok(page.finish())
}

/// The page of a document on its own (not in a study).
fn alone(doc: Doc) -> Result<page::Page, RenderError> {
    let (title, lede) = title(doc);
    let mut page = page::Page::new(&title, &lede);
    body(&mut page, doc)?;
    Ok(page)
}

/// A title and a one-line lede for a document on its own.
fn title(doc: Doc) -> (String, String) {
    let target = fields::targets(doc).join(", ");
    let what = match doc {
        Doc::Sweep(_) => "sweep",
        Doc::Compare(_) => "comparison",
        Doc::Peak(_) => "peak search",
        Doc::Diagnosis(_) => "diagnosis",
        Doc::Result(_) => "run",
    };
    (format!("wirebench {what}: {target}"), fields::lede(doc))
}

/// The sections of a (non-study) document: results, charts, methodology.
pub(crate) fn body(page: &mut page::Page, doc: Doc) -> Result<(), RenderError> {
    match doc {
        Doc::Result(r) => result::render(page, r),
        Doc::Sweep(s) => sweep::render(page, s),
        Doc::Compare(c) => compare::render(page, c),
        Doc::Peak(p) => peak::render(page, p),
        Doc::Diagnosis(d) => {
            diagnosis::render(page, d);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document with nothing but its schema (a partial or older one) still renders: every
    /// absent figure is `-`, every chart without data left out.
    #[test]
    fn a_bare_document_of_each_kind_renders() {
        for schema in SCHEMAS {
            let doc = serde_json::json!({ "schema": schema, "steps": [], "points": [] });
            let mut out = Vec::new();
            render(&doc, &mut out).unwrap_or_else(|e| panic!("{schema}: {e}"));
            let page = String::from_utf8(out).unwrap();
            assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
        }
    }

    #[test]
    fn an_unknown_schema_writes_nothing() {
        let mut out = Vec::new();
        let doc = serde_json::json!({ "schema": "wirebench.result/2" });
        assert!(matches!(
            render(&doc, &mut out),
            Err(RenderError::UnknownSchema(_))
        ));
        assert!(matches!(
            render(&serde_json::json!([1]), &mut out),
            Err(RenderError::NoSchema)
        ));
        assert!(out.is_empty());
    }

    /// A sweep that mixes request/response with a push counts payload one way on the page as
    /// in the terminal: the echo's requests (1 MB/s), not both directions (2 MB/s), beside the
    /// push's messages (the DIM study's table).
    #[test]
    fn a_sweep_of_echo_and_push_shows_payload_one_way() {
        let point = |target: &str, mode: &str, sent: f64, received: f64| {
            serde_json::json!({
                "target": target, "values": {"--size": "4"}, "run": 1, "discarded": false,
                "result": {"mode": mode, "throughput": {
                    "ops_per_s": 100.0, "messages_per_s": 100.0,
                    "sent_mb_per_s": sent, "received_mb_per_s": received}}
            })
        };
        let doc = serde_json::json!({
            "schema": "wirebench.sweep/1",
            "targets": [{"name": "rr", "url": "tcp://127.0.0.1:7000"},
                        {"name": "push", "url": "tcp://127.0.0.1:7001"}],
            "axes": [{"flag": "--size", "values": ["4"]}],
            "runs": 1,
            "points": [point("rr", "rr", 1.0, 1.0), point("push", "source", 0.0, 3.0)],
        });
        let mut out = Vec::new();
        render(&doc, &mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains("Payload throughput (one direction; request/response: its requests)"));
        assert!(!page.contains("both directions"));
        assert!(
            page.contains(">1.00 MB/s<") && !page.contains(">2.00 MB/s<"),
            "{page}"
        );
    }
}
