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
use std::io::IsTerminal;

/// The live progress of one run: a bar over its measuring time (or its requests) with its
/// line beside it, or that line in the message of a [`Points`] bar when the run is one point
/// of a study.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    /// How far the run goes.
    goal: Goal,
    /// The run's own bar, made at the first snapshot.
    own: Option<ProgressBar>,
    /// The study's bar and the current point's name, when the line goes there.
    bar: Option<(ProgressBar, String)>,
}

/// How far a run goes, for its bar.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Goal {
    /// Not known: a spinner.
    #[default]
    Open,
    /// This long measured.
    Time(std::time::Duration),
    /// This many requests, ok or failed.
    Requests(u64),
}

impl Goal {
    /// How far `s` is towards the goal, in thousandths.
    fn permille(self, s: &Snapshot) -> u64 {
        if s.warmup {
            return 0;
        }
        let done = match self {
            Goal::Open => return 0,
            Goal::Time(d) => s.elapsed.as_secs_f64() / d.as_secs_f64().max(1e-9),
            Goal::Requests(n) => (s.ok + s.errors) as f64 / n.max(1) as f64,
        };
        (done.clamp(0.0, 1.0) * 1000.0) as u64
    }
}

impl Progress {
    /// A run's progress; when `enabled` is false, every method does nothing.
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled,
            goal: Goal::Open,
            own: None,
            bar: None,
        }
    }

    /// The same, with a bar towards `goal`.
    pub fn towards(mut self, goal: Goal) -> Progress {
        self.goal = goal;
        self
    }

    /// Whether stderr is a terminal, where a progress line makes sense.
    pub fn should_show() -> bool {
        std::io::stderr().is_terminal()
    }

    /// Shows `s`.
    pub fn show(&mut self, s: &Snapshot) {
        if !self.enabled {
            return;
        }
        if let Some((bar, name)) = &self.bar {
            bar.set_message(format!("{name}  {}", line(s).trim_end()));
            return;
        }
        let goal = self.goal;
        let own = self.own.get_or_insert_with(|| run_bar(goal));
        own.set_position(goal.permille(s));
        own.set_message(line(s).trim_end().to_string());
    }

    /// Clears what was shown, if anything.
    pub fn finish(&mut self) {
        if let Some((bar, name)) = &self.bar {
            bar.set_message(name.clone());
        }
        if let Some(own) = self.own.take() {
            own.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A run's own bar (a spinner when the goal is open), redrawn a few times a second at most.
fn run_bar(goal: Goal) -> ProgressBar {
    let (bar, template) = match goal {
        Goal::Open => (ProgressBar::no_length(), "{spinner} {wide_msg}"),
        _ => (ProgressBar::new(1000), "{bar:20} {wide_msg}"),
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("█▓░");
    bar.set_style(style);
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar
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
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("█▓░")
            .with_key(
                "eta",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:>3}", eta(state.pos(), state.eta()));
                },
            );
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

/// The time left as the bar shows it: `?` until a point is done (before, the estimate of
/// a rate of nothing read "eta 0s" at 0/3, issue 40), then indicatif's estimate (`40s`).
pub fn eta(done: u64, left: std::time::Duration) -> String {
    match done {
        0 => "?".to_string(),
        _ => format!("{:#}", indicatif::HumanDuration(left)),
    }
}

impl Drop for Points {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `  3.0s  ops/s 12,345  1.58 MB/s (4.74 MB)  p99 123.4µs  errors 0   `, prefixed with
/// `warm-up` while warming up: bytes so far beside the rate, so a long download shows its
/// progress while its one request is still in flight.
fn line(s: &Snapshot) -> String {
    let phase = if s.warmup { "warm-up" } else { "" };
    let p99 = s.p99_us.map_or_else(|| "-".to_string(), format_us);
    let ops = if s.ops_per_s.is_finite() && s.ops_per_s > 0.0 {
        thousands(s.ops_per_s.round() as u64)
    } else {
        "0".to_string()
    };
    let rate = if s.bytes_per_s.is_finite() {
        s.bytes_per_s
    } else {
        0.0
    };
    format!(
        "{phase}{:>5.1}s  ops/s {ops}  {} ({})  p99 {p99}  errors {}   ",
        s.elapsed.as_secs_f64(),
        super::format::byte_rate(rate),
        super::format::bytes(s.bytes),
        thousands(s.errors),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn no_eta_before_a_point_is_done() {
        assert_eq!(eta(0, Duration::ZERO), "?");
        assert_eq!(eta(1, Duration::from_secs(40)), "40s");
    }

    #[test]
    fn line_shows_the_figures() {
        let mut s = Snapshot {
            elapsed: Duration::from_millis(3000),
            warmup: false,
            ok: 40_000,
            ops_per_s: 12_345.4,
            p99_us: Some(123.44),
            errors: 0,
            bytes: 4_740_000,
            bytes_per_s: 1_580_000.0,
        };
        assert_eq!(
            line(&s),
            "  3.0s  ops/s 12,345  1.58 MB/s (4.74 MB)  p99 123.4µs  errors 0   "
        );
        s.warmup = true;
        s.p99_us = None;
        assert!(line(&s).starts_with("warm-up  3.0s"), "{}", line(&s));
        assert!(line(&s).contains("p99 -"));
    }

    #[test]
    fn disabled_progress_stays_silent() {
        let mut p = Progress::new(false).towards(Goal::Requests(10));
        p.show(&Snapshot::default());
        assert!(p.own.is_none());
        p.finish();
    }

    #[test]
    fn the_goal_gives_the_bar_its_position() {
        let s = Snapshot {
            elapsed: Duration::from_millis(2500),
            ok: 30,
            errors: 10,
            ..Snapshot::default()
        };
        assert_eq!(Goal::Time(Duration::from_secs(10)).permille(&s), 250);
        assert_eq!(Goal::Requests(80).permille(&s), 500);
        assert_eq!(Goal::Requests(20).permille(&s), 1000);
        assert_eq!(Goal::Open.permille(&s), 0);
        let warm = Snapshot { warmup: true, ..s };
        assert_eq!(Goal::Time(Duration::from_secs(1)).permille(&warm), 0);
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
