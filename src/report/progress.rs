//! Live progress on stderr: a run's line (elapsed time, ops/s, p99 and errors, rewritten in
//! place), and for a study (sweep, comparison, peak search) a bar over its points with the
//! current point named, the run's line beside it (indicatif).
//!
//! Shown only when the caller decides so (stderr is a terminal and neither `--quiet` nor
//! `--json` was given); a disabled [`Progress`] or [`Points`] does nothing, so callers need
//! not check again.

use crate::record::Snapshot;
use crate::units::{format_us, thousands};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};

/// The live progress line; rewrites one line of stderr in place, or the message of a
/// [`Points`] bar when the run is one point of a study.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    /// Width in characters of the longest line shown, so shorter lines can blank it out.
    width: usize,
    /// The study's bar and the current point's name, when the line goes there.
    bar: Option<(ProgressBar, String)>,
}

impl Progress {
    /// A progress line; when `enabled` is false, every method does nothing.
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled,
            width: 0,
            bar: None,
        }
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
        if let Some((bar, name)) = &self.bar {
            bar.set_message(format!("{name}  {}", line(s).trim_end()));
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
        if let Some((bar, name)) = &self.bar {
            bar.set_message(name.clone());
            return;
        }
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

/// A bar over the points of a study: `[3/12] ███░░░ eta 40s  local --size 1024  2.0s ops/s …`.
/// With an unknown count of points (a peak search), a spinner and the step number.
#[derive(Debug)]
pub struct Points {
    bar: Option<ProgressBar>,
}

impl Points {
    /// A bar over `total` points (None: not known in advance); nothing when not `enabled`.
    pub fn new(total: Option<usize>, enabled: bool) -> Points {
        if !enabled {
            return Points { bar: None };
        }
        let (bar, template) = match total {
            Some(n) => (
                ProgressBar::new(n as u64),
                "[{pos}/{len}] {bar:20} eta {eta:>3}  {wide_msg}",
            ),
            None => (ProgressBar::no_length(), "{spinner} step {pos}  {wide_msg}"),
        };
        let style = ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("█▓░");
        bar.set_style(style);
        // Redrawn a few times a second at most: the bar must not cost the generator CPU.
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        Points { bar: Some(bar) }
    }

    /// The line of the point named `name`, about to run; shown beside the bar.
    pub fn start(&self, name: &str) -> Progress {
        let mut p = Progress::new(self.bar.is_some());
        if let Some(bar) = &self.bar {
            bar.set_message(name.to_string());
            p.bar = Some((bar.clone(), name.to_string()));
        }
        p
    }

    /// One point done.
    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// A line printed above the bar (or to stderr when `shown`, without a bar).
    pub fn println(&self, text: &str, shown: bool) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if shown => eprintln!("{text}"),
            None => {}
        }
    }
}

impl Drop for Points {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
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

    #[test]
    fn a_disabled_bar_gives_silent_lines() {
        let points = Points::new(Some(3), false);
        let mut p = points.start("local --size 4");
        p.show(&Snapshot::default());
        assert!(!p.enabled && p.bar.is_none());
        points.done();
    }
}
