//! The peak search's report: the Handle.Net table (peak throughput within the objective, and
//! the mean, median and p99 latency at it), then the whole curve, one row per step; or the
//! `wirebench.peak/1` JSON document.

use super::format::rate;
use super::table::{new_table, print_table};
use crate::summary::peak::{Peak, PeakSearch, Step};
use crate::units::format_us;
use std::io::{self, Write};

/// Writes the study as pretty-printed JSON followed by a newline.
pub fn write_json(study: &PeakSearch, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, study)?;
    writeln!(out)?;
    out.flush()
}

/// Writes the study as tables: its objective and conclusion, the peak, the kinds at the peak
/// (a mix), then the curve.
pub fn write(study: &PeakSearch, out: &mut dyn Write) -> io::Result<()> {
    let width = comfy_table::Table::new().width();
    writeln!(
        out,
        "wirebench peak → {}\n  objective: {}; steps of {}s, bisected to {:.0}%\n",
        study.target,
        study.objectives.join(", "),
        study.step_s,
        study.tolerance * 100.0
    )?;
    writeln!(out, "  {}\n", study.conclusion)?;
    contradictions(study, out)?;
    if let Some(p) = &study.peak {
        peak(p, width, out)?;
    }
    kinds_at_peak(study, width, out)?;
    curve(study, width, out)?;
    out.flush()
}

/// The Handle.Net table: the peak's rate and latencies, and its trials.
fn peak(p: &Peak, width: Option<u16>, out: &mut dyn Write) -> io::Result<()> {
    let mut t = new_table(
        &[
            "peak ops/s",
            "mean latency",
            "p50",
            "p99",
            "confirmed",
            "trials: ops/s, p99",
        ],
        width,
    );
    t.add_row(vec![
        rate(p.ops_per_s),
        format_us(p.mean_us),
        format_us(p.p50_us),
        format_us(p.p99_us),
        format!(
            "{} ({} of {} passed)",
            if p.confirmed { "yes" } else { "no" },
            p.passed_trials,
            p.trials
        ),
        spread(p),
    ]);
    print_table(out, &mut t, 0..4)?;
    writeln!(out)
}

/// A mix's kinds at the peak (the Handle.Net study's resolutions and creations): their rates
/// and latencies were only in the JSON (issue 40). From a trial that passed at the peak's
/// rate: its first passed confirmation, else (a majority decided the rate, its confirmation
/// among the failed) its first passed trial.
fn kinds_at_peak(study: &PeakSearch, width: Option<u16>, out: &mut dyn Write) -> io::Result<()> {
    let at_peak = study.peak.as_ref().and_then(|p| {
        let at = |s: &&Step| {
            s.passed
                && s.result.mix.is_some()
                && (s.offered_per_s - p.offered_per_s).abs() <= p.offered_per_s * 0.005
        };
        let passed: Vec<&Step> = study.steps.iter().filter(at).collect();
        let first = passed.first().copied();
        passed.into_iter().find(|s| s.confirmation).or(first)
    });
    let Some(step) = at_peak else {
        return Ok(());
    };
    let which = match step.confirmation {
        true => "its first passed confirmation",
        false => "its first passed trial",
    };
    writeln!(
        out,
        "  at the peak, by kind ({which}, {}/s offered):",
        rate(step.offered_per_s)
    )?;
    super::mix::write(&step.result, out, width)?;
    writeln!(out)
}

/// The whole curve, one row per step.
fn curve(study: &PeakSearch, width: Option<u16>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "  curve:")?;
    let mut t = new_table(
        &[
            "step",
            "offered/s",
            "achieved/s",
            "p50",
            "p99",
            "errors",
            "result",
        ],
        width,
    );
    for (i, s) in study.steps.iter().enumerate() {
        let mut row = vec![(i + 1).to_string()];
        row.extend(cells(s));
        t.add_row(row);
    }
    print_table(out, &mut t, 1..6)
}

/// Every rate that both passed and failed, with its trials and what decided: a search on a
/// noisy machine says where the noise was instead of hiding it.
fn contradictions(study: &PeakSearch, out: &mut dyn Write) -> io::Result<()> {
    if study.contradictions.is_empty() {
        return Ok(());
    }
    writeln!(out, "  contradictions (trials that disagreed):")?;
    for c in &study.contradictions {
        writeln!(
            out,
            "  - {}/s: passed {}, failed {} of {} trial(s): {}",
            rate(c.rate_per_s),
            c.passed,
            c.failed,
            c.passed + c.failed,
            c.decided
        )?;
    }
    writeln!(out)
}

/// The spread of the peak's trials: ok ops/s and p99, lowest to highest.
fn spread(p: &Peak) -> String {
    let [lo, hi] = p.ops_per_s_range;
    let [p99_lo, p99_hi] = p.p99_us_range;
    format!(
        "{}–{}, {}–{}",
        rate(lo),
        rate(hi),
        format_us(p99_lo),
        format_us(p99_hi)
    )
}

/// One step's figures: offered, achieved, p50, p99, errors, result.
fn cells(s: &Step) -> Vec<String> {
    let us = |v: Option<f64>| v.map_or("-".to_string(), format_us);
    vec![
        rate(s.offered_per_s),
        rate(s.achieved_per_s),
        us(s.p50_us),
        us(s.p99_us),
        format!("{:.2}%", s.error_percent),
        result(s),
    ]
}

/// pass / fail, and why a step failed.
fn result(s: &Step) -> String {
    let mut why: Vec<String> = s
        .objectives
        .iter()
        .filter(|v| !v.held)
        .map(|v| format!("{} missed", v.slo))
        .collect();
    // A step counts ok replies against the offered rate, so failed requests make it fall
    // behind: say that they failed, not that it was slow.
    let failed = s.error_percent >= 1.0;
    if failed {
        why.push(format!("{:.2}% of requests failed", s.error_percent));
    }
    if s.backlog {
        why.push(format!(
            "backlog: {} owed at the end ({} late)",
            s.owed_at_end, s.late_replies
        ));
    } else if !s.kept_up && !failed {
        why.push("fell behind".into());
    }
    match s.limit {
        Some(crate::summary::peak::Limit::Lag) => {
            why.push("generator-limited (its own send lag: a busy machine)".into())
        }
        _ if s.generator_limited => why.push("generator-limited".into()),
        _ => {}
    }
    let verdict = match (s.passed, s.retry.as_deref()) {
        (true, Some(again)) => format!("pass ({})", again.replace('_', " ")),
        (true, None) => "pass".to_string(),
        (false, Some(again)) => format!("fail ({})", again.replace('_', " ")),
        (false, None) => "fail".to_string(),
    };
    if why.is_empty() {
        verdict
    } else {
        format!("{verdict}: {}", why.join(", "))
    }
}

/// A line for stderr as each step ends.
pub fn step_line(s: &Step) -> String {
    let c = cells(s);
    format!(
        "step {}/s: achieved {}/s, p50 {}, p99 {}, errors {} → {}",
        c[0], c[1], c[2], c[3], c[4], c[5]
    )
}

#[cfg(test)]
mod tests {
    use crate::summary::mix::MixKind;
    use crate::summary::peak::{Peak, PeakSearch, Step};
    use crate::summary::Summary;

    /// A mix's kinds at the peak are in the report, not only in the JSON (issue 40: the
    /// Handle.Net plan's resolutions and creations per second).
    #[test]
    fn a_mix_s_kinds_at_the_peak_are_reported() {
        let kind = |name: &str, ops: f64| MixKind {
            name: name.into(),
            weight: 1,
            weight_percent: 50.0,
            requests: 10,
            share_percent: 50.0,
            ok: 10,
            ops_per_s: ops,
            errors: Default::default(),
            latency: None,
        };
        let result = Summary {
            mix: Some(vec![kind("resolve", 812.0), kind("create", 203.0)]),
            ..Summary::default()
        };
        let step = |confirmation: bool, passed: bool| Step {
            offered_per_s: 1000.0,
            confirmation,
            passed,
            result: result.clone(),
            ..Step::default()
        };
        let study = PeakSearch {
            peak: Some(Peak {
                ops_per_s: 1015.0,
                offered_per_s: 1000.0,
                confirmed: true,
                ..Peak::default()
            }),
            steps: vec![step(false, true), step(true, true)],
            ..PeakSearch::default()
        };
        let mut out = Vec::new();
        super::write(&study, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("at the peak, by kind"), "{text}");
        assert!(text.contains("resolve") && text.contains("812"), "{text}");
        assert!(text.contains("create") && text.contains("203"), "{text}");
        assert!(text.contains("its first passed confirmation"), "{text}");
        // A rate a majority of trials decided, its confirmation among the failed: the kinds
        // come from a trial that passed (a loaded machine's Handle.Net study printed none).
        let study = PeakSearch {
            steps: vec![step(false, true), step(true, false)],
            ..study
        };
        let mut out = Vec::new();
        super::write(&study, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("by kind (its first passed trial, "), "{text}");
        assert!(text.contains("resolve") && text.contains("812"), "{text}");
    }
}
