//! The shard contract (issue 19): one load run by N generators at once, each a rank of N.
//! Pure functions here: where the rank and world size come from (`--shard R/N` or the
//! engine's environment), how a study's totals are split between ranks, when a shard starts
//! (`--start-at`) and where it writes (`--out` with `%r`).

/// Which rank of how many this process is, and where that was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This process's rank, 0..world.
    pub rank: u64,
    /// How many shards run the load.
    pub world: u64,
    /// Where rank and world came from: `--shard`, `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`,
    /// `PMI_RANK` or `JOB_COMPLETION_INDEX`.
    pub source: &'static str,
}

/// The environment variables `--shard auto` reads, in this order: (rank, world size).
/// Slurm's srun, Open MPI's mpirun, MPICH/Hydra (PMI), Kubernetes' Indexed Job (no size:
/// `--world N` gives it).
pub const ENGINES: [(&str, Option<&str>); 4] = [
    ("SLURM_PROCID", Some("SLURM_NTASKS")),
    ("OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
    ("PMI_RANK", Some("PMI_SIZE")),
    ("JOB_COMPLETION_INDEX", None),
];

/// The most shards one load may have.
pub const MAX_WORLD: u64 = 100_000;

/// A `--shard`, `--world` or `--start-at` that names no shard or time; each says the fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// An environment variable's rank or size that is not a number.
    #[error("{name}='{text}' is not a whole number: give --shard R/N, e.g. --shard 0/4")]
    NotWhole {
        /// The variable.
        name: &'static str,
        /// Its value.
        text: String,
    },
    /// `--shard auto` where no engine's variable is set.
    #[error("--shard auto found no rank: none of SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, JOB_COMPLETION_INDEX is set; run it under srun, mpirun or an Indexed Job, or give --shard R/N")]
    NoRank,
    /// A rank from a variable that has no world size beside it.
    #[error(
        "--shard auto: {0} gives the rank but no world size: add --world N (the Job's completions)"
    )]
    NoWorld(&'static str),
    /// Not `R/N`.
    #[error("--shard '{0}': write R/N (rank R of N shards, e.g. 0/4) or auto")]
    NotRankOf(String),
    /// `R/N` with a part that is not a number.
    #[error("--shard '{spec}': '{part}' is not a whole number; write e.g. --shard 0/4")]
    NotNumber {
        /// The whole `--shard`.
        spec: String,
        /// The part that is not a number.
        part: String,
    },
    /// `--shard R/N` and `--world` of another N.
    #[error("--shard '{0}' and --world {1} disagree: give one world size")]
    Disagree(String, u64),
    /// A world of 0 or more than [`MAX_WORLD`].
    #[error("--shard: a world of {0} shards; give 1 to {MAX_WORLD}")]
    World(u64),
    /// A rank not below the world size.
    #[error("--shard: rank {rank} is not below the world size {world} (ranks count from 0): check {origin}")]
    Rank {
        /// The rank.
        rank: u64,
        /// The world size.
        world: u64,
        /// Where they came from (not `source`: thiserror takes that for a cause).
        origin: &'static str,
    },
    /// `--start-at +DURATION` with no duration.
    #[error("--start-at: {0}")]
    After(crate::units::UnitError),
    /// `--start-at` that is not a number of milliseconds.
    #[error(
        "--start-at '{0}': give unix milliseconds (e.g. 1795462087000) or +DURATION (e.g. +5s)"
    )]
    NotTime(String),
    /// `--start-at` in seconds rather than milliseconds.
    #[error("--start-at {0} is before 2001 in milliseconds; seconds? give milliseconds since the Unix epoch (date +%s%3N)")]
    Seconds(u64),
}

impl ShardError {
    /// The flag the error is about.
    pub fn flag(&self) -> &'static str {
        match self {
            ShardError::NoWorld(_) | ShardError::Disagree(..) => "--world",
            ShardError::After(_) | ShardError::NotTime(_) | ShardError::Seconds(_) => "--start-at",
            _ => "--shard",
        }
    }
}

/// The shard `spec` names: `R/N`, or `auto` (rank and world from `env`, the world of an
/// Indexed Job from `world`). `Err` says what is wrong and how to fix it.
pub fn resolve(
    spec: &str,
    world: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, ShardError> {
    let number = |name: &'static str, text: &str| -> Result<u64, ShardError> {
        text.trim()
            .parse::<u64>()
            .map_err(|_| ShardError::NotWhole {
                name,
                text: text.into(),
            })
    };
    let shard = if spec == "auto" {
        let found = ENGINES
            .iter()
            .find_map(|(r, w)| env(r).map(|rank| (*r, *w, rank)));
        let Some((name, size, rank)) = found else {
            return Err(ShardError::NoRank);
        };
        let n = match (size.and_then(env), size, world) {
            (_, _, Some(n)) => n,
            (Some(text), Some(size), None) => number(size, &text)?,
            _ => return Err(ShardError::NoWorld(name)),
        };
        Shard {
            rank: number(name, &rank)?,
            world: n,
            source: name,
        }
    } else {
        let (r, n) = spec
            .split_once('/')
            .ok_or_else(|| ShardError::NotRankOf(spec.into()))?;
        let parse = |t: &str| {
            t.trim().parse::<u64>().map_err(|_| ShardError::NotNumber {
                spec: spec.into(),
                part: t.into(),
            })
        };
        if let Some(w) = world.filter(|&w| Some(w) != parse(n).ok()) {
            return Err(ShardError::Disagree(spec.into(), w));
        }
        Shard {
            rank: parse(r)?,
            world: parse(n)?,
            source: "--shard",
        }
    };
    if shard.world == 0 || shard.world > MAX_WORLD {
        return Err(ShardError::World(shard.world));
    }
    if shard.rank >= shard.world {
        return Err(ShardError::Rank {
            rank: shard.rank,
            world: shard.world,
            origin: shard.source,
        });
    }
    Ok(shard)
}

/// Rank `rank`'s share of `total` split between `world` ranks: the quotient, one more for
/// each of the lowest `total % world` ranks, so the shares add up to `total` exactly.
pub fn split(total: u64, rank: u64, world: u64) -> u64 {
    total / world + u64::from(rank < total % world)
}

/// A rate's share: a whole rate is split as [`split`] splits counts (every request/s kept); a
/// fractional one in equal parts.
pub fn split_rate(rate: f64, rank: u64, world: u64) -> f64 {
    if rate.fract() == 0.0 && rate < 1e15 {
        split(rate as u64, rank, world) as f64
    } else {
        rate / world as f64
    }
}

/// `--start-at`: unix milliseconds, or `+DURATION` after `base_ms` (the time a launcher
/// fixed, `WIREBENCH_T0`; without one, now).
pub fn start_at(text: &str, base_ms: u64) -> Result<u64, ShardError> {
    if let Some(after) = text.strip_prefix('+') {
        let d = crate::units::parse_duration(after).map_err(ShardError::After)?;
        return Ok(base_ms + d.as_millis() as u64);
    }
    let ms: u64 = text
        .trim()
        .parse()
        .map_err(|_| ShardError::NotTime(text.into()))?;
    // Seconds given for milliseconds would start in 1970: a shard would wait for nothing.
    if ms < 1_000_000_000_000 {
        return Err(ShardError::Seconds(ms));
    }
    Ok(ms)
}

/// `--out`'s pattern with `%r` replaced by the rank (`%%` is a `%`).
pub fn out_path(pattern: &str, rank: u64) -> String {
    pattern
        .replace("%%", "\u{0}")
        .replace("%r", &rank.to_string())
        .replace('\u{0}', "%")
}

/// A stable 64-bit FNV-1a hash (the same on every machine and build): the plan hash.
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn splits_add_up_and_favour_the_lowest_ranks() {
        for (total, world, shares) in [
            (10, 4, vec![3, 3, 2, 2]),
            (8, 4, vec![2, 2, 2, 2]),
            (3, 4, vec![1, 1, 1, 0]),
            (1001, 3, vec![334, 334, 333]),
        ] {
            let got: Vec<u64> = (0..world).map(|r| split(total, r, world)).collect();
            assert_eq!(got, shares);
            assert_eq!(got.iter().sum::<u64>(), total);
        }
        assert_eq!(split_rate(1000.0, 0, 3), 334.0);
        assert!((split_rate(10.5, 1, 3) - 3.5).abs() < 1e-12);
    }

    #[test]
    fn rank_and_world_come_from_the_flag_or_the_engine() {
        let none = env(&[]);
        let s = |spec, world, e: &dyn Fn(&str) -> Option<String>| resolve(spec, world, e);
        assert_eq!(
            s("2/4", None, &none),
            Ok(Shard {
                rank: 2,
                world: 4,
                source: "--shard"
            })
        );
        let slurm = env(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "200")]);
        assert_eq!(s("auto", None, &slurm).unwrap().rank, 3);
        assert_eq!(s("auto", None, &slurm).unwrap().world, 200);
        let mpi = env(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2")]);
        assert_eq!(
            s("auto", None, &mpi).unwrap().source,
            "OMPI_COMM_WORLD_RANK"
        );
        let pmi = env(&[("PMI_RANK", "0"), ("PMI_SIZE", "5")]);
        assert_eq!(s("auto", None, &pmi).unwrap().world, 5);
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2")]);
        assert_eq!(s("auto", Some(3), &k8s).unwrap().rank, 2);
        for (spec, world, e, says) in [
            (
                "auto",
                None,
                &k8s as &dyn Fn(&str) -> Option<String>,
                "--world N",
            ),
            ("auto", None, &none, "no rank"),
            ("4/4", None, &none, "not below"),
            ("0/0", None, &none, "give 1 to"),
            ("1-4", None, &none, "write R/N"),
            ("x/4", None, &none, "not a whole number"),
            ("1/4", Some(5), &none, "disagree"),
        ] {
            let e = s(spec, world, e).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }

    #[test]
    fn start_times_and_out_paths() {
        assert_eq!(start_at("+5s", 1_795_000_000_000), Ok(1_795_000_005_000));
        assert_eq!(start_at("1795462087000", 0), Ok(1_795_462_087_000));
        let e = start_at("1795462087", 0).unwrap_err().to_string();
        assert!(e.contains("seconds?"), "{e}");
        assert!(start_at("soon", 0).is_err());
        assert_eq!(out_path("r%r.json", 7), "r7.json");
        assert_eq!(out_path("100%%-%r", 2), "100%-2");
        assert_ne!(fnv1a("a"), fnv1a("b"));
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
    }
}
