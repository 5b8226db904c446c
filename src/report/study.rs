//! A study's report.md: its title, the tables of the command it ran (a sweep's tables, a
//! comparison's tables and verdicts, or a peak search's table and curve) and a methodology
//! section saying when, how, against what and on what it ran, so a reader can repeat it; with
//! `diagnose = true`, each target's diagnosis between them.
//!
//! What wirebench did not write itself (the plan's title, target names, URLs, server strings,
//! the file name, what a server answered) is escaped ([`md`]), so it reads as the text it is
//! and never as HTML or Markdown: a title `<img src=x onerror=…>` shows as those characters.

use crate::summary::study::{Document, Study};
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// Writes the whole report: `# title`, `## Results`, `## Methodology`.
pub fn write(study: &Study, out: &mut dyn Write) -> io::Result<()> {
    let study = &escaped(study);
    writeln!(out, "# {}\n", study.title)?;
    writeln!(out, "## Results\n")?;
    if study.interrupted {
        writeln!(
            out,
            "**Interrupted** before the end of the plan: the results below cover the runs measured until the stop.\n"
        )?;
    } else if let Some(why) = study.document.stopped() {
        writeln!(
            out,
            "**Partial**: the study stopped before the end of the plan ({why}); the results below cover the runs measured until then.\n"
        )?;
    }
    match &study.document {
        Document::Run(sweep) => super::sweep::write_as(sweep, "study", out)?,
        Document::Compare(c) => {
            super::sweep::write_as(&c.sweep, "study", out)?;
            super::compare::write(c, out)?;
        }
        Document::Peak(p) => {
            // The peak report is laid out for a terminal: kept as it is, in a fence longer
            // than any run of backticks in it (a fence shows HTML as text).
            let mut text = Vec::new();
            super::peak::write(p, &mut text)?;
            fenced(&String::from_utf8_lossy(&text), "text", out)?;
        }
    }
    diagnoses(study, out)?;
    methodology(study, out)?;
    out.flush()
}

/// `## Diagnosis`: each target's findings as `wirebench diagnose` prints them, in a fence.
fn diagnoses(study: &Study, out: &mut dyn Write) -> io::Result<()> {
    if study.diagnoses.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n## Diagnosis\n")?;
    for (d, t) in study.diagnoses.iter().zip(&study.targets) {
        // (The targets' names and URLs are escaped already.)
        writeln!(out, "### {} ({})\n", t.name, t.url)?;
        let mut text = Vec::new();
        super::diagnosis::write(d, &mut text)?;
        fenced(&String::from_utf8_lossy(&text), "text", out)?;
        writeln!(out)?;
    }
    Ok(())
}

/// The methodology section: the facts, the targets table and the plan file.
fn methodology(study: &Study, out: &mut dyn Write) -> io::Result<()> {
    let m = &study.methodology;
    writeln!(out, "\n## Methodology\n")?;
    writeln!(out, "- Date: {}", m.date)?;
    writeln!(
        out,
        "- Command: {} (the plan stands for `wirebench {}`)",
        code(&m.command),
        study.command
    )?;
    writeln!(out, "- wirebench: {}", m.version)?;
    writeln!(out, "- Kernel: {}", m.kernel)?;
    writeln!(out, "- CPU: {} ({} logical CPUs)", m.cpu, m.cpus)?;
    writeln!(out, "- Pinning: {}", m.pinning)?;
    writeln!(out, "- Link: {}", m.link)?;
    if let Some(c) = &m.cache {
        writeln!(out, "- Page cache: {c}")?;
    }
    if let Some(s) = &m.server_memory {
        writeln!(out, "- Server memory: {s}")?;
    }
    writeln!(out, "\nTargets:\n")?;
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    t.set_header(["target", "URL", "server", "version"]);
    for target in &study.targets {
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
        t.add_row([
            target.name.clone(),
            target.url.clone(),
            text(&target.server),
            text(&target.version),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "\nThe plan file ({}):\n", m.file)?;
    // A fence longer than any run of backticks in the plan, so the plan cannot close it.
    fenced(m.plan.trim_end(), "toml", out)
}

/// `text` in a fenced block longer than any run of backticks in it, so it cannot close it.
fn fenced(text: &str, info: &str, out: &mut dyn Write) -> io::Result<()> {
    let fence = "`".repeat(3.max(longest_run(text, '`') + 1));
    writeln!(
        out,
        "{fence}{info}\n{}\n{fence}",
        text.trim_end_matches('\n')
    )
}

/// `text` as an inline code span that it cannot close (its line breaks made spaces).
fn code(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    match text.starts_with('`') || text.ends_with('`') {
        true => format!("{ticks} {text} {ticks}"),
        false => format!("{ticks}{text}{ticks}"),
    }
}

/// `text` as Markdown shows it literally, on one line and in one table cell: HTML's `<`, `>`
/// and `&` as entities, Markdown's link, code and table characters behind a backslash, line
/// breaks and other control characters as spaces.
pub fn md(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => s += "&lt;",
            '>' => s += "&gt;",
            '&' => s += "&amp;",
            '\\' | '`' | '|' | '[' | ']' | '*' => {
                s.push('\\');
                s.push(c);
            }
            c if c.is_control() => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

/// `study` with every text it holds that wirebench did not write escaped with [`md`] (the
/// command line and the plan file stay whole: they are shown as code). Tables of runs and
/// comparisons read names, URLs and swept values from the document, which are escaped too; a
/// peak search's report is shown in a fence, as it is.
fn escaped(study: &Study) -> Study {
    let mut s = study.clone();
    s.title = md(&s.title);
    for t in &mut s.targets {
        t.name = md(&t.name);
        t.url = md(&t.url);
        t.server = t.server.as_deref().map(md);
        t.version = t.version.as_deref().map(md);
    }
    let m = &mut s.methodology;
    for f in [
        &mut m.file,
        &mut m.kernel,
        &mut m.cpu,
        &mut m.pinning,
        &mut m.link,
        &mut m.date,
        &mut m.version,
    ] {
        *f = md(f);
    }
    m.cache = m.cache.as_deref().map(md);
    m.server_memory = m.server_memory.as_deref().map(md);
    match &mut s.document {
        Document::Run(sweep) => escape_sweep(sweep),
        Document::Compare(c) => {
            c.baseline = md(&c.baseline);
            for r in &mut c.order {
                r.targets.iter_mut().for_each(|t| *t = md(t));
                r.at = md(&r.at);
            }
            for v in &mut c.verdicts {
                v.target = md(&v.target);
                v.at = md(&v.at);
            }
            for sh in &mut c.shapes {
                sh.target = md(&sh.target);
                sh.at = md(&sh.at);
            }
            escape_sweep(&mut c.sweep);
        }
        // In a fence: shown as it is.
        Document::Peak(_) => {}
    }
    s
}

/// A sweep's names, URLs and swept values escaped with [`md`], as its tables show them.
fn escape_sweep(sweep: &mut crate::summary::sweep::Sweep) {
    for t in &mut sweep.targets {
        t.name = md(&t.name);
        t.url = md(&t.url);
    }
    for p in &mut sweep.points {
        p.target = md(&p.target);
        p.values.values_mut().for_each(|v| *v = md(v));
        p.result.target = md(&p.result.target);
    }
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}
