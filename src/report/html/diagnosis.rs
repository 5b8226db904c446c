//! A diagnosis (`wirebench.diagnosis/1`): the baseline and each variant's figures side by side,
//! then the findings, most important first, each with its confidence, the side that holds the
//! cause, its evidence and the fix, as `wirebench diagnose` prints them.

use super::fields::{num, us};
use super::page::{esc, table, Page};
use serde_json::Value;
use std::fmt::Write;

/// The diagnosis' sections: the runs' table, then the findings.
pub fn render(page: &mut Page, d: &Value) {
    let runs = std::iter::once(("baseline".to_string(), &d["baseline"])).chain(
        d["variants"].as_array().into_iter().flatten().map(|v| {
            (
                format!("with {}", v["flags"].as_str().unwrap_or("?")),
                &v["figures"],
            )
        }),
    );
    let head: Vec<String> = ["run", "ops/s", "MB/s", "p50", "p99", "mean", "stalled"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = runs
        .map(|(name, f)| {
            let share = num(&f["stall_share"]).map_or("-".into(), |s| format!("{:.0}%", s * 100.0));
            vec![
                name,
                num(&f["ops_per_s"]).map_or("-".into(), |x| format!("{x:.1}")),
                num(&f["mb_per_s"]).map_or("-".into(), |x| format!("{x:.2}")),
                us(&f["p50_us"]),
                us(&f["p99_us"]),
                us(&f["mean_us"]),
                share,
            ]
        })
        .collect();
    page.raw(&table("diagnosis-runs", &head, &rows));
    let findings = d["findings"].as_array().map_or(&[][..], Vec::as_slice);
    if findings.is_empty() {
        page.para("No findings: none of the causes diagnose looks for (Nagle and delayed ACK, socket buffers, a saturated generator, port exhaustion, a heavy tail, stalls) shows.");
        return;
    }
    let mut html = String::from(r#"<ol class="findings">"#);
    for f in findings {
        finding(&mut html, f);
    }
    html.push_str("</ol>");
    page.raw(&html);
}

/// One finding as a list item: title, confidence and side, evidence, fix.
fn finding(html: &mut String, f: &Value) {
    let s = |k: &str| esc(f[k].as_str().unwrap_or(""));
    let _ = write!(
        html,
        r#"<li class="finding"><p><strong>{}</strong> <em>[{} confidence; {} side]</em></p><ul>"#,
        s("title"),
        s("confidence"),
        s("side")
    );
    for e in f["evidence"].as_array().into_iter().flatten() {
        let _ = write!(html, "<li>{}</li>", esc(e.as_str().unwrap_or("")));
    }
    let _ = write!(html, "</ul><p>Fix: {}</p></li>", s("fix"));
}
