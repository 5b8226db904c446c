//! Issue 39, item 8: what wirebench writes for spreadsheets and Markdown readers carries what it
//! did not write as text: CSV cells that would start a formula (`+SUM(1+1)`, `@SUM(1)`) are
//! escaped, and report.md shows a plan's title, target names and server strings as characters,
//! never as HTML.

use super::common;

use common::run_bounded;
use std::time::Duration;
use wirebench::serve::tcp::{self, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(60);

/// `text` without its fenced blocks (where Markdown shows HTML as text).
fn outside_fences(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let ticks: String = line.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(f) if ticks.len() >= f.len() && line.trim() == ticks => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out += line;
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn formula_cells_are_text_and_report_md_escapes_html() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    let dir = std::env::temp_dir().join(format!("wb-escaped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"title = "<script>alert(1)</script> | [x](javascript:alert(1))"
[targets]
"+SUM(1+1)" = {{ url = "{url}", server = "<img src=x onerror=alert(1)>", version = "1 & 2" }}
"@SUM(1)" = {{ url = "{url}", server = "=HYPERLINK(\"http://x\")" }}
[run]
requests = 20
"#
        ),
    )
    .unwrap();
    let out_dir = dir.join("out");
    let (out, _) = run_bounded(
        &[
            "study",
            plan.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--no-save",
        ],
        LIMIT,
    );
    srv.stop();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every CSV: no cell starts a formula.
    let mut seen = 0;
    for e in std::fs::read_dir(&out_dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for cell in text.lines().flat_map(|l| l.split(',')) {
            let cell = cell.trim_start_matches('"');
            let number = cell.parse::<f64>().is_ok();
            assert!(
                number || !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{}: a formula cell {cell:?}",
                p.display()
            );
        }
        seen += usize::from(text.contains("'+SUM(1+1)") && text.contains("'@SUM(1)"));
    }
    assert!(seen > 0, "no CSV names the targets as text");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let shown = outside_fences(&md);
    for raw in ["<script", "<img", "x](javascript:", "1 & 2"] {
        assert!(!shown.contains(raw), "report.md carries {raw:?} raw:\n{md}");
    }
    assert!(
        shown.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{md}"
    );
    assert!(shown.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
    assert!(shown.contains("1 &amp; 2"), "{md}");
    assert!(shown.contains("\\[x\\](javascript"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}
