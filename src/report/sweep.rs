//! A sweep's report, in the shape of the DIM study's tables (docs/studies.md): one table per
//! metric (ops/s, kB/s or MB/s, p50, p99, errors), one row per target, one column per value of
//! the first swept flag; a second swept flag makes one table per value of it, or, for one
//! target, the rows.

use crate::summary::sweep::{self, Metric, Sweep, METRICS};
use crate::units::format_us;
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::{self, Write};

/// Writes the tables of a sweep `wirebench run` measured.
pub fn write(sweep: &Sweep, out: &mut dyn Write) -> io::Result<()> {
    write_as(sweep, "run", out)
}

/// Writes the method line (naming `command`, the one the user typed: run, compare or study)
/// and every table of `sweep`: with `--runs`, the per-run tables too (and only those when
/// nothing is swept, where the sweep tables would repeat their means).
pub fn write_as(sweep: &Sweep, command: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}\n", method(sweep, command))?;
    if let Some(busy) = &sweep.busy {
        writeln!(out, "  {busy}\n")?;
    }
    let short: Vec<&sweep::Point> = (sweep.points.iter())
        .filter(|p| sweep::whole_seconds(&p.result) < 3)
        .collect();
    if sweep.runs == 1 && !short.is_empty() && short.len() == sweep.points.len() {
        writeln!(
            out,
            "  note: one run per point, too short (under 3 whole seconds) to show its own \
             spread: a figure that stands out may be noise; repeat the points (--runs 3) to \
             see run-to-run variance\n"
        )?;
    } else if sweep.runs == 1 && !short.is_empty() {
        // Only the short ones, named: beside 45 s runs the note read as theirs (issue 40).
        let named: Vec<String> = (short.iter().take(4))
            .map(|p| {
                let mut words = vec![p.target.clone()];
                words.extend(p.values.iter().map(|(flag, v)| format!("{flag} {v}")));
                format!("{} ({:.1} s)", words.join(" "), p.result.duration_s)
            })
            .collect();
        let more = match short.len() - named.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        writeln!(
            out,
            "  note: one run per point; {} of {} runs too short (under 3 whole seconds) to show \
             their own spread: {}{more}; a figure of theirs that stands out may be noise; repeat \
             the points (--runs 3) to see run-to-run variance\n",
            short.len(),
            sweep.points.len(),
            named.join(", ")
        )?;
    }
    if sweep.runs == 1 || !sweep.axes.is_empty() {
        let groups = groups(sweep);
        for metric in METRICS {
            for group in &groups {
                let Some((table, noisy)) = table(sweep, metric, group) else {
                    continue;
                };
                writeln!(out, "{}:\n", title(sweep, metric, group))?;
                writeln!(out, "{table}\n")?;
                if noisy {
                    writeln!(out, "{}\n", noisy_note(metric))?;
                }
            }
        }
    }
    if sweep.runs > 1 {
        super::repeat::write(sweep, out)?;
    }
    out.flush()
}

/// What was run and how: the command, targets, swept flags, runs, run order, warm-up.
fn method(sweep: &Sweep, command: &str) -> String {
    let first = sweep.points.first().map(|p| &p.result);
    let swept: Vec<String> = sweep
        .axes
        .iter()
        .map(|a| format!("{} ({} values)", a.flag, a.values.len()))
        .collect();
    let swept = match swept.is_empty() {
        true => "one point".to_string(),
        false => swept.join(" × "),
    };
    let each = workloads(sweep);
    let runs = match (sweep.runs, sweep.discard) {
        (1, _) => String::new(),
        (n, 0) => format!(" × {n} runs"),
        (n, 1) => format!(" × {n} runs (the first discarded)"),
        (n, k) => format!(" × {n} runs (the first {k} discarded)"),
    };
    // A `--warmup auto` that ended at its cap is each such run's note; the method line counts
    // them, so that a table of many runs does not hide one still warming.
    let unsettled = sweep
        .points
        .iter()
        .filter(|p| {
            let w = p.result.warmup.as_ref();
            w.and_then(|w| w.steady.as_ref())
                .is_some_and(|st| !st.steady)
        })
        .count();
    let warmup = match (first.and_then(|s| s.warmup.as_ref()), unsettled) {
        (Some(_), 0) => "each after its own warm-up".to_string(),
        (Some(_), n) => format!(
            "each after its own warm-up ({n} of {} never settled before its cap: their figures may still have been moving; lengthen it, --warmup auto:60s)",
            sweep.points.len()
        ),
        (None, _) => "no warm-up".to_string(),
    };
    let order = match sweep.seed {
        None => "interleaved across targets (A p1, B p1, A p2 …)".to_string(),
        Some(seed) => format!(
            "with the targets in a random order within each (seed {seed}; --seed {seed} repeats it)"
        ),
    };
    format!(
        "wirebench {command}: {} target(s) × {swept}{runs}{each}; {} runs in all, in rounds \
         {order} so that drift hits all alike, {warmup}.",
        sweep.targets.len(),
        sweep.points.len()
    )
}

/// `, tcp rr each`, or each target's own when they differ (`, tcp rr (a), tcp source (b)`):
/// a push target is not described by the first target's mode.
fn workloads(sweep: &Sweep) -> String {
    let of = |ti: usize| {
        sweep
            .points
            .iter()
            .find(|p| p.target == sweep.targets[ti].name)
            .map(|p| format!("{} {}", p.result.protocol, p.result.mode))
    };
    let each: Vec<Option<String>> = (0..sweep.targets.len()).map(of).collect();
    match each.first() {
        None | Some(None) => String::new(),
        Some(Some(w)) if each.iter().all(|e| e.as_deref() == Some(w.as_str())) => {
            format!(", {w} each")
        }
        _ => {
            let named = sweep.targets.iter().zip(&each);
            let named = named.filter_map(|(t, w)| Some(format!("{} ({})", w.as_ref()?, t.name)));
            format!(", {}", named.collect::<Vec<_>>().join(", "))
        }
    }
}

/// Whether the tables' rows are the second swept flag's values: one target swept over two
/// flags reads as one grid per metric (columns the first flag, rows the second), not as a
/// one-row table per value of the second (`-c 1,2,4 --size 64,1k,64k` printed 15 of them).
fn grid(sweep: &Sweep) -> bool {
    sweep.targets.len() == 1 && sweep.axes.len() >= 2
}

/// The axes from which on each value makes tables of its own: the second (rows are targets),
/// or the third in a [`grid`].
fn apart(sweep: &Sweep) -> usize {
    match grid(sweep) {
        true => 2,
        false => 1,
    }
}

/// The values of every axis that makes tables of its own, one entry per table of a metric.
fn groups(sweep: &Sweep) -> Vec<Vec<usize>> {
    let lens: Vec<usize> = (sweep.axes.iter().skip(apart(sweep)))
        .map(|a| a.values.len())
        .collect();
    crate::load::sweep::matrix(&lens)
}

/// The table's title: the metric, by the first swept flag (and the second, in a [`grid`]), at
/// the group's values.
fn title(sweep: &Sweep, metric: Metric, group: &[usize]) -> String {
    let mut what = what(sweep, metric, bytes_unit(sweep).1);
    let by = match (sweep.axes.first(), sweep.axes.get(1)) {
        (Some(a), Some(b)) if grid(sweep) => {
            what += &format!(" of {}", sweep.targets[0].name);
            format!(" by {} (columns) and {} (rows)", a.flag, b.flag)
        }
        (Some(a), _) => format!(" by {}", a.flag),
        (None, _) => String::new(),
    };
    let at = at(sweep, apart(sweep), group);
    match (at.is_empty(), sweep.runs) {
        (true, 1) => format!("{what}{by}"),
        (false, 1) => format!("{what}{by}, at {at}"),
        (true, _) => format!("{what}{by} (mean of the kept runs)"),
        (false, _) => format!("{what}{by}, at {at} (mean of the kept runs)"),
    }
}

/// `--connections 10, --rate 1000`: the values at `index` of the axes from `skip` on.
pub(crate) fn at(sweep: &Sweep, skip: usize, index: &[usize]) -> String {
    let at: Vec<String> = sweep
        .axes
        .iter()
        .skip(skip)
        .zip(index)
        .map(|(a, &i)| format!("{} {}", a.flag, a.values[i]))
        .collect();
    at.join(", ")
}

/// What a metric's table shows, in words; `bytes_unit` names the unit of payload throughput.
pub(crate) fn what(sweep: &Sweep, metric: Metric, bytes_unit: &str) -> String {
    let bulk = sweep.points.first().is_some_and(|p| p.result.mode.bulk());
    match metric {
        Metric::Rate if bulk => "Messages per second".to_string(),
        Metric::Rate => "Operations per second".to_string(),
        Metric::Bytes => format!("Payload throughput, {}, in {bytes_unit}", direction(sweep)),
        Metric::P50 => "Median latency (p50)".to_string(),
        Metric::P99 => "99th percentile latency (p99)".to_string(),
        Metric::Mean => "Mean latency".to_string(),
        Metric::P95 => "95th percentile latency (p95)".to_string(),
        Metric::Errors => "Errors".to_string(),
    }
}

/// kB/s (SI: 1 kB = 1000 B) for figures up to 100,000 kB/s, MB/s above: the divisor and the
/// unit.
pub(crate) fn bytes_scale(max_bytes_per_s: f64) -> (f64, &'static str) {
    match max_bytes_per_s > 1e8 {
        true => (1e6, "MB/s (1 MB = 10^6 B)"),
        false => (1e3, "kB/s (1 kB = 1000 B)"),
    }
}

/// The payload throughput unit of every table of the sweep (per-run tables too): the one
/// `--units` forced, else by its largest figure; chosen once for the whole set, so tables side
/// by side (one per value of a second swept flag, one per point) read in one unit.
pub(crate) fn bytes_unit(sweep: &Sweep) -> (f64, &'static str) {
    if let Some(u) = sweep.units {
        return u.scale();
    }
    let max = sweep
        .points
        .iter()
        .filter_map(|p| Metric::Bytes.of(&p.result))
        .fold(0.0, f64::max);
    bytes_scale(max)
}

/// Which way the payload throughput went: received (a push), sent (a stream), or both
/// directions added (request/response).
pub(crate) fn direction(sweep: &Sweep) -> &'static str {
    if sweep.one_way() {
        return "one direction (request/response: its requests)";
    }
    let t = sweep.points.iter().map(|p| &p.result.throughput);
    let (sent, received) = t.fold((0, 0), |(s, r), t| (s + t.sent_bytes, r + t.received_bytes));
    match (sent, received) {
        (0, r) if r > 0 => "received",
        (s, 0) if s > 0 => "sent",
        _ => "both directions added",
    }
}

/// The line under a table with a noisy cell (the HTML report's too).
pub fn noisy_note(metric: Metric) -> String {
    let bound = sweep::noisy_above(metric).unwrap_or_default() * 100.0;
    format!(
        "  * noisy: the run's per-second figures spread by more than {bound:.0}% (standard \
         deviation over mean), so one run cannot tell this point from noise; repeat the points \
         (--runs 3) to see run-to-run variance"
    )
}

/// One table: a row per target, a column per value of the first axis, and whether a cell is
/// marked noisy (one run only, [`sweep::noisy`]); None when no run has this metric (latency in
/// bulk modes).
fn table(sweep: &Sweep, metric: Metric, group: &[usize]) -> Option<(Table, bool)> {
    let columns: Vec<String> = match sweep.axes.first() {
        Some(a) => a.values.clone(),
        None => vec!["result".to_string()],
    };
    let scale = bytes_unit(sweep).0;
    let mut any = false;
    let mut noisy = false;
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec![String::new()];
    header.extend(columns.iter().cloned());
    t.set_header(header);
    // Each row: its label, its target, and the index of the axis after the columns' (a grid's
    // rows) or none (a row per target).
    let rows: Vec<(String, usize, Option<usize>)> = match (grid(sweep), sweep.axes.get(1)) {
        (true, Some(second)) => (second.values.iter().enumerate())
            .map(|(r, v)| (format!("{} {v}", second.flag), 0, Some(r)))
            .collect(),
        _ => (sweep.targets.iter().enumerate())
            .map(|(ti, t)| (t.name.clone(), ti, None))
            .collect(),
    };
    for (label, ti, r) in rows {
        let mut row = vec![label];
        for c in 0..columns.len() {
            let at: Vec<usize> = match (sweep.axes.is_empty(), r) {
                (true, _) => Vec::new(),
                (false, Some(r)) => [&[c, r][..], group].concat(),
                (false, None) => [&[c][..], group].concat(),
            };
            let v = sweep.mean(metric, ti, &at);
            any |= v.is_some();
            let runs = sweep.runs_of(ti, &at);
            let mark = match runs.as_slice() {
                [one] if sweep.runs == 1 && sweep::noisy(metric, &one.result) => " *",
                _ => "",
            };
            noisy |= !mark.is_empty();
            row.push(v.map_or("—".to_string(), |v| cell(metric, v, scale) + mark));
        }
        t.add_row(row);
    }
    any.then_some((t, noisy))
}

/// One figure as the table shows it.
pub(crate) fn cell(metric: Metric, v: f64, scale: f64) -> String {
    match metric {
        Metric::Rate | Metric::Errors => format!("{v:.0}"),
        Metric::Bytes => format!("{:.1}", v / scale),
        Metric::P50 | Metric::P99 | Metric::Mean | Metric::P95 => format_us(v),
    }
}
