//! The figures `wirebench history` lists, read from a document when it is stored: ok and
//! failed operations, the rate, the p99 latency and the measured time. A sweep (compare,
//! study) lists its best rate and its worst p99 over the kept runs; a peak search its peak.

use super::Kind;
use crate::summary::compare::Comparison;
use crate::summary::peak::PeakSearch;
use crate::summary::read::tolerant;
use crate::summary::study::{self, Document, Head, Study};
use crate::summary::sweep::Sweep;
use crate::summary::Summary;
use serde::Deserialize;
use serde_json::Value;

/// Headline figures of a stored run; None where the document has no such figure.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Headline {
    /// Ok operations (all runs added).
    pub ok: Option<i64>,
    /// Failed operations (all runs added).
    pub errors: Option<i64>,
    /// Ok operations per second (a sweep's best kept run; a peak search's peak).
    pub ops_per_s: Option<f64>,
    /// 99th percentile latency, µs (a sweep's worst kept run).
    pub p99_us: Option<f64>,
    /// Measured seconds (all runs added).
    pub duration_s: Option<f64>,
}

/// A stored document read into its kind's type: a study's own document
/// (`wirebench.study/1`) as the command's document it holds. Fields an older document lacks
/// take their defaults ([`crate::summary::read::tolerant`]), so every stored document loads.
pub enum Typed {
    /// `wirebench.result/1`.
    Result(Box<Summary>),
    /// `wirebench.sweep/1` (a run's sweep, or a study's).
    Sweep(Box<Sweep>),
    /// `wirebench.compare/1`.
    Compare(Box<Comparison>),
    /// `wirebench.peak/1`.
    Peak(Box<PeakSearch>),
}

impl Typed {
    /// `doc`, stored as `kind`, read.
    pub fn read(kind: Kind, doc: &Value) -> Typed {
        let head = Head::deserialize(doc).unwrap_or_default();
        match kind {
            Kind::Study if head.schema == study::SCHEMA => match tolerant::<Study>(doc).document {
                Document::Run(s) => Typed::Sweep(Box::new(s)),
                Document::Compare(c) => Typed::Compare(c),
                Document::Peak(p) => Typed::Peak(p),
            },
            Kind::Result => Typed::Result(Box::new(tolerant(doc))),
            Kind::Sweep | Kind::Study => Typed::Sweep(Box::new(tolerant(doc))),
            Kind::Compare => Typed::Compare(Box::new(tolerant(doc))),
            Kind::Peak => Typed::Peak(Box::new(tolerant(doc))),
        }
    }

    /// The results it holds, and whether each is kept: a sweep's runs but the discarded
    /// ones; of a peak search's steps, the confirmation (the measurement at the peak; the
    /// other steps probed).
    pub fn results(&self) -> Vec<(&Summary, bool)> {
        fn points(s: &Sweep) -> Vec<(&Summary, bool)> {
            s.points.iter().map(|p| (&p.result, !p.discarded)).collect()
        }
        match self {
            Typed::Result(r) => vec![(r, true)],
            Typed::Sweep(s) => points(s),
            Typed::Compare(c) => points(&c.sweep),
            // The peak's figures are its passed confirmations': a failed one (above the
            // peak) is a probe, its p99 and errors no more the peak's than any other step's.
            Typed::Peak(p) => (p.steps.iter())
                .map(|st| (&st.result, st.confirmation && st.passed))
                .collect(),
        }
    }

    /// The target URLs it measured.
    pub fn targets(&self) -> Vec<String> {
        let urls = |s: &Sweep| s.targets.iter().map(|t| t.url.clone()).collect();
        match self {
            Typed::Result(r) => vec![r.target.clone()],
            Typed::Peak(p) => vec![p.target.clone()],
            Typed::Sweep(s) => urls(s),
            Typed::Compare(c) => urls(&c.sweep),
        }
    }
}

/// The target URLs a document measured.
pub fn targets(kind: Kind, doc: &Value) -> Vec<String> {
    Typed::read(kind, doc).targets()
}

impl Headline {
    /// The headline figures of `doc`.
    pub fn of(kind: Kind, doc: &Value) -> Headline {
        let typed = Typed::read(kind, doc);
        let runs = typed.results();
        let kept = || runs.iter().filter(|(_, k)| *k).map(|(r, _)| *r);
        let best = kept().map(|r| r.throughput.ops_per_s).reduce(f64::max);
        let worst_p99 = kept()
            .filter_map(|r| r.latency.as_ref().map(|l| l.p99_us))
            .reduce(f64::max);
        let ops_per_s = match &typed {
            Typed::Peak(p) => p.peak.as_ref().map(|p| p.ops_per_s),
            _ => best,
        };
        let sum = |f: fn(&Summary) -> u64| Some(runs.iter().map(|(r, _)| f(r) as i64).sum());
        // A peak's operations and errors are those at the peak (its steps probe beyond it,
        // where errors are the search's finding, not the peak's); a search that found none
        // has no such figures.
        let sum = |f: fn(&Summary) -> u64| match &typed {
            Typed::Peak(_) => kept().map(|r| f(r) as i64).reduce(|a, b| a + b),
            _ => sum(f),
        };
        Headline {
            ok: sum(|r| r.ok),
            errors: sum(|r| r.errors.total),
            ops_per_s,
            p99_us: worst_p99,
            duration_s: Some(runs.iter().map(|(r, _)| r.duration_s).sum()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result stored by an older wirebench, without the fields added since (wire bytes,
    /// think times, a mix, shards …), still gives its headline.
    #[test]
    fn an_older_result_still_reads() {
        let doc = serde_json::json!({
            "schema": "wirebench.result/1",
            "target": "tcp://127.0.0.1:9",
            "ok": 1200,
            "errors": { "total": 3, "by_kind": [] },
            "throughput": { "ops_per_s": 400.5 },
            "latency": null,
            "duration_s": 3.0,
        });
        let h = Headline::of(Kind::Result, &doc);
        assert_eq!(
            (h.ok, h.errors, h.ops_per_s),
            (Some(1200), Some(3), Some(400.5))
        );
        assert_eq!((h.p99_us, h.duration_s), (None, Some(3.0)));
        assert_eq!(targets(Kind::Result, &doc), ["tcp://127.0.0.1:9"]);
    }

    /// A peak search stored before its trials and contradictions were counted (issue 17)
    /// gives its peak and its steps' figures: its parts read with defaults for what they lack.
    #[test]
    fn an_older_peak_search_still_reads() {
        let doc = serde_json::json!({
            "schema": "wirebench.peak/1",
            "target": "tcp://127.0.0.1:9",
            "objectives": ["p99<=50ms"],
            "peak": { "offered_per_s": 1000.0, "ops_per_s": 990.0, "mean_us": 80.0,
                      "p50_us": 70.0, "p99_us": 300.0, "confirmed": true },
            "steps": [{
                "offered_per_s": 1000.0, "achieved_per_s": 990.0, "p50_us": 70.0,
                "p99_us": 300.0, "error_percent": 0.0, "kept_up": true, "passed": true,
                "generator_limited": false, "confirmation": true, "objectives": [],
                "result": { "schema": "wirebench.result/1", "ok": 990, "duration_s": 1.0 }
            }],
        });
        let h = Headline::of(Kind::Peak, &doc);
        assert_eq!((h.ok, h.ops_per_s), (Some(990), Some(990.0)));
        assert_eq!(targets(Kind::Peak, &doc), ["tcp://127.0.0.1:9"]);
    }

    /// A peak's p99 and errors are those of its passed confirmation, not of a step above the
    /// peak that failed its own confirmation (issue 40: history showed the worst failed
    /// step's p99 as the peak's and summed every step's errors).
    #[test]
    fn a_peak_s_figures_are_those_at_the_peak() {
        let step = |rate: f64, passed: bool, p99: f64, errors: u64| {
            serde_json::json!({
                "offered_per_s": rate, "achieved_per_s": rate, "p99_us": p99,
                "kept_up": true, "passed": passed, "confirmation": true,
                "result": { "schema": "wirebench.result/1", "ok": rate as u64,
                            "errors": { "total": errors, "by_kind": [] },
                            "latency": { "count": rate as u64, "mean_us": p99 / 2.0,
                                         "p50_us": p99 / 2.0, "p90_us": p99, "p95_us": p99,
                                         "p99_us": p99, "p999_us": p99, "min_us": 1.0,
                                         "max_us": p99, "stddev_us": 1.0,
                                         "histogram": { "encoding": "hdrhistogram-v2+base64",
                                                        "unit": "ns", "lowest": 1,
                                                        "highest": 3_600_000_000_000u64,
                                                        "significant_digits": 3,
                                                        "data": "" } },
                            "duration_s": 1.0 }
            })
        };
        let doc = serde_json::json!({
            "schema": "wirebench.peak/1",
            "target": "tcp://127.0.0.1:9",
            "peak": { "offered_per_s": 1000.0, "ops_per_s": 1000.0, "p99_us": 300.0,
                      "confirmed": true },
            "steps": [step(2000.0, false, 90_000.0, 40), step(1000.0, true, 300.0, 0)],
        });
        let h = Headline::of(Kind::Peak, &doc);
        assert_eq!(
            (h.p99_us, h.errors, h.ok),
            (Some(300.0), Some(0), Some(1000))
        );
        assert_eq!(h.duration_s, Some(2.0), "the search's whole time");
    }
}
