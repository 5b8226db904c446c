//! The page: its shell (doctype, inline style sheet for the screen and for print, no external
//! resource of any kind), text escaping, and the building blocks the document kinds share:
//! headings, tables, key–value lists and figures.

use serde_json::Value;
use std::fmt::Write as _;

/// The inline style sheet: system fonts (no web fonts to fetch), tables that scroll sideways
/// on a narrow screen, charts scaled to the column, preformatted text (a plan file) wrapped
/// rather than scrolled (a scroll bar on paper hides what it holds), and a print sheet that
/// keeps a chart or a table on one page and wraps table cells at spaces only, never inside a
/// figure.
const CSS: &str = r#"
:root { --ink: #1d2330; --muted: #5b6475; --line: #d8dce3; --band: #f4f6f9; --accent: #4e79a7; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 48px; }
header { border-bottom: 3px solid var(--accent); margin-bottom: 18px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 30px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 3px; }
h3 { font-size: 16px; margin: 20px 0 6px; }
p.lede { color: var(--muted); margin: 0 0 12px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 9px; text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; }
td.t, th.t { text-align: left; white-space: normal; }
tr.discarded td { color: var(--muted); font-style: italic; }
td.pass { color: #2d7d32; font-weight: 600; } td.fail { color: #b3261e; font-weight: 600; }
table.kv th { text-align: left; width: 14em; }
table.kv td { text-align: left; white-space: normal; }
pre { background: var(--band); padding: 8px 10px; font-size: 13px;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 14px 22px; }
figure { margin: 8px 0; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { width: 100%; height: auto; font-size: 15px; font-family: inherit; }
svg .grid { stroke: #e4e7ec; } svg .tick { fill: var(--muted); } svg .axis { fill: var(--ink); }
svg .legend text { fill: var(--ink); }
ul.notes li { margin: 2px 0; }
p.none { color: var(--muted); font-style: italic; }
footer { margin-top: 36px; color: var(--muted); font-size: 13px; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .figures { display: block; }
  figure, table { break-inside: avoid; page-break-inside: avoid; }
  pre { font-size: 9pt; overflow: visible; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  .scroll { overflow: visible; }
  @page { margin: 12mm; }
  table { font-size: 8pt; }
  th, td { padding: 2px 4px; }
  th { white-space: normal; }
  td.t, th.t { white-space: normal; overflow-wrap: break-word; }
}
"#;

/// An empty icon, inline: without it a browser asks the page's server for /favicon.ico, the
/// one request a page of its own would otherwise cause.
const ICON: &str = r#"<link rel="icon" href="data:,">"#;

/// Escapes `text` for HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page being written: its title and body.
pub struct Page {
    /// The `<title>` and the `<h1>`.
    pub title: String,
    /// The body so far.
    pub body: String,
}

impl Page {
    /// An empty page titled `title`, opened with `lede` (one line saying what it shows).
    pub fn new(title: &str, lede: &str) -> Page {
        let mut body = String::new();
        let _ = write!(
            body,
            r#"<header><h1>{}</h1><p class="lede">{}</p></header>"#,
            esc(title),
            esc(lede)
        );
        Page {
            title: title.to_string(),
            body,
        }
    }

    /// A section heading (`level` 2 or 3).
    pub fn heading(&mut self, level: u8, text: &str) {
        let _ = write!(self.body, "<h{level}>{}</h{level}>", esc(text));
    }

    /// A paragraph of text.
    pub fn para(&mut self, text: &str) {
        let _ = write!(self.body, "<p>{}</p>", esc(text));
    }

    /// A bulleted list of notes; nothing when there are none.
    pub fn notes(&mut self, notes: &[String]) {
        if notes.is_empty() {
            return;
        }
        self.body.push_str(r#"<ul class="notes">"#);
        for n in notes {
            let _ = write!(self.body, "<li>{}</li>", esc(n));
        }
        self.body.push_str("</ul>");
    }

    /// A preformatted block (a plan file, a command).
    pub fn pre(&mut self, text: &str) {
        let _ = write!(self.body, "<pre>{}</pre>", esc(text));
    }

    /// Charts side by side where the screen is wide: each (caption, svg).
    pub fn figures(&mut self, charts: Vec<(String, String)>) {
        if charts.is_empty() {
            return;
        }
        self.body.push_str(r#"<div class="figures">"#);
        for (caption, svg) in charts {
            let _ = write!(
                self.body,
                "<figure><figcaption>{}</figcaption>{svg}</figure>",
                esc(&caption)
            );
        }
        self.body.push_str("</div>");
    }

    /// Appends already-built HTML (a table).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// The whole document.
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{}</title>{ICON}<style>{CSS}</style></head><body><main>{}\
             <footer>Written by wirebench {} (wirebench report): one self-contained file, \
             charts drawn as inline SVG.</footer></main></body></html>\n",
            esc(&self.title),
            self.body,
            env!("CARGO_PKG_VERSION")
        )
    }
}

/// A table: a header row, then rows whose first cell is a name (left-aligned); a row whose
/// first cell starts with `(` is marked discarded. `class` names it for tests and styling.
/// A table too wide for a page is turned on its side (see [`upright`]).
pub fn table(class: &str, head: &[String], rows: &[Vec<String>]) -> String {
    // A column empty in every row (a comparison's point when nothing is swept) says nothing.
    let keep: Vec<bool> = (0..head.len())
        .map(|i| i == 0 || rows.iter().any(|r| r.get(i).is_some_and(|c| !c.is_empty())))
        .collect();
    let pick = |cells: &[String]| -> Vec<String> {
        (cells.iter().zip(&keep))
            .filter(|(_, k)| **k)
            .map(|(c, _)| c.clone())
            .collect()
    };
    let (head, rows) = (pick(head), rows.iter().map(|r| pick(r)).collect::<Vec<_>>());
    let (head, rows) = upright(head, rows);
    let mut s = format!(
        r#"<div class="scroll"><table class="{}"><thead><tr>"#,
        esc(class)
    );
    for (i, h) in head.iter().enumerate() {
        let c = if i == 0 { r#" class="t""# } else { "" };
        let _ = write!(s, "<th{c}>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for row in &rows {
        let discarded = row.iter().skip(1).any(|c| c.starts_with('('));
        s.push_str(if discarded {
            r#"<tr class="discarded">"#
        } else {
            "<tr>"
        });
        for (i, cell) in row.iter().enumerate() {
            // Names and sentences (a verdict in words) read left-aligned and wrap.
            let class = match (i, cell.as_str()) {
                (0, _) => r#" class="t""#,
                (_, c) if c.len() > 40 => r#" class="t""#,
                (_, "pass") => r#" class="pass""#,
                (_, "FAIL") => r#" class="fail""#,
                _ => "",
            };
            let _ = write!(s, "<td{class}>{}</td>", esc(cell));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

/// More columns than this (a sweep over 15 sizes) do not fit a printed page's width.
const WIDEST: usize = 10;

/// The table turned on its side when it is wider than [`WIDEST`] columns and would be
/// narrower turned: the 15 sizes of a sweep become rows, its targets columns, so every figure
/// is on the screen without scrolling and on the printed page.
fn upright(head: Vec<String>, rows: Vec<Vec<String>>) -> (Vec<String>, Vec<Vec<String>>) {
    if head.len() <= WIDEST || rows.len() + 1 >= head.len() {
        return (head, rows);
    }
    let mut turned_head = vec![head[0].clone()];
    turned_head.extend(rows.iter().map(|r| r.first().cloned().unwrap_or_default()));
    let turned = (1..head.len())
        .map(|i| {
            let mut row = vec![head[i].clone()];
            row.extend(rows.iter().map(|r| r.get(i).cloned().unwrap_or_default()));
            row
        })
        .collect();
    (turned_head, turned)
}

/// A key–value table of `pairs`.
pub fn kv(class: &str, pairs: &[(String, String)]) -> String {
    let mut s = format!(r#"<table class="kv {}"><tbody>"#, esc(class));
    for (k, v) in pairs {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</tbody></table>");
    s
}

/// Any JSON value as text: strings as they are, numbers and booleans written out, arrays of
/// plain values joined, objects and nested arrays as compact JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_everywhere() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let t = table("x", &["<b>".into()], &[vec!["<script>".into()]]);
        assert!(
            !t.contains("<script>") && t.contains("&lt;script&gt;"),
            "{t}"
        );
        let p = Page::new("a<b", "c>d").finish();
        assert!(p.contains("<title>a&lt;b</title>"), "{p}");
    }
}
