//! What a study shows on the command line while it runs ([`crate::study::Watch`]): on a
//! terminal a bar over its runs with the current one's live figures; a peak search's line per
//! step on stderr (unless --quiet or --json); and the document so far handed to the history's
//! saver after each run.

use crate::plan::Plan;
use crate::record::Snapshot;
use crate::report::progress::{Goal, Points, Progress};
use crate::study::{Document, Watch};
use crate::summary::peak::Step;

/// The command line's watch of a study.
pub struct Live<'a> {
    /// Over the runs (or steps).
    bar: Points,
    /// The run in progress.
    run: Option<Progress>,
    /// Whether a peak's step lines are printed.
    lines: bool,
    /// Shown the document so far after each run.
    save: &'a mut dyn FnMut(&Document),
}

impl<'a> Live<'a> {
    /// A watch of a study of `total` runs (None: not known before), shown when `show` and
    /// stderr is a terminal; `save` gets the document so far after each run.
    pub fn new(total: Option<usize>, show: bool, save: &'a mut dyn FnMut(&Document)) -> Live<'a> {
        Live {
            bar: Points::new(total, show && Progress::should_show()),
            run: None,
            lines: show,
            save,
        }
    }
}

/// How far `plan`'s run goes, for its bar.
pub fn goal(plan: &Plan) -> Goal {
    match (plan.stop.duration, plan.stop.requests) {
        (_, Some(n)) => Goal::Requests(n),
        (Some(d), None) => Goal::Time(d),
        (None, None) => Goal::Open,
    }
}

impl Watch for Live<'_> {
    fn run_starts(&mut self, what: &str, plan: &Plan) {
        self.run = Some(self.bar.start(what).towards(goal(plan)));
    }

    fn second(&mut self, now: &Snapshot) {
        if let Some(run) = self.run.as_mut() {
            run.show(now);
        }
    }

    fn run_ends(&mut self) {
        if let Some(mut run) = self.run.take() {
            run.finish();
        }
        self.bar.done();
    }

    fn step(&mut self, step: &Step) {
        self.bar
            .println(&crate::report::peak::step_line(step), self.lines);
    }

    fn so_far(&mut self, doc: &Document) {
        (self.save)(doc);
    }
}
