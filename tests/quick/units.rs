//! One rule for byte rates (issue 15, item 9): SI units, the direction named, one unit for a
//! study's whole set of tables, and `--units kB|MB|GB` to force one (the DIM study's kB/s).

use super::common;

use common::run_bounded;
use std::net::TcpListener;
use std::time::Duration;
use wirebench::serve::tcp::{self, TcpServerOptions};

const LIMIT: Duration = Duration::from_secs(60);

/// An echo server on loopback and its URL.
fn echo() -> (tcp::ServerHandle, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let srv = tcp::spawn(listener, TcpServerOptions::default()).unwrap();
    let url = format!("tcp://{}", srv.addr);
    (srv, url)
}

/// `wirebench ARGS`' stdout, which must exit 0.
fn report(args: &[&str]) -> String {
    common::stdout_ok(args, LIMIT)
}

/// The titles of the payload throughput tables.
fn throughput_titles(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("Payload throughput"))
        .collect()
}

#[test]
fn units_kb_makes_every_sweep_table_kb() {
    let (_srv, url) = echo();
    let text = report(&[
        "run",
        &url,
        "--size",
        "64,1k",
        "-c",
        "1,10",
        "-d",
        "150ms",
        "-q",
        "--no-save",
        "--units",
        "kB",
    ]);
    let titles = throughput_titles(&text);
    // One target over two flags: one grid, -c its rows.
    assert_eq!(titles.len(), 1, "{text}");
    for t in &titles {
        assert!(t.contains("(columns) and --connections (rows)"), "{t}");
        assert!(t.contains(" in kB/s (1 kB = 1000 B)"), "{t}\n{text}");
        assert!(t.contains("both directions added"), "{t}");
    }
    assert!(!text.contains("MB/s"), "{text}");
}

#[test]
fn units_gb_is_forced_even_on_small_figures() {
    let (_srv, url) = echo();
    let text = report(&[
        "run",
        &url,
        "--size",
        "16,64",
        "-d",
        "100ms",
        "-q",
        "--no-save",
        "--units",
        "GB",
    ]);
    let titles = throughput_titles(&text);
    assert_eq!(titles.len(), 1, "{text}");
    assert!(titles[0].contains(" in GB/s (1 GB = 10^9 B)"), "{text}");
}

#[test]
fn per_run_tables_share_one_unit() {
    let (_srv, url) = echo();
    // 4 B and 64 KiB messages: figures decades apart, which gave each point its own unit.
    let text = report(&[
        "run",
        &url,
        "--size",
        "4,64k",
        "-d",
        "200ms",
        "--runs",
        "2",
        "-q",
        "--no-save",
    ]);
    let titles: Vec<&str> = throughput_titles(&text)
        .into_iter()
        .filter(|l| l.contains("per run"))
        .collect();
    assert_eq!(titles.len(), 2, "{text}");
    let unit = |t: &str| {
        t.split(" in ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(unit(titles[0]), unit(titles[1]), "{text}");
    let all: Vec<String> = throughput_titles(&text).into_iter().map(unit).collect();
    assert!(all.iter().all(|u| *u == all[0]), "{text}");
}

#[test]
fn a_bad_units_value_is_one_line_and_exit_2() {
    let (out, _) = run_bounded(
        &["run", "tcp://127.0.0.1:9", "--units", "KiB", "-d", "100ms"],
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--units") && err.contains("kB"), "{err}");
}
