//! Pass/fail thresholds (`--fail-if 'p99>20ms'`, `'errors>0.1%'`, `'ops<5000'`), as k6's
//! thresholds: each is a condition that fails the command (exit 3) when it holds. Latency and
//! error-percent conditions are the negation of a `--slo` objective (`p99>20ms` fails exactly
//! when `p99<=20ms` does not hold), so they are parsed and measured by [`super::slo`]; the
//! rate and the error count are read here.

use super::slo::{Metric, Slo, SloError};
use super::Summary;
use crate::units::format_us;
use serde::{Deserialize, Serialize};

/// What a threshold reads.
#[derive(Clone, Debug, PartialEq)]
enum Measure {
    /// A latency or the error percentage, read as the objective it negates.
    Objective(Slo),
    /// Ok operations per second.
    Ops,
    /// Failed operations, counted.
    ErrorCount,
}

/// One `--fail-if` condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// The text as given.
    pub text: String,
    measure: Measure,
    /// `>`/`>=` (fails above) or `<`/`<=` (fails below).
    above: bool,
    /// `>=` or `<=`.
    inclusive: bool,
    /// The bound: µs, percent, operations/s or a count.
    bound: f64,
}

/// How a document fared against one threshold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// The condition, as given.
    pub fail_if: String,
    /// The worst measured value over the runs checked (µs, percent, ops/s or a count); None
    /// when nothing was measured (which fails).
    pub measured: Option<f64>,
    /// The measured value in words (`21.3 ms`, `0.050%`, `4,812/s`).
    pub shown: String,
    /// Whether the condition did not hold.
    pub passed: bool,
    /// Of several runs (a sweep's points), the one whose value is the worst, e.g. `-c 100`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// The metrics a threshold reads, for the message that names an unknown one.
const METRICS: &str = "p50, p90, p95, p99, p999, mean, max (latency: fail above, with a unit, e.g. p99>20ms), errors (fail above: errors>0.1% or errors>0), ops (ok operations/s: fail below, e.g. ops<5000)";

/// Latency metrics a threshold takes.
const LATENCIES: [&str; 8] = ["p50", "p90", "p95", "p99", "p999", "p99.9", "mean", "max"];

/// The hint every threshold usage error ends with.
const FORM: &str = "write METRIC>BOUND or METRIC<BOUND, e.g. --fail-if 'p99>20ms', --fail-if 'errors>0.1%', --fail-if 'ops<5000' \
(latency p50 p90 p95 p99 p999 mean max and errors take > or >=; ops takes < or <=)";

/// A `--fail-if` that is no condition: the text given and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// Neither `>` nor `<`.
    #[error("--fail-if '{0}' has no > or <: {FORM}")]
    NoComparison(String),
    /// A metric that is not one of [`METRICS`].
    #[error("--fail-if '{text}': unknown metric '{name}': use one of {METRICS}")]
    UnknownMetric {
        /// The condition as given.
        text: String,
        /// The metric.
        name: String,
    },
    /// A bound the metric does not take.
    #[error("--fail-if '{0}': {1}: {FORM}")]
    Bound(String, BoundWhy),
    /// A latency bound without a unit.
    #[error(
        "--fail-if '{text}': give the latency bound a unit, e.g. {name}>{value}ms (ns, us, ms, s)"
    )]
    NoUnit {
        /// The condition as given.
        text: String,
        /// The metric.
        name: String,
        /// The bound.
        value: String,
    },
    /// The objective the condition negates is no objective: its reason, without the
    /// objective's own text (the user wrote the condition, not the objective).
    #[error("--fail-if '{}': {}", .0, objective(.1))]
    Objective(String, SloError),
}

/// An objective's error as the condition it negates says it.
fn objective(e: &SloError) -> String {
    match e.why.follows_text() {
        true => e.to_string(),
        false => e.why.to_string(),
    }
}

/// Why a bound does not fit its metric.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoundWhy {
    /// `ops>…`.
    #[error("ops fails below a rate, not above")]
    OpsAbove,
    /// `ops<…` that is not a rate.
    #[error("give the rate in operations per second, e.g. ops<5000 or ops<5k")]
    OpsRate,
    /// A latency or errors metric with `<`.
    #[error("{0} fails above a bound, not below")]
    Below(String),
    /// `errors>…` that is neither a count nor a percent.
    #[error("give errors as a count (errors>0) or a percent (errors>0.1%)")]
    Errors,
    /// A bound every run trips (`errors>-1`, `errors>=0`) or none can (`ops<0`).
    #[error("{0}: give a bound a run can meet and miss, e.g. errors>0 or ops<5000")]
    Always(&'static str),
}

impl Threshold {
    /// Parses `p99>20ms`, `errors>0.1%`, `errors>0`, `ops<5000`, `ops <= 1k`.
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let t = text.trim();
        let Some(at) = t.find(['<', '>']) else {
            return Err(ThresholdError::NoComparison(text.into()));
        };
        let above = t[at..].starts_with('>');
        let inclusive = t[at + 1..].starts_with('=');
        let name = t[..at].trim().to_ascii_lowercase();
        let value = t[at + 1 + usize::from(inclusive)..].trim();
        let bad = |why: BoundWhy| Err(ThresholdError::Bound(text.into(), why));
        if name != "ops" && name != "errors" && !LATENCIES.contains(&name.as_str()) {
            let text = text.into();
            return Err(ThresholdError::UnknownMetric { text, name });
        }
        if name == "ops" {
            return Threshold::ops(text, above, inclusive, value);
        }
        if !above {
            return bad(BoundWhy::Below(name));
        }
        if name == "errors" && !value.ends_with('%') {
            return Threshold::error_count(text, inclusive, value);
        }
        if name != "errors" && !value.is_empty() && value.parse::<f64>().is_ok() {
            // A bare number is seconds to parse_duration: `p99>20` would mean 20 s.
            let (text, value) = (text.into(), value.into());
            return Err(ThresholdError::NoUnit { text, name, value });
        }
        // `p99>20ms` fails exactly when the objective `p99<=20ms` does not hold; `>=` is `<`.
        let objective = format!("{name}{}{value}", if inclusive { "<" } else { "<=" });
        let slo = Slo::parse(&objective).map_err(|e| ThresholdError::Objective(text.into(), e))?;
        let bound = slo.bound;
        Ok(Threshold {
            text: t.into(),
            measure: Measure::Objective(slo),
            above,
            inclusive,
            bound,
        })
    }

    /// `ops<5000`, `ops<=1k` (`text`, split at its comparison): a floor under the rate.
    fn ops(
        text: &str,
        above: bool,
        inclusive: bool,
        value: &str,
    ) -> Result<Threshold, ThresholdError> {
        let bad = |why: BoundWhy| Err(ThresholdError::Bound(text.into(), why));
        if above {
            return bad(BoundWhy::OpsAbove);
        }
        let bound = match parse_rate(value) {
            Some(v) => v,
            None => return bad(BoundWhy::OpsRate),
        };
        if bound == 0.0 && !inclusive {
            return bad(BoundWhy::Always("no rate is below 0, so it never fails"));
        }
        Ok(Threshold {
            text: text.trim().into(),
            measure: Measure::Ops,
            above,
            inclusive,
            bound,
        })
    }

    /// `errors>0`, `errors>=10` (`text`, split at its comparison): a ceiling on the count.
    fn error_count(text: &str, inclusive: bool, value: &str) -> Result<Threshold, ThresholdError> {
        let bad = |why: BoundWhy| Err(ThresholdError::Bound(text.into(), why));
        let Ok(bound) = value.parse::<f64>() else {
            return bad(BoundWhy::Errors);
        };
        if !bound.is_finite() {
            return bad(BoundWhy::Errors);
        }
        if bound < 0.0 || (bound == 0.0 && inclusive) {
            return bad(BoundWhy::Always(
                "every run has at least 0 errors, so it always fails",
            ));
        }
        Ok(Threshold {
            text: text.trim().into(),
            measure: Measure::ErrorCount,
            above: true,
            inclusive,
            bound,
        })
    }

    /// This threshold's value in one run; None when the run has no such figure.
    fn value(&self, s: &Summary) -> Option<f64> {
        match &self.measure {
            Measure::Objective(slo) => slo.check(s).measured,
            Measure::Ops => Some(s.throughput.ops_per_s),
            Measure::ErrorCount => Some(s.errors.total as f64),
        }
    }

    /// Whether `value` trips the condition.
    fn trips(&self, value: f64) -> bool {
        match (self.above, self.inclusive) {
            (true, false) => value > self.bound,
            (true, true) => value >= self.bound,
            (false, false) => value < self.bound,
            (false, true) => value <= self.bound,
        }
    }

    /// Checks every run in `runs`: the worst value decides (the highest for a bound above, the
    /// lowest for one below); a run without the figure fails. `points` names each run (a
    /// sweep's points; else empty): the worst one's name goes into the verdict.
    pub fn check(&self, runs: &[&Summary], points: &[String]) -> Checked {
        let values: Vec<Option<f64>> = runs.iter().map(|s| self.value(s)).collect();
        let worst = match values.iter().position(Option::is_none) {
            Some(i) => Some(i),
            None => (0..values.len()).reduce(|a, b| {
                let (va, vb) = (values[a].unwrap_or(0.0), values[b].unwrap_or(0.0));
                match self.above == (vb > va) {
                    true => b,
                    false => a,
                }
            }),
        };
        let measured = worst.and_then(|i| values[i]);
        Checked {
            fail_if: self.text.clone(),
            measured,
            shown: measured.map_or_else(|| "not measured".into(), |m| self.show(m)),
            passed: measured.is_some_and(|m| !self.trips(m)),
            at: worst.and_then(|i| points.get(i)).cloned(),
        }
    }

    /// The verdict in words, the measured value first so "pass" cannot be read as the bound
    /// having been crossed: `p99 412µs, fails above 20ms: pass`.
    pub fn line(&self, c: &Checked) -> String {
        let name = self.text[..self.text.find(['<', '>']).unwrap_or(0)].trim();
        let bound = self.text[self.text.find(['<', '>']).map_or(0, |i| i + 1)..]
            .trim_start_matches('=')
            .trim();
        let how = match (self.above, self.inclusive) {
            (true, false) => "above",
            (true, true) => "at or above",
            (false, false) => "below",
            (false, true) => "at or below",
        };
        let value = match (&self.measure, c.measured) {
            (Measure::ErrorCount, Some(v)) => format!("{v:.0}"),
            _ => c.shown.clone(),
        };
        let at = c.at.as_ref().map_or(String::new(), |p| format!(" at {p}"));
        let verdict = if c.passed { "pass" } else { "FAIL" };
        format!("{name} {value}{at}, fails {how} {bound}: {verdict}")
    }

    /// A value of this threshold's metric in words.
    fn show(&self, v: f64) -> String {
        match &self.measure {
            Measure::Objective(slo) if slo.metric == Metric::Errors => format!("{v:.3}%"),
            Measure::Objective(_) => format_us(v),
            Measure::Ops => format!("{v:.0}/s"),
            Measure::ErrorCount => format!("{v:.0} errors"),
        }
    }
}

/// A verdict in words ([`Threshold::line`]), read again from its condition's text (a stored
/// document's verdicts have only that); as measured when the text no longer parses.
pub fn verdict_line(c: &Checked) -> String {
    match Threshold::parse(&c.fail_if) {
        Ok(t) => t.line(c),
        Err(_) => format!(
            "{}: {} (measured {})",
            c.fail_if,
            if c.passed { "pass" } else { "FAIL" },
            c.shown
        ),
    }
}

/// `5000`, `5k`, `1.5M`, `5000/s`.
fn parse_rate(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches("/s");
    let (number, scale) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1e3),
        'm' | 'M' => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_conditions() {
        let table = [
            ("p99>20ms", 20_000.0, true, false),
            ("p50 >= 1ms", 1_000.0, true, true),
            ("errors>0.1%", 0.1, true, false),
            ("errors>0", 0.0, true, false),
            ("ops<5000", 5_000.0, false, false),
            ("ops<=5k", 5_000.0, false, true),
        ];
        for (text, bound, above, inclusive) in table {
            let t = Threshold::parse(text).unwrap();
            assert_eq!(
                (t.bound, t.above, t.inclusive),
                (bound, above, inclusive),
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_conditions_that_parse_to_nothing() {
        for text in [
            "",
            "p99",
            "p99<20ms",
            "ops>5",
            "ops<fast",
            "p98>5ms",
            "errors>x",
            "p99>",
            "errors>200%",
        ] {
            let e = Threshold::parse(text).unwrap_err().to_string();
            assert!(e.starts_with("--fail-if"), "{text}: {e}");
        }
    }

    #[test]
    fn an_unknown_metric_gets_the_list_of_metrics() {
        for text in ["rps<5", "p(95)<200", "latency>5ms", "p98>5ms"] {
            let e = Threshold::parse(text).unwrap_err().to_string();
            assert!(e.contains("unknown metric"), "{text}: {e}");
            assert!(e.contains("p99") && e.contains("ops"), "{text}: {e}");
            assert!(!e.contains("not below"), "{text}: {e}");
        }
    }

    #[test]
    fn a_latency_bound_needs_a_unit() {
        for text in ["p99>20", "mean>=0.5", "max>1"] {
            let e = Threshold::parse(text).unwrap_err().to_string();
            assert!(e.contains("unit") && e.contains("ms"), "{text}: {e}");
        }
        assert_eq!(Threshold::parse("p99>20ms").unwrap().bound, 20_000.0);
        assert_eq!(Threshold::parse("p99>1s").unwrap().bound, 1e6);
    }

    #[test]
    fn the_verdict_line_puts_the_value_before_the_bound() {
        let t = Threshold::parse("p99>20ms").unwrap();
        let c = Checked {
            fail_if: t.text.clone(),
            measured: Some(412.0),
            shown: format_us(412.0),
            passed: true,
            at: None,
        };
        assert_eq!(
            t.line(&c),
            format!("p99 {}, fails above 20ms: pass", format_us(412.0))
        );
        let t = Threshold::parse("errors>=3").unwrap();
        let c = Checked {
            fail_if: t.text.clone(),
            measured: Some(5.0),
            shown: "5 errors".into(),
            passed: false,
            at: Some("-c 100".into()),
        };
        assert_eq!(t.line(&c), "errors 5 at -c 100, fails at or above 3: FAIL");
    }

    #[test]
    fn trips_at_the_bound_only_when_inclusive() {
        let gt = Threshold::parse("ops<100").unwrap();
        let ge = Threshold::parse("ops<=100").unwrap();
        assert!(!gt.trips(100.0) && gt.trips(99.0));
        assert!(ge.trips(100.0));
    }
}
