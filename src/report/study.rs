//! A study's report.md: its title, the tables of the command it ran (a sweep's tables, a
//! comparison's tables and verdicts, or a peak search's table and curve) and a methodology
//! section saying when, how, against what and on what it ran, so a reader can repeat it; with
//! `diagnose = true`, each target's diagnosis between them.

use crate::summary::study::{Document, Study};
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// Writes the whole report: `# title`, `## Results`, `## Methodology`.
pub fn write(study: &Study, out: &mut dyn Write) -> io::Result<()> {
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
            // The peak report is laid out for a terminal: kept as it is, in a fence.
            writeln!(out, "```text")?;
            super::peak::write(p, out)?;
            writeln!(out, "```")?;
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
        writeln!(out, "### {} ({})\n\n```text", t.name, t.url)?;
        super::diagnosis::write(d, out)?;
        writeln!(out, "```\n")?;
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
        "- Command: `{}` (the plan stands for `wirebench {}`)",
        m.command, study.command
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
    let fence = "`".repeat(3.max(longest_run(&m.plan, '`') + 1));
    writeln!(out, "{fence}toml\n{}\n{fence}", m.plan.trim_end())
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}
