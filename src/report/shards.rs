//! The per-rank table of a merged document (issue 19): one row per shard — its rank, host,
//! share of the totals, ops/s, p50, p99, errors, start skew, and a mark when it started
//! later than `--max-skew` — so a reader sees which machine held the load back. The rows are
//! made once here, for the terminal and for the HTML report ([`super::html::shards`]).

use super::format::rate;
use super::table::{new_table, print_table, INDENT};
use crate::summary::shard::{Shards, Share};
use crate::summary::Summary;
use crate::units::{format_us, thousands};
use std::io::{self, Write};

/// The table's columns.
pub const HEAD: [&str; 9] = [
    "rank",
    "host",
    "share",
    "ops/s",
    "p50",
    "p99",
    "errors",
    "start skew",
    "late",
];

/// A share in words: `4 conn, 500/s, 1,000 req`.
fn share(s: &Share) -> String {
    let mut parts = vec![format!("{} conn", thousands(s.connections))];
    if let Some(r) = s.rate {
        parts.push(format!("{}/s", rate(r)));
    }
    if let Some(n) = s.requests {
        parts.push(format!("{} req", thousands(n)));
    }
    parts.join(", ")
}

/// One row of text per rank, in rank order, as [`HEAD`] names the columns.
pub fn rows(shards: &Shards) -> Vec<Vec<String>> {
    let us = |v: Option<f64>| v.map_or("-".to_string(), format_us);
    shards
        .ranks
        .iter()
        .map(|r| {
            vec![
                r.rank.to_string(),
                r.host.clone(),
                share(&r.share),
                format!("{}/s", rate(r.ops_per_s)),
                us(r.p50_us),
                us(r.p99_us),
                thousands(r.errors),
                r.skew_ms.map_or("-".to_string(), |s| format!("{s:.1} ms")),
                if r.late { "LATE" } else { "" }.to_string(),
            ]
        })
        .collect()
}

/// The line above the table: how many shards, how far apart they began, which were late.
pub fn caption(shards: &Shards) -> String {
    let late = match shards.late.len() {
        0 => "none late".to_string(),
        _ => {
            let ranks: Vec<String> = shards.late.iter().map(u64::to_string).collect();
            format!("late: rank {}", ranks.join(", "))
        }
    };
    format!(
        "merged from {} shards (plan {}): starts {:.1} ms apart, {late}",
        shards.world, shards.plan_hash, shards.start_spread_ms
    )
}

/// Writes the per-rank table of a merged result; nothing for one generator's result.
pub fn write(s: &Summary, out: &mut dyn Write, width: Option<u16>) -> io::Result<()> {
    let Some(shards) = &s.shards else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(out, "{INDENT}{}:", caption(shards))?;
    let mut table = new_table(&HEAD, width);
    for row in rows(shards) {
        table.add_row(row);
    }
    print_table(out, &mut table, 3..8)
}
