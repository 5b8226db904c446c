//! The search as a table of trial outcomes → next trial, and whole searches against simulated
//! targets, with one trial turned by noise at every position in turn.

use super::*;

const S: Search = Search {
    start: 100.0,
    tolerance: 0.02,
    ceiling: 1e6,
    floor: 1.0,
};

const P: bool = true;
const F: bool = false;

#[test]
fn next_rate_table() {
    use Why::*;
    let table: &[(&[(f64, bool)], Next)] = &[
        (&[], Next::Try(100.0)),
        (&[(100.0, P)], Next::Try(200.0)),
        (&[(100.0, P), (200.0, P)], Next::Try(400.0)),
        (&[(100.0, P), (200.0, F)], Next::Try(150.0)),
        (&[(100.0, P), (200.0, F), (150.0, F)], Next::Try(125.0)),
        (&[(100.0, P), (200.0, F), (150.0, P)], Next::Try(175.0)),
        (&[(100.0, F)], Next::Try(50.0)),
        (&[(100.0, F), (50.0, P)], Next::Try(75.0)),
        (&[(1.5, F)], Next::Done(None)),
        // Within 2 %: the failure that bounds the result is measured again …
        (&[(100.0, P), (101.5, F)], Next::Retry(101.5, Recheck)),
        // … then the result is confirmed by three trials.
        (
            &[(100.0, P), (101.5, F), (101.5, F)],
            Next::Retry(100.0, Confirm),
        ),
        (
            &[(100.0, P), (101.5, F), (101.5, F), (100.0, P)],
            Next::Retry(100.0, Confirm),
        ),
        (
            &[(100.0, P), (101.5, F), (101.5, F), (100.0, P), (100.0, P)],
            Next::Done(Some(100.0)),
        ),
        // A confirmation that fails: one pass, one failure is a contradiction: best of three.
        (
            &[(100.0, P), (101.5, F), (101.5, F), (100.0, F)],
            Next::Retry(100.0, Contradiction),
        ),
        (
            &[(100.0, P), (101.5, F), (101.5, F), (100.0, F), (100.0, P)],
            Next::Done(Some(100.0)),
        ),
        // Two of three failed: the rate failed, and the search goes below it.
        (
            &[(100.0, P), (101.5, F), (101.5, F), (100.0, F), (100.0, F)],
            Next::Try(50.0),
        ),
        // The recheck passes: a tie at the bound, decided by a third trial.
        (
            &[(100.0, P), (101.5, F), (101.5, P)],
            Next::Retry(101.5, Contradiction),
        ),
        (
            &[(100.0, P), (101.5, F), (101.5, P), (101.5, P)],
            Next::Try(203.0),
        ),
        // A failure below a pass is measured again.
        (
            &[(100.0, P), (200.0, P), (150.0, F)],
            Next::Retry(150.0, BelowPass),
        ),
        // Twice failed: the pass above it is not counted, the search goes on below.
        (
            &[(100.0, P), (200.0, P), (150.0, F), (150.0, F)],
            Next::Try(125.0),
        ),
        (
            &[(100.0, P), (200.0, P), (150.0, F), (150.0, P)],
            Next::Retry(150.0, Contradiction),
        ),
    ];
    for (trials, want) in table {
        assert_eq!(S.next(trials), *want, "after {trials:?}");
    }
}

#[test]
fn a_tie_left_after_the_most_trials_is_a_failure() {
    let t = Tally {
        rate: 1.0,
        passed: 3,
        failed: 3,
    };
    assert_eq!(t.verdict(), Verdict::Fail);
    let t = Tally { passed: 2, ..t };
    assert_eq!(t.verdict(), Verdict::Fail);
    let t = Tally {
        passed: 2,
        failed: 2,
        ..t
    };
    assert_eq!(t.verdict(), Verdict::Undecided);
}

#[test]
fn the_ceiling_caps_the_doubling_and_ends_a_search_that_reaches_it() {
    let s = Search {
        ceiling: 300.0,
        ..S
    };
    assert_eq!(s.next(&[(200.0, P)]), Next::Try(300.0));
    let at_ceiling = [(200.0, P), (300.0, P), (300.0, P), (300.0, P)];
    assert_eq!(s.next(&at_ceiling[..2]), Next::Retry(300.0, Why::Confirm));
    assert_eq!(s.next(&at_ceiling), Next::Done(Some(300.0)));
}

/// Runs a whole search; `outcome(rate, index)` says whether the trial passed.
fn search(
    s: &Search,
    mut outcome: impl FnMut(f64, usize) -> bool,
) -> (Vec<(f64, bool)>, Option<f64>) {
    let mut trials: Vec<(f64, bool)> = Vec::new();
    loop {
        let rate = match s.next(&trials) {
            Next::Try(r) => {
                assert!(trials.iter().all(|t| t.0 != r), "{r} again: {trials:?}");
                r
            }
            Next::Retry(r, _) => r,
            Next::Done(found) => return (trials, found),
        };
        let passed = outcome(rate, trials.len());
        trials.push((rate, passed));
        assert!(trials.len() < 80, "{trials:?}");
    }
}

/// Against a target that sustains exactly `peak`, the search ends within 2 % below it, with
/// no contradiction.
#[test]
fn the_search_converges_on_a_known_peak() {
    for peak in [37.0, 999.0, 4000.0, 123_456.0] {
        let (trials, found) = search(&S, |r, _| r <= peak);
        let found = found.unwrap();
        assert!(found <= peak && found >= peak * 0.98, "{peak}: {found}");
        assert!(contradictions(&trials).is_empty(), "{trials:?}");
    }
}

/// One trial turned by noise, at every position of the search in turn and either way (a
/// stall fails a rate the target sustains; luck passes one above it): the result is still
/// within 2 % below the peak, and the turned trial is reported as a contradiction whenever
/// its rate was measured again.
#[test]
fn one_noisy_trial_anywhere_does_not_move_the_result() {
    for peak in [150.0, 4000.0, 37_000.0] {
        let (clean, _) = search(&S, |r, _| r <= peak);
        // The turned trial may lengthen the search: try every position it can reach.
        for k in 0..clean.len() + 12 {
            let (trials, found) = search(&S, |r, i| (r <= peak) != (i == k));
            let found = found.unwrap_or_else(|| panic!("{peak}, turned {k}: {trials:?}"));
            assert!(
                found <= peak && found >= peak * 0.98,
                "{peak}, turned trial {k}: found {found}: {trials:?}"
            );
            let Some(&(rate, _)) = trials.get(k) else {
                continue;
            };
            let again = trials.iter().filter(|t| t.0 == rate).count() > 1;
            let named = contradictions(&trials).iter().any(|c| c.rate == rate);
            assert_eq!(again, named, "{peak}, turned {k}: {trials:?}");
        }
    }
}

/// The case: the search passed 150/s, then a stall failed it. It is measured until a
/// majority decides, and the report names the rate with its trials.
#[test]
fn a_rate_that_passed_and_failed_is_decided_by_majority_and_named() {
    let s = Search { start: 150.0, ..S };
    let mut seen = 0;
    let (trials, found) = search(&s, |r, _| {
        if r == 150.0 {
            seen += 1;
            return seen != 2; // the second trial at 150/s meets a stall
        }
        r <= 160.0
    });
    assert!(found.unwrap() >= 156.0, "{trials:?}");
    let c = contradictions(&trials);
    assert!(c.iter().all(|c| c.rate == 150.0), "{c:?}");
}

#[test]
fn contradictions_name_the_rate_its_trials_and_what_decided() {
    let trials = [
        (100.0, P),
        (200.0, P),
        (150.0, F),
        (150.0, F),
        (100.0, F),
        (100.0, P),
    ];
    let c = contradictions(&trials);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!((c[0].rate, c[0].passed, c[0].failed), (100.0, 2, 1));
    assert_eq!(c[0].decided, "passed by majority (2 of 3)");
    assert_eq!((c[1].rate, c[1].passed, c[1].failed), (200.0, 1, 0));
    assert!(c[1].decided.contains("above 150/s"), "{}", c[1].decided);
    assert!(c[1].decided.contains("not counted"), "{}", c[1].decided);
}

#[test]
fn no_search_runs_more_steps_than_its_bound() {
    let bound = S.steps_at_most();
    assert_eq!(bound, 15 + 6 + 1 + 2);
    // A target that sustains exactly `cap`, for caps across the whole range.
    for cap in [
        0.5, 1.0, 3.0, 99.0, 100.0, 101.0, 777.0, 5e4, 999_999.0, 2e6,
    ] {
        let (trials, _) = search(&S, |r, _| r <= cap);
        assert!(trials.len() <= bound, "cap {cap}: {} steps", trials.len());
    }
}
