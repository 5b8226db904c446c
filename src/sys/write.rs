//! Writing the files a user names, whole and without clobbering: every file wirebench writes
//! (`--out`, `report -o`, `study --out`'s files, `launch` scripts, `--save-example`) goes
//! through [`file`] or [`check`].
//!
//! - A path that exists and is not a regular file (a device, a named pipe, a directory, a
//!   socket, a link to nothing) is refused before anything runs: `--out /dev/full` once
//!   replaced the machine's device with a regular file.
//! - The bytes go to a new temporary file beside the target, made with `O_EXCL` under a
//!   random name (so never opened through a link someone planted), then renamed over it: a
//!   reader sees the old file or the new one, never half of one.
//! - A link the user named is followed to the regular file it names, and that file is
//!   replaced (the link stays); no other link is followed.
//! - Temporary folders are made `mkdtemp`-style ([`temp_dir`]): a random name, created new,
//!   never one someone else made first.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The path exists and is not a regular file.
    #[error(
        "{path} exists and is {1}, not a regular file: name a regular file or a new path",
        path = .0.display()
    )]
    NotRegular(PathBuf, &'static str),
    /// The file could not be written (a full disk, no permission, no such directory).
    #[error("cannot write {path} ({1})", path = .0.display())]
    Io(PathBuf, std::io::Error),
}

impl WriteError {
    /// Whether the disk was full (or the quota spent).
    pub fn disk_full(&self) -> bool {
        match self {
            WriteError::Io(_, e) => {
                matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
            }
            WriteError::NotRegular(..) => false,
        }
    }
}

/// What a file type is called in an error.
fn kind_of(t: std::fs::FileType) -> &'static str {
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_char_device() => "a character device",
        _ if t.is_block_device() => "a block device",
        _ if t.is_fifo() => "a named pipe",
        _ if t.is_socket() => "a socket",
        _ => "not a regular file",
    }
}

/// The file that writing to `path` replaces: `path` itself when it does not exist or is a
/// regular file, the regular file a link at `path` names, or an error when `path` exists and is
/// anything else. Call it before a run, so bad output paths are refused before any measuring.
pub fn check(path: &Path) -> Result<PathBuf, WriteError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(WriteError::Io(path.to_path_buf(), e)),
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(path.to_path_buf());
    }
    if !t.is_symlink() {
        return Err(WriteError::NotRegular(path.to_path_buf(), kind_of(t)));
    }
    // A link the user named: what it names must be a regular file.
    let real = std::fs::canonicalize(path)
        .map_err(|_| WriteError::NotRegular(path.to_path_buf(), "a link to nothing"))?;
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Ok(real),
        Ok(m) => Err(WriteError::NotRegular(
            path.to_path_buf(),
            match m.file_type() {
                t if t.is_dir() => "a link to a directory",
                t if t.is_char_device() || t.is_block_device() => "a link to a device",
                t if t.is_fifo() => "a link to a named pipe",
                _ => "a link to something other than a file",
            },
        )),
        Err(_) => Err(WriteError::NotRegular(
            path.to_path_buf(),
            "a link to nothing",
        )),
    }
}

/// Random bytes from the kernel, as hex (for names no one can guess).
fn random_hex() -> String {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        // Never in practice; the clock and PID still make a name that O_EXCL keeps safe.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        b = (t ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Options for [`file_with`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The file's permission bits (before the umask): 0o666, or 0o777 for a script.
    pub mode: u32,
    /// Make the file's directory (and its parents) if missing.
    pub make_dir: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: 0o666,
            make_dir: false,
        }
    }
}

/// Writes `bytes` to `path` whole, as the module says.
pub fn file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    file_with(path, bytes, Options::default())
}

/// [`file`], with a mode and the directory made if asked.
pub fn file_with(path: &Path, bytes: &[u8], o: Options) -> Result<(), WriteError> {
    stage(path, bytes, o)?.commit()
}

/// A file written in full under a temporary name beside its target, waiting for
/// [`Staged::commit`] to rename it there; dropped uncommitted, it is removed. Staging every file
/// of a set before committing any writes the set whole or not at all.
pub struct Staged {
    tmp: Temp,
    target: PathBuf,
    named: PathBuf,
}

/// Writes `bytes` to a temporary file beside `path`'s target (see [`check`]).
pub fn stage(path: &Path, bytes: &[u8], o: Options) -> Result<Staged, WriteError> {
    let target = check(path)?;
    let tmp = temp_file_beside(&target, o)?;
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).open(&tmp.0)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    written.map_err(|e| WriteError::Io(path.to_path_buf(), e))?;
    Ok(Staged {
        tmp,
        target,
        named: path.to_path_buf(),
    })
}

impl Staged {
    /// Renames the file over its target.
    pub fn commit(mut self) -> Result<(), WriteError> {
        // Checked again: the target may have become something else while the bytes were written.
        check(&self.named)?;
        std::fs::rename(&self.tmp.0, &self.target)
            .map_err(|e| WriteError::Io(self.named.clone(), e))?;
        self.tmp.0 = PathBuf::new(); // renamed: nothing to remove
        Ok(())
    }
}

/// A temporary file, removed when dropped (unless renamed: then its path is empty).
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// A new empty file beside `target`, under a random hidden name, opened `O_EXCL|O_NOFOLLOW`.
fn temp_file_beside(target: &Path, o: Options) -> Result<Temp, WriteError> {
    let fail = |e| WriteError::Io(target.to_path_buf(), e);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if o.make_dir {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = target
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{}.tmp", random_hex()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(o.mode)
            .open(&tmp)
        {
            Ok(_) => return Ok(Temp(tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(e)),
        }
    }
    Err(fail(std::io::Error::other("no free temporary name")))
}

/// A new directory `<parent>/<prefix>XXXXXXXXXXXXXXXX` (random), made with mode 0700 by this
/// call and by no one else: `mkdtemp`-style, never a folder that existed before.
pub fn temp_dir(parent: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    for _ in 0..16 {
        let dir = parent.join(format!("{prefix}{}", random_hex()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary directory name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = temp_dir(&std::env::temp_dir(), &format!("wb-write-{name}-")).unwrap();
        d
    }

    #[test]
    fn writes_whole_and_leaves_no_temporary_file() {
        let d = scratch("whole");
        let p = d.join("a.json");
        file(&p, b"one").unwrap();
        file(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_directory_a_pipe_and_a_dangling_link_are_refused_untouched() {
        let d = scratch("refuse");
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let dangling = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nothing"), &dangling).unwrap();
        for (p, what) in [
            (&sub, "a directory"),
            (&fifo, "a named pipe"),
            (&dangling, "a link to nothing"),
        ] {
            let e = file(p, b"x").unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert!(!d.join("nothing").exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 3);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_named_link_to_a_file_keeps_the_link_and_replaces_the_file() {
        let d = scratch("link");
        let real = d.join("real.json");
        std::fs::write(&real, b"old").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        file(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn temporary_directories_are_new_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let base = scratch("dirs");
        let a = temp_dir(&base, "wirebench-x-").unwrap();
        let b = temp_dir(&base, "wirebench-x-").unwrap();
        assert_ne!(a, b);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::remove_dir_all(base).unwrap();
    }
}
