//! Latency percentile spectra from the whole histograms the documents carry (HdrHistogram V2,
//! base64, nanoseconds: see `schema/result.v1.json`'s `histogram`), drawn the way
//! HdrHistogram's plotter draws them: x is the percentile on a "nines" scale, n = −log10(1 − q),
//! so 90%, 99%, 99.9% … are equally spaced and the tail gets the room it deserves.

use super::scale::{Axis, Scale, Unit};
use super::svg::{LineChart, Series};
use crate::summary::Distribution;
use hdrhistogram::Histogram;

/// Points per nine: enough for a smooth curve, few enough for a small page.
const STEPS_PER_NINE: u32 = 12;

/// The spectrum of `h`: (nines, latency in µs) from the median down to the last sample; the
/// x range ends at log10(count) nines, beyond which a histogram holds no more information.
pub fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let top = (h.len() as f64).log10().max(1.0);
    let steps = (top * f64::from(STEPS_PER_NINE)).ceil() as u32;
    (0..=steps)
        .map(|i| {
            let n = (f64::from(i) / f64::from(STEPS_PER_NINE)).min(top);
            let q = 1.0 - 10f64.powf(-n);
            (n, h.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect()
}

/// A spectrum chart of `runs`: (name, distribution) pairs, one series each; None when no
/// distribution's histogram decodes (the page then shows the tables without that curve).
pub fn chart(runs: &[(String, &Distribution)]) -> Option<LineChart> {
    let series: Vec<Series> = runs
        .iter()
        .filter_map(|(name, d)| {
            let h = d.histogram.decode().ok()?;
            Some(Series {
                name: name.clone(),
                points: spectrum(&h),
            })
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    Some(LineChart {
        kind: "spectrum",
        x: (
            Axis::fit(Scale::Nines, Unit::Nines, xs, true),
            "percentile".to_string(),
        ),
        y: (
            Axis::fit(Scale::Log, Unit::Micros, ys, false),
            "latency".to_string(),
        ),
        series,
        references: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectrum_climbs_to_the_maximum() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = spectrum(&h);
        assert_eq!(s.first().unwrap().0, 0.0);
        assert!((s.last().unwrap().0 - 4.0).abs() < 1e-9, "{:?}", s.last());
        assert!(s.windows(2).all(|w| w[1].1 >= w[0].1), "non-decreasing");
        let p90 = s.iter().find(|p| (p.0 - 1.0).abs() < 1e-9).unwrap().1;
        assert!((p90 - 9000.0).abs() < 20.0, "p90 {p90}");
        assert!((s.last().unwrap().1 - 10_000.0).abs() < 20.0);
    }
}
