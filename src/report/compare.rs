//! A comparison's report: the verdicts (each target against the baseline, per metric, with the
//! method named), then the Flash study's table (../shared/seeds/002): throughput, median, mean
//! and p95 per target, flagged where the mean exceeds p95.

use crate::summary::compare::{Comparison, Shape};
use crate::units::format_us;
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// Writes the verdicts and the shape table.
pub fn write(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nAgainst the baseline '{}' (method: {}; ± is the 95% CI of the ratio of the means, over \
         the kept runs, by the delta method: both means' uncertainty counted):\n",
        c.baseline, c.method
    )?;
    let mut at = None;
    for v in &c.verdicts {
        if !v.at.is_empty() && at != Some(&v.at) {
            writeln!(out, "At {}:", v.at)?;
            at = Some(&v.at);
        }
        writeln!(out, "  {}", v.text)?;
    }
    writeln!(
        out,
        "\nThroughput and latency per target (means over the kept runs; * where the mean exceeds \
         p95: a few very slow requests dominate it):\n"
    )?;
    writeln!(out, "{}", shapes(&c.shapes))?;
    out.flush()
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
