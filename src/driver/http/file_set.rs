//! The file-set part of an HTTP plan: `{file}` in a request draws from `--manifest`'s set, the
//! most popular files up to `--dataset`, by `--popularity`. Each flag without the others it
//! needs is bad input, said in one line.

use super::plan::Args;
use crate::driver::files::{FileSet, Manifest, Popularity, MANIFEST};
use crate::driver::http::spec::{Body, HttpRequest};
use crate::driver::http::template::Template;
use crate::error::{usage_of, UsageError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads the run's file set, if `--manifest` is given, and binds it to every `{file}` of
/// `requests`.
pub fn bind(a: &Args, requests: &mut [HttpRequest]) -> Result<Option<Arc<FileSet>>, UsageError> {
    let names_file = requests
        .iter()
        .any(|r| templates(r).any(Template::has_file));
    let Some(dir) = &a.file_set.manifest else {
        if names_file {
            return usage_of(&["--manifest"], "{file} in the URL draws from a file set: give --manifest DIR, a set written by `wirebench files make DIR --total 1G`");
        }
        if a.file_set.dataset.is_some() || a.file_set.popularity.is_some() {
            let flag = if a.file_set.dataset.is_some() {
                "--dataset"
            } else {
                "--popularity"
            };
            return usage_of(&[flag], format!("{flag} chooses among the files of a set: give --manifest DIR and {{file}} in the URL, e.g. http://HOST/{{file}}"));
        }
        return Ok(None);
    };
    if !names_file {
        return usage_of(&["--manifest"], format!("--manifest {dir}: no request names {{file}}, so none would draw from it: put {{file}} in the URL, e.g. http://HOST/{{file}}"));
    }
    let m = read(dir)?;
    let dataset = a
        .file_set
        .dataset
        .as_deref()
        .map(|t| dataset(t, &m))
        .transpose()?;
    let popularity = Popularity::parse(a.file_set.popularity.as_deref().unwrap_or("zipf:1.0"))
        .map_err(|e| UsageError::flag("--popularity", e))?;
    let set = Arc::new(FileSet::of(&m, dataset, popularity));
    for r in requests.iter_mut() {
        r.path.bind_files(&set);
        r.headers.iter_mut().for_each(|h| h.bind_files(&set));
        if let Some(Body::Template(t)) = &mut r.body {
            t.bind_files(&set);
        }
    }
    Ok(Some(set))
}

/// A request's templates: its path, its headers and its body.
fn templates(r: &HttpRequest) -> impl Iterator<Item = &Template> {
    let body = match &r.body {
        Some(Body::Template(t)) => Some(t),
        _ => None,
    };
    std::iter::once(&r.path).chain(&r.headers).chain(body)
}

/// The manifest of `--manifest DIR` (or of the manifest file itself).
fn read(dir: &str) -> Result<Manifest, UsageError> {
    let path: PathBuf = match Path::new(dir).is_dir() {
        true => Path::new(dir).join(MANIFEST),
        false => PathBuf::from(dir),
    };
    let text = crate::sys::file::read_text(&path, 512 << 20).map_err(|e| {
        UsageError::flag("--manifest", format!(
            "--manifest {dir}: {}: {e}; write a set first with `wirebench files make {dir} --total 1G`",
            path.display()
        ))
    })?;
    Manifest::parse(&text)
        .map_err(|e| UsageError::flag("--manifest", format!("--manifest {}: {e}", path.display())))
}

/// `--dataset SIZE`: at least 1 byte, at most the set's size.
fn dataset(text: &str, m: &Manifest) -> Result<u64, UsageError> {
    let n = crate::units::parse_size(text)
        .map_err(|e| UsageError::flag("--dataset", format!("--dataset: {e}")))?;
    if n == 0 {
        return usage_of(
            &["--dataset"],
            "--dataset 0 holds no file: give a size such as --dataset 100M",
        );
    }
    if n > m.total() {
        return usage_of(&["--dataset"], format!(
            "--dataset {text} is more than the set's {} bytes: give a smaller data set, or write a larger set with `wirebench files make DIR --total {text}`",
            crate::units::thousands(m.total())
        ));
    }
    Ok(n)
}
