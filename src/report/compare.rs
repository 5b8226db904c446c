//! A comparison's report: the verdicts (each target against the baseline, per metric, paired
//! by round, with the method named and any outlier round with the verdict without it), the
//! order the targets ran in, then the Flash study's table (docs/studies.md): throughput, median, mean
//! and p95 per target, flagged where the mean exceeds p95.

use crate::summary::compare::{Comparison, Shape};
use crate::units::format_us;
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// Writes the verdicts and the shape table.
pub fn write(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let seed = c.seed.map_or(String::new(), |s| format!(", seed {s}"));
    writeln!(
        out,
        "\nAgainst the baseline '{}' (method: {}{seed}):\n",
        c.baseline, c.method
    )?;
    let mut at = None;
    let mut named = std::collections::BTreeSet::new();
    for v in &c.verdicts {
        if !v.at.is_empty() && at != Some(&v.at) {
            writeln!(out, "At {}:", v.at)?;
            at = Some(&v.at);
        }
        writeln!(out, "  {}", v.text)?;
        if let Some(w) = &v.without_outliers {
            writeln!(out, "    ! {}", w.text)?;
        }
        // A dropped round is named once per target and point, under the first verdict it
        // left out of.
        for d in &v.dropped {
            if named.insert((v.target.clone(), v.at.clone(), d.run)) {
                writeln!(
                    out,
                    "    ! run {} dropped from {}'s verdicts: {}",
                    d.run, v.target, d.why
                )?;
            }
        }
    }
    if let Some(a) = &c.auto {
        writeln!(out, "\n{}", crate::summary::auto_runs::words(a))?;
    }
    write_order(c, out)?;
    writeln!(
        out,
        "\nThroughput and latency per target (means over the kept runs; * where the mean exceeds \
         p95: a few very slow requests dominate it):\n"
    )?;
    writeln!(out, "{}", shapes(&c.shapes))?;
    out.flush()
}

/// The order the targets ran in, a round per line (`run 1: b, a`), when it was drawn at
/// random, so that the comparison can be checked and repeated.
fn write_order(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let Some(seed) = c.seed else {
        return Ok(());
    };
    writeln!(
        out,
        "\nOrder within each round (random, seed {seed}; --seed {seed} repeats it):"
    )?;
    for r in &c.order {
        let at = match r.at.is_empty() {
            true => String::new(),
            false => format!(" at {}", r.at),
        };
        writeln!(out, "  run {}{at}: {}", r.run, r.targets.join(", "))?;
    }
    Ok(())
}

/// The Flash view: a row per target (and point).
fn shapes(shapes: &[Shape]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let sweep = shapes.iter().any(|s| !s.at.is_empty());
    let mut header: Vec<&str> = vec!["target"];
    if sweep {
        header.push("at");
    }
    header.extend(["ops/s", "median", "mean", "p95"]);
    t.set_header(header);
    let us = |v: Option<f64>| v.map_or("—".to_string(), format_us);
    for s in shapes {
        let mut row = vec![s.target.clone()];
        if sweep {
            row.push(s.at.clone());
        }
        let mean = match s.mean_above_p95 {
            true => format!("{} *", us(s.mean_us)),
            false => us(s.mean_us),
        };
        row.extend([
            format!("{:.0}", s.ops_per_s),
            us(s.p50_us),
            mean,
            us(s.p95_us),
        ]);
        t.add_row(row);
    }
    t
}
