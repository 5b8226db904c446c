//! Parsing and printing of the units users type: durations, byte sizes, escaped payloads.
//!
//! Every parser returns a message that says what was wrong *and* what would be right, because
//! these messages end up verbatim on the one line a usage error prints.

use std::time::Duration;

/// A value the user typed that is not the unit it should be; the message says what would be
/// right, e.g. `'soon' is not a duration: write a number with a unit, e.g. 10s, 500ms, …`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a number followed by a duration unit.
    #[error("'{0}' is not a duration: write a number with a unit, e.g. 10s, 500ms, 250us, 2m")]
    NotDuration(String),
    /// A number, then a unit that is not a duration's.
    #[error("'{0}' has an unknown duration unit '{1}': use ns, us, ms, s, m or h")]
    DurationUnit(String, String),
    /// Longer than a year.
    #[error("'{0}' is too long a duration: use at most a year")]
    DurationTooLong(String),
    /// Not a whole number with an optional size unit.
    #[error("'{0}' is not a byte size: write a whole number, optionally with k, M or G (e.g. 64, 4k, 1M)")]
    NotSize(String),
    /// A number, then a unit that is not a size's.
    #[error("'{0}' has an unknown size unit '{1}': use k, M or G (binary multiples)")]
    SizeUnit(String, String),
    /// More bytes than a u64 holds.
    #[error("'{0}' is too large: the limit is 1 GiB")]
    SizeTooLarge(String),
    /// A message size (of the flag named first) that is not a size.
    #[error("{0}: {1}")]
    MessageSize(String, Box<UnitError>),
    /// A message size of 0.
    #[error("{0} must be at least 1 byte, got '{1}'")]
    MessageEmpty(String, String),
    /// A message size over [`MAX_SIZE`].
    #[error("{0} '{1}' is over the 1 GiB limit: use a smaller size")]
    MessageTooLarge(String, String),
    /// Not a number followed by a bit-rate unit.
    #[error("'{0}' is not a bit rate: write e.g. 100Mbit, 1Gbit or 500k")]
    NotBits(String),
    /// A number, then a unit that is not a bit rate's.
    #[error("'{0}' has an unknown unit '{1}': use bit, kbit, Mbit or Gbit")]
    BitsUnit(String, String),
    /// A bit rate of 0 or less, or not finite.
    #[error("'{0}': a bit rate must be above 0")]
    BitsNotPositive(String),
    /// `\x` not followed by two hex digits.
    #[error("'{0}' has a bad \\x escape: write two hex digits, e.g. \\x0a")]
    BadHexEscape(String),
    /// A backslash before a letter that is no escape.
    #[error("'{0}' has an unknown escape: use \\r, \\n, \\t, \\0, \\\\ or \\xHH")]
    UnknownEscape(String),
}

/// A payload throughput unit forced with `--units` (SI, as every rate wirebench prints:
/// 1 kB = 1000 B); without it the tables take the unit their largest figure calls for.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
pub enum ByteUnit {
    /// kB/s (10^3 B/s), the unit of the DIM study's tables.
    #[value(name = "kB", alias = "KB", alias = "kb")]
    #[serde(rename = "kB")]
    Kilo,
    /// MB/s (10^6 B/s).
    #[value(name = "MB", alias = "mb")]
    #[serde(rename = "MB")]
    Mega,
    /// GB/s (10^9 B/s).
    #[value(name = "GB", alias = "gb")]
    #[serde(rename = "GB")]
    Giga,
}

impl ByteUnit {
    /// The divisor from bytes/s and the unit as a table's title names it.
    pub fn scale(self) -> (f64, &'static str) {
        match self {
            ByteUnit::Kilo => (1e3, "kB/s (1 kB = 1000 B)"),
            ByteUnit::Mega => (1e6, "MB/s (1 MB = 10^6 B)"),
            ByteUnit::Giga => (1e9, "GB/s (1 GB = 10^9 B)"),
        }
    }
}

/// The largest request, reply or message size wirebench accepts (1 GiB).
pub const MAX_SIZE: u64 = 1 << 30;

/// Parses a duration such as `10s`, `500ms`, `250us`, `2m`, `1h` or `1.5s`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| UnitError::NotDuration(text.into()))?;
    let scale = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => return Err(UnitError::DurationUnit(text.into(), other.into())),
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 365.0 * 86400.0 {
        return Err(UnitError::DurationTooLong(text.into()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a byte size such as `64`, `4k`, `64KiB`, `1M`, `1GiB` (binary multiples, as iperf3 does).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| UnitError::NotSize(text.into()))?;
    let scale: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "k" | "K" | "KB" | "KiB" | "kB" => 1 << 10,
        "m" | "M" | "MB" | "MiB" => 1 << 20,
        "g" | "G" | "GB" | "GiB" => 1 << 30,
        other => return Err(UnitError::SizeUnit(text.into(), other.into())),
    };
    value
        .checked_mul(scale)
        .ok_or_else(|| UnitError::SizeTooLarge(text.into()))
}

/// Parses a size that must lie in 1 ..= 1 GiB; `what` names the flag in the message.
pub fn parse_message_size(what: &str, text: &str) -> Result<usize, UnitError> {
    let n = parse_size(text).map_err(|e| UnitError::MessageSize(what.into(), Box::new(e)))?;
    if n == 0 {
        return Err(UnitError::MessageEmpty(what.into(), text.into()));
    }
    if n > MAX_SIZE {
        return Err(UnitError::MessageTooLarge(what.into(), text.into()));
    }
    Ok(n as usize)
}

/// Parses a bit rate such as `100Mbit`, `1Gbit`, `500k` or `2.5G` (decimal multiples, bits per
/// second, as iperf3's `-b`).
pub fn parse_bits(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| UnitError::NotBits(text.into()))?;
    let unit = unit.trim().trim_end_matches("/s").trim_end_matches("ps");
    let unit = unit.strip_suffix("bit").unwrap_or(unit);
    let scale = match unit {
        "" => 1.0,
        "k" | "K" => 1e3,
        "m" | "M" => 1e6,
        "g" | "G" => 1e9,
        other => return Err(UnitError::BitsUnit(text.into(), other.into())),
    };
    let bits = value * scale;
    if !(bits > 0.0 && bits.is_finite()) {
        return Err(UnitError::BitsNotPositive(text.into()));
    }
    Ok(bits)
}

/// Expands `\r`, `\n`, `\t`, `\0`, `\\` and `\xHH` escapes, as a user types them in a shell.
pub fn unescape(text: &str) -> Result<Vec<u8>, UnitError> {
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let esc = bytes.get(i + 1).copied();
        let (byte, used) = match esc {
            Some(b'r') => (b'\r', 2),
            Some(b'n') => (b'\n', 2),
            Some(b't') => (b'\t', 2),
            Some(b'0') => (0, 2),
            Some(b'\\') => (b'\\', 2),
            Some(b'x') => {
                let hex = text.get(i + 2..i + 4).unwrap_or("");
                let v = u8::from_str_radix(hex, 16)
                    .map_err(|_| UnitError::BadHexEscape(text.into()))?;
                (v, 4)
            }
            _ => return Err(UnitError::UnknownEscape(text.into())),
        };
        out.push(byte);
        i += used;
    }
    Ok(out)
}

/// Shows bytes as text with escapes, for messages and reports: only the escapes [`unescape`]
/// reads, so a delimiter shown can be given back to `--until` as it is (quotes stay quotes).
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// Formats a duration given in microseconds compactly: `812ns`, `7.4µs`, `12.3ms`, `1.50s`.
pub fn format_us(us: f64) -> String {
    if us < 1.0 {
        format!("{:.0}ns", us * 1000.0)
    } else if us < 1000.0 {
        format!("{us:.1}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// Formats a count with thousands separators: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("10s", Duration::from_secs(10)),
            ("10", Duration::from_secs(10)),
            ("500ms", Duration::from_millis(500)),
            ("250us", Duration::from_micros(250)),
            ("2m", Duration::from_secs(120)),
            ("1.5s", Duration::from_millis(1500)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration(text).unwrap(), want, "{text}");
        }
        for bad in ["", "abc", "10x", "-1s", "1..2s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64").unwrap(), 64);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert!(parse_size("1.5k").is_err());
        assert!(parse_message_size("--size", "0").is_err());
        assert!(parse_message_size("--size", "2G").is_err());
        assert_eq!(parse_message_size("--size", "1G").unwrap(), 1 << 30);
    }

    #[test]
    fn bit_rates() {
        assert_eq!(parse_bits("100Mbit").unwrap(), 100e6);
        assert_eq!(parse_bits("1Gbit/s").unwrap(), 1e9);
        assert_eq!(parse_bits("500k").unwrap(), 500e3);
        assert_eq!(parse_bits("2.5G").unwrap(), 2.5e9);
        for bad in ["", "0", "fast", "10MB", "-1M"] {
            assert!(parse_bits(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"get k\r\n").unwrap(), b"get k\r\n");
        assert_eq!(unescape(r"\x41\\").unwrap(), b"A\\");
        assert!(unescape(r"\q").is_err());
        assert!(unescape(r"\x4").is_err());
        assert_eq!(escape(b"END\r\n"), "END\\r\\n");
    }

    /// Found by the fuzz target `units`: `escape` wrote `\'` for a quote, which `unescape`
    /// (and so `--until`) refuses; what is shown must read back.
    #[test]
    fn escape_reads_back() {
        for bytes in [&b"-'e\n"[..], b"\"\\", b"\0\x7f\xff\t"] {
            let shown = escape(bytes);
            assert_eq!(unescape(&shown).as_deref(), Ok(bytes), "{shown}");
        }
        assert_eq!(escape(b"say 'hi'\0"), "say 'hi'\\x00");
    }

    #[test]
    fn formatting() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(format_us(7.42), "7.4µs");
        assert_eq!(format_us(12_345.0), "12.35ms");
    }
}
