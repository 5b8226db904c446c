//! File sets (`wirebench files make`, then `{file}` in a URL): a directory of files whose
//! sizes follow a law (SPECweb99's classes, a log-normal, or one size), written from a seed so
//! that the same seed gives the same bytes, and a manifest that lists them most popular first.
//! A client draws a file per request by popularity (Zipf's law over the ranks, or uniform),
//! from the run's seed, among the most popular files up to a data-set size (`--dataset`): the
//! Flash study's workload (Pai, Druschel & Zwaenepoel, USENIX 1999), by data-set size.

use crate::random::{mix, Rng, Zipf};

/// The manifest's file name inside a set's directory.
pub const MANIFEST: &str = "manifest.tsv";
/// The manifest's first line: what it is, and its version.
const HEADER: &str = "# wirebench file set 1";
/// The most files a set may hold (its manifest stays under ~200 MB).
pub const MOST_FILES: u64 = 10_000_000;
/// The largest one file may be.
pub const LARGEST_FILE: u64 = 1 << 30;
/// The stream of the seed that sizes are drawn from.
const SIZES_STREAM: u64 = 0x0073_697a_6573;
/// The stream of the seed that the files' bytes come from.
const BYTES_STREAM: u64 = 0x0062_7974_6573;

/// The path of the file of popularity rank `i` (0 the most popular), relative to the set's
/// directory: a thousand files per folder, so no folder grows huge.
pub fn path_of(i: u64) -> String {
    let mut out = Vec::with_capacity(12);
    write_path(&mut out, i);
    String::from_utf8_lossy(&out).into_owned()
}

/// Appends [`path_of`]`(i)` to `out` without allocating (a request's `{file}`).
pub fn write_path(out: &mut Vec<u8>, i: u64) {
    use std::io::Write;
    let _ = write!(out, "{:03}/{i:06}", i / 1000);
}

/// How the files' sizes are drawn (`--sizes`).
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    /// SPECweb99's four classes (0.1–0.9 KB, 1–9 KB, 10–90 KB, 100–900 KB, nine sizes each),
    /// drawn with the classes' access shares 35, 50, 14 and 1 %.
    Specweb,
    /// A log-normal law: `median` bytes, and `sigma` the standard deviation of the log.
    Lognormal {
        /// The median size in bytes.
        median: u64,
        /// The spread of ln(size).
        sigma: f64,
    },
    /// Every file this many bytes.
    Fixed(u64),
}

/// A file set's flags or manifest that cannot be used; each message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum FileSetError {
    /// `--sizes` that is no size law.
    #[error("--sizes '{0}' is not a size law: write specweb, lognormal:MEDIAN:SIGMA (e.g. lognormal:8k:1.0) or fixed:SIZE (e.g. fixed:16k)")]
    SizeLaw(String),
    /// A log-normal law out of range.
    #[error("--sizes '{0}': the median must lie in 1 byte ..= 1 GiB and sigma in 0 ..= 10, e.g. lognormal:8k:1.0")]
    Lognormal(String),
    /// A fixed size out of range.
    #[error("--sizes '{0}': a file holds 1 byte to 1 GiB, e.g. fixed:16k")]
    Fixed(String),
    /// `--count 0`.
    #[error("--count 0 makes no files: give at least 1")]
    NoFiles,
    /// More files than bytes.
    #[error("--count {count} files cannot share --total {total} bytes: each needs at least 1 byte; give a larger --total or a smaller --count")]
    CountAboveTotal {
        /// `--count`.
        count: u64,
        /// `--total`, in bytes.
        total: u64,
    },
    /// `--count` beyond [`MOST_FILES`].
    #[error("--count {0}: at most {MOST_FILES} files")]
    CountAboveMost(u64),
    /// A total that takes more than [`MOST_FILES`] files of the sizes drawn.
    #[error("--total {0} bytes takes more than {MOST_FILES} files of these sizes: give larger --sizes or a --count")]
    TotalAboveMost(u64),
    /// A manifest without its first line.
    #[error("it does not start with '{HEADER}': write a set with `wirebench files make DIR --total SIZE`")]
    NoHeader,
    /// A manifest line that is not the next file's path and size.
    #[error(
        "line {line} is not '{want}<TAB>BYTES': write the set again with `wirebench files make`"
    )]
    Line {
        /// The line, from 1.
        line: usize,
        /// The path it should name.
        want: String,
    },
    /// A manifest of more than [`MOST_FILES`] files.
    #[error("it lists more than {MOST_FILES} files")]
    ManifestAboveMost,
    /// A manifest of no file.
    #[error("it lists no files")]
    Empty,
    /// `--popularity` that is no popularity.
    #[error("--popularity '{0}' is not a popularity: write zipf:S with S > 0 (e.g. zipf:1.0) or uniform")]
    Popularity(String),
}

impl Sizes {
    /// Parses `specweb`, `lognormal:MEDIAN:SIGMA` (`lognormal:8k:1.0`) or `fixed:SIZE`.
    pub fn parse(text: &str) -> Result<Sizes, FileSetError> {
        let bad = || FileSetError::SizeLaw(text.into());
        let mut parts = text.trim().split(':');
        let sizes = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("specweb"), None, _, _) => Sizes::Specweb,
            (Some("lognormal"), Some(m), Some(s), None) => {
                let median = crate::units::parse_size(m).map_err(|_| bad())?;
                let sigma: f64 = s.parse().map_err(|_| bad())?;
                if median == 0 || median > LARGEST_FILE || !(0.0..=10.0).contains(&sigma) {
                    return Err(FileSetError::Lognormal(text.into()));
                }
                Sizes::Lognormal { median, sigma }
            }
            (Some("fixed"), Some(n), None, _) => {
                match crate::units::parse_size(n).map_err(|_| bad())? {
                    n @ 1..=LARGEST_FILE => Sizes::Fixed(n),
                    _ => return Err(FileSetError::Fixed(text.into())),
                }
            }
            _ => return Err(bad()),
        };
        Ok(sizes)
    }

    /// One size, in 1 ..= [`LARGEST_FILE`] bytes.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let n = match self {
            Sizes::Specweb => {
                // Class 0 to 3 by their shares of SPECweb99's accesses, then size k of nine.
                let class = match rng.below(100) {
                    0..35 => 0,
                    35..85 => 1,
                    85..99 => 2,
                    _ => 3,
                };
                let k = rng.below(9) + 1;
                k * 1024 * 10u64.pow(class) / 10
            }
            Sizes::Lognormal { median, sigma } => {
                (*median as f64 * (sigma * normal(rng)).exp()).round() as u64
            }
            Sizes::Fixed(n) => *n,
        };
        n.clamp(1, LARGEST_FILE)
    }
}

/// A standard normal draw (Box & Muller, 1958).
fn normal(rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.next_f64(); // in (0, 1]: its log is finite
    let v = rng.next_f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The sizes of a set of `total` bytes, most popular file first: `count` files whose drawn
/// sizes are scaled to add up to `total`, or, without a count, files drawn until `total` is
/// reached (the last one cut to fit).
pub fn plan(
    total: u64,
    count: Option<u64>,
    sizes: &Sizes,
    seed: u64,
) -> Result<Vec<u64>, FileSetError> {
    let mut rng = Rng::seeded(mix(seed, SIZES_STREAM));
    match count {
        Some(0) => Err(FileSetError::NoFiles),
        Some(n) if n > total => Err(FileSetError::CountAboveTotal { count: n, total }),
        Some(n) if n > MOST_FILES => Err(FileSetError::CountAboveMost(n)),
        Some(n) => {
            let drawn: Vec<u64> = (0..n).map(|_| sizes.draw(&mut rng)).collect();
            let sum: u128 = drawn.iter().map(|&d| u128::from(d)).sum();
            // Each scaled down (or up), kept at least 1 byte; what rounding leaves goes to the
            // largest files first, so the sum is `total` exactly.
            let mut out: Vec<u64> = drawn
                .iter()
                .map(|&d| ((u128::from(d) * u128::from(total - n) / sum) as u64) + 1)
                .collect();
            let mut left = total - out.iter().sum::<u64>();
            let mut order: Vec<usize> = (0..out.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(drawn[i]));
            for &i in order.iter().cycle() {
                if left == 0 {
                    break;
                }
                let add = (left / n).max(1);
                out[i] += add;
                left -= add;
            }
            Ok(out)
        }
        None => {
            let mut out = Vec::new();
            let mut sum = 0u64;
            while sum < total {
                if out.len() as u64 == MOST_FILES {
                    return Err(FileSetError::TotalAboveMost(total));
                }
                let n = sizes.draw(&mut rng).min(total - sum);
                out.push(n);
                sum += n;
            }
            Ok(out)
        }
    }
}

/// Fills `buf` with the bytes of file `i` of the set `seed`, from offset `at` (a multiple of
/// 8): incompressible, and the same for the same seed.
pub fn fill(seed: u64, i: u64, at: u64, buf: &mut [u8]) {
    let base = mix(mix(seed, BYTES_STREAM), i);
    for (j, chunk) in buf.chunks_mut(8).enumerate() {
        let word = mix(base, at / 8 + j as u64).to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// A set's manifest: how it was made and its files' sizes, most popular first.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The seed it was written from.
    pub seed: u64,
    /// The size law, as given.
    pub sizes: String,
    /// Each file's size, in popularity order (file `i` at [`path_of`]`(i)`).
    pub files: Vec<u64>,
}

impl Manifest {
    /// All the set's bytes.
    pub fn total(&self) -> u64 {
        self.files.iter().sum()
    }

    /// The manifest's text: a header, then one `PATH<TAB>BYTES` line per file, the most
    /// popular first (a list other tools can read too).
    pub fn text(&self) -> String {
        let mut out = format!(
            "{HEADER}\n# seed {}\n# sizes {}\n# files {}\n# bytes {}\n# path\tbytes, the most popular file first\n",
            self.seed,
            self.sizes,
            self.files.len(),
            self.total()
        );
        for (i, n) in self.files.iter().enumerate() {
            out.push_str(&format!("{}\t{n}\n", path_of(i as u64)));
        }
        out
    }

    /// Reads a manifest's text; the error says which line is wrong.
    pub fn parse(text: &str) -> Result<Manifest, FileSetError> {
        let mut lines = text.lines().enumerate();
        if lines.next().map(|(_, l)| l) != Some(HEADER) {
            return Err(FileSetError::NoHeader);
        }
        let (mut seed, mut sizes, mut files) = (0, String::new(), Vec::new());
        for (n, line) in lines {
            if let Some(c) = line.strip_prefix("# ") {
                match c.split_once(' ') {
                    Some(("seed", v)) => seed = v.parse().unwrap_or(0),
                    Some(("sizes", v)) => sizes = v.to_string(),
                    _ => {}
                }
                continue;
            }
            let want = path_of(files.len() as u64);
            let size = match line.split_once('\t') {
                Some((p, s)) if p == want => s.parse::<u64>().ok().filter(|&s| s > 0),
                _ => None,
            };
            let Some(size) = size else {
                return Err(FileSetError::Line { line: n + 1, want });
            };
            if files.len() as u64 >= MOST_FILES {
                return Err(FileSetError::ManifestAboveMost);
            }
            files.push(size);
        }
        if files.is_empty() {
            return Err(FileSetError::Empty);
        }
        Ok(Manifest { seed, sizes, files })
    }
}

/// How popular each file is (`--popularity`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Popularity {
    /// Zipf's law over the ranks with this exponent (SPECweb99 and the Flash study: 1).
    Zipf(f64),
    /// Every file alike.
    Uniform,
}

impl Popularity {
    /// Parses `zipf`, `zipf:S` or `uniform`.
    pub fn parse(text: &str) -> Result<Popularity, FileSetError> {
        let s = match text.trim() {
            "uniform" => return Ok(Popularity::Uniform),
            "zipf" => Some(1.0),
            t => t
                .strip_prefix("zipf:")
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| *s > 0.0 && s.is_finite()),
        };
        s.map(Popularity::Zipf)
            .ok_or_else(|| FileSetError::Popularity(text.into()))
    }

    /// The flag's spelling, for reports.
    pub fn text(&self) -> String {
        match self {
            Popularity::Zipf(s) => format!("zipf:{s}"),
            Popularity::Uniform => "uniform".to_string(),
        }
    }
}

/// The files a run draws from: the most popular of a set up to a data-set size, and the law
/// that picks one per request.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSet {
    /// How many files (the first of the manifest).
    pub files: u64,
    /// Their bytes in all: the data set's size.
    pub bytes: u64,
    /// The manifest's files and bytes, for reports.
    pub of: (u64, u64),
    /// How popular each is.
    pub popularity: Popularity,
    zipf: Option<Zipf>,
}

// Exponents are never NaN (parse refuses them), so equality is total.
impl Eq for FileSet {}

impl FileSet {
    /// The most popular files of `m` whose sizes add up to at most `dataset` bytes (at least
    /// one file; all of them without a data-set size), drawn by `popularity`.
    pub fn of(m: &Manifest, dataset: Option<u64>, popularity: Popularity) -> FileSet {
        let limit = dataset.unwrap_or(u64::MAX);
        let (mut files, mut bytes) = (0u64, 0u64);
        for &n in &m.files {
            if files > 0 && bytes.saturating_add(n) > limit {
                break;
            }
            files += 1;
            bytes += n;
        }
        let zipf = match popularity {
            Popularity::Zipf(s) => Zipf::new(files, s),
            Popularity::Uniform => None,
        };
        FileSet {
            files,
            bytes,
            of: (m.files.len() as u64, m.total()),
            popularity,
            zipf,
        }
    }

    /// The rank (0 the most popular) of the file a request draws.
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        match &self.zipf {
            Some(z) => z.sample(rng) - 1,
            None => rng.below(self.files),
        }
    }

    /// `2,345 of 100,000 files, 100.0 MiB of 3.0 GiB, zipf:1`, for reports.
    pub fn text(&self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        format!(
            "{} of {} files, {:.1} MiB of {:.1} MiB, {}",
            crate::units::thousands(self.files),
            crate::units::thousands(self.of.0),
            mib(self.bytes),
            mib(self.of.1),
            self.popularity.text()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_adds_up_to_its_total_from_its_seed() {
        for sizes in [Sizes::Specweb, Sizes::parse("lognormal:8k:1.5").unwrap()] {
            let a = plan(10 << 20, None, &sizes, 7).unwrap();
            assert_eq!(a.iter().sum::<u64>(), 10 << 20);
            assert_eq!(a, plan(10 << 20, None, &sizes, 7).unwrap());
            assert_ne!(a, plan(10 << 20, None, &sizes, 8).unwrap());
            let b = plan(1 << 20, Some(100), &sizes, 7).unwrap();
            assert_eq!((b.len(), b.iter().sum::<u64>()), (100, 1 << 20));
            assert!(b.iter().all(|&n| n >= 1));
        }
        assert_eq!(plan(10, Some(10), &Sizes::Fixed(1000), 1).unwrap(), [1; 10]);
        assert!(plan(5, Some(6), &Sizes::Specweb, 1).is_err());
        assert!(plan(5, Some(0), &Sizes::Specweb, 1).is_err());
    }

    #[test]
    fn specweb_sizes_fall_in_its_classes_at_their_shares() {
        let mut rng = Rng::seeded(3);
        let mut classes = [0u32; 4];
        for _ in 0..100_000 {
            let n = Sizes::Specweb.draw(&mut rng);
            let c = match n {
                102..=921 => 0,
                1024..=9216 => 1,
                10240..=92160 => 2,
                102400..=921600 => 3,
                _ => panic!("{n} is in no class"),
            };
            classes[c] += 1;
        }
        // 35,000 / 50,000 / 14,000 / 1,000 expected.
        assert!((34_400..35_600).contains(&classes[0]), "{classes:?}");
        assert!((49_400..50_600).contains(&classes[1]), "{classes:?}");
        assert!((13_600..14_400).contains(&classes[2]), "{classes:?}");
        assert!((880..1120).contains(&classes[3]), "{classes:?}");
    }

    #[test]
    fn manifests_read_back_and_bad_ones_say_where() {
        let m = Manifest {
            seed: 9,
            sizes: "specweb".into(),
            files: vec![5, 1, 1200, 7],
        };
        assert_eq!(Manifest::parse(&m.text()).unwrap(), m);
        let bad = m.text().replace("000/000002", "000/000009");
        assert!(Manifest::parse(&bad)
            .unwrap_err()
            .to_string()
            .starts_with("line 9 "));
        assert!(Manifest::parse("hello").is_err());
    }

    #[test]
    fn a_dataset_is_the_most_popular_files_up_to_its_size() {
        let m = Manifest {
            seed: 1,
            sizes: "x".into(),
            files: vec![100, 200, 300, 400],
        };
        let set = |d| FileSet::of(&m, d, Popularity::Uniform);
        assert_eq!((set(Some(300)).files, set(Some(300)).bytes), (2, 300));
        assert_eq!((set(Some(599)).files, set(Some(599)).bytes), (2, 300));
        assert_eq!(set(Some(1)).files, 1, "at least one file");
        assert_eq!((set(None).files, set(None).bytes), (4, 1000));
        let mut rng = Rng::seeded(1);
        assert!((0..1000).all(|_| set(Some(300)).pick(&mut rng) < 2));
        assert!(Popularity::parse("zipf:0").is_err());
        assert_eq!(Popularity::parse("zipf").unwrap(), Popularity::Zipf(1.0));
    }

    #[test]
    fn bytes_repeat_from_the_seed_at_any_offset() {
        let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 36]);
        fill(5, 2, 0, &mut a);
        fill(5, 2, 64, &mut b);
        assert_eq!(&a[64..], &b[..]);
        fill(6, 2, 64, &mut b);
        assert_ne!(&a[64..], &b[..]);
    }
}
