//! The two ways a command fails: bad input (exit 2) and a failed run (exit 1).

/// Bad input: a flag, a URL or a file the user gave. Printed as one line; exit code 2.
///
/// The message names the problem and the fix, e.g.
/// `--size 0 must be at least 1 byte: give a size such as --size 64`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with this message.
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError(message.into())
    }
}

/// Shorthand for returning a usage error.
pub fn usage<T>(message: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError::new(message))
}
