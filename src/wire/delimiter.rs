//! Streaming delimiter search (Knuth–Morris–Pratt): a byte stream arrives in chunks, and a
//! delimiter split across them is still found, as are self-overlapping delimiters such as
//! `\r\n\r\n`. The TCP driver finds delimited replies with it; the reference TCP server,
//! delimited requests.

/// A delimiter and its KMP failure table, built once. The match state is one `usize` kept by
/// the caller with each stream, so a reader keeps no more than it already tracks.
#[derive(Clone, Debug)]
pub struct Delimiter {
    bytes: Vec<u8>,
    /// `fail[i]`: length of the longest proper prefix of `bytes[..=i]` that is also a suffix.
    fail: Vec<usize>,
}

impl Delimiter {
    /// The search for `bytes`, which must not be empty.
    pub fn new(bytes: &[u8]) -> Delimiter {
        assert!(!bytes.is_empty(), "a delimiter has at least one byte");
        Delimiter {
            bytes: bytes.to_vec(),
            fail: failure(bytes),
        }
    }

    /// Consumes `chunk` up to the end of the next delimiter: `Some(end)` if one ends with
    /// `chunk[end - 1]`, `None` if none ends in `chunk` (all of it consumed). `matched` holds
    /// the delimiter bytes matched at the end of what came before (0 at a stream's start); it
    /// is updated, and back at 0 after a delimiter.
    pub fn find(&self, matched: &mut usize, chunk: &[u8]) -> Option<usize> {
        let first = self.bytes[0];
        let mut m = *matched;
        let mut i = 0;
        while i < chunk.len() {
            if m == 0 {
                // Skip ahead to the next possible start; most bytes are not delimiters.
                match chunk[i..].iter().position(|&b| b == first) {
                    Some(skip) => i += skip,
                    None => break,
                }
            }
            let b = chunk[i];
            i += 1;
            while m > 0 && self.bytes[m] != b {
                m = self.fail[m - 1];
            }
            if self.bytes[m] == b {
                m += 1;
            }
            if m == self.bytes.len() {
                *matched = 0;
                return Some(i);
            }
        }
        *matched = m;
        None
    }
}

/// The KMP failure function of `pattern`: for each prefix, the length of its longest proper
/// prefix that is also a suffix.
fn failure(pattern: &[u8]) -> Vec<usize> {
    let mut fail = vec![0; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmp_table() {
        assert_eq!(failure(b"END\r\n"), vec![0, 0, 0, 0, 0]);
        assert_eq!(failure(b"aab"), vec![0, 1, 0]);
        assert_eq!(failure(b"abab"), vec![0, 0, 1, 2]);
    }

    #[test]
    fn found_across_chunks() {
        let d = Delimiter::new(b"\r\n\r\n");
        let mut matched = 0;
        assert_eq!(d.find(&mut matched, b"ab\r\n\r"), None);
        assert_eq!(matched, 3);
        assert_eq!(d.find(&mut matched, b"\ncd"), Some(1));
        assert_eq!(matched, 0);
        let d = Delimiter::new(b"aab");
        assert_eq!(d.find(&mut matched, b"xaaab-"), Some(5));
    }
}
