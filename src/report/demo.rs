//! The demo's report: what it measures and how (the method line), then two markdown tables,
//! messages/s and kB/s (SI, one direction, named) by message size with one row per workload, and two sentences on where
//! throughput peaks and where the message rate falls.

use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};
use std::time::Duration;

/// The unit and direction of the throughput table: SI, as every rate wirebench prints, and one
/// direction (the DIM study's shape), named: an echoed request is counted once, not twice.
pub const THROUGHPUT: &str = "kB/s (1 kB = 1000 B), one direction: request/response the \
                              requests sent (each echoed back), server push the messages received";

/// One row of the study: a workload measured at every size.
#[derive(Debug, Clone)]
pub struct Row {
    /// What the row measured.
    pub label: &'static str,
    /// Messages per second, one per size (the median of the runs).
    pub messages_per_s: Vec<f64>,
    /// kB/s (SI: 1 kB = 1000 B, as every rate wirebench prints) in one direction, as in the
    /// DIM study: the requests sent (each echoed back) or the messages received; one per size
    /// (the median of the runs).
    pub kb_per_s: Vec<f64>,
    /// Per size, how far the run farthest from the median of messages/s lies from it, as a
    /// fraction of it; kB/s are the same runs' bytes, so this is their spread too.
    pub spread: Vec<f64>,
}

/// Writes what the demo measures and how, before it starts: `placement` says where its threads
/// run; each figure is the median of `repeats` runs of `per_size`, each after a `warmup`.
pub fn write_method(
    placement: &str,
    per_size: Duration,
    warmup: Duration,
    repeats: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "wirebench demo: messages/s and kB/s by message size over loopback, one connection, \
         against the reference server in-process\n"
    )?;
    writeln!(out, "{}\n", method(placement, per_size, warmup, repeats))
}

/// The line that states how the figures were taken.
pub fn method(placement: &str, per_size: Duration, warmup: Duration, repeats: usize) -> String {
    let us = |d: Duration| match d.subsec_micros() % 1000 {
        0 => format!("{} ms", d.as_millis()),
        _ => crate::units::format_us(d.as_secs_f64() * 1e6),
    };
    format!(
        "Method: {placement}. Each figure is the median of {repeats} runs of {} (after a {} \
         warm-up each), taken in {repeats} rounds over all sizes so that a disturbance does not \
         hit one size alone; ± is the run farthest from the median, in % of it.",
        us(per_size),
        us(warmup)
    )
}

/// Writes the two tables (one column per message size in `sizes`, in bytes) and the two lines
/// that say what they show.
pub fn write_study(sizes: &[usize], rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Messages per second for different message sizes (in bytes):\n"
    )?;
    writeln!(out, "{}\n", table(sizes, rows, |r| &r.messages_per_s, 0))?;
    writeln!(
        out,
        "Payload throughput in {THROUGHPUT} for different message sizes (in bytes):\n"
    )?;
    writeln!(out, "{}\n", table(sizes, rows, |r| &r.kb_per_s, 1))?;
    if rows
        .iter()
        .any(|r| r.messages_per_s.iter().any(|v| v.is_nan()))
    {
        return Ok(()); // a stopped demo: no finding from some of the sizes
    }
    for line in findings(sizes, rows) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One cell per size: the median, and beside it the spread of its runs.
fn table(
    sizes: &[usize],
    rows: &[Row],
    pick: impl Fn(&Row) -> &Vec<f64>,
    decimals: usize,
) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec![String::new()];
    header.extend(sizes.iter().map(|s| s.to_string()));
    t.set_header(header);
    for r in rows {
        let mut cells = vec![r.label.to_string()];
        cells.extend(
            pick(r)
                .iter()
                .zip(&r.spread)
                .map(|(v, s)| match v.is_nan() {
                    true => "—".to_string(), // not measured (a stopped demo)
                    false => format!("{v:.decimals$} ±{:.0}%", s * 100.0),
                }),
        );
        t.add_row(cells);
    }
    t
}

/// Two sentences: where throughput peaks, and where the message rate falls.
pub fn findings(sizes: &[usize], rows: &[Row]) -> Vec<String> {
    let peaks: Vec<String> = rows
        .iter()
        .map(|r| {
            let (i, kb) = argmax(&r.kb_per_s);
            format!(
                "{} peaks at {} B messages ({:.0} kB/s)",
                r.label, sizes[i], kb
            )
        })
        .collect();
    let falls: Vec<String> = rows.iter().map(|r| fall(sizes, r)).collect();
    vec![
        format!("Throughput: {}.", peaks.join("; ")),
        format!("Message rate: {}.", falls.join("; ")),
    ]
}

/// Where a row's message rate falls below half its rate at the smallest size, if it does.
fn fall(sizes: &[usize], r: &Row) -> String {
    let base = r.messages_per_s[0];
    let below: Vec<bool> = r.messages_per_s.iter().map(|&m| m < base / 2.0).collect();
    // A fall is where the rate stays below half for every larger size; an isolated low point
    // before it (a noisy measurement) is named as a dip, not as the fall.
    let from = (0..below.len()).find(|&i| below[i..].iter().all(|&b| b));
    let dips: Vec<String> = (0..from.unwrap_or(below.len()))
        .filter(|&i| below[i])
        .map(|i| format!("{} B", sizes[i]))
        .collect();
    let dip = |lead: &str| match dips.is_empty() {
        true => String::new(),
        false => format!(" ({lead} a dip at {})", dips.join(", ")),
    };
    match from {
        Some(i) => format!(
            "{} falls below half its {} B rate ({:.0}/s) from {} B on{}",
            r.label,
            sizes[0],
            base,
            sizes[i],
            dip("after")
        ),
        None => format!(
            "{} stays within half its {} B rate ({:.0}/s) up to {} B{}",
            r.label,
            sizes[0],
            base,
            sizes[sizes.len() - 1],
            dip("apart from")
        ),
    }
}

fn argmax(v: &[f64]) -> (usize, f64) {
    v.iter().copied().enumerate().fold(
        (0, f64::MIN),
        |best, (i, x)| if x > best.1 { (i, x) } else { best },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo's sizes.
    const SIZES: [usize; 10] = [4, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];

    #[test]
    fn findings_name_peak_and_fall() {
        let rows = [Row {
            label: "server push",
            messages_per_s: vec![
                26795.0, 26362.0, 26370.0, 25980.0, 24977.0, 22703.0, 19022.0, 11398.0, 6621.0,
                3226.0,
            ],
            kb_per_s: vec![
                104.7, 3295.0, 13185.0, 25980.0, 49954.0, 90812.0, 152176.0, 182368.0, 211872.0,
                206464.0,
            ],
            spread: vec![0.04; 10],
        }];
        let lines = findings(&SIZES, &rows);
        assert!(lines[0].contains("peaks at 32768 B"), "{}", lines[0]);
        assert!(lines[1].contains("from 16384 B on."), "{}", lines[1]);
        // One low point that recovers is a dip, not the fall.
        let mut dipped = rows[0].clone();
        dipped.messages_per_s[3] = 9000.0;
        let lines = findings(&SIZES, &[dipped]);
        assert!(
            lines[1].contains("from 16384 B on (after a dip at 1024 B)"),
            "{}",
            lines[1]
        );
        let mut flat = rows[0].clone();
        flat.messages_per_s = vec![1000.0; 10];
        flat.messages_per_s[3] = 100.0;
        let lines = findings(&SIZES, &[flat]);
        assert!(
            lines[1].contains("stays within half")
                && lines[1].contains("apart from a dip at 1024 B"),
            "{}",
            lines[1]
        );
        let mut out = Vec::new();
        write_study(&SIZES, &rows, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("| 65536 |") || text.contains("65536"),
            "{text}"
        );
        assert!(text.contains("| 26795 ±4%"), "{text}");
        assert!(text.contains("| 104.7 ±4%"), "{text}");
        // One rule for the whole tool (issue 15, item 9): SI kB, the direction named.
        assert!(
            text.contains("Payload throughput in kB/s (1 kB = 1000 B), one direction:"),
            "{text}"
        );
        assert!(text.contains("server push the messages received"), "{text}");
        assert!(text.contains("(211872 kB/s)"), "{text}");
        assert!(!text.contains("KB"), "{text}");
    }
}
