//! Reply parsing: sized replies (echoes checked byte by byte), delimited replies, and the
//! reference server's error line, which may come instead of any reply.

use super::request::Template;
use super::TcpConn;
use crate::driver::workload::Reply;
use crate::driver::Done;
use crate::record::{ErrorKind, OpError};

impl TcpConn {
    /// The error for a connection the server closed, naming how much of a reply came.
    pub(super) fn closed_early(&self) -> OpError {
        if self.in_flight.is_empty() {
            return OpError::new(ErrorKind::ShortReply, "the server closed the connection");
        }
        OpError::new(
            ErrorKind::ShortReply,
            format!(
                "the server closed the connection after {} bytes of a reply",
                self.reply_pos
            ),
        )
    }

    /// Parses `n` fresh bytes in `inbuf`; returns the number of replies they complete.
    pub(super) fn parse(&mut self, n: usize) -> Result<usize, OpError> {
        if self.in_flight.is_empty() {
            return Err(self.unexpected(0, n));
        }
        let mut at = 0;
        let before = self.completed.len();
        while at < n {
            let Some(&(seq, sent)) = self.in_flight.front() else {
                return Err(self.unexpected(at, n));
            };
            let (used, done) = match &self.shape.reply {
                Reply::Size(size) => self.take_sized(*size, seq, at, n)?,
                Reply::Until(_) => self.take_delimited(at, n),
            };
            at += used;
            if done {
                self.in_flight.pop_front();
                self.completed.push(Done::ok(sent));
            }
        }
        Ok(self.completed.len() - before)
    }

    fn take_sized(
        &mut self,
        size: usize,
        seq: u64,
        at: usize,
        n: usize,
    ) -> Result<(usize, bool), OpError> {
        let take = (size - self.reply_pos).min(n - at);
        if self.shape.verify_echo {
            if let Some(byte) = self.first_difference(seq, at, take) {
                return Err(self.mismatch(seq, byte, at, n));
            }
        }
        self.reply_pos += take;
        let done = self.reply_pos == size;
        if done {
            self.reply_pos = 0;
        }
        Ok((take, done))
    }

    /// The reply offset of the first byte in `inbuf[at..at+len]` that differs from request
    /// `seq` (the bytes stand at offset `reply_pos` of the reply), if any does.
    fn first_difference(&self, seq: u64, at: usize, len: usize) -> Option<usize> {
        let Template::Synthetic {
            size,
            period,
            pattern,
        } = &self.shape.request
        else {
            return None;
        };
        let data = &self.inbuf[at..at + len];
        let head = (*size).min(8);
        let seq_bytes = seq.to_le_bytes();
        let mut p = self.reply_pos;
        let mut d = data;
        while p < head && !d.is_empty() {
            if d[0] != seq_bytes[p] {
                return Some(p);
            }
            p += 1;
            d = &d[1..];
        }
        while !d.is_empty() {
            let off = p % period;
            let k = (period - off).min(d.len());
            if d[..k] != pattern[off..off + k] {
                let i = d
                    .iter()
                    .zip(&pattern[off..off + k])
                    .position(|(a, b)| a != b);
                return Some(p + i.unwrap_or(0));
            }
            p += k;
            d = &d[k..];
        }
        None
    }

    fn take_delimited(&mut self, at: usize, n: usize) -> (usize, bool) {
        let Some(delimiter) = &self.shape.delimiter else {
            unreachable!("take_delimited is called for delimited replies only")
        };
        match delimiter.find(&mut self.delim_matched, &self.inbuf[at..n]) {
            Some(end) => {
                self.reply_pos = 0;
                (end, true)
            }
            None => {
                self.reply_pos += n - at;
                (n - at, false)
            }
        }
    }

    fn unexpected(&self, at: usize, n: usize) -> OpError {
        let shown = &self.inbuf[at..n.min(at + 80)];
        if let Some(e) = server_error(shown) {
            return e;
        }
        OpError::new(
            ErrorKind::Mismatch,
            format!(
                "{} bytes arrived with no request in flight: \"{}\" (is the reply larger than --expect-size?)",
                n - at,
                shown.escape_ascii()
            ),
        )
    }

    fn mismatch(&self, seq: u64, byte: usize, at: usize, n: usize) -> OpError {
        if self.reply_pos == 0 {
            if let Some(e) = server_error(&self.inbuf[at..n.min(at + 80)]) {
                return e;
            }
        }
        OpError::new(
            ErrorKind::Mismatch,
            format!(
                "reply to request {seq} differs from the request at byte {byte}: the echo is not byte-exact"
            ),
        )
    }
}

/// The reference server's error line (it refuses a client with `ERROR_PREFIX` and a reason,
/// then closes), if `bytes` start with one. Fatal: the server refuses what the user asked for
/// (a mode it does not serve, a size it does not take), so the run stops with its reason.
pub(super) fn server_error(bytes: &[u8]) -> Option<OpError> {
    let rest = bytes.strip_prefix(crate::wire::framing::ERROR_PREFIX)?;
    let why = rest.split(|&b| b == b'\n').next().unwrap_or(rest);
    Some(OpError::fatal(
        ErrorKind::Mismatch,
        format!(
            "the wirebench server refused the run: {}",
            String::from_utf8_lossy(why)
        ),
    ))
}
