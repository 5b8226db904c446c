//! Pass/fail thresholds (`--fail-if 'p99>20ms'`, `'errors>0.1%'`, `'ops<5000'`), as k6's
//! thresholds: each is a condition that fails the command (exit 3) when it holds. Latency and
//! error-percent conditions are the negation of a `--slo` objective (`p99>20ms` fails exactly
//! when `p99<=20ms` does not hold), so they are parsed and measured by [`super::slo`]; the
//! rate and the error count are read here.

use super::slo::{Metric, Slo};
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
}

/// The hint every threshold usage error ends with.
const FORM: &str = "write METRIC>BOUND or METRIC<BOUND, e.g. --fail-if 'p99>20ms', --fail-if 'errors>0.1%', --fail-if 'ops<5000' \
(latency p50 p90 p95 p99 p999 mean max and errors take > or >=; ops takes < or <=)";

impl Threshold {
    /// Parses `p99>20ms`, `errors>0.1%`, `errors>0`, `ops<5000`, `ops <= 1k`.
    pub fn parse(text: &str) -> Result<Threshold, String> {
        let t = text.trim();
        let Some(at) = t.find(['<', '>']) else {
            return Err(format!("--fail-if '{text}' has no > or <: {FORM}"));
        };
        let above = t[at..].starts_with('>');
        let inclusive = t[at + 1..].starts_with('=');
        let name = t[..at].trim().to_ascii_lowercase();
        let value = t[at + 1 + usize::from(inclusive)..].trim();
        let bad = |why: &str| Err(format!("--fail-if '{text}': {why}: {FORM}"));
        if name == "ops" {
            if above {
                return bad("ops fails below a rate, not above");
            }
            let bound = match parse_rate(value) {
                Some(v) => v,
                None => {
                    return bad("give the rate in operations per second, e.g. ops<5000 or ops<5k")
                }
            };
            return Ok(Threshold {
                text: t.into(),
                measure: Measure::Ops,
                above,
                inclusive,
                bound,
            });
        }
        if !above {
            return bad(&format!("{name} fails above a bound, not below"));
        }
        if name == "errors" && !value.ends_with('%') {
            let Ok(bound) = value.parse::<f64>() else {
                return bad("give errors as a count (errors>0) or a percent (errors>0.1%)");
            };
            return Ok(Threshold {
                text: t.into(),
                measure: Measure::ErrorCount,
                above,
                inclusive,
                bound,
            });
        }
        // `p99>20ms` fails exactly when the objective `p99<=20ms` does not hold; `>=` is `<`.
        let objective = format!("{name}{}{value}", if inclusive { "<" } else { "<=" });
        let slo = Slo::parse(&objective).map_err(|e| {
            format!(
                "--fail-if '{text}': {}",
                e.replace(&format!("--slo '{objective}': "), "")
            )
        })?;
        let bound = slo.bound;
        Ok(Threshold {
            text: t.into(),
            measure: Measure::Objective(slo),
            above,
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
    /// lowest for one below); a run without the figure fails.
    pub fn check(&self, runs: &[&Summary]) -> Checked {
        let values: Vec<Option<f64>> = runs.iter().map(|s| self.value(s)).collect();
        let measured = if values.is_empty() || values.iter().any(Option::is_none) {
            None
        } else {
            let all = values.iter().flatten().copied();
            match self.above {
                true => all.reduce(f64::max),
                false => all.reduce(f64::min),
            }
        };
        Checked {
            fail_if: self.text.clone(),
            measured,
            shown: measured.map_or_else(|| "not measured".into(), |m| self.show(m)),
            passed: measured.is_some_and(|m| !self.trips(m)),
        }
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
            let e = Threshold::parse(text).unwrap_err();
            assert!(e.starts_with("--fail-if"), "{text}: {e}");
        }
    }

    #[test]
    fn trips_at_the_bound_only_when_inclusive() {
        let gt = Threshold::parse("ops<100").unwrap();
        let ge = Threshold::parse("ops<=100").unwrap();
        assert!(!gt.trips(100.0) && gt.trips(99.0));
        assert!(ge.trips(100.0));
    }
}
