//! The latency's shape: a mean above p95 (a few slow requests dominate it; the Flash study's
//! 39×), several modes (a second path through the server: a cache miss, a retry, a timer), and
//! stalls that recur in the per-second series (garbage collection, a periodic flush).

use super::{times, Confidence, Evidence, Finding};
use crate::summary::{Distribution, Summary};
use crate::units::format_us;

/// Fewer samples than this say nothing about a shape.
const MIN_SAMPLES: u64 = 20;
/// The mean is far above p95 (≫) from this factor; the summary's notes name any excess.
const MEAN_OVER_P95: f64 = 1.5;
/// Histogram buckets grow by this factor (log-spaced from 1 µs).
const BUCKET_FACTOR: f64 = 1.5;
/// A mode holds at least this share of the samples.
const MODE_SHARE: f64 = 0.01;
/// Two modes are at least this far apart (factor).
const MODE_GAP: f64 = 10.0;
/// A second is stalled when its slowest request took this long and this many medians.
const STALL_US: f64 = 50_000.0;
const STALL_MEDIANS: f64 = 50.0;
/// Stalled seconds needed (and their share of all seconds) before stalls are named.
const STALL_SECONDS: usize = 3;
const STALL_SHARE: f64 = 0.6;

/// The tail findings. `stalled_by_nagle` keeps the multimodal one quiet when the second mode
/// is the delayed ACK, already named.
/// On a contended host each is at most of low confidence, with the pressure as evidence.
pub fn findings(base: &Summary, ev: &Evidence, stalled_by_nagle: bool) -> Vec<Finding> {
    let Some(l) = base.latency.as_ref().filter(|l| l.count >= MIN_SAMPLES) else {
        return Vec::new();
    };
    let mut f = Vec::new();
    f.extend(mean_above_p95(l));
    if !stalled_by_nagle {
        f.extend(multimodal(l));
        f.extend(periodic(base, l));
    }
    if ev.contended() {
        let p = ev.cpu_pressure_percent.unwrap_or(0.0);
        for x in &mut f {
            x.confidence = Confidence::Low;
            x.evidence.push(format!("the host's CPUs were contended: some task waited for a CPU {p:.0}% of the run (/proc/pressure/cpu), so the slow requests may be the machine's, not the target's"));
        }
    }
    f
}

/// A mean above p95: the slow few dominate it.
fn mean_above_p95(l: &Distribution) -> Option<Finding> {
    if l.mean_us < MEAN_OVER_P95 * l.p95_us {
        return None;
    }
    Some(Finding {
        id: "mean_above_p95".into(),
        title: format!(
            "a few slow requests dominate the mean: it is {} the p95",
            times(l.mean_us, l.p95_us)
        ),
        confidence: if l.mean_us >= 3.0 * l.p95_us {
            Confidence::High
        } else {
            Confidence::Medium
        },
        side: "server".into(),
        evidence: vec![format!(
            "mean {}, p50 {}, p95 {}, p99 {}, max {} (the Flash study saw a mean 39× its p95)",
            format_us(l.mean_us),
            format_us(l.p50_us),
            format_us(l.p95_us),
            format_us(l.p99_us),
            format_us(l.max_us)
        )],
        fix: "Judge this target by its percentiles, not the mean; find what makes the slow few slow (a stall, a queue, a lock, garbage collection): see the other findings and the per-second series.".into(),
        rank: 4,
    })
}

/// The histogram's modes: (the value at the peak, µs; the share of samples around it).
pub fn modes(l: &Distribution) -> Vec<(f64, f64)> {
    let Ok(h) = l.histogram.decode() else {
        return Vec::new();
    };
    let total = h.len().max(1) as f64;
    // Each bucket by its middle (its upper bound over the square root of the factor).
    let buckets: Vec<(f64, f64)> = h
        .iter_log(1000, BUCKET_FACTOR)
        .map(|v| {
            let upper = v.value_iterated_to() as f64 / 1000.0;
            (
                upper / BUCKET_FACTOR.sqrt(),
                v.count_since_last_iteration() as f64,
            )
        })
        .collect();
    // Split at the local minima; each piece is one mode, its peak the largest bucket.
    let mut pieces: Vec<(f64, f64, f64)> = Vec::new(); // (peak value, peak count, sum)
    let mut falling = false;
    for (i, &(value, count)) in buckets.iter().enumerate() {
        let prev = if i > 0 { buckets[i - 1].1 } else { 0.0 };
        if pieces.is_empty() || (falling && count > prev) {
            pieces.push((value, count, 0.0));
        }
        falling = count < prev || (falling && count == prev);
        let Some(p) = pieces.last_mut() else {
            continue; // pushed above when empty
        };
        p.2 += count;
        if count > p.1 {
            (p.0, p.1) = (value, count);
        }
    }
    // Pieces too small, or too close to a bigger one, fold into their neighbour.
    let mut modes: Vec<(f64, f64)> = Vec::new();
    for (value, _, sum) in pieces {
        let share = sum / total;
        match modes.last_mut() {
            Some(last) if share < MODE_SHARE || value < last.0 * MODE_GAP => {
                if share > last.1 {
                    last.0 = value;
                }
                last.1 += share;
            }
            _ => modes.push((value, share)),
        }
    }
    modes.retain(|m| m.1 >= MODE_SHARE);
    modes
}

/// Several modes far apart.
fn multimodal(l: &Distribution) -> Option<Finding> {
    let m = modes(l);
    if m.len() < 2 {
        return None;
    }
    let list: Vec<String> = m
        .iter()
        .map(|(v, s)| format!("{} ({:.1}%)", format_us(*v), s * 100.0))
        .collect();
    Some(Finding {
        id: "multimodal".into(),
        title: format!("the latency has {} modes, {} apart: requests take different paths", m.len(), times(m[m.len() - 1].0, m[0].0)),
        confidence: Confidence::Medium,
        side: "server".into(),
        evidence: vec![format!("modes of the latency histogram: {}", list.join(", "))],
        fix: "Find what sends some requests down the slow path (a cache miss, a retry, a timer, a disk read, a delayed ACK); report each mode's share rather than one mean.".into(),
        rank: 5,
    })
}

/// Stalls recurring in the per-second series.
fn periodic(base: &Summary, l: &Distribution) -> Option<Finding> {
    let threshold = STALL_US.max(STALL_MEDIANS * l.p50_us);
    let stalled: Vec<(u64, f64)> = base
        .series
        .iter()
        .filter_map(|p| p.max_us.filter(|&m| m >= threshold).map(|m| (p.second, m)))
        .collect();
    let n = base.series.len();
    if stalled.len() < STALL_SECONDS || (stalled.len() as f64) < STALL_SHARE * n as f64 {
        return None;
    }
    let maxima: Vec<String> = stalled
        .iter()
        .map(|(s, m)| format!("s{s} {}", format_us(*m)))
        .collect();
    Some(Finding {
        id: "periodic_stalls".into(),
        title: format!("stalls recur: {} of {n} seconds had a request over {}, the median being {}", stalled.len(), format_us(threshold), format_us(l.p50_us)),
        confidence: if stalled.len() >= 5 { Confidence::High } else { Confidence::Medium },
        side: "server".into(),
        evidence: vec![format!("slowest request of each stalled second: {}", maxima.join(", "))],
        fix: "Look for what recurs in the server at that period (garbage collection, a periodic flush or compaction, a lock a background task holds); an open-loop run (--rate) shows the full cost, since a closed loop waits the stall out (coordinated omission).".into(),
        rank: 6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_histogram;

    fn modes_of(samples: &[(u64, u64)]) -> Vec<(f64, f64)> {
        let mut h = new_histogram();
        for &(ns, n) in samples {
            h.record_n(ns, n).unwrap();
        }
        modes(&Distribution::of(&h).unwrap())
    }

    #[test]
    fn modes_far_apart_are_told_apart_and_near_ones_are_one() {
        // About one request in 75 served after 100 ms (as serve tcp --delay-every N --delay 100ms).
        let m = modes_of(&[(25_000, 990), (27_000, 500), (100_000_000, 20)]);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].0 < 40.0 && m[1].0 > 80_000.0 && m[1].0 < 125_000.0,
            "{m:?}"
        );
        assert!((m[1].1 - 20.0 / 1510.0).abs() < 1e-6, "{m:?}");
        // A tail that decays, and a bump under 1%: one mode.
        let m = modes_of(&[(20_000, 1000), (30_000, 300), (45_000, 100), (5_000_000, 5)]);
        assert_eq!(m.len(), 1, "{m:?}");
    }
}
