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

/// Megabytes (10^6 bytes) per second with two decimals: `7.90 MB/s`.
pub(crate) fn mb_per_s(x: f64) -> String {
    format!("{x:.2} MB/s")
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
        assert_eq!(opt_us(None), "-");
        assert_eq!(plural(1, "thread", "threads"), "1 thread");
        assert_eq!(plural(4, "thread", "threads"), "4 threads");
    }
}
