//! A mix's kinds recorded apart (`--mix`): each kind's ok count, errors and latency histogram,
//! beside the run's totals, merged with `+=` as the rest of a recorder is.

use super::{new_histogram, record_duration, ErrorCounts, OpError};
use hdrhistogram::Histogram;
use std::time::Duration;

/// What one kind of a mix recorded.
#[derive(Clone, Debug)]
pub struct KindRecorder {
    /// Its requests that completed correctly.
    pub ok: u64,
    /// Its requests that failed, by kind of error (statuses outside `--accept`, replies past
    /// `--timeout`); a connection's failure is the run's, counted in the totals only.
    pub errors: ErrorCounts,
    /// Latency of its ok requests, from their intended start.
    pub latency: Histogram<u64>,
}

impl Default for KindRecorder {
    fn default() -> Self {
        KindRecorder {
            ok: 0,
            errors: ErrorCounts::default(),
            latency: new_histogram(),
        }
    }
}

/// The kinds of a mix, by index (kind `k` ≥ 1 at `k - 1`), grown as kinds are seen.
#[derive(Clone, Debug, Default)]
pub struct Kinds(pub Vec<KindRecorder>);

impl Kinds {
    /// Kind `k` (from 1), made on first use.
    fn at(&mut self, k: u8) -> &mut KindRecorder {
        let i = usize::from(k.max(1)) - 1;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, KindRecorder::default);
        }
        &mut self.0[i]
    }

    /// Counts an ok request of kind `k` and its latency.
    pub fn ok(&mut self, k: u8, latency: Duration) {
        let kind = self.at(k);
        kind.ok += 1;
        record_duration(&mut kind.latency, latency);
    }

    /// Counts a failed request of kind `k`.
    pub fn error(&mut self, k: u8, err: OpError) {
        self.at(k).errors.add(err);
    }

    /// Empties every kind, keeping the histograms' memory.
    pub fn clear(&mut self) {
        for k in &mut self.0 {
            k.ok = 0;
            k.errors = ErrorCounts::default();
            k.latency.reset();
        }
    }
}

impl std::ops::AddAssign<&Kinds> for Kinds {
    #[allow(
        clippy::expect_used,
        reason = "every kind's histogram comes from new_histogram, with the same bounds"
    )]
    fn add_assign(&mut self, other: &Kinds) {
        for (i, o) in other.0.iter().enumerate() {
            let k = self.at((i + 1) as u8);
            k.ok += o.ok;
            k.errors += &o.errors;
            k.latency.add(&o.latency).expect("same histogram bounds");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ErrorKind;

    #[test]
    fn kinds_add_up_by_index() {
        let (mut a, mut b) = (Kinds::default(), Kinds::default());
        a.ok(1, Duration::from_micros(100));
        b.ok(2, Duration::from_micros(300));
        b.ok(2, Duration::from_micros(500));
        b.error(1, OpError::new(ErrorKind::Status, "HTTP 404 Not Found"));
        a += &b;
        assert_eq!(a.0.len(), 2);
        assert_eq!((a.0[0].ok, a.0[0].errors.total()), (1, 1));
        assert_eq!((a.0[1].ok, a.0[1].latency.len()), (2, 2));
        a.clear();
        assert_eq!((a.0[1].ok, a.0[1].latency.len()), (0, 0));
    }
}
