//! `wirebench files make DIR --total SIZE`: writes a file set ([`crate::driver::files`]): the
//! sizes drawn from the seed, each file's bytes from the seed and its rank, then the manifest,
//! last, so that a set cut short by an error has none and cannot be mistaken for whole.

use crate::cli::{FilesCommand, FilesMakeArgs};
use crate::driver::files::{self, Manifest, Sizes, MANIFEST};
use crate::error::UsageError;
use anyhow::Context;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `wirebench files ...`.
pub fn main(c: &FilesCommand, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match c {
        FilesCommand::Make(a) => make(a, out),
    }
}

/// The set `a` asks for: its sizes, its law's name and its seed; bad input is a usage error.
fn planned(a: &FilesMakeArgs) -> Result<Manifest, UsageError> {
    let total = crate::units::parse_size(&a.total)
        .map_err(|e| UsageError::flag("--total", format!("--total: {e}")))?;
    if total == 0 {
        return Err(UsageError::flag(
            "--total",
            "--total 0 makes an empty set: give its size, e.g. --total 100M",
        ));
    }
    let law = a.sizes.as_deref().unwrap_or("specweb");
    let sizes = Sizes::parse(law).map_err(|e| UsageError::flag("--sizes", e))?;
    let seed = a.seed.unwrap_or(1);
    let files = files::plan(total, a.count, &sizes, seed)
        .map_err(|e| UsageError::flags(&["--count", "--total"], e))?;
    Ok(Manifest {
        seed,
        sizes: law.to_string(),
        files,
    })
}

/// Writes the set.
fn make(a: &FilesMakeArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let m = planned(a)?;
    let dir = Path::new(&a.dir);
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(UsageError::new(format!(
                "{} exists and is not an empty directory: give a new directory (a set is written whole, never over other files)",
                a.dir
            ))
            .into());
        }
    }
    let manifest = m.text();
    // Room for the set, its manifest and a block per file, checked before a byte is written.
    let need = m.total() + manifest.len() as u64 + 4096 * (m.files.len() as u64 + 1);
    if let Some(free) = free_bytes(dir) {
        if free < need {
            return Err(UsageError::flag(
                "--total",
                format!(
                    "{}: the set needs {} bytes and its disk has {} free: free space there, give a smaller --total, or another directory",
                    a.dir,
                    crate::units::thousands(need),
                    crate::units::thousands(free)
                ),
            )
            .into());
        }
    }
    let made = !dir.exists();
    let written = write_set(dir, &m, &manifest);
    if let Err(e) = written {
        // Cut short (a disk filled by someone else meanwhile): what it wrote is removed, so no
        // set without its manifest is left to be taken for one.
        match made {
            true => {
                let _ = std::fs::remove_dir_all(dir);
            }
            false => {
                if let Ok(entries) = std::fs::read_dir(dir) {
                    for e in entries.flatten() {
                        let _ = std::fs::remove_dir_all(e.path())
                            .or_else(|_| std::fs::remove_file(e.path()));
                    }
                }
            }
        }
        return Err(e.context(format!(
            "{}: the set was not made (what was written is removed)",
            a.dir
        )));
    }
    writeln!(
        out,
        "wrote {} files, {} bytes ({}, seed {}) to {}; manifest {}",
        crate::units::thousands(m.files.len() as u64),
        crate::units::thousands(m.total()),
        m.sizes,
        m.seed,
        a.dir,
        dir.join(MANIFEST).display()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the files of `m`, then its manifest, last.
fn write_set(dir: &Path, m: &Manifest, manifest: &str) -> anyhow::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    for (i, &size) in m.files.iter().enumerate() {
        let path = dir.join(files::path_of(i as u64));
        if i % 1000 == 0 {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
        }
        write_file(&path, m.seed, i as u64, size, &mut buf)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    crate::sys::write::file(&dir.join(MANIFEST), manifest.as_bytes())?;
    Ok(())
}

/// The bytes free (to this user) on the disk that holds `dir`, or its nearest existing parent.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let mut at = Some(dir);
    while let Some(d) = at {
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        if d.exists() {
            let c = std::ffi::CString::new(d.as_os_str().as_bytes()).ok()?;
            // SAFETY: a valid NUL-terminated path and a statvfs to fill.
            let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
                return None;
            }
            let (avail, block): (u64, u64) = (s.f_bavail, s.f_frsize);
            return Some(avail.saturating_mul(block));
        }
        at = d.parent();
    }
    None
}

/// File `i` of the set, `size` bytes.
fn write_file(path: &Path, seed: u64, i: u64, size: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    let mut at = 0u64;
    while at < size {
        let n = (size - at).min(buf.len() as u64) as usize;
        files::fill(seed, i, at, &mut buf[..n]);
        f.write_all(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}
