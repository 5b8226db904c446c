//! A chart axis: the data range mapped to pixels on a linear or log scale, its ticks and their
//! labels. The "nines" axis of a percentile spectrum is a linear axis over the count of nines,
//! n = −log10(1 − q), labelled 0%, 90%, 99%, 99.9% … (HdrHistogram's percentile plots).

/// How values map to pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Equal steps for equal differences; ticks at 1, 2 or 5 × 10^k.
    Linear,
    /// Equal steps for equal ratios (positive values only); ticks at powers of ten.
    Log,
    /// A percentile axis: values are counts of nines, ticks at whole nines.
    Nines,
}

/// How tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    /// A plain number with k/M/G multiples: ops/s, requests/s.
    Count,
    /// Microseconds, written in the unit their size calls for (ns, µs, ms, s).
    Micros,
    /// Bytes, binary multiples as the flags take them (64 B, 4 KiB).
    Bytes,
    /// Bytes per second, decimal multiples (kB/s, MB/s).
    ByteRate,
    /// A percent.
    Percent,
    /// A count of nines, written as the percentile it stands for.
    Nines,
    /// Seconds of a run (whole seconds on a linear axis).
    Seconds,
}

/// One axis of a chart: its scale, its data range (after padding) and its unit.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The scale.
    pub scale: Scale,
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// How tick labels are written.
    pub unit: Unit,
}

impl Axis {
    /// An axis covering `values` (non-finite ones, and non-positive ones on a log scale,
    /// ignored); `zero` makes a linear axis start at 0, as rates should.
    pub fn fit(scale: Scale, unit: Unit, values: impl Iterator<Item = f64>, zero: bool) -> Axis {
        let usable = |v: &f64| shown(scale, *v);
        let (mut min, mut max) = values
            .filter(usable)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if min > max {
            (min, max) = if scale == Scale::Log {
                (1.0, 10.0)
            } else {
                (0.0, 1.0)
            };
        }
        match scale {
            // Sizes double: whole powers of two frame them, as the flags' ranges run.
            Scale::Log if unit == Unit::Bytes => {
                min = 2f64.powf(min.log2().floor());
                max = 2f64.powf(max.log2().ceil().max(min.log2() + 1.0));
            }
            Scale::Log => {
                // Whole decades, so the ticks at powers of ten frame the data.
                min = 10f64.powf(min.log10().floor());
                max = 10f64.powf(max.log10().ceil().max(min.log10() + 1.0));
            }
            Scale::Nines => (min, max) = (0.0, max.ceil().max(1.0)),
            Scale::Linear => {
                if zero {
                    min = min.min(0.0);
                }
                if max - min < 1e-12 {
                    max = min + min.abs().max(1.0);
                }
                let step = nice_step((max - min) / 5.0, unit);
                (min, max) = ((min / step).floor() * step, (max / step).ceil() * step);
            }
        }
        Axis {
            scale,
            min,
            max,
            unit,
        }
    }

    /// Where `v` falls between `min` (0.0) and `max` (1.0).
    pub fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10()),
            Scale::Linear | Scale::Nines => (v - self.min) / (self.max - self.min),
        }
    }

    /// Whether `v` can be placed on this axis.
    pub fn shows(&self, v: f64) -> bool {
        shown(self.scale, v)
    }

    /// The tick values, in order.
    pub fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Nines => (0..=self.max as u32).map(f64::from).collect(),
            Scale::Log if self.unit == Unit::Bytes => binary_ticks(self.min, self.max),
            Scale::Log => log_ticks(self.min, self.max),
            Scale::Linear => {
                // Multiples of the step; an axis cut at a floor that is not one (−100% under
                // steps of 20,000%) also gets its foot, unless that would crowd the next.
                let step = self.step();
                let first = (self.min / step).ceil() * step;
                // Bounded whatever the range: an axis of the ends of f64 rounds its step
                // outwards to infinity, and its tick count with it (it spun on 1.5e308).
                let n = ((self.max - first) / step + 1e-9)
                    .floor()
                    .clamp(0.0, MAX_TICKS as f64) as u32;
                let mut ticks: Vec<f64> = (0..=n).map(|i| first + f64::from(i) * step).collect();
                if first - self.min > 0.4 * step {
                    ticks.insert(0, self.min);
                }
                ticks
            }
        }
    }

    /// The step between ticks of a linear axis.
    fn step(&self) -> f64 {
        nice_step((self.max - self.min) / 5.0, self.unit)
    }

    /// A tick's label.
    pub fn label(&self, v: f64) -> String {
        label(self.unit, v)
    }
}

/// The largest magnitude an axis places: beyond it the ticks of a linear or log axis would
/// round outwards to infinity. Values beyond are left off, as non-finite ones are.
const MAX_SHOWN: f64 = 1e300;

/// The most ticks an axis gets, whatever a (corrupt) range asks.
const MAX_TICKS: u32 = 100;

/// Whether `v` can be placed on an axis of `scale`.
fn shown(scale: Scale, v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_SHOWN && (scale != Scale::Log || v > 0.0)
}

/// A step of 1, 2 or 5 × 10^k near `rough`; whole seconds at least on a time axis.
fn nice_step(rough: f64, unit: Unit) -> f64 {
    if unit == Unit::Seconds && rough < 1.0 {
        return 1.0;
    }
    let mag = 10f64.powf(rough.log10().floor());
    let f = rough / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Powers of ten from `min` to `max`, with 2 and 5 between them when there are few decades.
fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let (lo, hi) = (min.log10().round() as i32, max.log10().round() as i32);
    let hi = hi.min(lo.saturating_add(MAX_TICKS as i32));
    let few = hi - lo <= 2;
    let mut ticks = Vec::new();
    for k in lo..=hi {
        let p = 10f64.powi(k);
        ticks.push(p);
        if few && k < hi {
            ticks.extend([2.0 * p, 5.0 * p]);
        }
    }
    ticks
}

/// Powers of two from `min` to `max`, at most about eight of them (every 2nd, 3rd … power).
fn binary_ticks(min: f64, max: f64) -> Vec<f64> {
    let (lo, hi) = (min.log2().round() as i32, max.log2().round() as i32);
    let hi = hi.min(lo.saturating_add(MAX_TICKS as i32));
    let every = ((hi - lo) / 8 + 1).max(1) as usize;
    (lo..=hi).step_by(every).map(|k| 2f64.powi(k)).collect()
}

/// Microseconds in the unit their size calls for, trailing zeros dropped: `10µs`, `1.5ms`.
fn micros(us: f64) -> String {
    match us {
        u if u < 1.0 => format!("{}ns", trim(u * 1000.0)),
        u if u < 1000.0 => format!("{}µs", trim(u)),
        u if u < 1e6 => format!("{}ms", trim(u / 1000.0)),
        u => format!("{}s", trim(u / 1e6)),
    }
}

/// A value written in `unit`, short enough for a tick.
pub fn label(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Count => count(v),
        Unit::Micros => micros(v),
        Unit::Seconds => format!("{}s", trim(v)),
        Unit::Bytes => bytes(v),
        Unit::ByteRate => format!("{}B/s", count(v)),
        Unit::Percent => format!("{}%", trim(v)),
        Unit::Nines => nines(v),
    }
}

/// A value written for a table cell, as the terminal tables write it: latencies with
/// format_us, counts whole with thousands separators (one decimal below 100), byte rates in
/// the decimal unit their size calls for.
pub fn cell(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Micros => crate::units::format_us(v),
        Unit::Count if v.abs() >= 100.0 || v.fract() == 0.0 => {
            crate::units::thousands(v.round() as u64)
        }
        Unit::Count => format!("{v:.1}"),
        Unit::ByteRate => crate::report::format::byte_rate(v),
        other => label(other, v),
    }
}

/// `12k`, `1.5M`, `950`: decimal multiples, at most three significant digits.
pub fn count(v: f64) -> String {
    let (scale, prefix) = crate::report::format::decimal_scale(v);
    format!("{}{prefix}", trim(v / scale))
}

/// A number with at most two decimals and no trailing zeros.
fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    match s {
        "-0" => "0".to_string(),
        s => s.to_string(),
    }
}

/// Bytes in binary multiples: `16 B`, `4 KiB`, `1.5 MiB`.
fn bytes(v: f64) -> String {
    const UNITS: [(f64, &str); 3] = [
        (1_073_741_824.0, "GiB"),
        (1_048_576.0, "MiB"),
        (1024.0, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(scale, _)| v >= *scale)
        .map_or(format!("{} B", trim(v)), |(scale, unit)| {
            format!("{} {unit}", trim(v / scale))
        })
}

/// The percentile `n` nines stand for: 0 → `0%`, 1 → `90%`, 3 → `99.9%`.
pub fn nines(n: f64) -> String {
    let whole = n.round() as usize;
    match whole {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        k => format!("99.{}%", "9".repeat(k - 2)).replace("99.%", "99%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_of_huge_values_ends() {
        for scale in [Scale::Linear, Scale::Log] {
            let values = [0.5, 1.5e308, f64::MAX, 2e300].into_iter();
            let axis = Axis::fit(scale, Unit::Micros, values, true);
            let ticks = axis.ticks();
            assert!(
                ticks.len() <= 2 * MAX_TICKS as usize + 2,
                "{scale:?}: {}",
                ticks.len()
            );
            assert!(!axis.shows(1.5e308));
            let bytes = Axis::fit(scale, Unit::Bytes, [1.0, 1e299].into_iter(), false);
            assert!(bytes.ticks().len() <= 2 * MAX_TICKS as usize + 2);
        }
    }

    #[test]
    fn nines_are_labelled_as_percentiles() {
        let labels: Vec<String> = (0..5).map(|n| nines(f64::from(n))).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn a_log_axis_spans_whole_decades_or_powers_of_two() {
        let a = Axis::fit(Scale::Log, Unit::Bytes, [16.0, 4096.0].into_iter(), false);
        assert_eq!((a.min, a.max), (16.0, 4096.0));
        assert_eq!(a.ticks(), [16.0, 64.0, 256.0, 1024.0, 4096.0]);
        assert!((a.fraction(256.0) - 0.5).abs() < 1e-9);
        let a = Axis::fit(Scale::Log, Unit::Micros, [15.0, 2500.0].into_iter(), false);
        assert_eq!((a.min, a.max), (10.0, 10_000.0));
        assert_eq!(a.ticks(), [10.0, 100.0, 1000.0, 10_000.0]);
        assert!((a.fraction(100.0) - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn a_linear_axis_has_round_ticks_from_zero() {
        let a = Axis::fit(
            Scale::Linear,
            Unit::Count,
            [3100.0, 4900.0].into_iter(),
            true,
        );
        assert_eq!(a.ticks(), [0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]);
        assert_eq!(a.label(2000.0), "2k");
        // Cut at −100% (a difference of a rate), steps of 50,000%: multiples, no −100 tick
        // crowding 0.
        let mut a = Axis::fit(
            Scale::Linear,
            Unit::Percent,
            [-100.0, 149_000.0].into_iter(),
            true,
        );
        a.min = a.min.max(-100.0);
        assert_eq!(a.ticks(), [0.0, 50_000.0, 100_000.0, 150_000.0]);
    }

    #[test]
    fn labels_fit_a_tick() {
        assert_eq!(label(Unit::Bytes, 4096.0), "4 KiB");
        assert_eq!(label(Unit::Bytes, 16.0), "16 B");
        assert_eq!(label(Unit::Count, 1_500_000.0), "1.5M");
        assert_eq!(label(Unit::Micros, 1500.0), "1.5ms");
        assert_eq!(label(Unit::Micros, 100_000.0), "100ms");
    }
}
