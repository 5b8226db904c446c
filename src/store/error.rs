//! The history's errors: each names the fix, what SQLite said appears once, and a damaged file
//! is bad input with the way out (move it aside, or another `--db`).

use std::path::Path;

/// What went wrong with the history file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a wirebench history (corrupt, foreign or newer): bad input.
    #[error("{0}")]
    Refused(String),
    /// No stored run matches: bad input.
    #[error("{0}")]
    NotFound(String),
    /// SQLite failed (disk full, permissions …). The message names the fix; what SQLite said
    /// is in it once (a `source` would repeat it in the error chain printed).
    #[error("history database {path}: {cause}: {}", fix(.cause))]
    Sql {
        /// The file.
        path: String,
        /// What SQLite said.
        cause: rusqlite::Error,
    },
}

/// Whether SQLite said the file is busy or locked by another connection.
pub(super) fn busy(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Sql {
            cause: rusqlite::Error::SqliteFailure(f, _),
            ..
        } if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// SQLite's error on `path`; a damaged file is the user's to deal with (bad input).
pub(super) fn sql(path: &Path, cause: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match cause.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => StoreError::Refused(format!(
            "{} is damaged ({cause}): {}",
            path.display(),
            move_aside(path)
        )),
        _ => StoreError::Sql {
            path: path.display().to_string(),
            cause,
        },
    }
}

/// The fix for a damaged history file.
pub(super) fn move_aside(path: &Path) -> String {
    let p = path.display();
    format!("move it aside (mv {p} {p}.damaged; the next run starts a new history), or give another --db PATH")
}

/// What to do about SQLite's error `e`.
fn fix(e: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DiskFull) => "the disk is full: free space, or give --db a path on another disk",
        Some(C::SystemIoFailure) => {
            "check free space and the disk, or give --db a path on another disk"
        }
        Some(C::ReadOnly | C::CannotOpen | C::PermissionDenied) => {
            "give --db a path you may write to"
        }
        Some(C::DatabaseBusy | C::DatabaseLocked) => {
            "another program holds it locked: wait for it, or give another --db PATH"
        }
        _ => "give another --db PATH",
    }
}

/// Removes the file at `path` (and SQLite's side files) if it is empty: what a failed first
/// opening leaves. A file with content is someone's history and stays.
pub(super) fn remove_empty(path: &Path) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            let _ = std::fs::remove_file(side);
        }
    }
}
