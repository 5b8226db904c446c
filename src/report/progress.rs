//! The live progress line on stderr: elapsed time, ops/s, p99 and errors, rewritten in place.
//!
//! Shown only when the caller decides so (stderr is a terminal and `--quiet` was not given);
//! a disabled [`Progress`] does nothing, so callers need not check again.

use crate::record::Snapshot;
use crate::units::{format_us, thousands};
use std::io::{IsTerminal, Write};

/// The live progress line; rewrites one line of stderr in place.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    /// Width in characters of the longest line shown, so shorter lines can blank it out.
    width: usize,
}

impl Progress {
    /// A progress line; when `enabled` is false, every method does nothing.
    pub fn new(enabled: bool) -> Progress {
        Progress { enabled, width: 0 }
    }

    /// Whether stderr is a terminal, where a progress line makes sense.
    pub fn should_show() -> bool {
        std::io::stderr().is_terminal()
    }

    /// Rewrites the progress line with `s`.
    pub fn show(&mut self, s: &Snapshot) {
        if !self.enabled {
            return;
        }
        let text = line(s);
        let chars = text.chars().count();
        self.width = self.width.max(chars);
        let pad = " ".repeat(self.width - chars);
        emit(&format!("\r{text}{pad}"));
    }

    /// Clears the progress line, if anything was shown.
    pub fn finish(&mut self) {
        if !self.enabled || self.width == 0 {
            return;
        }
        emit(&format!("\r{}\r", " ".repeat(self.width)));
        self.width = 0;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `  3.0s  ops/s 12,345  p99 123.4µs  errors 0   `, prefixed with `warm-up` while warming up.
fn line(s: &Snapshot) -> String {
    let phase = if s.warmup { "warm-up" } else { "" };
    let p99 = s.p99_us.map_or_else(|| "-".to_string(), format_us);
    let ops = if s.ops_per_s.is_finite() && s.ops_per_s > 0.0 {
        thousands(s.ops_per_s.round() as u64)
    } else {
        "0".to_string()
    };
    format!(
        "{phase}{:>5.1}s  ops/s {ops}  p99 {p99}  errors {}   ",
        s.elapsed.as_secs_f64(),
        thousands(s.errors),
    )
}

/// Writes to stderr and flushes; a progress line is not worth failing a run over.
fn emit(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn line_shows_the_figures() {
        let mut s = Snapshot {
            elapsed: Duration::from_millis(3000),
            warmup: false,
            ok: 40_000,
            ops_per_s: 12_345.4,
            p99_us: Some(123.44),
            errors: 0,
        };
        assert_eq!(line(&s), "  3.0s  ops/s 12,345  p99 123.4µs  errors 0   ");
        s.warmup = true;
        s.p99_us = None;
        assert!(line(&s).starts_with("warm-up  3.0s"), "{}", line(&s));
        assert!(line(&s).contains("p99 -"));
    }

    #[test]
    fn disabled_progress_stays_silent() {
        let mut p = Progress::new(false);
        p.show(&Snapshot::default());
        assert_eq!(p.width, 0);
        p.finish();
    }
}
