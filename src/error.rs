//! The two ways a command fails: bad input (exit 2) and a failed run (exit 1).

/// Bad input: a flag, a URL or a file the user gave. Printed as one line; exit code 2.
///
/// The message names the problem and the fix, e.g.
/// `--size 0 must be at least 1 byte: give a size such as --size 64`. [`About`] says which
/// flags or target it is about, so a plan file's error points at the key that set them.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String, pub About);

/// What a usage error is about, as typed values rather than words in its message: a plan
/// file's error is placed at the first of these its plan sets (`app::study`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct About {
    /// The flags the error names, most relevant first (long names, `--size`).
    pub flags: Vec<&'static str>,
    /// The target URL the error is about, when it is about one.
    pub target: Option<String>,
    /// That target's name, once known (two targets may share a URL).
    pub name: Option<String>,
}

impl UsageError {
    /// A usage error with this message, about no flag in particular.
    pub fn new(message: impl std::fmt::Display) -> UsageError {
        UsageError(message.to_string(), About::default())
    }

    /// A usage error about `flag`.
    pub fn flag(flag: &'static str, message: impl std::fmt::Display) -> UsageError {
        UsageError::flags(&[flag], message)
    }

    /// A usage error about `flags`, the most relevant first.
    pub fn flags(flags: &[&'static str], message: impl std::fmt::Display) -> UsageError {
        let about = About {
            flags: flags.to_vec(),
            ..About::default()
        };
        UsageError(message.to_string(), about)
    }

    /// A usage error about the target `url`.
    pub fn target(url: impl Into<String>, message: impl std::fmt::Display) -> UsageError {
        let about = About {
            target: Some(url.into()),
            ..About::default()
        };
        UsageError(message.to_string(), about)
    }

    /// The same error, its target (if it is about one) named `name`.
    pub fn in_target(mut self, name: &str) -> UsageError {
        if self.1.target.is_some() {
            self.1.name = Some(name.to_string());
        }
        self
    }

    /// The same error with another message (a context added), still about the same things.
    pub fn map(self, f: impl FnOnce(String) -> String) -> UsageError {
        UsageError(f(self.0), self.1)
    }
}

/// Shorthand for returning a usage error.
pub fn usage<T>(message: impl std::fmt::Display) -> Result<T, UsageError> {
    Err(UsageError::new(message))
}

/// Shorthand for returning a usage error about `flags`, the most relevant first.
pub fn usage_of<T>(
    flags: &[&'static str],
    message: impl std::fmt::Display,
) -> Result<T, UsageError> {
    Err(UsageError::flags(flags, message))
}

/// Whether clap's suggestion `suggested` for the unknown flag `typed` is a likely typo (close
/// in spelling), rather than a flag of another meaning that merely shares letters
/// (`--latency` is not `--rate`, `--no-tui` not `--until`).
pub fn close(typed: &str, suggested: &str) -> bool {
    let a: Vec<char> = typed.trim_start_matches('-').chars().collect();
    let b: Vec<char> = suggested.trim_start_matches('-').chars().collect();
    if a.len() >= 3 && (b.starts_with(&a) || a.starts_with(&b)) {
        return true;
    }
    let allowed = if a.len().max(b.len()) <= 5 { 1 } else { 2 };
    distance(&a, &b) <= allowed
}

/// Levenshtein distance (insertions, deletions, substitutions, and swaps of neighbours).
fn distance(a: &[char], b: &[char]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// `did you mean 'KEY'? `: the one of `known` spelled close to `typed`
/// ([`close`]), for an unknown key or flag; empty when none is.
pub fn did_you_mean(typed: &str, known: &[&str]) -> String {
    match known.iter().find(|k| close(typed, k)) {
        Some(k) => format!("did you mean '{k}'? "),
        None => String::new(),
    }
}
