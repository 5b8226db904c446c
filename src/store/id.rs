//! Run ids: 16 random hex digits, shown as the first 8 (git's habit: a prefix is enough), and
//! the relative names `last`, `last~1`, `last~N` (git's `HEAD~N`).

use std::hash::{BuildHasher, Hasher};

/// Hex digits shown for an id.
pub const SHOWN: usize = 8;

/// A fresh id: 64 bits from SipHash with the process's random keys (std's `RandomState`,
/// seeded by the OS), over the time and the process id, so two writers at once differ.
pub fn fresh() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

/// A name that is no stored run's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// `last~` followed by something else than a number.
    #[error("'{0}' is not a run: write last, last~1, last~2 … or an id from `wirebench history`")]
    NotLast(String),
    /// Not 4 to 16 hex digits.
    #[error(
        "'{0}' is not a run id: give 4 to 16 hex digits from `wirebench history`, or last, last~1"
    )]
    NotId(String),
}

/// What a user wrote to name a stored run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ref {
    /// `last` (0), `last~N` (N before the last).
    Last(usize),
    /// Hex digits: the start of an id.
    Prefix(String),
}

impl Ref {
    /// Parses `last`, `last~3`, `1f2e3d4c`.
    pub fn parse(text: &str) -> Result<Ref, RefError> {
        let t = text.trim().to_ascii_lowercase();
        if t == "last" {
            return Ok(Ref::Last(0));
        }
        if let Some(k) = t.strip_prefix("last~") {
            return k
                .parse()
                .map(Ref::Last)
                .map_err(|_| RefError::NotLast(text.into()));
        }
        if t.len() >= 4 && t.len() <= 16 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            return Ok(Ref::Prefix(t));
        }
        Err(RefError::NotId(text.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_references() {
        assert_eq!(Ref::parse("last"), Ok(Ref::Last(0)));
        assert_eq!(Ref::parse("last~2"), Ok(Ref::Last(2)));
        assert_eq!(Ref::parse("1F2E3D4C"), Ok(Ref::Prefix("1f2e3d4c".into())));
        for bad in ["", "abc", "last~x", "zzzzzzzz", "0123456789abcdef0"] {
            assert!(Ref::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_differ() {
        let (a, b) = (fresh(), fresh());
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }
}
