//! Small number formatters shared by the terminal reporters.

use crate::units::thousands;

/// A rate with thousands separators and one decimal: `123,456.7`; `-` when not finite.
pub(crate) fn rate(x: f64) -> String {
    if !x.is_finite() || x < 0.0 {
        return "-".to_string();
    }
    let tenths = (x * 10.0).round() as u64;
    format!("{}.{}", thousands(tenths / 10), tenths % 10)
}

/// A byte size as the user would type it (binary multiples): `64 B`, `4 KiB`, `1.5 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if bytes >= scale {
            return if bytes % scale == 0 {
                format!("{} {unit}", bytes / scale)
            } else {
                format!("{:.1} {unit}", bytes as f64 / scale as f64)
            };
        }
    }
    format!("{bytes} B")
}

/// Seconds with two decimals: `10.00 s`.
pub(crate) fn secs(s: f64) -> String {
    format!("{s:.2} s")
}

/// The decimal scale that suits `x` (the largest value to be shown in it): the divisor and the
/// prefix, from none up to giga. One scale per column keeps a table's rows comparable.
pub(crate) fn decimal_scale(x: f64) -> (f64, &'static str) {
    const SCALES: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    SCALES
        .into_iter()
        .find(|(scale, _)| x.abs() >= *scale)
        .unwrap_or((1.0, ""))
}

/// A number in the unit its size calls for, two decimals (none for plain units): `950 B/s`,
/// `64.00 kB/s`, `12.50 MB/s`, `1.18 GB/s`.
fn scaled(x: f64, unit: &str) -> String {
    if !x.is_finite() || x < 0.0 {
        return "-".to_string();
    }
    match decimal_scale(x) {
        (_, "") => format!("{x:.0} {unit}"),
        (scale, prefix) => format!("{:.2} {prefix}{unit}", x / scale),
    }
}

/// Payload bytes (10^3 multiples, as rates are given) per second: `12.50 MB/s`, `64.00 kB/s`.
pub(crate) fn byte_rate(bytes_per_s: f64) -> String {
    scaled(bytes_per_s, "B/s")
}

/// Bits per second in the unit its size calls for: `100.00 Mbit/s`, not `0.10 Gbit/s`.
pub(crate) fn bit_rate(bits_per_s: f64) -> String {
    scaled(bits_per_s, "bit/s")
}

/// A byte total in 10^3 multiples: `12.50 MB`, `640 B`.
pub(crate) fn bytes(n: u64) -> String {
    scaled(n as f64, "B")
}

/// Kibibytes as megabytes (10^6 bytes) with one decimal: `12.3 MB`.
pub(crate) fn kib_as_mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 * 1024.0 / 1e6)
}

/// A duration in microseconds, or `-` when there is none.
pub(crate) fn opt_us(us: Option<f64>) -> String {
    us.map_or_else(|| "-".to_string(), crate::units::format_us)
}

/// `1 connection`, `4 connections`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rate(123_456.74), "123,456.7");
        assert_eq!(rate(0.0), "0.0");
        assert_eq!(rate(f64::NAN), "-");
        assert_eq!(size(64), "64 B");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(1536 * 1024), "1.5 MiB");
        assert_eq!(secs(10.0), "10.00 s");
        assert_eq!(kib_as_mb(12_000), "12.3 MB");
        assert_eq!(bit_rate(100e6), "100.00 Mbit/s");
        assert_eq!(bit_rate(9.41e9), "9.41 Gbit/s");
        assert_eq!(bit_rate(512e3), "512.00 kbit/s");
        assert_eq!(bit_rate(950.0), "950 bit/s");
        assert_eq!(byte_rate(0.0), "0 B/s");
        assert_eq!(byte_rate(64_000.0), "64.00 kB/s");
        assert_eq!(byte_rate(12.5e6), "12.50 MB/s");
        assert_eq!(byte_rate(f64::NAN), "-");
        assert_eq!(bytes(12_500_000), "12.50 MB");
        assert_eq!(decimal_scale(999.0), (1.0, ""));
        assert_eq!(decimal_scale(1e6), (1e6, "M"));
        assert_eq!(opt_us(None), "-");
        assert_eq!(plural(1, "thread", "threads"), "1 thread");
        assert_eq!(plural(4, "thread", "threads"), "4 threads");
    }
}
