//! `wirebench demo`: the built-in study states its method (pinning, repeats, median) and prints
//! the spread of the runs beside every figure.

use super::common;

use common::run_bounded;
use std::time::Duration;

/// The cells of the table rows labelled `label`, in order (both tables).
fn cells<'a>(text: &'a str, label: &str) -> Vec<Vec<&'a str>> {
    text.lines()
        .filter(|l| l.starts_with(&format!("| {label} ")))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .skip(1)
                .collect()
        })
        .collect()
}

/// `12345 ±7%` or `104.7 ±12%`: a figure and its spread.
fn figure_with_spread(cell: &str) -> bool {
    let Some((figure, spread)) = cell.split_once(" ±") else {
        return false;
    };
    let number = figure.parse::<f64>().is_ok_and(|v| v > 0.0);
    let percent = spread
        .strip_suffix('%')
        .is_some_and(|p| p.parse::<u32>().is_ok());
    number && percent
}

#[test]
fn the_demo_states_its_method_and_the_spread_of_each_figure() {
    let (out, took) = run_bounded(
        &["demo", "--time-per-size", "40ms"],
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    let method = text
        .lines()
        .find(|l| l.starts_with("Method: "))
        .unwrap_or_else(|| panic!("no method line in {text}"));
    for want in [
        "pinned together to CPU",
        "sched_setaffinity",
        "median of 3 runs of 40 ms",
        "± is the run farthest from the median",
    ] {
        assert!(method.contains(want), "missing {want:?} in {method}");
    }
    for want in ["| 4 ", "| 65536 ", "Throughput:", "Message rate:"] {
        assert!(text.contains(want), "missing {want:?} in {text}");
    }
    // Issue 15, item 9: SI kB as every rate of the tool, the direction named (was KB = 1024 B).
    assert!(
        text.contains("Payload throughput in kB/s (1 kB = 1000 B), one direction:"),
        "{text}"
    );
    assert!(!text.contains("KB"), "{text}");
    for label in ["request/response", "server push"] {
        let rows = cells(&text, label);
        assert_eq!(rows.len(), 2, "{label}: a row in each table: {text}");
        for row in rows {
            assert_eq!(row.len(), 10, "{label}: a cell per size: {row:?}");
            assert!(
                row.iter().all(|c| figure_with_spread(c)),
                "{label}: a figure and its spread in every cell: {row:?}"
            );
        }
    }
}
