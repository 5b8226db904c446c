//! A mix's kinds in the result (`--mix`): each kind's share of the requests against its
//! weight's, its counts, errors and latency, beside the run's totals.

use super::{Distribution, ErrorSummary};
use crate::record::exchange::MixFacts;
use crate::record::Recorder;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One kind of a mix.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MixKind {
    /// Its name (`--mix NAME=…`, a plan file's `[mix.NAME]`).
    pub name: String,
    /// Its weight.
    pub weight: u64,
    /// Its weight's share of all the weights, percent: the share asked for.
    pub weight_percent: f64,
    /// Its requests that completed, ok or not (a connection's failures are the run's only).
    pub requests: u64,
    /// Their share of all the kinds' requests, percent: the share got.
    pub share_percent: f64,
    /// Those that completed correctly.
    pub ok: u64,
    /// Ok requests per second over the measured time.
    pub ops_per_s: f64,
    /// Its errors, by kind.
    pub errors: ErrorSummary,
    /// Latency of its ok requests, from their intended start; None when none completed.
    pub latency: Option<Distribution>,
}

/// The kinds of `mix` as `total` recorded them over `measured`.
pub fn of(mix: &MixFacts, total: &Recorder, measured: Duration) -> Vec<MixKind> {
    let weights: u64 = mix.weights.iter().sum();
    let recorded = |i: usize| total.kinds.0.get(i);
    let requests = |i: usize| recorded(i).map_or(0, |k| k.ok + k.errors.total());
    let all: u64 = (0..mix.names.len()).map(requests).sum();
    let secs = measured.as_secs_f64().max(1e-9);
    let kinds = mix
        .names
        .iter()
        .zip(&mix.weights)
        .enumerate()
        .map(|(i, (name, &weight))| {
            let k = recorded(i);
            let ok = k.map_or(0, |k| k.ok);
            MixKind {
                name: name.clone(),
                weight,
                weight_percent: 100.0 * weight as f64 / weights.max(1) as f64,
                requests: requests(i),
                share_percent: 100.0 * requests(i) as f64 / all.max(1) as f64,
                ok,
                ops_per_s: ok as f64 / secs,
                errors: k.map_or(ErrorSummary::of_counts(&Default::default()), |k| {
                    ErrorSummary::of_counts(&k.errors)
                }),
                latency: k.and_then(|k| Distribution::of(&k.latency)),
            }
        });
    kinds.collect()
}
