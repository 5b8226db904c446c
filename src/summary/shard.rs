//! Shards in result documents (issue 19): a shard's own `shard` section (its rank, its share
//! of the study's totals, the plan's hash, its start skew), and the `shards` section of their
//! merge: every rank 0..N-1 once, of one plan, each rank's figures and skew beside the total.

use super::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One shard's part of a load (`--shard`): written into its own result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardSection {
    /// This shard's rank, 0..world.
    pub rank: u64,
    /// How many shards ran the load.
    pub world: u64,
    /// Where rank and world came from (`--shard`, `SLURM_PROCID`, …).
    pub source: String,
    /// The machine it ran on.
    pub host: String,
    /// Its share of the study's totals.
    pub share: Share,
    /// A hash of the plan (the study's totals and every setting, not the shard's own flags),
    /// the same on every shard of one load: 16 hex digits.
    pub plan_hash: String,
    /// The plan the hash is of, flag by flag, so a merge can name what differs.
    pub plan: BTreeMap<String, String>,
    /// The agreed start (`--start-at`), ms since the Unix epoch; None without one.
    pub start_at_unix_ms: Option<u64>,
    /// How late this shard began its run after the agreed start, ms (its own clock).
    pub skew_ms: Option<f64>,
    /// The skew beyond which a shard is late (`--max-skew`), ms.
    pub max_skew_ms: f64,
    /// Whether it began later than `max_skew_ms` after the agreed start.
    pub late: bool,
}

/// A shard's share of the totals: connections, and the open-loop rate and request counts when
/// given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// Connections of this shard.
    pub connections: u64,
    /// Its open-loop rate, requests/s.
    pub rate: Option<f64>,
    /// Its requests (`-n`).
    pub requests: Option<u64>,
    /// Its warm-up requests (a warm-up by count).
    pub warmup_requests: Option<u64>,
}

/// The merged shards: who ran what, with what start skew.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Shards {
    /// How many shards (all present: merge refuses a missing rank).
    pub world: u64,
    /// The plan hash they share.
    pub plan_hash: String,
    /// Latest minus earliest start of the measured parts, ms (wall clocks of the hosts).
    pub start_spread_ms: f64,
    /// Ranks that began later than their `--max-skew`.
    pub late: Vec<u64>,
    /// One row per rank, in rank order.
    pub ranks: Vec<ShardRow>,
}

/// One rank's own figures in a merge.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardRow {
    /// Rank.
    pub rank: u64,
    /// The machine it ran on.
    pub host: String,
    /// Its share of the totals.
    pub share: Share,
    /// When its measured part began, ms since the Unix epoch.
    pub started_unix_ms: u64,
    /// Its ok operations.
    pub ok: u64,
    /// Its failed operations.
    pub errors: u64,
    /// Its ok operations per second.
    pub ops_per_s: f64,
    /// Its median latency, µs.
    pub p50_us: Option<f64>,
    /// Its 99th percentile, µs.
    pub p99_us: Option<f64>,
    /// Its start skew, ms.
    pub skew_ms: Option<f64>,
    /// Whether it started late.
    pub late: bool,
}

/// Results that are not the shards of one load, or do not add.
#[derive(Debug, thiserror::Error)]
pub enum ShardsError {
    /// A result without a `shard` section among shards.
    #[error("{0} is not a shard's result (no `shard` section) while others are: merge shards of one load, written by `run --shard`")]
    NotShard(String),
    /// Two world sizes.
    #[error("the world size disagrees: {} is rank {} of {}, {} rank {} of {}: merge the shards of one launch", .first.0, .first.1, .first.2, .other.0, .other.1, .other.2)]
    World {
        /// The first result's name, rank and world.
        first: (String, u64, u64),
        /// The other's.
        other: (String, u64, u64),
    },
    /// Two plans.
    #[error("{first} and {other} ran different plans ({differences}): merge shards of one load")]
    Plans {
        /// The first result's name.
        first: String,
        /// The other's.
        other: String,
        /// The flags they set differently.
        differences: String,
    },
    /// One rank twice.
    #[error("rank {rank} is there twice ({first} and {other}): give each rank's result once")]
    Twice {
        /// The rank.
        rank: u64,
        /// The first result of that rank.
        first: String,
        /// The second.
        other: String,
    },
    /// Ranks missing.
    #[error("rank {shown} of {world} missing: a merge of shards needs every rank 0..{}; give their files (a failed shard: run it again)", .world - 1)]
    Missing {
        /// The missing ranks, as shown.
        shown: String,
        /// The world size.
        world: u64,
    },
    /// The shards do not add as results do.
    #[error(transparent)]
    Merge(#[from] super::merge::MergeError),
}

/// Checks that `parts` (named by `names`) are the shards of one load, every rank once, and
/// returns their section (rows in rank order). `Err` is one line naming the problem.
pub fn check(parts: &[Summary], names: &[String]) -> Result<Shards, ShardsError> {
    let mut sections = Vec::with_capacity(parts.len());
    for (p, name) in parts.iter().zip(names) {
        let s = p
            .shard
            .as_ref()
            .ok_or_else(|| ShardsError::NotShard(name.clone()))?;
        sections.push((s, name, p));
    }
    let (first, first_name, _) = sections[0];
    for &(s, name, _) in &sections {
        if s.world != first.world {
            return Err(ShardsError::World {
                first: (first_name.clone(), first.rank, first.world),
                other: (name.clone(), s.rank, s.world),
            });
        }
        if s.plan_hash != first.plan_hash {
            return Err(ShardsError::Plans {
                first: first_name.clone(),
                other: name.clone(),
                differences: differences(&first.plan, &s.plan),
            });
        }
    }
    every_rank_once(sections.iter().map(|&(s, name, _)| (s, name)), first.world)?;
    sections.sort_by_key(|(s, _, _)| s.rank);
    let starts = || sections.iter().map(|(_, _, p)| p.started_unix_ms);
    let spread = starts().max().unwrap_or(0) - starts().min().unwrap_or(0);
    Ok(Shards {
        world: first.world,
        plan_hash: first.plan_hash.clone(),
        start_spread_ms: spread as f64,
        late: sections
            .iter()
            .filter(|(s, _, _)| s.late)
            .map(|(s, _, _)| s.rank)
            .collect(),
        ranks: sections.iter().map(|&(s, _, p)| row(s, p)).collect(),
    })
}

/// Checks that `sections` (each named) hold every rank of `world` once.
fn every_rank_once<'a>(
    sections: impl Iterator<Item = (&'a ShardSection, &'a String)>,
    world: u64,
) -> Result<(), ShardsError> {
    let mut by_rank: BTreeMap<u64, &String> = BTreeMap::new();
    for (s, name) in sections {
        if let Some(other) = by_rank.insert(s.rank, name) {
            return Err(ShardsError::Twice {
                rank: s.rank,
                first: other.clone(),
                other: name.clone(),
            });
        }
    }
    let missing: Vec<String> = (0..world)
        .filter(|r| !by_rank.contains_key(r))
        .map(|r| r.to_string())
        .collect();
    if !missing.is_empty() {
        let shown = match missing.len() {
            n if n > 10 => format!("{} … ({n} ranks)", missing[..10].join(", ")),
            _ => missing.join(", "),
        };
        return Err(ShardsError::Missing { shown, world });
    }
    Ok(())
}

/// One rank's row.
fn row(s: &ShardSection, p: &Summary) -> ShardRow {
    ShardRow {
        rank: s.rank,
        host: s.host.clone(),
        share: s.share.clone(),
        started_unix_ms: p.started_unix_ms,
        ok: p.ok,
        errors: p.errors.total,
        ops_per_s: p.throughput.ops_per_s,
        p50_us: p.latency.as_ref().map(|d| d.p50_us),
        p99_us: p.latency.as_ref().map(|d| d.p99_us),
        skew_ms: s.skew_ms,
        late: s.late,
    }
}

/// The flags two plans set differently, as `--rate 1000 vs 2000`.
fn differences(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> String {
    let none = String::from("(unset)");
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (a.get(k).unwrap_or(&none), b.get(k).unwrap_or(&none));
            (x != y).then(|| format!("{k} {x} vs {y}"))
        })
        .collect();
    match diffs.is_empty() {
        true => "plan hashes differ: another wirebench version?".into(),
        false => diffs.join("; "),
    }
}

/// Shards' results added into one (see [`super::merge`]): checked by [`check`] first, then
/// the ordinary merge of results run at the same time, with a `shards` section.
pub fn merge(parts: &[Summary], names: &[String]) -> Result<Summary, ShardsError> {
    let shards = check(parts, names)?;
    // Shards released at one agreed start ran together even when their windows do not
    // overlap (runs of a few requests); without one, their windows must overlap.
    let start_of = |p: &Summary| p.shard.as_ref().and_then(|s| s.start_at_unix_ms);
    let agreed =
        start_of(&parts[0]).is_some() && parts.iter().all(|p| start_of(p) == start_of(&parts[0]));
    let mut m = match agreed {
        true => super::merge::merge_released_together(parts)?,
        false => super::merge::merge(parts, false)?,
    };
    m.shard = None;
    m.config.requests = parts.iter().map(|p| p.config.requests).sum();
    if !shards.late.is_empty() {
        let late: Vec<String> = shards.late.iter().map(u64::to_string).collect();
        m.notes.push(format!(
            "rank {} began later than --max-skew after --start-at: their load did not overlap the others' from the start (see shards.ranks[].skew_ms)",
            late.join(", ")
        ));
    }
    m.notes.push(format!(
        "{} shards of one plan ({}); measured parts began within {:.0} ms of each other",
        shards.world, shards.plan_hash, shards.start_spread_ms
    ));
    m.shards = Some(shards);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(rank: u64, world: u64, rate: &str) -> ShardSection {
        ShardSection {
            rank,
            world,
            source: "--shard".into(),
            host: format!("h{rank}"),
            share: Share {
                connections: 1,
                rate: None,
                requests: None,
                warmup_requests: None,
            },
            plan_hash: crate::plan::shard::fnv1a(rate).to_string(),
            plan: [("--rate".to_string(), rate.to_string())].into(),
            start_at_unix_ms: None,
            skew_ms: None,
            max_skew_ms: 10.0,
            late: false,
        }
    }

    #[test]
    fn differences_are_named_flag_by_flag() {
        let (a, b) = (section(0, 2, "1000"), section(1, 2, "2000"));
        assert_eq!(differences(&a.plan, &b.plan), "--rate 1000 vs 2000");
        assert_eq!(
            differences(&a.plan, &a.plan),
            "plan hashes differ: another wirebench version?"
        );
    }
}
