//! Studies: several runs of one design, and what they add up to. A [`Design`] is built once,
//! from the command line or from a plan file: the points of a sweep and their rounds
//! ([`sweep::Points`]), a comparison's rounds and baseline ([`compare::Rounds`]), or a peak
//! search's bounds and objectives ([`peak::Bounds`]). [`execute`] runs it with the [`Stop`] its
//! caller gives (a stop ends that study only) and shows its progress to a [`Watch`], and
//! returns the study's [`Document`]: a sweep, a comparison or a peak search, each with its own
//! schema.
//!
//! The command layer (`app/`) only parses, builds the design, calls [`execute`], renders and
//! stores; the loops are here. Each run of a study is [`point::measure`]: the engine's run of
//! one plan, where a target that cannot be reached is a result too, so that a study keeps the
//! runs before it.

pub mod compare;
pub mod peak;
pub mod point;
pub mod shards;
pub mod sweep;

use crate::engine::stop::Stop;
use crate::plan::Plan;
use crate::record::Snapshot;
use crate::summary::peak::Step;
pub use crate::summary::study::Document;

/// What a study runs: a document, serialized with its kind (`"kind": "sweep"`), its plans
/// as their arguments; read back, every plan is validated again.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Design {
    /// Every point of a sweep (targets × swept values × rounds): `wirebench run` with several
    /// targets, swept flags or `--runs`.
    Sweep(sweep::Points),
    /// Targets against a baseline, in rounds: `wirebench compare`.
    Compare(compare::Rounds),
    /// The highest rate within objectives: `wirebench peak`.
    Peak(Box<peak::Bounds>),
}

impl Design {
    /// How many runs the study holds, when that is known before it runs (a peak search's
    /// steps depend on what it finds).
    pub fn runs(&self) -> Option<usize> {
        match self {
            Design::Sweep(p) => Some(p.runs.len()),
            Design::Compare(r) => Some(r.points.runs.len()),
            Design::Peak(_) => None,
        }
    }
}

/// What a study shows while it runs. Every method has a default that ignores it.
pub trait Watch {
    /// A run starts: `what` names it (`b run 2/5 --size 1024`, `offering 2000 requests/s`).
    fn run_starts(&mut self, _what: &str, _plan: &Plan) {}
    /// A second of the run in progress (the engine's live snapshot).
    fn second(&mut self, _now: &Snapshot) {}
    /// The run ended, measured or not.
    fn run_ends(&mut self) {}
    /// A peak search's step, judged.
    fn step(&mut self, _step: &Step) {}
    /// The document so far, after each run: marked in progress (`stopped`) until the last,
    /// so that what is saved of it now is a true partial study.
    fn so_far(&mut self, _doc: &Document) {}
}

/// A [`Watch`] that shows nothing.
pub struct Unwatched;

impl Watch for Unwatched {}

/// A study that could not go on: a run could not run (not a target that could not be reached,
/// which is a result). `measured` holds the runs before it, marked stopped by this error, when
/// there were any.
#[derive(Debug)]
pub struct Error {
    /// Why, as the run's error said it (a usage error stays one).
    pub cause: anyhow::Error,
    /// The study of the runs measured before it.
    pub measured: Option<Box<Document>>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.cause)
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The study ended by `cause`, after the runs of `doc` if it holds any (it is then
    /// marked stopped by it).
    fn after(cause: anyhow::Error, mut doc: Document, measured_any: bool) -> Error {
        if !measured_any {
            return Error {
                cause,
                measured: None,
            };
        }
        let why = format!("{cause:#}");
        match &mut doc {
            Document::Run(s) => s.stopped = Some(why),
            Document::Compare(c) => c.sweep.stopped = Some(why),
            Document::Peak(p) => p.stopped = Some(why),
        }
        Error {
            cause,
            measured: Some(Box::new(doc)),
        }
    }
}

/// Runs `design` until its end or `stop`, showing its progress to `watch`: the study's
/// document. A target that could not be reached (or stopped answering) ends the study with
/// its run recorded and the reason in the document's `stopped`; a stop ends it after the run
/// in progress, `stopped by …`. An error is a run that could not run at all.
pub fn execute(design: &Design, stop: &Stop, watch: &mut dyn Watch) -> Result<Document, Error> {
    match design {
        Design::Sweep(points) => sweep::execute(points, stop, watch).map(Document::Run),
        Design::Compare(rounds) => {
            compare::execute(rounds, stop, watch).map(|c| Document::Compare(Box::new(c)))
        }
        Design::Peak(bounds) => {
            peak::execute(bounds, stop, watch).map(|p| Document::Peak(Box::new(p)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Design;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    /// The design the command line `wirebench WORDS` builds, as its command builds it.
    fn design(words: &[&str]) -> Design {
        let argv = ["wirebench"].iter().chain(words).copied();
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Run(a) => Design::Sweep(crate::app::sweep::batch(&a).unwrap()),
            Command::Compare(a) => {
                Design::Compare(crate::app::compare::prepare(&a).unwrap().rounds)
            }
            Command::Peak(a) => Design::Peak(Box::new(crate::app::peak::setup(&a).unwrap())),
            _ => unreachable!("the words name run, compare or peak"),
        }
    }

    /// Issue 41, item 2: a design is a document. Serialized (JSON here) and read back, it is
    /// the same design, every plan validated again: a sweep, a comparison, a peak search.
    #[test]
    fn a_design_serialized_reads_back_as_the_same_design() {
        let studies: [&[&str]; 3] = [
            &[
                "run",
                "a=tcp://127.0.0.1:9000",
                "b=tcp://127.0.0.1:9001",
                "-c",
                "1,4",
                "--size",
                "64,1k",
                "--runs",
                "2",
                "-d",
                "1s",
                "--units",
                "MB",
            ],
            &[
                "compare",
                "a=http://127.0.0.1:8080/x",
                "b=http://127.0.0.1:8081/x",
                "--runs",
                "4",
                "--seed",
                "7",
                "--threshold",
                "2%",
                "-d",
                "500ms",
            ],
            &[
                "peak",
                "tcp://127.0.0.1:9000",
                "--slo",
                "p99<=50ms",
                "--slo",
                "errors<=0.1%",
                "--step",
                "2s",
                "--start-rate",
                "500",
                "--ceiling",
                "9000",
            ],
        ];
        for words in studies {
            let design = design(words);
            let json = serde_json::to_string(&design).unwrap();
            let back: Design =
                serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
            assert_eq!(format!("{back:?}"), format!("{design:?}"), "{words:?}");
            assert_eq!(serde_json::to_string(&back).unwrap(), json, "{words:?}");
            let kind: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(kind["kind"], words[0].replace("run", "sweep"), "{words:?}");
        }
    }
}
