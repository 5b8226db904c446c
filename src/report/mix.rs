//! The terminal's table of a mix (`--mix`): one row per kind, its share asked (weight) and got,
//! counts, errors, rate and latency, and a row of totals.

use super::format::rate;
use super::table::{new_table, print_table};
use crate::summary::Summary;
use crate::units::{format_us, thousands};
use std::io::{self, Write};

/// Writes the mix's table; nothing without a mix.
pub fn write(s: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    let Some(kinds) = &s.mix else {
        return Ok(());
    };
    let head = [
        "kind", "weight", "share", "ok", "errors", "ops/s", "mean", "p50", "p95", "p99", "max",
    ];
    let mut table = new_table(&head, width);
    let us = |v: Option<f64>| v.map_or("-".to_string(), format_us);
    for k in kinds {
        let d = k.latency.as_ref();
        table.add_row(vec![
            k.name.clone(),
            format!("{:.1}%", k.weight_percent),
            format!("{:.1}%", k.share_percent),
            thousands(k.ok),
            thousands(k.errors.total),
            format!("{}/s", rate(k.ops_per_s)),
            us(d.map(|d| d.mean_us)),
            us(d.map(|d| d.p50_us)),
            us(d.map(|d| d.p95_us)),
            us(d.map(|d| d.p99_us)),
            us(d.map(|d| d.max_us)),
        ]);
    }
    let d = s.latency.as_ref();
    table.add_row(vec![
        "all".to_string(),
        "100%".to_string(),
        "100%".to_string(),
        thousands(s.ok),
        thousands(s.errors.total),
        format!("{}/s", rate(s.throughput.ops_per_s)),
        us(d.map(|d| d.mean_us)),
        us(d.map(|d| d.p50_us)),
        us(d.map(|d| d.p95_us)),
        us(d.map(|d| d.p99_us)),
        us(d.map(|d| d.max_us)),
    ]);
    writeln!(out)?;
    print_table(out, &mut table, 1..)
}
