//! The built-in study, shaped like the DIM publish/subscribe measurements (seed 004): messages/s
//! and KB/s by message size, for request/response and for server push, on loopback against the
//! reference server started in-process. One row per workload, one column per size.

use crate::cli::{ClientMode, DemoArgs, ServerMode};
use crate::engine;
use crate::load::LoadModel;
use crate::plan::{
    duration_flag, Plan, Protocol, Reply, Request, SocketOptions, Stop, Target, Warmup, Workload,
};
use crate::report::progress::Progress;
use crate::serve::tcp::{spawn, ServerHandle, TcpServerOptions};
use crate::summary::Summary;
use comfy_table::{presets::ASCII_MARKDOWN, Table};
use std::io::Write;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

/// The message sizes of the DIM study, in bytes.
pub const SIZES: [usize; 10] = [4, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];

/// One row of the study: a workload measured at every size.
#[derive(Debug, Clone)]
pub struct Row {
    /// What the row measured.
    pub label: &'static str,
    /// Messages per second, one per size.
    pub messages_per_s: Vec<f64>,
    /// KB/s (1 KB = 1024 bytes, as in the DIM study), one per size.
    pub kb_per_s: Vec<f64>,
}

/// `wirebench demo`.
pub fn main(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let per_size = duration_flag("--time-per-size", &args.time_per_size)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "wirebench demo: messages/s and KB/s by message size over loopback, one connection, \
         against the reference server in-process ({} per size)\n",
        crate::units::format_us(per_size.as_secs_f64() * 1e6)
    )?;
    out.flush()?;
    let rows = [
        measure_row(
            "request/response",
            ClientMode::Rr,
            ServerMode::Echo,
            per_size,
        )?,
        measure_row(
            "server push",
            ClientMode::Source,
            ServerMode::Source,
            per_size,
        )?,
    ];
    write_study(&rows, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Measures one workload at every size against a fresh in-process server.
fn measure_row(
    label: &'static str,
    client: ClientMode,
    server: ServerMode,
    per_size: Duration,
) -> anyhow::Result<Row> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let handle: ServerHandle = spawn(
        listener,
        TcpServerOptions {
            mode: server,
            ..TcpServerOptions::default()
        },
    )?;
    let mut row = Row {
        label,
        messages_per_s: Vec::new(),
        kb_per_s: Vec::new(),
    };
    for size in SIZES {
        let s = measure(&handle, client, size, per_size)?;
        anyhow::ensure!(
            s.errors.total == 0,
            "{label} at {size} B saw {} errors: {:?}",
            s.errors.total,
            s.errors.by_kind.first().map(|e| &e.sample)
        );
        let bytes = s.throughput.sent_bytes.max(s.throughput.received_bytes) as f64;
        row.messages_per_s.push(s.throughput.messages_per_s);
        row.kb_per_s.push(bytes / s.duration_s.max(1e-9) / 1024.0);
    }
    handle.stop();
    Ok(row)
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
        warmup: Some(Warmup::Duration(per_size / 6)),
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

fn table(rows: &[Row], pick: impl Fn(&Row) -> &Vec<f64>, decimals: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN);
    let mut header = vec![String::new()];
    header.extend(SIZES.iter().map(|s| s.to_string()));
    t.set_header(header);
    for r in rows {
        let mut cells = vec![r.label.to_string()];
        cells.extend(pick(r).iter().map(|v| format!("{v:.decimals$}")));
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
    }
}
