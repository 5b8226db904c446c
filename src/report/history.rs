//! The `wirebench history` table: one line per stored run, newest first.

use crate::store::Row;
use crate::units::format_us;
use std::io::{self, Write};

/// Writes `rows` as a table (or says there are none).
pub fn write(rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    if rows.is_empty() {
        return writeln!(
            out,
            "no stored runs match (every run, compare, peak and study is saved unless --no-save)"
        );
    }
    writeln!(
        out,
        "{:<8}  {:<19}  {:<7}  {:<11}  {:>12}  {:>10}  {:>7}  TARGET  TAGS",
        "ID", "STORED (UTC)", "KIND", "STATUS", "OPS/S", "P99", "ERRORS"
    )?;
    for r in rows {
        let stored = crate::sys::host::utc(r.stored_unix_ms.max(0) as u64 / 1000);
        let ops = r
            .headline
            .ops_per_s
            .map_or_else(|| "-".into(), |v| format!("{v:.0}"));
        let p99 = r.headline.p99_us.map_or_else(|| "-".into(), format_us);
        let errors = r
            .headline
            .errors
            .map_or_else(|| "-".into(), |e| e.to_string());
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(
            out,
            "{:<8}  {:<19}  {:<7}  {:<11}  {:>12}  {:>10}  {:>7}  {}  {}",
            crate::store::short(&r.id),
            stored.trim_end_matches(" UTC"),
            r.kind,
            r.status,
            ops,
            p99,
            errors,
            r.targets.join(" "),
            tags.join(" ")
        )?;
    }
    Ok(())
}
