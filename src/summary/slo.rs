//! Service-level objectives (`--slo 'p99<=50ms'`, `--slo 'errors<=0.1%'`): parsed once, then
//! checked against each step's summary. A latency objective reads the open-loop latency, counted
//! from each request's intended send time, so a queue at the target shows (no coordinated
//! omission).

use super::Summary;
use crate::units::{format_us, parse_duration};
use serde::Serialize;

/// What an objective bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// A latency percentile, in thousandths (p99 = 990, p99.9 = 999).
    Percentile(u16),
    /// The mean latency.
    Mean,
    /// The largest latency.
    Max,
    /// Failed operations as a percentage of all operations.
    Errors,
}

/// One objective: `metric <= bound` (or `<`).
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    /// The text as given, for reports.
    pub text: String,
    /// What is bounded.
    pub metric: Metric,
    /// The bound: µs for latency, percent for errors.
    pub bound: f64,
    /// `<` rather than `<=`.
    pub strict: bool,
}

/// How one step fared against one objective.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Verdict {
    /// The objective, as given.
    pub slo: String,
    /// The measured value: µs for latency, percent for errors; None when nothing was measured.
    pub measured: Option<f64>,
    /// Whether the objective held.
    pub held: bool,
}

/// The one-line hint every SLO usage error ends with.
const FORM: &str = "write METRIC<=BOUND, e.g. --slo 'p99<=50ms' or --slo 'errors<=0.1%' \
(metrics: p50 p90 p95 p99 p999 mean max errors; < or <=)";

/// A `--slo` that is no objective: the text given and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SloError {
    /// The objective as given.
    pub text: String,
    /// What is wrong with it.
    pub why: SloWhy,
}

/// What is wrong with an objective.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SloWhy {
    /// Neither `<` nor `<=`.
    #[error("has no < or <=: {FORM}")]
    NoComparison,
    /// A metric that is not one of [`FORM`]'s.
    #[error("unknown metric '{0}': {FORM}")]
    UnknownMetric(String),
    /// An error bound without `%`.
    #[error("give the error bound in percent, e.g. errors<=0.1%")]
    NotPercent,
    /// An error bound outside 0..=100 %.
    #[error("the error bound must be 0% to 100%")]
    PercentRange,
    /// A latency bound without a unit.
    #[error("give the latency bound a unit, e.g. {0}<={1}ms (ns, us, ms, s)")]
    NoUnit(String, String),
    /// A latency bound that is not a duration.
    #[error(transparent)]
    Duration(#[from] crate::units::UnitError),
    /// A latency at most 0, or errors below 0 %.
    #[error("can never hold: give a bound above 0")]
    Never,
}

impl SloWhy {
    /// Whether the message reads `--slo 'TEXT' WHY` (no colon after the objective).
    pub fn follows_text(&self) -> bool {
        matches!(self, SloWhy::NoComparison | SloWhy::Never)
    }
}

impl std::fmt::Display for SloError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (text, why) = (&self.text, &self.why);
        match why.follows_text() {
            true => write!(f, "--slo '{text}' {why}"),
            false => write!(f, "--slo '{text}': {why}"),
        }
    }
}

impl std::error::Error for SloError {}

impl Slo {
    /// Parses `p99<=50ms`, `mean < 2ms`, `errors<=0.1%`.
    pub fn parse(text: &str) -> Result<Slo, SloError> {
        let err = |why: SloWhy| SloError {
            text: text.to_string(),
            why,
        };
        let t = text.trim();
        let (at, strict, len) = match (t.find("<="), t.find('<')) {
            (Some(i), _) => (i, false, 2),
            (None, Some(i)) => (i, true, 1),
            _ => return Err(err(SloWhy::NoComparison)),
        };
        let name = t[..at].trim().to_ascii_lowercase();
        let value = t[at + len..].trim();
        let metric = match name.as_str() {
            "p50" => Metric::Percentile(500),
            "p90" => Metric::Percentile(900),
            "p95" => Metric::Percentile(950),
            "p99" => Metric::Percentile(990),
            "p999" | "p99.9" => Metric::Percentile(999),
            "mean" => Metric::Mean,
            "max" => Metric::Max,
            "errors" => Metric::Errors,
            _ => return Err(err(SloWhy::UnknownMetric(name))),
        };
        let bound = if metric == Metric::Errors {
            let number = value
                .strip_suffix('%')
                .ok_or_else(|| err(SloWhy::NotPercent))?;
            match number.trim().parse::<f64>() {
                Ok(p) if p == 0.0 && strict => return Err(err(SloWhy::Never)),
                Ok(p) if (0.0..=100.0).contains(&p) => p,
                _ => return Err(err(SloWhy::PercentRange)),
            }
        } else {
            if value.parse::<f64>().is_ok() {
                // A bare number is seconds to parse_duration: `p99<=50` would mean 50 s.
                return Err(err(SloWhy::NoUnit(name, value.into())));
            }
            let d = parse_duration(value).map_err(|e| err(e.into()))?;
            // No latency is 0: `p99<=0ms` would fail every run, whatever the target.
            if d.is_zero() {
                return Err(err(SloWhy::Never));
            }
            d.as_secs_f64() * 1e6
        };
        Ok(Slo {
            text: t.to_string(),
            metric,
            bound,
            strict,
        })
    }

    /// Whether the objective is about latency (not errors).
    pub fn is_latency(&self) -> bool {
        self.metric != Metric::Errors
    }

    /// Checks the objective against a run's summary.
    pub fn check(&self, s: &Summary) -> Verdict {
        let measured = self.measure(s);
        let held = measured.is_some_and(|m| {
            if self.strict {
                m < self.bound
            } else {
                m <= self.bound
            }
        });
        Verdict {
            slo: self.text.clone(),
            measured,
            held,
        }
    }

    /// The summary's value of this metric.
    fn measure(&self, s: &Summary) -> Option<f64> {
        if self.metric == Metric::Errors {
            let all = s.ok + s.errors.total;
            return (all > 0).then(|| 100.0 * s.errors.total as f64 / all as f64);
        }
        let l = s.latency.as_ref()?;
        Some(match self.metric {
            Metric::Percentile(500) => l.p50_us,
            Metric::Percentile(900) => l.p90_us,
            Metric::Percentile(950) => l.p95_us,
            Metric::Percentile(990) => l.p99_us,
            Metric::Percentile(_) => l.p999_us,
            Metric::Mean => l.mean_us,
            Metric::Max | Metric::Errors => l.max_us,
        })
    }

    /// The measured value as text: a duration, or a percentage.
    pub fn show(&self, measured: f64) -> String {
        match self.metric {
            Metric::Errors => format!("{measured:.3}%"),
            _ => format_us(measured),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_objectives() {
        let table = [
            ("p99<=50ms", Metric::Percentile(990), 50_000.0, false),
            (" p50 < 2ms ", Metric::Percentile(500), 2_000.0, true),
            ("P999<=1s", Metric::Percentile(999), 1e6, false),
            ("mean<=250us", Metric::Mean, 250.0, false),
            ("max<1s", Metric::Max, 1e6, true),
            ("errors<=0.1%", Metric::Errors, 0.1, false),
        ];
        for (text, metric, bound, strict) in table {
            let s = Slo::parse(text).unwrap();
            assert_eq!(
                (s.metric, s.bound, s.strict),
                (metric, bound, strict),
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_objectives_that_parse_to_nothing() {
        for text in [
            "",
            "p99",
            "p98<=5ms",
            "p99>=5ms",
            "p99<=",
            "p99<=fast",
            "errors<=0.1",
            "errors<=200%",
            "p99<0",
            "p99<=50",
            "mean<2.5",
        ] {
            let e = Slo::parse(text).unwrap_err().to_string();
            assert!(e.starts_with("--slo"), "{text}: {e}");
        }
    }
}
