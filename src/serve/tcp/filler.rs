//! Synthetic replies and pushed messages, written from a pre-filled block.
//!
//! Filling bytes per reply would cost more than sending them, so each kind of message is laid
//! out once: a block of whole messages when they are small (several replies go out in one
//! write), or a block that a large message is cut from in pieces.

use std::io;
use std::sync::Arc;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Bytes per block, and so the most one write call hands the kernel.
pub(crate) const BLOCK: usize = 128 * 1024;

/// The filler byte of messages without a tail.
const FILL_BYTE: u8 = b'w';

/// Plain filler, shared by every connection: wirebench clients only count reply bytes.
static FILL: [u8; BLOCK] = [FILL_BYTE; BLOCK];

/// Writes messages of one size, each optionally ending with a tail (a plain client's delimiter,
/// so a client that reads up to the delimiter can parse the reply).
#[derive(Clone, Debug)]
pub(crate) struct Filler {
    size: usize,
    /// Whole messages per block; 0 when a message is larger than a block.
    per_block: usize,
    block: Block,
}

#[derive(Clone, Debug)]
enum Block {
    /// The static [`FILL`].
    Plain,
    /// Built for messages with a tail: `per_block` whole messages, or for large messages
    /// [`BLOCK`] filler bytes followed by the tail.
    Tailed(Arc<[u8]>),
}

impl Filler {
    /// Messages of `size` bytes (at least 1) of plain filler.
    pub(crate) fn plain(size: usize) -> Filler {
        let size = size.max(1);
        Filler {
            size,
            per_block: BLOCK / size,
            block: Block::Plain,
        }
    }

    /// Messages of `size` bytes whose last bytes are `tail` (only its last `size` bytes if the
    /// message is shorter than the tail). The filler byte is one the tail does not contain, so
    /// the tail is the only place a delimiter-reading client finds its delimiter.
    pub(crate) fn tailed(size: usize, tail: &[u8]) -> Filler {
        let size = size.max(1);
        if tail.is_empty() {
            return Filler::plain(size);
        }
        let fill = (0..=u8::MAX)
            .map(|i| FILL_BYTE.wrapping_add(i))
            .find(|b| !tail.contains(b))
            .unwrap_or(FILL_BYTE);
        let tail = &tail[tail.len().saturating_sub(size)..];
        let (per_block, block) = if size <= BLOCK {
            let mut message = vec![fill; size];
            message[size - tail.len()..].copy_from_slice(tail);
            let per_block = BLOCK / size;
            (per_block, message.repeat(per_block))
        } else {
            let mut block = vec![fill; BLOCK];
            block.extend_from_slice(tail);
            (0, block)
        };
        Filler {
            size,
            per_block,
            block: Block::Tailed(block.into()),
        }
    }

    /// Bytes per message.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    fn bytes(&self) -> &[u8] {
        match &self.block {
            Block::Plain => &FILL,
            Block::Tailed(b) => b,
        }
    }

    /// The bytes that follow offset `off` (below the message size) of a message in an endless
    /// run of messages, as many as one write should take; never empty.
    pub(crate) fn slice_from(&self, off: usize) -> &[u8] {
        let bytes = self.bytes();
        if self.per_block > 0 {
            // The block repeats with the message size, so from `off` on it reads as the rest of
            // this message followed by whole ones.
            return &bytes[off..self.per_block * self.size];
        }
        // A large message is filler pieces cut from the block's front, then a final piece
        // that is the block's suffix, so it ends with the tail.
        let remaining = self.size - off;
        if remaining > bytes.len() {
            &bytes[..(remaining - bytes.len()).min(BLOCK)]
        } else {
            &bytes[bytes.len() - remaining..]
        }
    }

    /// Writes `count` whole messages, a block's worth per write call.
    pub(crate) async fn write<W>(&self, w: &mut W, count: u64) -> io::Result<()>
    where
        W: AsyncWrite + Unpin,
    {
        let mut remaining = count * self.size as u64;
        let mut off = 0;
        while remaining > 0 {
            let slice = self.slice_from(off);
            let slice = &slice[..slice
                .len()
                .min(usize::try_from(remaining).unwrap_or(usize::MAX))];
            w.write_all(slice).await?;
            remaining -= slice.len() as u64;
            off = (off + slice.len()) % self.size;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: &Filler, count: u64) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut out = Vec::new();
        rt.block_on(f.write(&mut out, count)).unwrap();
        out
    }

    #[test]
    fn sizes_and_tails() {
        assert_eq!(written(&Filler::plain(3), 5).len(), 15);
        assert_eq!(written(&Filler::plain(BLOCK + 7), 2).len(), 2 * (BLOCK + 7));
        let small = written(&Filler::tailed(5, b"\r\n"), 3);
        assert_eq!(small, b"www\r\nwww\r\nwww\r\n");
        let big = written(&Filler::tailed(3 * BLOCK + 1, b"\n"), 2);
        assert_eq!(big.len(), 2 * (3 * BLOCK + 1));
        let lines: Vec<usize> = big
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::len)
            .collect();
        assert_eq!(lines, [3 * BLOCK + 1, 3 * BLOCK + 1]);
        assert_eq!(written(&Filler::tailed(1, b"\r\n"), 2), b"\n\n");
        assert!(!written(&Filler::tailed(4, b"w"), 1)[..3].contains(&b'w'));
    }

    #[test]
    fn slices_continue_messages_after_partial_writes() {
        for f in [
            Filler::tailed(5, b"\r\n"),
            Filler::tailed(BLOCK + 3, b"\n"),
            Filler::plain(7),
        ] {
            let want = written(&f, 3);
            let (mut out, mut off, mut step) = (Vec::new(), 0, 1);
            while out.len() < want.len() {
                let slice = f.slice_from(off);
                let n = slice.len().min(step).min(want.len() - out.len());
                out.extend_from_slice(&slice[..n]);
                off = (off + n) % f.size();
                step = step * 7 % 100_003 + 1;
            }
            assert!(out == want, "size {}", f.size());
        }
    }
}
