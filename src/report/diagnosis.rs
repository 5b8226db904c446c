//! A diagnosis on the terminal (the baseline, the variants run, then each finding with its
//! evidence, confidence and fix, most important first) or as its `wirebench.diagnosis/1` JSON
//! document (schema/diagnosis.v1.json).

use crate::summary::diagnosis::{Confidence, Diagnosis, Figures};
use crate::units::format_us;
use std::io::{self, Write};

/// Writes the diagnosis as JSON.
pub fn write_json(d: &Diagnosis, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, d)?;
    writeln!(out)?;
    out.flush()
}

/// One run's figures on a line.
fn figures(f: &Figures) -> String {
    let mut line = format!(
        "{} ops/s",
        crate::units::thousands(f.ops_per_s.round() as u64)
    );
    if f.mb_per_s >= 0.01 {
        line += &format!(", {:.1} MB/s", f.mb_per_s);
    }
    if let (Some(p50), Some(p99), Some(mean)) = (f.p50_us, f.p99_us, f.mean_us) {
        line += &format!(
            ", p50 {}, p99 {}, mean {}",
            format_us(p50),
            format_us(p99),
            format_us(mean)
        );
    }
    if f.errors > 0 {
        line += &format!(", {} errors", f.errors);
    }
    line
}

/// Writes the diagnosis for a reader.
pub fn write(d: &Diagnosis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "wirebench diagnose → {} ({} {}, {:.1} s per step)\n",
        d.target, d.protocol, d.mode, d.step_s
    )?;
    writeln!(out, "  baseline: {}", figures(&d.baseline))?;
    let width = d.variants.iter().map(|v| v.flags.len()).max().unwrap_or(0);
    for v in &d.variants {
        writeln!(out, "  with {:width$}  {}", v.flags, figures(&v.figures))?;
    }
    writeln!(out)?;
    if d.findings.is_empty() {
        writeln!(out, "  no findings: none of the causes diagnose looks for (Nagle and delayed ACK, socket buffers, a saturated generator, port exhaustion, a heavy tail, stalls) shows.")?;
        return out.flush();
    }
    writeln!(out, "  findings, most important first:")?;
    for (i, f) in d.findings.iter().enumerate() {
        let conf = match f.confidence {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        };
        writeln!(
            out,
            "\n  {}. {} [{conf} confidence; {} side]",
            i + 1,
            f.title,
            f.side
        )?;
        for e in &f.evidence {
            writeln!(out, "     - {e}")?;
        }
        writeln!(out, "     fix: {}", f.fix)?;
    }
    out.flush()
}
