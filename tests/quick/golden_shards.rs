//! Golden file of a merged result's terminal report (issue 19): the report of one generator
//! plus the per-rank table — rank, host, share, ops/s, p50, p99, errors, start skew, and the
//! late mark — compared byte for byte with `tests/golden/shards.txt`.
//!
//! After an intended change: `UPDATE_GOLDEN=1 cargo test --profile ci --test quick golden_shards::`.

use super::golden_common;

use golden_common::*;
use wirebench::summary::shard::{ShardRow, Shards, Share};
use wirebench::summary::Summary;

/// A rank's row: its host, share (connections, and a rate), figures and skew.
fn rank(rank: u64, host: &str, connections: u64, ok: u64, p99_us: f64, skew_ms: f64) -> ShardRow {
    ShardRow {
        rank,
        host: host.into(),
        share: Share {
            connections,
            rate: Some(10_000.0 / 3.0),
            requests: None,
            warmup_requests: None,
        },
        started_unix_ms: 1_700_000_000_000 + skew_ms as u64,
        ok,
        errors: rank,
        ops_per_s: ok as f64 / 2.5,
        p50_us: Some(40.0 + rank as f64),
        p99_us: Some(p99_us),
        skew_ms: Some(skew_ms),
        late: skew_ms > 10.0,
    }
}

/// `--mode rr` over TCP from three shards, the last started 14.2 ms late.
fn merged() -> Summary {
    let (total, series) = seconds(|second, length, rec| {
        exchanges(rec, second, length, 40_000, 64);
    });
    let mut s = tcp_rr_summary(&total, series);
    s.shards = Some(Shards {
        world: 3,
        plan_hash: "0123456789abcdef".into(),
        start_spread_ms: 14.0,
        late: vec![2],
        ranks: vec![
            rank(0, "node-a", 4, 34_000, 81.5, 0.4),
            rank(1, "node-b", 3, 33_000, 92.0, 1.3),
            rank(2, "node-c", 3, 33_000, 1_250.0, 14.2),
        ],
    });
    finish(s)
}

#[test]
fn a_merged_result_lists_every_rank() {
    let mut out = Vec::new();
    wirebench::report::table::write_width(&merged(), &mut out, None).unwrap();
    let text = String::from_utf8(out).unwrap();
    let caption =
        "merged from 3 shards (plan 0123456789abcdef): starts 14.0 ms apart, late: rank 2";
    assert!(text.contains(caption), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("node-")).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(
        rows[2].contains("14.2 ms") && rows[2].contains("LATE"),
        "{}",
        rows[2]
    );
    assert!(!rows[0].contains("LATE"), "{}", rows[0]);
    assert!(rows[0].contains("4 conn, 3,333.3/s"), "{}", rows[0]);
    check_goldens([("shards", text)]);
}
