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

/// The bytes of `path`, if it holds at most `limit` bytes.
pub fn read(path: impl AsRef<Path>, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
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
    fn a_missing_file_says_why() {
        let e = read("/nonexistent/wirebench", 10).expect_err("missing");
        assert!(e.to_string().starts_with("cannot read it ("), "{e}");
    }
}
