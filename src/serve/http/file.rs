//! Files under `--dir`: a request path to an open file, never outside the directory, and the
//! file to the socket with `sendfile(2)`.

use super::response::content_type;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
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

/// Opens the file `rel` names under `root` (canonical), or says which status to answer:
/// 404 when there is none, 403 when it resolves outside `root` (`..`, a symbolic link) or is not
/// a regular file (a directory without `index.html`, a device, a FIFO).
pub(crate) fn open(root: &Path, rel: &Path) -> Result<Served, u16> {
    // The path is joined, then canonicalized (resolving `..` and symbolic links) and checked to
    // lie under the root, which is canonical too.
    let path = std::fs::canonicalize(root.join(rel)).map_err(|e| status_of(&e))?;
    if !path.starts_with(root) {
        return Err(403);
    }
    let (file, meta) = open_regular(&path)?;
    if meta.is_file() {
        return Ok(served(file, meta.len(), &path));
    }
    if meta.is_dir() {
        let index = path.join("index.html");
        // An index that is a symbolic link out of the root is refused like any other.
        let index = std::fs::canonicalize(&index).map_err(|_| 403u16)?;
        if index.starts_with(root) {
            if let Ok((file, meta)) = open_regular(&index) {
                if meta.is_file() {
                    return Ok(served(file, meta.len(), &index));
                }
            }
        }
    }
    Err(403)
}

fn served(file: File, len: u64, path: &Path) -> Served {
    Served {
        file,
        len,
        content_type: content_type(path),
    }
}

/// Opens without blocking (a FIFO would otherwise wait for a writer) and stats the open file.
fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), u16> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| status_of(&e))?;
    let meta = file.metadata().map_err(|e| status_of(&e))?;
    Ok((file, meta))
}

/// The status for a failed look-up.
fn status_of(e: &io::Error) -> u16 {
    match e.kind() {
        io::ErrorKind::PermissionDenied => 403,
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

    #[test]
    fn stays_under_the_root() {
        let base = std::env::temp_dir().join(format!("wirebench-http-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), b"abc").unwrap();
        std::fs::write(root.join("sub/index.html"), b"<p>").unwrap();
        std::fs::write(base.join("secret"), b"no").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("link")).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        let ok = open(&root, "a.txt".as_ref()).unwrap();
        assert_eq!((ok.len, ok.content_type), (3, "text/plain; charset=utf-8"));
        assert_eq!(open(&root, "sub".as_ref()).unwrap().len, 3);
        assert_eq!(open(&root, "".as_ref()).unwrap_err(), 403);
        assert_eq!(open(&root, "../secret".as_ref()).unwrap_err(), 403);
        assert_eq!(open(&root, "sub/../../secret".as_ref()).unwrap_err(), 403);
        assert_eq!(open(&root, "link".as_ref()).unwrap_err(), 403);
        assert_eq!(open(&root, "../nothing".as_ref()).unwrap_err(), 404);
        assert_eq!(open(&root, "nothing".as_ref()).unwrap_err(), 404);
        assert_eq!(open(&root, "a.txt/x".as_ref()).unwrap_err(), 404);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
