//! The results history: every `run`, `compare`, `peak` and `study` kept in one SQLite file
//! (`$XDG_DATA_HOME/wirebench/history.db`), so a result can be listed, shown, compared and
//! merged long after the terminal scrolled it away. A row holds the whole JSON document as it
//! was printed (its schema version recorded beside it; a result's histograms are inside it as
//! HdrHistogram V2, so runs can still be added exactly later: never only percentiles, and never
//! one row per request, oha's mistake), the command line, the machine (host, kernel, CPU,
//! wirebench version), `--tag` labels, the status, the targets and a few headline figures in
//! columns so `wirebench history` lists a thousand runs without reading one document. Writes
//! are one transaction each in WAL mode; a second writer waits (`busy_timeout`) instead of
//! failing. The schema is migrated by `PRAGMA user_version`; a file that is not a wirebench
//! history (another program's database, or not SQLite at all) is refused before anything is
//! written to it.

mod error;
pub(crate) mod headline;
mod id;
mod migrate;

pub use error::StoreError;
use error::{busy, move_aside, remove_empty, sql};

pub use headline::{Headline, Typed};
pub use id::Ref;

use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a writer waits for another's transaction before giving up.
const BUSY: Duration = Duration::from_secs(30);

/// The kind of document a row holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One run (`wirebench.result/1`).
    Result,
    /// Several targets, swept flags or repeated runs (`wirebench.sweep/1`).
    Sweep,
    /// `wirebench compare` (`wirebench.compare/1`).
    Compare,
    /// `wirebench peak` (`wirebench.peak/1`).
    Peak,
    /// `wirebench study FILE` (a `wirebench.sweep/1` document).
    Study,
}

impl Kind {
    /// The kind a stored word names.
    pub fn of_name(name: &str) -> Option<Kind> {
        [
            Kind::Result,
            Kind::Sweep,
            Kind::Compare,
            Kind::Peak,
            Kind::Study,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// The word stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Result => "result",
            Kind::Sweep => "sweep",
            Kind::Compare => "compare",
            Kind::Peak => "peak",
            Kind::Study => "study",
        }
    }
}

/// How the stored run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every operation succeeded.
    Ok,
    /// Some operations failed (exit 1).
    Errors,
    /// Stopped early by Ctrl-C: what was measured until then.
    Interrupted,
    /// Ended before its last run: its target could not be reached, or wirebench was killed
    /// while it ran (the row saved after each run): the runs finished until then.
    Partial,
}

impl Status {
    /// The word stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Errors => "errors",
            Status::Interrupted => "interrupted",
            Status::Partial => "partial",
        }
    }
}

/// The machine and program that measured.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Host name.
    pub host: String,
    /// Kernel (`uname -srv`).
    pub kernel: String,
    /// CPU model and count.
    pub cpu: String,
    /// wirebench version.
    pub version: String,
}

/// A run to store.
pub struct Entry<'a> {
    /// What the document is.
    pub kind: Kind,
    /// The JSON document, exactly as printed by `--json`.
    pub document: &'a str,
    /// The command line.
    pub command: &'a str,
    /// Where it ran.
    pub env: &'a Env,
    /// `--tag k=v` labels.
    pub tags: &'a [(String, String)],
    /// How it ended.
    pub status: Status,
}

/// One row of `wirebench history`: everything but the document.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// The full id (16 hex digits; 8 are shown).
    pub id: String,
    /// When it was stored, ms since the Unix epoch.
    pub stored_unix_ms: i64,
    /// result, sweep, compare, peak or study.
    pub kind: String,
    /// The document's schema, e.g. `wirebench.result/1`.
    pub schema: String,
    /// ok, errors or interrupted.
    pub status: String,
    /// The target URLs.
    pub targets: Vec<String>,
    /// The `--tag` labels.
    pub tags: Vec<(String, String)>,
    /// The headline figures.
    #[serde(flatten)]
    pub headline: Headline,
    /// The command line.
    pub command: String,
    /// Host, kernel, CPU, version.
    pub host: String,
    /// Kernel.
    pub kernel: String,
    /// CPU.
    pub cpu: String,
    /// wirebench version.
    pub version: String,
}

/// What `wirebench history` asks for.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// A substring of a target URL.
    pub target: Option<String>,
    /// Labels every row must carry.
    pub tags: Vec<(String, String)>,
    /// Only rows stored at or after this instant (ms since the epoch).
    pub since_unix_ms: Option<i64>,
    /// At most this many rows, newest first.
    pub limit: usize,
}

/// The columns a [`Row`] is read from, in order; the tags come along as one JSON array of
/// `[key, value]` pairs (SQLite's JSON functions), so a listing is one query.
const COLUMNS: &str = "n, id, stored_ms, kind, schema, status, targets, command, host, kernel, cpu, version, \
     ok, errors, ops_per_s, p99_us, duration_s, \
     (SELECT json_group_array(json_array(key, value)) FROM (SELECT key, value FROM tags WHERE run = runs.n ORDER BY key))";

/// An open history file.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// The default history file: `$XDG_DATA_HOME/wirebench/history.db`, else
/// `~/.local/share/wirebench/history.db` (the XDG Base Directory Specification's default).
pub fn default_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/share")
        }
    };
    Some(base.join("wirebench").join("history.db"))
}

impl Store {
    /// Opens (creating if need be) the history at `path`, checks it is one, and migrates it.
    /// A file this call created and could not make a history (a full disk) is removed again,
    /// so that no empty file is left to be taken for a history later.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Refused(format!(
                    "cannot make the directory {} for the history ({e}): give a writable --db PATH, or --no-save",
                    dir.display()
                ))
            })?;
        }
        let fresh = !path.exists();
        let opened = Store::open_file(path);
        if opened.is_err() && fresh {
            remove_empty(path);
        }
        opened
    }

    /// [`Store::open`] once the directory is there.
    fn open_file(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path).map_err(|e| sql(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.conn.busy_timeout(BUSY).map_err(|e| store.err(e))?;
        // A second wirebench creating the same file at the same moment can make a step of the
        // first opening (switching the journal to WAL, the first migration) report the file
        // busy at once instead of waiting: that wirebench is done within milliseconds, so the
        // opening is tried again, within the same patience as any write.
        let deadline = std::time::Instant::now() + BUSY;
        loop {
            match migrate::check_and_migrate(&store.conn, path) {
                Err(e) if busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                done => break done.map(|()| store),
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sql(&self.path, e)
    }

    /// Refuses a damaged file (`PRAGMA quick_check`): a row written into it may be lost with
    /// the rest, and the user should hear of the damage now, not when reading back.
    pub fn check_intact(&self) -> Result<(), StoreError> {
        let verdict: String = self
            .conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if verdict == "ok" {
            return Ok(());
        }
        let what: Vec<&str> = verdict.lines().filter(|l| !l.starts_with("***")).collect();
        Err(StoreError::Refused(format!(
            "{} fails SQLite's integrity check ({}): {}",
            self.path.display(),
            what.join("; "),
            move_aside(&self.path)
        )))
    }

    /// Stores `entry` in one transaction and returns its full id. A damaged file is refused
    /// (see [`Store::check_intact`]).
    pub fn insert(&mut self, entry: &Entry) -> Result<String, StoreError> {
        self.check_intact()?;
        let doc: serde_json::Value = serde_json::from_str(entry.document)
            .map_err(|e| StoreError::Refused(format!("the document to store is not JSON: {e}")))?;
        let head = Headline::of(entry.kind, &doc);
        let schema = <crate::summary::study::Head as serde::Deserialize>::deserialize(&doc)
            .map(|h| h.schema)
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "?".to_string());
        let targets = serde_json::Value::from(headline::targets(entry.kind, &doc)).to_string();
        let id = id::fresh();
        let now = now_ms();
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| sql(&path, e))?;
        tx.execute(
            "INSERT INTO runs (id, stored_ms, kind, schema, status, targets, command, host, kernel, cpu, version, ok, errors, ops_per_s, p99_us, duration_s, document)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            params![
                id, now, entry.kind.name(), schema, entry.status.name(), targets, entry.command,
                entry.env.host, entry.env.kernel, entry.env.cpu, entry.env.version,
                head.ok, head.errors, head.ops_per_s, head.p99_us, head.duration_s, entry.document
            ],
        )
        .map_err(|e| sql(&path, e))?;
        let n = tx.last_insert_rowid();
        for (k, v) in entry.tags {
            tx.execute(
                "INSERT OR REPLACE INTO tags (run, key, value) VALUES (?1, ?2, ?3)",
                params![n, k, v],
            )
            .map_err(|e| sql(&path, e))?;
        }
        tx.commit().map_err(|e| sql(&path, e))?;
        Ok(id)
    }

    /// Replaces the document, status and figures of the row `id` (stored by
    /// [`Store::insert`]) in one transaction: a command of several runs saves its document so
    /// far after each.
    pub fn replace(&mut self, id: &str, entry: &Entry) -> Result<(), StoreError> {
        let doc: serde_json::Value = serde_json::from_str(entry.document)
            .map_err(|e| StoreError::Refused(format!("the document to store is not JSON: {e}")))?;
        let head = Headline::of(entry.kind, &doc);
        let targets = serde_json::Value::from(headline::targets(entry.kind, &doc)).to_string();
        let path = self.path.clone();
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, targets = ?3, ok = ?4, errors = ?5, ops_per_s = ?6, p99_us = ?7, duration_s = ?8, document = ?9 WHERE id = ?1",
                params![
                    id, entry.status.name(), targets, head.ok, head.errors, head.ops_per_s,
                    head.p99_us, head.duration_s, entry.document
                ],
            )
            .map_err(|e| sql(&path, e))?;
        match changed {
            1 => Ok(()),
            _ => Err(StoreError::NotFound(format!(
                "the row {} being saved to is no longer in {}",
                short(id),
                path.display()
            ))),
        }
    }

    /// The rows `filter` selects, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Row>, StoreError> {
        let mut sql_text = format!("SELECT {COLUMNS} FROM runs WHERE 1=1");
        let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        if let Some(t) = &filter.target {
            sql_text += " AND instr(targets, ?) > 0";
            args.push(Box::new(t.clone()));
        }
        if let Some(since) = filter.since_unix_ms {
            sql_text += " AND stored_ms >= ?";
            args.push(Box::new(since));
        }
        for (k, v) in &filter.tags {
            sql_text += " AND EXISTS (SELECT 1 FROM tags WHERE tags.run = runs.n AND key = ? AND value = ?)";
            args.push(Box::new(k.clone()));
            args.push(Box::new(v.clone()));
        }
        sql_text += " ORDER BY n DESC LIMIT ?";
        args.push(Box::new(filter.limit as i64));
        let mut stmt = self.conn.prepare(&sql_text).map_err(|e| self.err(e))?;
        let params = rusqlite::params_from_iter(args.iter().map(|b| b.as_ref()));
        let mut rows = Vec::new();
        let mut it = stmt.query(params).map_err(|e| self.err(e))?;
        while let Some(r) = it.next().map_err(|e| self.err(e))? {
            rows.push(self.row(r).map_err(|e| self.err(e))?);
        }
        Ok(rows)
    }

    /// A row from its [`COLUMNS`].
    fn row(&self, r: &rusqlite::Row) -> rusqlite::Result<Row> {
        let targets: String = r.get(6)?;
        let tags: String = r.get(17)?;
        Ok(Row {
            id: r.get(1)?,
            stored_unix_ms: r.get(2)?,
            kind: r.get(3)?,
            schema: r.get(4)?,
            status: r.get(5)?,
            targets: serde_json::from_str(&targets).unwrap_or_default(),
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            command: r.get(7)?,
            host: r.get(8)?,
            kernel: r.get(9)?,
            cpu: r.get(10)?,
            version: r.get(11)?,
            headline: Headline {
                ok: r.get(12)?,
                errors: r.get(13)?,
                ops_per_s: r.get(14)?,
                p99_us: r.get(15)?,
                duration_s: r.get(16)?,
            },
        })
    }

    /// The row and the document text `reference` names (`last`, `last~N`, an id or its prefix).
    pub fn get(&self, reference: &str) -> Result<(Row, String), StoreError> {
        self.get_of(reference, None)
    }

    /// As [`Store::get`], with `last` and `last~N` counted among the runs whose target URLs
    /// contain `target` only (`diff --target`): a history shared by several programs still
    /// gives each its own `last`.
    pub fn get_of(
        &self,
        reference: &str,
        target: Option<&str>,
    ) -> Result<(Row, String), StoreError> {
        let n = self.resolve(reference, target)?;
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS}, document FROM runs WHERE n = ?1"
            ))
            .map_err(|e| self.err(e))?;
        stmt.query_row([n], |r| Ok((self.row(r)?, r.get::<_, String>(18)?)))
            .map_err(|e| self.err(e))
    }

    /// The stored document `reference` names, parsed (the HTML report reads it).
    pub fn document(&self, reference: &str) -> Result<serde_json::Value, StoreError> {
        let (_, text) = self.get(reference)?;
        serde_json::from_str(&text).map_err(|e| {
            StoreError::Refused(format!("stored document {reference} is not JSON: {e}"))
        })
    }

    /// The row number `reference` names; `last~N` among the runs of `target` when given.
    fn resolve(&self, reference: &str, target: Option<&str>) -> Result<i64, StoreError> {
        let not_found = |why: String| StoreError::NotFound(why);
        match Ref::parse(reference).map_err(|e| not_found(e.to_string()))? {
            Ref::Last(k) => self
                .conn
                .query_row(
                    "SELECT n FROM runs WHERE ?2 IS NULL OR instr(targets, ?2) > 0 ORDER BY n DESC LIMIT 1 OFFSET ?1",
                    params![k as i64, target],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?
                .ok_or_else(|| {
                    let of = target.map_or(String::new(), |t| format!(" of a target containing '{t}'"));
                    not_found(format!(
                        "'{reference}': the history at {} holds fewer than {} runs{of}; see `wirebench history`",
                        self.path.display(),
                        k + 1
                    ))
                }),
            Ref::Prefix(p) => {
                let mut stmt = self
                    .conn
                    .prepare("SELECT n, id FROM runs WHERE substr(id, 1, ?2) = ?1 LIMIT 3")
                    .map_err(|e| self.err(e))?;
                let found = stmt
                    .query_map(params![p, p.len() as i64], |r| {
                        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                    })
                    .and_then(|it| it.collect::<rusqlite::Result<Vec<_>>>())
                    .map_err(|e| self.err(e))?;
                match found.as_slice() {
                    [(n, _)] => Ok(*n),
                    [] => Err(not_found(format!(
                        "no stored run has the id '{reference}' in {}: see `wirebench history` for ids, or use last, last~1",
                        self.path.display()
                    ))),
                    _ => Err(not_found(format!(
                        "the id '{reference}' is ambiguous ({} …): give more of it",
                        found.iter().map(|(_, id)| short(id)).collect::<Vec<_>>().join(", ")
                    ))),
                }
            }
        }
    }
}

/// The digits of `id` shown and typed (git's habit: a prefix is enough).
pub fn short(id: &str) -> &str {
    &id[..id::SHOWN.min(id.len())]
}

/// Now, in ms since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
