//! A diagnosis (`wirebench.diagnosis/1`): the baseline and each variant's figures side by side,
//! then the findings, most important first, each with its confidence, the side that holds the
//! cause, its evidence and the fix, as `wirebench diagnose` prints them.

use super::fields::{finite, micros};
use super::page::{esc, table, Page};
use crate::summary::diagnosis::{Confidence, Diagnosis, Figures, Finding};
use std::fmt::Write;

/// The diagnosis' sections: the runs' table, then the findings.
pub fn render(page: &mut Page, d: &Diagnosis) {
    let runs = std::iter::once(("baseline".to_string(), &d.baseline))
        .chain((d.variants.iter()).map(|v| (format!("with {}", v.flags), &v.figures)));
    let head: Vec<String> = ["run", "ops/s", "MB/s", "p50", "p99", "mean", "stalled"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = runs.map(|(name, f)| row(name, f)).collect();
    page.raw(&table("diagnosis-runs", &head, &rows));
    if d.findings.is_empty() {
        page.para("No findings: none of the causes diagnose looks for (Nagle and delayed ACK, socket buffers, a saturated generator, port exhaustion, a heavy tail, stalls) shows.");
        return;
    }
    let mut html = String::from(r#"<ol class="findings">"#);
    for f in &d.findings {
        finding(&mut html, f);
    }
    html.push_str("</ol>");
    page.raw(&html);
}

/// A run's row: its name, rates, latency and the share of stalled exchanges.
fn row(name: String, f: &Figures) -> Vec<String> {
    let share =
        (f.stall_share.and_then(finite)).map_or("-".into(), |s| format!("{:.0}%", s * 100.0));
    vec![
        name,
        finite(f.ops_per_s).map_or("-".into(), |x| format!("{x:.1}")),
        finite(f.mb_per_s).map_or("-".into(), |x| format!("{x:.2}")),
        micros(f.p50_us),
        micros(f.p99_us),
        micros(f.mean_us),
        share,
    ]
}

/// A confidence as the document writes it.
fn confidence(c: Confidence) -> &'static str {
    match c {
        Confidence::Low => "low",
        Confidence::Medium => "medium",
        Confidence::High => "high",
    }
}

/// One finding as a list item: title, confidence and side, evidence, fix.
fn finding(html: &mut String, f: &Finding) {
    let _ = write!(
        html,
        r#"<li class="finding"><p><strong>{}</strong> <em>[{} confidence; {} side]</em></p><ul>"#,
        esc(&f.title),
        confidence(f.confidence),
        esc(&f.side)
    );
    for e in &f.evidence {
        let _ = write!(html, "<li>{}</li>", esc(e));
    }
    let _ = write!(html, "</ul><p>Fix: {}</p></li>", esc(&f.fix));
}
