//! The built-in study, shaped like the DIM publish/subscribe measurements (seed 004): messages/s
//! and KB/s by message size, for request/response and for server push, on loopback against the
//! reference server started in-process. One row per workload, one column per size.

use crate::cli::{ClientMode, DemoArgs};
use crate::engine;
use crate::load::LoadModel;
use crate::plan::{duration_flag, Plan, Protocol, Reply, Request, Stop, Target, Warmup, Workload};
use crate::report::progress::Progress;
use crate::serve::tcp::{spawn, ServerHandle, TcpServerOptions};
use crate::serve::Mode as ServerMode;
use crate::summary::Summary;
use crate::sys::socket::SocketOptions;
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::Write;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

mod pin;

/// The message sizes of the DIM study, in bytes.
pub const SIZES: [usize; 10] = [4, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];

/// Runs at each point; the figure printed is their median.
pub const REPEATS: usize = 3;

/// One row of the study: a workload measured at every size.
#[derive(Debug, Clone)]
pub struct Row {
    /// What the row measured.
    pub label: &'static str,
    /// Messages per second, one per size (the median of the runs).
    pub messages_per_s: Vec<f64>,
    /// KB/s (1 KB = 1024 bytes, as in the DIM study), one per size (the median of the runs).
    pub kb_per_s: Vec<f64>,
    /// Per size, how far the run farthest from the median of messages/s lies from it, as a
    /// fraction of it; KB/s are the same runs' bytes, so this is their spread too.
    pub spread: Vec<f64>,
}

/// The two workloads of the study: label, client mode, server mode.
const WORKLOADS: [(&str, ClientMode, ServerMode); 2] = [
    ("request/response", ClientMode::Rr, ServerMode::Echo),
    ("server push", ClientMode::Source, ServerMode::Source),
];

/// `wirebench demo`.
pub fn main(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let per_size = duration_flag("--time-per-size", &args.time_per_size)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wirebench demo: messages/s and KB/s by message size over loopback, one connection, \
         against the reference server in-process\n"
    )?;
    let placement = pin::Placement::choose();
    writeln!(out, "{}\n", method(&placement.describe(), per_size))?;
    out.flush()?;
    let rows = study(&placement, per_size)?;
    write_study(&rows, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// The line that states how the figures were taken.
pub fn method(placement: &str, per_size: Duration) -> String {
    let us = |d: Duration| match d.subsec_micros() % 1000 {
        0 => format!("{} ms", d.as_millis()),
        _ => crate::units::format_us(d.as_secs_f64() * 1e6),
    };
    format!(
        "Method: {placement}. Each figure is the median of {REPEATS} runs of {} (after a {} \
         warm-up each), taken in {REPEATS} rounds over all sizes so that a disturbance does not \
         hit one size alone; ± is the run farthest from the median, in % of it.",
        us(per_size),
        us(warmup(per_size))
    )
}

fn warmup(per_size: Duration) -> Duration {
    per_size / 6
}

/// Measures both workloads at every size, [`REPEATS`] rounds, against in-process servers, the
/// threads of both placed as `placement` says (and put back after).
fn study(placement: &pin::Placement, per_size: Duration) -> anyhow::Result<Vec<Row>> {
    let _restore = pin::Restore::current()?;
    let mut servers = Vec::new();
    placement.apply()?;
    for (_, _, mode) in WORKLOADS {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let options = TcpServerOptions {
            mode,
            ..TcpServerOptions::default()
        };
        servers.push(spawn(listener, options)?);
    }
    // runs[workload][size]: (messages/s, KB/s) of each round.
    let mut runs = vec![vec![Vec::new(); SIZES.len()]; WORKLOADS.len()];
    for _ in 0..REPEATS {
        for (w, (label, client, _)) in WORKLOADS.iter().enumerate() {
            for (i, &size) in SIZES.iter().enumerate() {
                let s = measure(&servers[w], *client, size, per_size)?;
                anyhow::ensure!(
                    s.errors.total == 0,
                    "{label} at {size} B saw {} errors: {:?}",
                    s.errors.total,
                    s.errors.by_kind.first().map(|e| &e.sample)
                );
                let bytes = s.throughput.sent_bytes.max(s.throughput.received_bytes) as f64;
                let kb = bytes / s.duration_s.max(1e-9) / 1024.0;
                runs[w][i].push((s.throughput.messages_per_s, kb));
            }
        }
    }
    for server in servers {
        let _ = server.stop();
    }
    Ok(WORKLOADS
        .iter()
        .zip(runs)
        .map(|((label, _, _), runs)| row(label, &runs))
        .collect())
}

/// A row from each size's runs: medians and the spread of messages/s.
fn row(label: &'static str, runs: &[Vec<(f64, f64)>]) -> Row {
    let mut r = Row {
        label,
        messages_per_s: Vec::new(),
        kb_per_s: Vec::new(),
        spread: Vec::new(),
    };
    for size_runs in runs {
        let (m, spread) = median_spread(size_runs.iter().map(|x| x.0).collect());
        r.messages_per_s.push(m);
        r.spread.push(spread);
        r.kb_per_s
            .push(median_spread(size_runs.iter().map(|x| x.1).collect()).0);
    }
    r
}

/// The median of `v` (the mean of the middle two for an even count), and the largest distance
/// of a value from it as a fraction of it.
pub fn median_spread(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = (v[(n - 1) / 2] + v[n / 2]) / 2.0;
    let far = (v[n - 1] - median).max(median - v[0]);
    (median, if median > 0.0 { far / median } else { 0.0 })
}

fn measure(
    handle: &ServerHandle,
    mode: ClientMode,
    size: usize,
    per_size: Duration,
) -> anyhow::Result<Summary> {
    let plan = Plan {
        target: Target {
            protocol: Protocol::Tcp,
            url: format!("tcp://{}", handle.addr),
            addr: handle.addr,
            host: handle.addr.to_string(),
            path: "/".into(),
            tls: false,
        },
        workload: Workload {
            mode,
            request: Request::Sized {
                size,
                preamble: true,
            },
            reply: Reply::Size(size),
            http: None,
        },
        load: LoadModel::Closed {
            pipeline: 1,
            think: None,
        },
        connections: 1,
        threads: 1,
        stop: Stop {
            duration: Some(per_size),
            requests: None,
        },
        warmup: Some(Warmup::Duration(warmup(per_size))),
        timeout: Duration::from_secs(2),
        socket: SocketOptions {
            nodelay: true,
            ..SocketOptions::default()
        },
        schedule_text: None,
        tls: None,
    };
    engine::execute(&plan, Progress::new(false))
}

/// Writes the two tables and the two lines that say what they show.
pub fn write_study(rows: &[Row], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "Messages per second for different message sizes (in bytes):\n"
    )?;
    writeln!(out, "{}\n", table(rows, |r| &r.messages_per_s, 0))?;
    writeln!(
        out,
        "Throughput in KB/s (1 KB = 1024 B) for different message sizes (in bytes):\n"
    )?;
    writeln!(out, "{}\n", table(rows, |r| &r.kb_per_s, 1))?;
    for line in findings(rows) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One cell per size: the median, and beside it the spread of its runs.
fn table(rows: &[Row], pick: impl Fn(&Row) -> &Vec<f64>, decimals: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec![String::new()];
    header.extend(SIZES.iter().map(|s| s.to_string()));
    t.set_header(header);
    for r in rows {
        let mut cells = vec![r.label.to_string()];
        cells.extend(
            pick(r)
                .iter()
                .zip(&r.spread)
                .map(|(v, s)| format!("{v:.decimals$} ±{:.0}%", s * 100.0)),
        );
        t.add_row(cells);
    }
    t
}

/// Two sentences: where throughput peaks, and where the message rate falls.
pub fn findings(rows: &[Row]) -> Vec<String> {
    let peaks: Vec<String> = rows
        .iter()
        .map(|r| {
            let (i, kb) = argmax(&r.kb_per_s);
            format!(
                "{} peaks at {} B messages ({:.0} KB/s)",
                r.label, SIZES[i], kb
            )
        })
        .collect();
    let falls: Vec<String> = rows
        .iter()
        .map(|r| {
            let base = r.messages_per_s[0];
            let below: Vec<bool> = r.messages_per_s.iter().map(|&m| m < base / 2.0).collect();
            // A fall is where the rate stays below half for every larger size; an isolated
            // low point before it (a noisy measurement) is named as a dip, not as the fall.
            let from = (0..below.len()).find(|&i| below[i..].iter().all(|&b| b));
            let dips: Vec<String> = (0..from.unwrap_or(below.len()))
                .filter(|&i| below[i])
                .map(|i| format!("{} B", SIZES[i]))
                .collect();
            let dip = |lead: &str| match dips.is_empty() {
                true => String::new(),
                false => format!(" ({lead} a dip at {})", dips.join(", ")),
            };
            match from {
                Some(i) => format!(
                    "{} falls below half its {} B rate ({:.0}/s) from {} B on{}",
                    r.label,
                    SIZES[0],
                    base,
                    SIZES[i],
                    dip("after")
                ),
                None => format!(
                    "{} stays within half its {} B rate ({:.0}/s) up to {} B{}",
                    r.label,
                    SIZES[0],
                    base,
                    SIZES[SIZES.len() - 1],
                    dip("apart from")
                ),
            }
        })
        .collect();
    vec![
        format!("Throughput: {}.", peaks.join("; ")),
        format!("Message rate: {}.", falls.join("; ")),
    ]
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
        let lines = findings(&rows);
        assert!(lines[0].contains("peaks at 32768 B"), "{}", lines[0]);
        assert!(lines[1].contains("from 16384 B on."), "{}", lines[1]);
        // One low point that recovers is a dip, not the fall.
        let mut dipped = rows[0].clone();
        dipped.messages_per_s[3] = 9000.0;
        let lines = findings(&[dipped]);
        assert!(
            lines[1].contains("from 16384 B on (after a dip at 1024 B)"),
            "{}",
            lines[1]
        );
        let mut flat = rows[0].clone();
        flat.messages_per_s = vec![1000.0; 10];
        flat.messages_per_s[3] = 100.0;
        let lines = findings(&[flat]);
        assert!(
            lines[1].contains("stays within half")
                && lines[1].contains("apart from a dip at 1024 B"),
            "{}",
            lines[1]
        );
        let mut out = Vec::new();
        write_study(&rows, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("| 65536 |") || text.contains("65536"),
            "{text}"
        );
        assert!(text.contains("| 26795 ±4%"), "{text}");
        assert!(text.contains("| 104.7 ±4%"), "{text}");
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median_spread(vec![3850.0, 6794.0, 5000.0]).0, 5000.0);
        let (m, s) = median_spread(vec![110.0, 100.0, 80.0]);
        assert_eq!((m, s), (100.0, 0.2));
        assert_eq!(median_spread(vec![4.0, 2.0]), (3.0, 1.0 / 3.0));
        assert_eq!(median_spread(vec![7.0]), (7.0, 0.0));
        assert_eq!(median_spread(vec![0.0, 0.0, 0.0]), (0.0, 0.0));
    }
}
