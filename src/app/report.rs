//! `wirebench report FILE.json [-o report.html]`: a result document rendered as one
//! self-contained HTML page ([`crate::report::html`]). The page is written whole or not at all:
//! rendered in memory, written to a temporary name beside the target, then renamed over it.

use crate::cli::ReportArgs;
use crate::error::UsageError;
use crate::report::html;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `wirebench report`.
pub fn main(a: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    // A path that exists, or has the shape of one, is a file; anything else (an ID, `last`)
    // is looked up in the history.
    let (doc, default) = if Path::new(&a.file).exists() || looks_like_a_file(&a.file) {
        let doc = read_document(&a.file)?;
        checked(&a.file, &doc)?;
        (doc, Path::new(&a.file).with_extension("html"))
    } else {
        let store = super::keep::open_for_reading(a.db.db.as_deref())?;
        let doc = store.document(&a.file).map_err(super::keep::usage_of)?;
        checked(&format!("stored document {}", a.file), &doc)?;
        let name = a.file.replace('~', "-");
        (doc, PathBuf::from(format!("{name}.html")))
    };
    let file = match &a.output {
        Some(o) => PathBuf::from(o),
        None => default,
    };
    crate::sys::write::check(&file).map_err(|e| UsageError::new(format!("{e} (-o)")))?;
    if file == Path::new(&a.file) {
        return Err(UsageError::new(format!(
            "{} would be written over the document it renders; name another file with -o",
            file.display()
        ))
        .into());
    }
    write_page(&doc, &file).map_err(|e| match e.downcast::<UsageError>() {
        Ok(u) => UsageError::new(format!("{}: {}", a.file, u.0)).into(),
        Err(e) => e,
    })?;
    writeln!(out, "wrote {}", file.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `arg` names a file rather than a stored run: a path separator or an extension
/// (IDs are hex digits, `last` or `last~N`).
fn looks_like_a_file(arg: &str) -> bool {
    arg.contains('/') || arg.contains('.')
}

/// Reads and parses a JSON document; a missing file or one that is not JSON is a usage error.
pub fn read_document(path: &str) -> Result<Value, UsageError> {
    let hint = "give a document written by wirebench run, compare or peak with --json, or a study's study.json";
    let text = crate::sys::file::read_text(path, crate::sys::file::DOCUMENT_LIMIT)
        .map_err(|e| UsageError::new(format!("{path}: {e}; {hint}")))?;
    serde_json::from_str(&text)
        .map_err(|e| UsageError::new(format!("{path} is not JSON ({e}); {hint}")))
}

/// `doc`, read from `name`, checked against its schema and ranges
/// ([`crate::summary::check`]): a corrupt one is one line naming the file and the field.
pub fn checked(name: &str, doc: &Value) -> Result<(), UsageError> {
    crate::summary::check::document(doc).map_err(|e| {
        UsageError::new(format!(
            "{name} is damaged: {e}; give a document as wirebench wrote it"
        ))
    })
}

/// Renders `doc` to the file `path`, whole or not at all. A document of an unknown schema, or
/// a path that cannot be written, is a [`UsageError`] and leaves nothing behind. This is the
/// call for any command that writes a report page (e.g. `study --out DIR` with
/// `DIR/report.html`, or a document read from the history).
pub fn write_page(doc: &Value, path: &Path) -> anyhow::Result<()> {
    html::schema(doc).map_err(|e| UsageError::new(e.to_string()))?;
    let mut page = Vec::new();
    html::render(doc, &mut page)?;
    crate::sys::write::file(path, &page)
        .map_err(|e| UsageError::new(format!("{e}; name a writable file with -o")).into())
}
