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
