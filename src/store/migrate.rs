//! The history's schema, migrated by `PRAGMA user_version`, and the checks that refuse a file
//! that is not a wirebench history before anything is written to it.

use super::{sql, StoreError};
use rusqlite::Connection;
use std::path::Path;

/// `PRAGMA application_id` of a wirebench history: "WBhi", so another program's SQLite file
/// is told apart from ours (sqlite.org/pragma.html#pragma_application_id).
const APPLICATION_ID: i32 = 0x5742_6869;

/// Each migration takes the schema from version i to i + 1.
const MIGRATIONS: &[&str] = &[
    // 1: runs, with the document whole and headline columns for listing; tags by run.
    "CREATE TABLE runs (
        n INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        stored_ms INTEGER NOT NULL,
        kind TEXT NOT NULL,
        schema TEXT NOT NULL,
        status TEXT NOT NULL,
        targets TEXT NOT NULL,
        command TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        cpu TEXT NOT NULL,
        version TEXT NOT NULL,
        ok INTEGER,
        errors INTEGER,
        ops_per_s REAL,
        p99_us REAL,
        duration_s REAL,
        document TEXT NOT NULL
     );
     CREATE INDEX runs_stored ON runs (stored_ms);
     CREATE TABLE tags (
        run INTEGER NOT NULL REFERENCES runs (n) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run, key)
     );
     CREATE INDEX tags_key ON tags (key, value);",
];

/// Refuses a file that is not SQLite, another program's database or a newer wirebench's;
/// then brings an empty or older history up to date in one transaction.
pub fn check_and_migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let latest = MIGRATIONS.len() as i32;
    let (app, version, tables) = read_header(conn, path)?;
    let refuse = |why: &str| {
        Err(StoreError::Refused(format!(
            "{} {why}: give another --db PATH (or move this file away)",
            path.display()
        )))
    };
    if app != APPLICATION_ID && !(app == 0 && version == 0 && tables == 0) {
        return refuse("is an SQLite database of another program, not a wirebench history");
    }
    if version > latest {
        return refuse(&format!(
            "is a wirebench history of a newer version (schema {version}, this wirebench knows {latest})"
        ));
    }
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| sql(path, e))?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(|e| sql(path, e))?;
    if version == latest {
        return Ok(());
    }
    // BEGIN IMMEDIATE takes the write lock first, so two first writers do not both migrate.
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| sql(path, e))?;
    let result = (|| {
        let now: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        for (i, step) in MIGRATIONS.iter().enumerate().skip(now as usize) {
            conn.execute_batch(step)?;
            conn.pragma_update(None, "user_version", i as i32 + 1)?;
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID)?;
        conn.execute_batch("COMMIT")
    })();
    if let Err(e) = result {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(sql(path, e));
    }
    Ok(())
}

/// The application id, the schema version and the number of tables: reads only, so a file
/// that is not SQLite fails here untouched.
fn read_header(conn: &Connection, path: &Path) -> Result<(i32, i32, i64), StoreError> {
    // One read transaction: the three figures from one snapshot. Read one by one, a second
    // wirebench creating the file meanwhile could be seen half-way (its schema version but not
    // yet its application id) and the file taken for another program's.
    let read = || -> rusqlite::Result<(i32, i32, i64)> {
        conn.execute_batch("BEGIN DEFERRED")?;
        let header = (|| {
            let app = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
            let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let tables = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            Ok((app, version, tables))
        })();
        let _ = conn.execute_batch("COMMIT");
        header
    };
    read().map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            ) =>
        {
            StoreError::Refused(format!(
                "{} is not a wirebench history (not an SQLite database, or a damaged one): give another --db PATH (or move this file away)",
                path.display()
            ))
        }
        e => sql(path, e),
    })
}
