//! The verdicts of a comparison: each target against the baseline on each metric, its
//! per-round ratios paired and one interval deciding (Student's t for rates and means, a
//! bootstrap for percentiles), outlier rounds named, and why a verdict is withheld.

use super::{
    Dropped, RoundRatio, Thresholds, Verdict, Without, METRICS, TAIL_MIN_ROUNDS, WIDE_PCT,
};
use crate::summary::paired::{self, Interval, Method};
use crate::summary::sweep::{Metric, Sweep};

/// Whether more of the metric is better: throughput yes, latency and errors no.
fn higher_is_better(m: Metric) -> bool {
    matches!(m, Metric::Rate | Metric::Bytes)
}

/// Words for a metric in a verdict.
fn words(m: Metric) -> (&'static str, &'static str) {
    match m {
        Metric::Rate => ("ops_per_s", "the throughput"),
        Metric::Mean => ("mean_us", "the mean latency"),
        Metric::P50 => ("p50_us", "the median latency"),
        Metric::P99 => ("p99_us", "the p99 latency"),
        Metric::Bytes => ("bytes_per_s", "the payload throughput"),
        Metric::P95 => ("p95_us", "the p95 latency"),
        Metric::Errors => ("errors", "the errors"),
    }
}

/// Withholds verdict `v` for `why` (its target's runs met another machine than the
/// baseline's, [`crate::summary::busy`]): not significant, inconclusive, said in its text; the figures
/// stay, read as measured.
pub fn withhold(v: &mut Verdict, why: &str) {
    let what = [
        Metric::Rate,
        Metric::Mean,
        Metric::P50,
        Metric::P95,
        Metric::P99,
        Metric::Bytes,
        Metric::Errors,
    ]
    .into_iter()
    .map(words)
    .find(|(key, _)| *key == &*v.metric)
    .map_or("it", |(_, what)| what);
    v.significant = false;
    v.without_outliers = None;
    v.text = format!(
        "{}: no verdict on {what} ({:+.1}%, 95% CI {:+.1}% to {:+.1}%): {why}",
        v.target, v.difference_percent, v.low_pct, v.high_pct
    );
    v.inconclusive = Some(why.to_string());
}

/// The interval a metric gets: a percentile's per-round ratios are lumpy and skewed, so a
/// bootstrap; a rate or a mean, Student's t.
fn method_of(m: Metric) -> Method {
    match m {
        Metric::P50 | Metric::P95 | Metric::P99 => Method::Bootstrap,
        _ => Method::T,
    }
}

/// Every target but the baseline, on every metric, at every point of `sweep`; the
/// percentiles' bootstraps drawn from `seed`.
pub fn verdicts(
    sweep: &Sweep,
    baseline: usize,
    points: &[(Vec<usize>, String)],
    seed: u64,
    thresholds: Thresholds,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (pi, (at, label)) in points.iter().enumerate() {
        for (mi, m) in METRICS.into_iter().enumerate() {
            let base = sweep.kept_by_run(m, baseline, at);
            for (ti, t) in sweep.targets.iter().enumerate() {
                if ti == baseline {
                    continue;
                }
                let mine = sweep.kept_by_run(m, ti, at);
                let place = ((pi * METRICS.len() + mi) * sweep.targets.len() + ti) as u64;
                let seed = paired::derive(seed, place);
                let mut runs: Vec<usize> = [baseline, ti]
                    .iter()
                    .flat_map(|&i| sweep.runs_of(i, at))
                    .filter(|p| !p.discarded)
                    .map(|p| p.run)
                    .collect();
                runs.sort_unstable();
                runs.dedup();
                let judged = Judged {
                    m,
                    name: &t.name,
                    base_name: &sweep.targets[baseline].name,
                    at: label,
                    seed,
                    threshold: thresholds.of(m),
                    runs: &runs,
                };
                if let Some(v) = verdict(&judged, (&mine, &base)) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// A run's number (from 1) and its figure.
type RunValue = (usize, f64);

/// What one verdict is about: a metric of a target at a point, its bootstrap's seed, its
/// noise threshold (%), and the kept rounds it should pair (run numbers).
struct Judged<'a> {
    m: Metric,
    name: &'a str,
    base_name: &'a str,
    at: &'a str,
    seed: u64,
    threshold: f64,
    runs: &'a [usize],
}

/// The kept rounds of `j` that `logs` do not hold (`paired`: the runs paired), each with why.
fn dropped(j: &Judged, paired: &[usize], (mine, base): (&[RunValue], &[RunValue])) -> Vec<Dropped> {
    let (_, what) = words(j.m);
    let has = |side: &[RunValue], run: usize| side.iter().find(|(r, _)| *r == run).map(|x| x.1);
    (j.runs.iter().copied())
        .filter(|run| !paired.contains(run))
        .map(|run| {
            let side = |name: &str, v: Option<f64>| match v {
                None => Some(format!("{name} completed no operation")),
                Some(x) if !(x.is_finite() && x > 0.0) => Some(format!("{name}'s {what} was {x}")),
                Some(_) => None,
            };
            let why: Vec<String> = [
                side(j.base_name, has(base, run)),
                side(j.name, has(mine, run)),
            ]
            .into_iter()
            .flatten()
            .collect();
            Dropped {
                run,
                why: why.join("; "),
            }
        })
        .collect()
}

/// Why a verdict on `m` over `logs` with interval `i` can call nothing either way: a tail
/// from fewer than [`TAIL_MIN_ROUNDS`] rounds, a tail called beyond `threshold` while its
/// rounds do not lean that way by a sign test, or an interval that calls nothing and is wider
/// than [`WIDE_PCT`] ("no difference" would claim more than it knows). A called interval may be
/// wide: +600% (95% CI +350% to +1100%) is wide and still a change.
fn inconclusive(m: Metric, logs: &[f64], i: &Interval, threshold: f64) -> Option<String> {
    let tail = matches!(m, Metric::P95 | Metric::P99);
    let n = logs.len();
    if tail && n < TAIL_MIN_ROUNDS {
        return Some(format!(
            "a tail is judged from {TAIL_MIN_ROUNDS} rounds or more, {n} paired: inconclusive; give --runs {TAIL_MIN_ROUNDS} or more"
        ));
    }
    let ln = |pct: f64| (1.0 + pct / 100.0).max(f64::MIN_POSITIVE).ln();
    let half = 100.0 * ((ln(i.high_pct) - ln(i.low_pct)) / 2.0).exp_m1();
    if half > WIDE_PCT && !i.beyond(threshold) {
        return Some(format!(
            "the interval is ±{half:.0}% of the ratio, too wide to tell (over ±{WIDE_PCT:.0}%): inconclusive; more rounds narrow it"
        ));
    }
    let up = i.low_pct > threshold;
    if tail && i.beyond(threshold) && !paired::sign_agrees(logs, up) {
        let leaning = logs
            .iter()
            .filter(|&&l| (l > 0.0) == up && l != 0.0)
            .count();
        return Some(format!(
            "only {leaning} of {n} rounds lean that way (a sign test at 5% asks {}): a few rounds decide it, inconclusive",
            paired::sign_needed(n).unwrap_or(n)
        ));
    }
    None
}

/// The rounds both sides ran with figures a ratio can be taken of: each one's ratio (none an
/// outlier yet), and their log ratios in the same order.
fn pair((mine, base): (&[RunValue], &[RunValue])) -> (Vec<RoundRatio>, Vec<f64>) {
    let mut rounds: Vec<RoundRatio> = Vec::new();
    let mut logs = Vec::new();
    for &(run, b) in base {
        let Some(&(_, t)) = mine.iter().find(|(r, _)| *r == run) else {
            continue;
        };
        if let Some(l) = paired::log_ratio(b, t) {
            logs.push(l);
            rounds.push(RoundRatio {
                run,
                ratio: t / b,
                outlier: false,
            });
        }
    }
    (rounds, logs)
}

/// One verdict from each side's (run, value) of the kept runs, when two rounds or more have
/// both sides positive.
fn verdict(j: &Judged, (mine, base): (&[RunValue], &[RunValue])) -> Option<Verdict> {
    let (m, name, at, seed, threshold) = (j.m, j.name, j.at, j.seed, j.threshold);
    let (mut rounds, logs) = pair((mine, base));
    let method = method_of(m);
    let p = paired::analyse(&logs, method, seed)?;
    for &i in &p.outliers {
        rounds[i].outlier = true;
    }
    let mean = |xs: &[(usize, f64)]| xs.iter().map(|x| x.1).sum::<f64>() / xs.len() as f64;
    let (key, what) = words(m);
    let all = p.all;
    let doubt = inconclusive(m, &logs, &all, threshold);
    let called = doubt.is_none() && all.beyond(threshold);
    let kept: Vec<f64> = (0..logs.len())
        .filter(|i| !p.outliers.contains(i))
        .map(|i| logs[i])
        .collect();
    let without = (p.without).map(|w| without_outliers(j, &w, &kept, &rounds, called));
    Some(Verdict {
        target: name.to_string(),
        at: at.to_string(),
        metric: key.into(),
        baseline_mean: mean(base),
        mean: mean(mine),
        ratio: 1.0 + all.difference_pct / 100.0,
        difference_percent: all.difference_pct,
        low_pct: all.low_pct,
        high_pct: all.high_pct,
        significant: called,
        threshold_pct: threshold,
        interval: method,
        dropped: dropped(
            j,
            &rounds.iter().map(|r| r.run).collect::<Vec<_>>(),
            (mine, base),
        ),
        rounds,
        without_outliers: without,
        text: match &doubt {
            Some(why) => format!(
                "{name}: no verdict on {what} ({:+.1}%, {}): {why}",
                all.difference_pct,
                ci(&all)
            ),
            None => verdict_text(name, what, &all, threshold, higher_is_better(m)),
        },
        inconclusive: doubt,
        ci95_percent: None,
        welch: None,
    })
}

/// The verdict on `j` without its outlier rounds (`w`, from the `kept` log ratios), and
/// whether it differs from the verdict `called` with them.
fn without_outliers(
    j: &Judged,
    w: &Interval,
    kept: &[f64],
    rounds: &[RoundRatio],
    called: bool,
) -> Without {
    let sig = inconclusive(j.m, kept, w, j.threshold).is_none() && w.beyond(j.threshold);
    Without {
        difference_percent: w.difference_pct,
        low_pct: w.low_pct,
        high_pct: w.high_pct,
        significant: sig,
        changes_verdict: sig != called,
        text: without_text(rounds, w, (sig, sig != called)),
    }
}

/// `(95% CI −1.2% to +3.4%)`.
fn ci(i: &Interval) -> String {
    format!("95% CI {:+.1}% to {:+.1}%", i.low_pct, i.high_pct)
}

/// `b adds 12.0% (95% CI +8.1% to +16.0%) to the median latency (worse); significant`, `b: no
/// significant difference in the median latency (+0.4%, 95% CI −1.2% to +2.0%)`, or, for an
/// interval that excludes 0 but not the noise threshold, `b: no difference beyond the ±3%
/// noise threshold in the mean latency (-2.6%, 95% CI -4.0% to -1.3%)`.
fn verdict_text(name: &str, what: &str, i: &Interval, threshold: f64, up_is_good: bool) -> String {
    let pct = i.difference_pct;
    let (verb, prep) = match pct >= 0.0 {
        true => ("adds", "to"),
        false => ("takes", "from"),
    };
    if i.beyond(threshold) {
        // Which way is good, said: "adds 4% to the p99 latency" is worse, to the throughput
        // better (issue 40: the reader had to work it out).
        let judged = match (pct >= 0.0) == up_is_good {
            true => "better",
            false => "worse",
        };
        return format!(
            "{name} {verb} {:.1}% ({}) {prep} {what} ({judged}); significant",
            pct.abs(),
            ci(i)
        );
    }
    match i.contains_zero() {
        true => format!(
            "{name}: no significant difference in {what} ({pct:+.1}%, {})",
            ci(i)
        ),
        false => format!(
            "{name}: no difference beyond the ±{threshold}% noise threshold in {what} ({pct:+.1}%, {})",
            ci(i)
        ),
    }
}

/// `run 4 is an outlier (ratio 0.001): without it +0.3% (95% CI …), not significant: the
/// same verdict`.
fn without_text(rounds: &[RoundRatio], w: &Interval, (sig, changes): (bool, bool)) -> String {
    let odd: Vec<&RoundRatio> = rounds.iter().filter(|r| r.outlier).collect();
    let runs: Vec<String> = odd.iter().map(|r| r.run.to_string()).collect();
    let ratios: Vec<String> = odd.iter().map(|r| format!("{:.3}", r.ratio)).collect();
    let (which, it) = match odd.len() {
        1 => (format!("run {} is an outlier", runs[0]), "it"),
        _ => (format!("runs {} are outliers", runs.join(", ")), "them"),
    };
    let outcome = match (sig, changes) {
        (true, true) => "significant: the outlier decides the verdict",
        (false, true) => "not significant: the outlier decides the verdict",
        (true, false) => "significant: the same verdict",
        (false, false) => "not significant: the same verdict",
    };
    format!(
        "{which} (ratio {}; beyond 3 scaled MADs of the runs' median): without {it} {:+.1}% ({}), {outcome}",
        ratios.join(", "),
        w.difference_pct,
        ci(w)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (run, value) pairs for runs 1, 2, …
    fn runs(xs: &[f64]) -> Vec<(usize, f64)> {
        xs.iter().enumerate().map(|(i, x)| (i + 1, *x)).collect()
    }

    fn judge(m: Metric, mine: &[f64], base: &[f64]) -> Verdict {
        judge_at(m, mine, base, 0.0)
    }

    fn judge_at(m: Metric, mine: &[f64], base: &[f64], threshold: f64) -> Verdict {
        judge_pairs(m, &runs(mine), &runs(base), threshold).unwrap()
    }

    /// The verdict on `m` from each side's (run, value), every run of either side kept.
    fn judge_pairs(
        m: Metric,
        mine: &[(usize, f64)],
        base: &[(usize, f64)],
        threshold: f64,
    ) -> Option<Verdict> {
        let mut all: Vec<usize> = mine.iter().chain(base).map(|x| x.0).collect();
        all.sort_unstable();
        all.dedup();
        let j = Judged {
            m,
            name: "b",
            base_name: "a",
            at: "",
            seed: 1,
            threshold,
            runs: &all,
        };
        verdict(&j, (mine, base))
    }

    fn judge_runs(mine: &[(usize, f64)], base: &[(usize, f64)]) -> Option<Verdict> {
        judge_pairs(Metric::Rate, mine, base, 0.0)
    }

    #[test]
    fn a_change_within_the_noise_threshold_is_not_called() {
        // b is 2% above a in every round: real, but within a 3% threshold.
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b: Vec<f64> = a.iter().map(|x| x * 1.02).collect();
        let v = judge_at(Metric::Mean, &b, &a, 3.0);
        assert!(
            !v.significant && v.low_pct > 0.0 && v.threshold_pct == 3.0,
            "{v:?}"
        );
        assert!(
            v.text.starts_with("b: no difference beyond the ±3% noise threshold in the mean latency (+2.0%, 95% CI +"),
            "{}",
            v.text
        );
        assert!(judge_at(Metric::Mean, &b, &a, 0.0).significant);
        // 5% clears it; the thresholds by metric: 3% at the centre, 10% in the tail.
        let b: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        assert!(judge_at(Metric::Mean, &b, &a, 3.0).significant);
        let t = Thresholds::default();
        assert_eq!((t.of(Metric::P50), t.of(Metric::P99)), (3.0, 10.0));
        assert_eq!(Thresholds::NONE.of(Metric::P95), 0.0);
    }

    #[test]
    fn verdicts_in_words() {
        let v = judge(Metric::Mean, &[104.0, 104.2, 103.8], &[100.0, 100.2, 99.8]);
        assert!(v.text.starts_with("b adds 4.0% (95% CI +"), "{}", v.text);
        assert!(
            v.text.ends_with("to the mean latency (worse); significant"),
            "{}",
            v.text
        );
        assert!(v.significant && v.low_pct > 0.0 && v.interval == Method::T);
        let v = judge(Metric::Rate, &[99.0, 101.0, 100.0], &[100.0, 99.0, 101.0]);
        assert!(
            v.text
                .starts_with("b: no significant difference in the throughput (-0.0%, 95% CI -"),
            "{}",
            v.text
        );
        assert!(!v.significant && v.low_pct < 0.0 && v.high_pct > 0.0);
        assert_eq!(
            judge(Metric::P99, &[1.0, 2.0], &[1.0, 2.0]).interval,
            Method::Bootstrap
        );
    }

    #[test]
    fn pairing_removes_drift_shared_by_both_targets() {
        // Both targets drift by ±20% from round to round; b is 5% above a in every round.
        // Unpaired, the drift swamps the 5% (Welch's test misses it); paired, it cancels.
        let a = [100.0, 120.0, 85.0, 110.0, 95.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        assert!(!crate::summary::welch::welch(&b, &a).unwrap().significant);
        let v = judge(Metric::Mean, &b, &a);
        assert!(
            v.significant && (v.difference_percent - 5.0).abs() < 1e-9,
            "{v:?}"
        );
        assert!(v.low_pct > 4.9 && v.high_pct < 5.1, "{v:?}");
    }

    #[test]
    fn a_stalled_baseline_run_is_flagged_and_never_contradicts_the_interval() {
        // Run 3 of the baseline stalled: its median is 0.75 s instead of 100 µs. The old
        // delta-method interval printed "-100.0% ± 0.1%" beside "no significant difference".
        let base = [100.0, 101.0, 750_000.0, 99.0, 100.0];
        let mine = [100.5, 100.0, 101.0, 99.5, 100.0];
        let v = judge(Metric::P50, &mine, &base);
        assert!(
            !v.significant && v.low_pct <= 0.0 && v.high_pct >= 0.0,
            "{v:?}"
        );
        let flagged: Vec<usize> = v
            .rounds
            .iter()
            .filter(|r| r.outlier)
            .map(|r| r.run)
            .collect();
        assert_eq!(flagged, vec![3]);
        let w = v.without_outliers.as_ref().unwrap();
        assert!(!w.significant && !w.changes_verdict, "{w:?}");
        assert!(
            w.text.starts_with("run 3 is an outlier (ratio 0.000;"),
            "{}",
            w.text
        );
        assert!(
            w.text.ends_with("not significant: the same verdict"),
            "{}",
            w.text
        );
        // Where the stalled run hides a real change, the verdict says that it decided it.
        let mine = [130.0, 131.0, 129.0, 130.5, 130.0];
        let v = judge(Metric::Mean, &mine, &base);
        let w = v.without_outliers.unwrap();
        assert!(
            !v.significant && w.significant && w.changes_verdict,
            "{w:?}"
        );
        assert!(w
            .text
            .ends_with("significant: the outlier decides the verdict"));
    }

    /// What a verdict called: up, down, no difference, or nothing either way.
    #[derive(Debug, PartialEq)]
    enum Called {
        Up,
        Down,
        None,
        Inconclusive,
    }

    fn called(v: &Verdict) -> Called {
        match (&v.inconclusive, v.significant) {
            (Some(_), true) => panic!("an inconclusive verdict called significant: {v:?}"),
            (Some(_), false) => Called::Inconclusive,
            (None, true) if v.low_pct > 0.0 => Called::Up,
            (None, true) => Called::Down,
            (None, false) => Called::None,
        }
    }

    /// Per-round ratios b/a of 100 µs baselines.
    fn by_ratios(m: Metric, ratios: &[f64], threshold: f64) -> Verdict {
        let base = vec![100.0; ratios.len()];
        let mine: Vec<f64> = ratios.iter().map(|r| 100.0 * r).collect();
        judge_at(m, &mine, &base, threshold)
    }

    #[test]
    fn tail_verdicts_hold_on_a_busy_machine() {
        let steady = |r: f64, n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| r * (1.0 + 0.01 * ((i % 3) as f64 - 1.0)))
                .collect()
        };
        let with = |mut v: Vec<f64>, at: &[(usize, f64)]| {
            for &(i, r) in at {
                v[i] = r;
            }
            v
        };
        use Called::*;
        use Metric::{Mean, P50, P95, P99};
        let cases: Vec<(&str, Metric, Vec<f64>, &[Called])> = vec![
            // Issue 38: six rounds, two of them a busy moment at +200%: no tail verdict.
            (
                "6 rounds, 2 blown up",
                P95,
                with(steady(1.0, 6), &[(1, 3.0), (4, 3.2)]),
                &[Inconclusive],
            ),
            ("6 rounds, all +200%", P99, steady(3.0, 6), &[Inconclusive]),
            // Ten rounds that all lean +30%: called.
            ("10 rounds, +30%", P99, steady(1.3, 10), &[Up]),
            ("10 rounds, -30%", P95, steady(0.7, 10), &[Down]),
            // Twelve rounds, three blown up, the rest even: no difference called.
            (
                "12 rounds, 3 blown up",
                P99,
                with(steady(1.0, 12), &[(2, 3.0), (3, 2.5), (9, 4.0)]),
                &[None],
            ),
            // +20% with rounds a hog made look much faster: never called faster.
            (
                "+20% with 2 low rounds",
                P99,
                with(steady(1.2, 12), &[(0, 0.2), (7, 0.3)]),
                &[None, Inconclusive],
            ),
            (
                "+20% with 4 low rounds",
                P95,
                with(steady(1.2, 12), &[(0, 0.5), (3, 0.6), (7, 0.5), (8, 0.7)]),
                &[None, Inconclusive],
            ),
            // Identical within the tail threshold: no difference.
            ("12 rounds, +3%", P99, steady(1.03, 12), &[None]),
            // An interval over ±50% of its ratio tells nothing, at the centre too.
            (
                "mean, wild rounds",
                Mean,
                vec![0.3, 3.0, 0.4, 2.5, 1.0, 3.5],
                &[Inconclusive],
            ),
            // The median needs no ten rounds: five even ones call +20%.
            ("p50, 5 rounds, +20%", P50, steady(1.2, 5), &[Up]),
        ];
        for (name, m, ratios, want) in cases {
            let v = by_ratios(m, &ratios, Thresholds::default().of(m));
            let got = called(&v);
            assert!(want.contains(&got), "{name}: {got:?}, {}", v.text);
            if got == Inconclusive {
                assert!(v.text.contains("no verdict on"), "{name}: {}", v.text);
            }
        }
    }

    #[test]
    fn a_dropped_round_is_named() {
        // Run 3: a had no connection at all (no latency to pair); run 5: b did nothing.
        let base = vec![(1, 100.0), (2, 101.0), (4, 99.0), (5, 100.0)];
        let mine = vec![(1, 110.0), (2, 111.0), (3, 109.0), (4, 110.0), (5, 0.0)];
        let v = judge_pairs(Metric::Mean, &mine, &base, 3.0).unwrap();
        let dropped: Vec<(usize, &str)> =
            v.dropped.iter().map(|d| (d.run, d.why.as_str())).collect();
        assert_eq!(
            dropped,
            [
                (3, "a completed no operation"),
                (5, "b's the mean latency was 0")
            ]
        );
        assert_eq!(v.rounds.len(), 3);
    }

    #[test]
    fn rounds_are_paired_by_run_number_and_zero_rates_left_out() {
        // Run 2 of b is missing (a partial comparison); run 4 of a did nothing.
        let base = vec![(1, 100.0), (2, 100.0), (3, 100.0), (4, 0.0)];
        let mine = vec![(1, 110.0), (3, 111.0), (4, 50.0)];
        let v = judge_runs(&mine, &base).unwrap();
        let paired: Vec<usize> = v.rounds.iter().map(|r| r.run).collect();
        assert_eq!(paired, vec![1, 3]);
        assert!(judge_runs(&mine[..1], &base).is_none());
    }
}
