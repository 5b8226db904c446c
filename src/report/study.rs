//! A study's report.md: its title, the sweep's tables (markdown, [`super::sweep::write`]) and
//! a methodology section saying when, how and on what it ran, so a reader can repeat it.

use crate::summary::sweep::Sweep;
use std::io::{self, Write};

/// How a study was run, for its methodology section.
pub struct Methodology {
    /// When it started, UTC.
    pub date: String,
    /// The command line.
    pub command: String,
    /// The plan file's path.
    pub file: String,
    /// The plan file's text, as it was.
    pub plan: String,
    /// The targets' servers and versions, where the plan names them: (target, text).
    pub servers: Vec<(String, String)>,
    /// wirebench's version.
    pub version: String,
    /// The kernel (`uname -srv`).
    pub kernel: String,
    /// The CPU model.
    pub cpu: String,
    /// Logical CPUs.
    pub cpus: usize,
}

/// Writes the whole report: `# title`, the tables, `## Methodology`.
pub fn write(title: &str, sweep: &Sweep, m: &Methodology, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# {title}\n")?;
    writeln!(out, "## Results\n")?;
    super::sweep::write(sweep, out)?;
    writeln!(out, "\n## Methodology\n")?;
    writeln!(out, "- Date: {}", m.date)?;
    writeln!(out, "- Command: `{}`", m.command)?;
    writeln!(out, "- wirebench: {}", m.version)?;
    writeln!(out, "- Kernel: {}", m.kernel)?;
    writeln!(out, "- CPU: {} ({} logical CPUs)", m.cpu, m.cpus)?;
    for (target, server) in &m.servers {
        writeln!(out, "- Target {target}: {server}")?;
    }
    writeln!(out, "\nThe plan file ({}):\n", m.file)?;
    // A fence longer than any run of backticks in the plan, so the plan cannot close it.
    let fence = "`".repeat(3.max(longest_run(&m.plan, '`') + 1));
    writeln!(out, "{fence}toml\n{}\n{fence}", m.plan.trim_end())?;
    out.flush()
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}
