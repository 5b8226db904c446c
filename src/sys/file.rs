//! Reading a file the user named, with a bound: `--payload @/dev/zero` or `report /dev/zero`
//! must end with one line, not with the machine's memory. A regular file larger than the bound
//! is refused from its size before a byte is read; anything else (a device, a pipe, a file
//! growing while read) is read at most one byte past the bound.

use std::io::Read;
use std::path::Path;

/// The most a plan file (`study FILE`) may hold.
pub const PLAN_LIMIT: u64 = 1 << 20;
/// The most a result, sweep, compare, peak, study or diagnosis document may hold (`report`,
/// `merge`): a 60 s run with its per-second series is well under 1 MB.
pub const DOCUMENT_LIMIT: u64 = 64 << 20;
/// The most a `--targets` request list may hold.
pub const TARGETS_LIMIT: u64 = 16 << 20;
/// The most a `--cacert` PEM file may hold (a bundle of every public root is ~250 kB).
pub const PEM_LIMIT: u64 = 4 << 20;

/// Why a bounded read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("cannot read it ({0})")]
    Io(#[from] std::io::Error),
    /// The file holds more than the bound.
    #[error("it is larger than {} (the limit for this input)", size(*.0))]
    TooLarge(u64),
}

/// `limit` in the largest binary unit that divides it, e.g. `64 MiB`.
fn size(limit: u64) -> String {
    match limit {
        l if l >= 1 << 30 && l % (1 << 30) == 0 => format!("{} GiB", l >> 30),
        l if l >= 1 << 20 && l % (1 << 20) == 0 => format!("{} MiB", l >> 20),
        l if l >= 1 << 10 && l % (1 << 10) == 0 => format!("{} KiB", l >> 10),
        l => format!("{l} bytes"),
    }
}

/// How long a read of something that is not a regular file (a pipe, a terminal) may wait for
/// its next bytes: a named pipe nobody writes to must end with one line, not hang the command.
pub const QUIET_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The bytes of `path`, if it holds at most `limit` bytes. The file is opened without
/// blocking (opening a named pipe with no writer would wait for one), and a read that is not
/// of a regular file waits at most [`QUIET_LIMIT`] for each next piece: `<(command)` works,
/// a FIFO nobody writes to reads as empty or fails, never hangs.
pub fn read(path: impl AsRef<Path>, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_within(path.as_ref(), limit, QUIET_LIMIT)
}

fn read_within(path: &Path, limit: u64, quiet: std::time::Duration) -> Result<Vec<u8>, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    if meta.is_file() || meta.is_dir() {
        (&mut file).take(limit + 1).read_to_end(&mut bytes)?;
    } else {
        read_waiting(&mut file, limit, quiet, &mut bytes)?;
        if bytes.is_empty() && std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
            return Err(ReadError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "it is a named pipe and nothing was written to it; give a regular file",
            )));
        }
    }
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// Reads a non-blocking `file` to its end (or one byte past `limit`), waiting with `poll(2)`
/// at most `quiet` for each next piece.
fn read_waiting(
    file: &mut std::fs::File,
    limit: u64,
    quiet: std::time::Duration,
    bytes: &mut Vec<u8>,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut chunk = [0u8; 64 * 1024];
    while (bytes.len() as u64) <= limit {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut fd = libc::pollfd {
                    fd: file.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                let ms = quiet.as_millis().min(i32::MAX as u128) as i32;
                // SAFETY: one valid pollfd, for the duration of the call.
                let ready = unsafe { libc::poll(&mut fd, 1, ms) };
                if ready == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "nothing arrived for {} s: a pipe or device nobody writes to; give a regular file",
                            quiet.as_secs()
                        ),
                    ));
                }
                if ready < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The text of `path` (UTF-8), if it holds at most `limit` bytes.
pub fn read_text(path: impl AsRef<Path>, limit: u64) -> Result<String, ReadError> {
    let bytes = read(path, limit)?;
    String::from_utf8(bytes).map_err(|_| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8 text",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_read_one_byte_past_the_bound_and_refused() {
        let e = read("/dev/zero", 4096).expect_err("endless");
        assert!(matches!(e, ReadError::TooLarge(4096)), "{e}");
        assert_eq!(
            e.to_string(),
            "it is larger than 4 KiB (the limit for this input)"
        );
    }

    #[test]
    fn a_regular_file_is_refused_by_its_size_and_read_within_it() {
        let dir = std::env::temp_dir().join(format!("wb-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ten");
        std::fs::write(&path, b"0123456789").unwrap();
        assert!(matches!(read(&path, 9), Err(ReadError::TooLarge(9))));
        assert_eq!(read(&path, 10).unwrap(), b"0123456789");
        assert_eq!(read_text(&path, 100).unwrap(), "0123456789");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_fifo_with_no_writer_or_a_silent_one_never_hangs() {
        let dir = std::env::temp_dir().join(format!("wb-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fifo");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        // No writer: refused at once.
        let e = read(&path, 100).expect_err("no writer");
        assert!(e.to_string().contains("named pipe"), "{e}");
        // A writer that holds the pipe open and says nothing: refused after the quiet limit
        // (opened for reading too, which Linux allows without waiting for a reader).
        let writer = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let quiet = std::time::Duration::from_millis(200);
        let e = read_within(&path, 100, quiet).expect_err("silent");
        assert!(e.to_string().contains("nobody writes to"), "{e}");
        drop(writer);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_missing_file_says_why() {
        let e = read("/nonexistent/wirebench", 10).expect_err("missing");
        assert!(e.to_string().starts_with("cannot read it ("), "{e}");
    }
}
