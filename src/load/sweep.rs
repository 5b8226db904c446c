//! Sweeps, pure: a numeric run flag given as a list or a doubling range (`--size 4,128,512..64k`),
//! the matrix of points several swept flags make, and the order points and targets are run in.
//!
//! A sweep is the engine run again with another plan (lib.rs, "Layout"); this module only
//! says which values, in which order. `app::sweep` sets each value into a copy of the arguments.

use crate::units::{parse_duration, parse_size, UnitError};
use std::time::Duration;

/// A swept flag's text that does not expand; each names the flag it is about.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// Nothing but blanks.
    #[error("{flag} '{text}' is an empty list: give a value or values separated by commas, e.g. {flag} {}", example(*.kind))]
    EmptyList {
        /// The swept flag.
        flag: &'static str,
        /// Its values' kind.
        kind: Kind,
        /// The text given.
        text: String,
    },
    /// Two commas with nothing between.
    #[error("{flag} '{text}' has an empty item: give values separated by commas, e.g. {flag} {}", example(*.kind))]
    EmptyItem {
        /// The swept flag.
        flag: &'static str,
        /// Its values' kind.
        kind: Kind,
        /// The text given.
        text: String,
    },
    /// An item that is not a value of the flag's kind.
    #[error("{flag}: {error}")]
    Value {
        /// The swept flag.
        flag: &'static str,
        /// What is wrong with the item.
        error: ValueError,
    },
    /// A doubling range from 0.
    #[error("{flag} '{item}': a doubling range must start above 0, e.g. {flag} {}", example(*.kind))]
    FromZero {
        /// The swept flag.
        flag: &'static str,
        /// Its values' kind.
        kind: Kind,
        /// The range given.
        item: String,
    },
    /// A range whose end is below its start.
    #[error("{flag} '{item}': the range ends below its start; write FROM..TO with TO ≥ FROM")]
    Backward {
        /// The swept flag.
        flag: &'static str,
        /// The range given.
        item: String,
    },
}

impl SweepError {
    /// The flag the error is about.
    pub fn flag(&self) -> &'static str {
        match self {
            SweepError::EmptyList { flag, .. }
            | SweepError::EmptyItem { flag, .. }
            | SweepError::Value { flag, .. }
            | SweepError::FromZero { flag, .. }
            | SweepError::Backward { flag, .. } => flag,
        }
    }
}

/// One swept item that is not a value of its kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a size or a duration.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// Not a whole number (a count).
    #[error("'{0}' is not a whole number")]
    NotWhole(String),
    /// Not a rate.
    #[error("'{0}' is not a rate in requests/s")]
    NotRate(String),
}

/// What a swept flag's values are, so that a range knows how to double them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bytes with k, M, G suffixes (`--size`, `--sndbuf`, `--rcvbuf`); written back in bytes.
    Bytes,
    /// A whole number (`-c`, `--pipeline`).
    Count,
    /// Requests per second (`--rate`); an item with `/` is a ramp and stays as written.
    Rate,
    /// A duration (`--think`); written back in the largest whole unit (ns, us, ms).
    Duration,
}

/// A swept flag and the values it takes, each a text the flag accepts on its own.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Axis {
    /// The flag, e.g. `--size` (owned when read back from a document).
    pub flag: std::borrow::Cow<'static, str>,
    /// Its values, in the order given, without repeats.
    pub values: Vec<String>,
}

/// Whether `text` asks for more than one value: a list (a comma) or a range (`..`), except
/// a rate ramp (`1000..50000/30s`), which is one value.
pub fn is_sweep(kind: Kind, text: &str) -> bool {
    let ramp = kind == Kind::Rate && text.contains('/') && !text.contains(',');
    // An empty text is an empty list: `expand` says so.
    text.trim().is_empty() || (!ramp && (text.contains(',') || text.contains("..")))
}

/// Expands `text` into its values: items separated by commas, each a value or a doubling
/// range `A..B` (A, 2A, 4A … up to B; B itself ends the range when the doubling misses it, so
/// both ends are always measured). `flag` names the flag in the message of a bad item.
pub fn expand(flag: &'static str, kind: Kind, text: &str) -> Result<Axis, SweepError> {
    let given = || text.to_string();
    if text.trim().is_empty() {
        return Err(SweepError::EmptyList {
            flag,
            kind,
            text: given(),
        });
    }
    let mut values: Vec<String> = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(SweepError::EmptyItem {
                flag,
                kind,
                text: given(),
            });
        }
        for v in item_values(flag, kind, item)? {
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    Ok(Axis {
        flag: flag.into(),
        values,
    })
}

/// A plausible sweep of `kind`, for messages.
fn example(kind: Kind) -> &'static str {
    match kind {
        Kind::Bytes => "4,128,512..64k",
        Kind::Count => "1,10,100",
        Kind::Rate => "1000,5000",
        Kind::Duration => "0ms,1ms,10ms",
    }
}

/// One item's values: itself (canonical), or the doubling range it writes.
fn item_values(flag: &'static str, kind: Kind, item: &str) -> Result<Vec<String>, SweepError> {
    let bad = |error: ValueError| SweepError::Value { flag, error };
    if kind == Kind::Rate && item.contains('/') {
        return Ok(vec![item.to_string()]);
    }
    let Some((from, to)) = item.split_once("..") else {
        let v = value(kind, item).map_err(bad)?;
        return Ok(vec![text(kind, v)]);
    };
    let (a, b) = (
        value(kind, from).map_err(bad)?,
        value(kind, to).map_err(bad)?,
    );
    if a <= 0.0 {
        let item = item.to_string();
        return Err(SweepError::FromZero { flag, kind, item });
    }
    if b < a {
        let item = item.to_string();
        return Err(SweepError::Backward { flag, item });
    }
    let mut out = Vec::new();
    let mut v = a;
    while v < b {
        out.push(text(kind, v));
        v *= 2.0;
    }
    out.push(text(kind, b));
    Ok(out)
}

/// An item's value as a number: bytes, a count, requests/s, or nanoseconds.
fn value(kind: Kind, t: &str) -> Result<f64, ValueError> {
    let t = t.trim();
    match kind {
        Kind::Bytes => Ok(parse_size(t)? as f64),
        Kind::Count => t
            .parse::<u64>()
            .map(|n| n as f64)
            .map_err(|_| ValueError::NotWhole(t.into())),
        Kind::Rate => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(ValueError::NotRate(t.into())),
        },
        Kind::Duration => Ok(parse_duration(t)?.as_nanos() as f64),
    }
}

/// A number back as a text the flag accepts.
fn text(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Bytes => bytes_text(v as u64),
        Kind::Count => format!("{v:.0}"),
        Kind::Rate if v.fract() == 0.0 => format!("{v:.0}"),
        Kind::Rate => format!("{v}"),
        Kind::Duration => duration_text(Duration::from_nanos(v as u64)),
    }
}

/// `512k`, `16M`, `1000`: a size in the largest binary unit that keeps it whole, as a user
/// writes it (`--size 512k` reads "512k" in the tables, not "524288").
fn bytes_text(b: u64) -> String {
    for (unit, scale) in [("G", 1u64 << 30), ("M", 1 << 20), ("k", 1 << 10)] {
        if b >= scale && b % scale == 0 {
            return format!("{}{unit}", b / scale);
        }
    }
    b.to_string()
}

/// `2ms`, `250us`, `1500ns`: the largest unit that keeps the value whole.
fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0 => "0ms".to_string(),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// Every combination of the axes' values (`lens[i]` values on axis i), the first axis changing
/// fastest: each point is one index per axis.
pub fn matrix(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut points = vec![Vec::new()];
    for &n in lens {
        points = (0..n)
            .flat_map(|i| {
                points
                    .iter()
                    .map(move |p: &Vec<usize>| [&p[..], &[i]].concat())
            })
            .collect();
    }
    points
}

/// The order of the runs, as (point, target): every target at one point before the next
/// point (A p1, B p1, A p2, B p2 …), so that drift over time hits all targets alike.
pub fn interleave(points: usize, targets: usize) -> Vec<(usize, usize)> {
    (0..points)
        .flat_map(|p| (0..targets).map(move |t| (p, t)))
        .collect()
}

/// Splits `name=URL` into its name and URL; a plain URL is its own name. The part before `=`
/// is a name only if it has no `:` or `/` (so `http://h/?a=b` stays a URL).
pub fn named(text: &str) -> (&str, &str) {
    match text.split_once('=') {
        Some((name, url)) if !name.is_empty() && !name.contains([':', '/']) => (name, url),
        _ => (text, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(kind: Kind, text: &str) -> Result<Vec<String>, String> {
        expand("--x", kind, text)
            .map(|a| a.values)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn lists_and_doubling_ranges() {
        let cases: &[(Kind, &str, &[&str])] = &[
            (Kind::Bytes, "64", &["64"]),
            (
                Kind::Bytes,
                "4,128,512..8k",
                &["4", "128", "512", "1k", "2k", "4k", "8k"],
            ),
            (Kind::Bytes, "1k..3k", &["1k", "2k", "3k"]),
            (
                Kind::Bytes,
                "1000,524288,16M,1536",
                &["1000", "512k", "16M", "1536"],
            ),
            (Kind::Bytes, "512..512", &["512"]),
            (Kind::Bytes, "4,4,8", &["4", "8"]),
            (Kind::Count, "1,10,100", &["1", "10", "100"]),
            (Kind::Count, "1..8", &["1", "2", "4", "8"]),
            (Kind::Rate, "1000,5000", &["1000", "5000"]),
            (Kind::Rate, "1000..4000", &["1000", "2000", "4000"]),
            (Kind::Rate, "1.5", &["1.5"]),
            (Kind::Rate, "10..50/5s,100", &["10..50/5s", "100"]),
            (Kind::Duration, "1ms..4ms", &["1ms", "2ms", "4ms"]),
            (Kind::Duration, "0,250us,1.5ms", &["0ms", "250us", "1500us"]),
        ];
        for (kind, text, want) in cases {
            assert_eq!(values(*kind, text).unwrap(), *want, "{text}");
        }
    }

    #[test]
    fn rejects_empty_items_and_backward_ranges() {
        for (kind, text, says) in [
            (Kind::Bytes, "", "empty list"),
            (Kind::Count, " ", "empty list"),
            (Kind::Bytes, "4,,8", "empty item"),
            (Kind::Count, "1,", "empty item"),
            (Kind::Bytes, "64k..512", "ends below its start"),
            (Kind::Rate, "5000..1000", "ends below its start"),
            (Kind::Count, "0..8", "start above 0"),
            (Kind::Bytes, "4,x", "not a byte size"),
            (Kind::Count, "1,ten", "not a whole number"),
        ] {
            let e = values(kind, text).expect_err(text);
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.starts_with("--x"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn what_counts_as_a_sweep() {
        assert!(!is_sweep(Kind::Bytes, "64k"));
        assert!(is_sweep(Kind::Bytes, ""));
        assert!(is_sweep(Kind::Bytes, "4,8"));
        assert!(is_sweep(Kind::Bytes, "4..8"));
        assert!(!is_sweep(Kind::Rate, "1000..5000/10s"));
        assert!(is_sweep(Kind::Rate, "1000..5000"));
        assert!(is_sweep(Kind::Rate, "1..5/1s,100"));
    }

    #[test]
    fn the_matrix_turns_the_first_axis_fastest() {
        assert_eq!(matrix(&[]), vec![Vec::<usize>::new()]);
        assert_eq!(matrix(&[3]), vec![vec![0], vec![1], vec![2]]);
        assert_eq!(
            matrix(&[2, 2]),
            vec![vec![0, 0], vec![1, 0], vec![0, 1], vec![1, 1]]
        );
    }

    #[test]
    fn targets_interleave_point_by_point() {
        assert_eq!(interleave(2, 2), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn names_before_urls() {
        assert_eq!(named("local=tcp://a:1"), ("local", "tcp://a:1"));
        assert_eq!(named("tcp://a:1"), ("tcp://a:1", "tcp://a:1"));
        assert_eq!(
            named("http://h:1/?a=b"),
            ("http://h:1/?a=b", "http://h:1/?a=b")
        );
    }
}
