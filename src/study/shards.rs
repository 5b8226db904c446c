//! A study's runs launched as N shards each (`--shards N`) and merged exactly: the launching is
//! the command layer's (processes, `srun`, `mpirun`), given to the design as a [`Shards`].

use crate::summary::Summary;
use std::time::Duration;

/// Which run of a study the shards make.
#[derive(Clone, Copy, Debug)]
pub enum At<'a> {
    /// A sweep's (or a comparison's) run: the target's URL, and the swept flags' values.
    Point {
        /// The target's URL.
        url: &'a str,
        /// Each swept flag and its value at this point.
        values: &'a [(&'a str, String)],
    },
    /// A peak search's step: its rate (requests/s) for its time.
    Step {
        /// The rate offered.
        rate: f64,
        /// How long.
        step: Duration,
    },
}

/// The run `at` (named `what`, of `plan`) on `shards`, shown to `watch` as a run of its own.
pub(super) fn watched(
    shards: &dyn Shards,
    at: At<'_>,
    what: &str,
    plan: &crate::plan::Plan,
    watch: &mut dyn super::Watch,
) -> anyhow::Result<Summary> {
    watch.run_starts(what, plan);
    let measured = shards.measure(at);
    watch.run_ends();
    measured
}

/// Launches one run of a study as N shards, waits for them and merges their results.
pub trait Shards: std::fmt::Debug + Send + Sync {
    /// The run `at`, measured by N shards and merged.
    fn measure(&self, at: At<'_>) -> anyhow::Result<Summary>;
}
