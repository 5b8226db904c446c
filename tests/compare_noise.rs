//! `wirebench compare` on a noisy machine (issue 17): two `serve tcp --delay` servers pinned to
//! one CPU beside a CPU hog (tests/common/noise.rs), the client on the other CPU.
//! - identical servers (1 ms each): every significant verdict is a false positive;
//! - a 20 % longer service time (1 ms against 1.2 ms): a verdict that misses it on the median
//!   or the mean is a miss.
//!
//! In CI a few comparisons each, with generous bounds; `WIREBENCH_NOISE=full` runs 40 and 10
//! and holds the figures (false positives ≤ 5 %, detection ≥ 9 of 10), which
//! bench/noise_verdicts.sh records.

mod common;

use common::noise::{self, Hog};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(240);

/// The metrics every comparison judges.
const METRICS: [&str; 5] = ["ops_per_s", "mean_us", "p50_us", "p95_us", "p99_us"];

/// What [`tally`] counts per metric, the comparisons whose mean rose, and (last) those whose
/// verdicts a busy machine withheld (its runs met the targets unevenly: nothing claimed).
type Hits = [usize; 7];

/// One comparison of `serve tcp --delay A` with `serve tcp --delay B`, both beside the hog,
/// in rounds of 1 s runs: its JSON document. A run's mean moves by ±10-15 % with the stalls
/// the hog causes (those of 300 ms runs by more), so the mean needs rounds: five told +20 %
/// from that in 5 of 10 comparisons, ten in 6 of 10, twenty (what `--runs auto` spends here)
/// in 10 of 10 (bench/results/noise_verdicts.md). CI runs 10 rounds (the fewest from which a
/// tail is judged, so every metric still gets its verdict) of 500 ms runs (time: 52 s for the
/// file instead of 101 s; the p50's interval stayed within ±1.5 % and no verdict of identical
/// servers was significant, and CI asks of the mean only its direction); the full count 20
/// rounds of 1 s.
fn compare(a: &str, b: &str, seed: usize) -> Value {
    let (rounds, duration) = if noise::full() {
        ("20", "1s")
    } else {
        ("10", "500ms")
    };
    let (sa, sb) = (
        noise::server(&["--delay", a]),
        noise::server(&["--delay", b]),
    );
    let seed = seed.to_string();
    let args = [
        "compare",
        &format!("a={}", sa.url),
        &format!("b={}", sb.url),
        "-d",
        duration,
        "--runs",
        rounds,
        "--seed",
        &seed,
        "--json",
        "-q",
        "--no-save",
    ];
    let out = noise::client(&args, LIMIT);
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "compare printed no JSON ({e}): {text}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `metric`'s verdict in `doc` (checked against its own interval by `common::json_verdict`):
/// (significant, difference %, low %, high %).
fn verdict(doc: &Value, metric: &str) -> (bool, f64, f64, f64) {
    let v = common::json_verdict(doc, metric);
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let sig = v["significant"] == true;
    (sig, f("difference_percent"), f("low_pct"), f("high_pct"))
}

/// Runs `n` comparisons of A against B and counts, per metric, the verdicts `counts` says to
/// count; prints each comparison and the tally (shown with --nocapture).
fn tally(what: &str, a: &str, b: &str, n: usize, counts: impl Fn(&str, bool, f64) -> bool) -> Hits {
    // One at a time: two hogs at once would be another noise than the one measured.
    let _turn = common::one_at_a_time();
    let _hog = Hog::beside_the_servers();
    let mut hits = [0; 7];
    for i in 0..n {
        let doc = compare(a, b, 17 + i);
        // Issue 38: a busy machine is named in one line exactly when the runs' median CPU
        // pressure is 50% or more; a target whose runs met it otherwise gets no verdict.
        let pressure = common::busy_line_agrees(&doc["sweep"]);
        let line = doc["sweep"]["busy"].as_str().unwrap_or_default();
        if line.contains("did not meet it") {
            for v in doc["verdicts"].as_array().unwrap() {
                assert_eq!(v["significant"], false, "{v}");
            }
            eprintln!("{what} {}/{n}: withheld: {line}", i + 1);
            hits[6] += 1;
            continue;
        }
        let mut line = format!("{what} {}/{n} (CPU pressure {pressure:?}):", i + 1);
        for (m, metric) in METRICS.iter().enumerate() {
            let (sig, d, lo, hi) = verdict(&doc, metric);
            hits[m] += counts(metric, sig, d) as usize;
            hits[5] += (*metric == "mean_us" && d > 0.0) as usize;
            line += &format!(
                " {metric} {}{d:+.1}% [{lo:+.1}, {hi:+.1}]",
                if sig { "S" } else { "-" }
            );
        }
        eprintln!("{line}");
    }
    let shown: Vec<String> = (METRICS.iter().zip(hits))
        .map(|(m, h)| format!("{m} {h}/{n}"))
        .collect();
    eprintln!("{what}: {}", shown.join(", "));
    hits
}

#[test]
fn identical_servers_beside_a_cpu_hog_are_rarely_called_different() {
    let n = noise::trials(3, 40);
    let hits = tally("identical", "1ms", "1ms", n, |_, sig, _| sig);
    // Full: at most 5 % per metric (2 of 40). CI: at most 2 of the 15 verdicts of 3
    // comparisons (the nominal rate is 5 % per verdict).
    if noise::full() {
        for (m, h) in METRICS.iter().zip(hits) {
            assert!(h * 20 <= n, "{m}: {h} false positives of {n}");
        }
    } else {
        let all: usize = hits[..5].iter().sum();
        assert!(
            all <= 2,
            "{all} false positives of {}: {hits:?}",
            5 * (n - hits[6])
        );
    }
}

#[test]
fn a_twenty_percent_longer_service_time_is_detected_beside_a_cpu_hog() {
    let n = noise::trials(2, 10);
    // Detected: significant, and in the right direction (latency up, ops/s down).
    let hits = tally("slower", "1ms", "1200us", n, |metric, sig, d| {
        sig && (d > 0.0) == (metric != "ops_per_s")
    });
    let (mean, p50) = (hits[1], hits[2]);
    // A comparison whose verdicts a busy machine withheld claims nothing: not a miss.
    let n = n - hits[6];
    if noise::full() {
        // The bound: 9 of 10 on each, at 20 rounds (bench/results/noise_verdicts.md;
        // other load on top of the hog lowers the mean's: 5 of 10 beside four builds).
        assert!(p50 * 10 >= 9 * n, "the median: {p50} of {n} detected");
        assert!(mean * 10 >= 9 * n, "the mean: {mean} of {n} detected");
    } else {
        // CI: the median every time; the mean at least in the right direction every time
        // (its interval is as wide as the stalls make it).
        assert_eq!(p50, n, "the median: {p50} of {n} detected");
        assert!(hits[5] == n, "the mean's estimate went the wrong way");
    }
}
