//! HPACK (RFC 7541) as a load generator needs it: the response side decodes every header block
//! so that its dynamic table stays in step with the server's, but looks only at `:status`;
//! values the table does not keep are skipped without Huffman decoding, and a block that
//! repeats the last one byte for byte on a table it leaves as it found it is not decoded again
//! ([`Repeat`]). The request side writes literal fields without indexing (§6.2.2) with raw
//! strings, built once per request shape.

use super::huffman;
use std::collections::VecDeque;

/// The dynamic table size both ends start with (RFC 7541 §4.2; SETTINGS_HEADER_TABLE_SIZE).
pub(super) const TABLE_SIZE: usize = 4096;

/// The static table (RFC 7541 Appendix A), index 1 first.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// A header block that does not decode: the connection must end (COMPRESSION_ERROR, §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BadBlock;

impl From<huffman::BadHuffman> for BadBlock {
    fn from(_: huffman::BadHuffman) -> BadBlock {
        BadBlock
    }
}

/// A dynamic table entry: name and value.
type Entry = (Vec<u8>, Vec<u8>);

/// The response side's HPACK state: the dynamic table.
#[derive(Debug)]
pub(super) struct Decoder {
    /// Newest first (index 62 is the front).
    table: VecDeque<Entry>,
    /// Its size as §4.1 counts it (name + value + 32 per entry).
    size: usize,
    /// Its current limit (a size update may lower it below [`TABLE_SIZE`]).
    max: usize,
    /// Scratch for decoded strings.
    name: Vec<u8>,
    value: Vec<u8>,
    /// Evicted entries' buffers, reused for new ones: no allocation per field once warm.
    spare: Vec<Entry>,
    /// Huffman strings decoded lately: the same values come again in every response.
    memo: huffman::Memo,
    /// The last block, and whether decoding it again would change nothing.
    repeat: Repeat,
}

/// The last header block decoded, and whether it is steady: whether decoding it again gives
/// the same `:status` and leaves the table exactly as it is, so that it need not be decoded.
///
/// Servers send the same response head again and again (nginx: `server`, `date`,
/// `content-type`, `content-length` and `last-modified` as literals with incremental indexing,
/// byte for byte the same within a second), and that decoding was 40% of an HTTP/2 request's
/// instructions. A block is *pure* when what it does does not depend on the table: it refers
/// to no dynamic entry and updates no size. Decoding a pure block inserts the same entries in
/// the same order every time. Once every entry in the table was inserted by decodes of the same
/// pure block, the table is the newest part of that block's inserts repeated, so it is fixed
/// by its length alone; a decode that leaves that length as it found it has left the table as
/// it found it, and so will every decode of the same bytes after it. A pure block that inserts
/// nothing never changes the table.
#[derive(Debug, Default)]
struct Repeat {
    block: Vec<u8>,
    status: Option<u16>,
    /// Entries inserted by decodes of `block` in a row (since the last different one).
    inserted: usize,
    steady: bool,
}

impl Repeat {
    /// Notes a decode of `buf` (pure or not) that gave `status`, inserted `inserts` entries
    /// and took the table from `lens.0` entries to `lens.1`.
    fn note(
        &mut self,
        buf: &[u8],
        status: Option<u16>,
        pure: bool,
        inserts: usize,
        lens: (usize, usize),
    ) {
        let again = pure && self.block.as_slice() == buf;
        if !again {
            self.forget();
            if !pure {
                return;
            }
            self.block.extend_from_slice(buf);
        }
        let (before, after) = lens;
        let from_run = again && before <= self.inserted;
        self.inserted += inserts;
        self.status = status;
        self.steady = inserts == 0 || (from_run && after == before);
    }

    /// No block is known to repeat (after one that is not pure, or did not decode).
    fn forget(&mut self) {
        self.block.clear();
        self.inserted = 0;
        self.steady = false;
    }
}

/// Reads an integer with an `n`-bit prefix (§5.1) at `*at`, moving past it.
fn integer(buf: &[u8], at: &mut usize, n: u32) -> Result<usize, BadBlock> {
    let mask = (1usize << n) - 1;
    let first = *buf.get(*at).ok_or(BadBlock)? as usize & mask;
    *at += 1;
    if first < mask {
        return Ok(first);
    }
    let (mut v, mut shift) = (mask, 0);
    loop {
        let b = *buf.get(*at).ok_or(BadBlock)?;
        *at += 1;
        if shift > 28 {
            return Err(BadBlock);
        }
        v += ((b & 0x7f) as usize) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
}

/// The raw bytes of a string literal (§5.2) at `*at` and whether they are Huffman coded.
fn string<'a>(buf: &'a [u8], at: &mut usize) -> Result<(&'a [u8], bool), BadBlock> {
    let huffman = buf.get(*at).ok_or(BadBlock)? & 0x80 != 0;
    let len = integer(buf, at, 7)?;
    let s = buf.get(*at..*at + len).ok_or(BadBlock)?;
    *at += len;
    Ok((s, huffman))
}

/// Puts a string literal's octets in `out`; a Huffman-coded one through `memo`'s `slot`
/// (the static index of the field's name, 0 for any other, and for a name itself).
fn decoded(
    memo: &mut huffman::Memo,
    slot: usize,
    raw: (&[u8], bool),
    out: &mut Vec<u8>,
) -> Result<(), BadBlock> {
    out.clear();
    match raw.1 {
        true => memo.decode(slot, raw.0, out)?,
        false => out.extend_from_slice(raw.0),
    }
    Ok(())
}

/// The memo slot of a value whose name has `index`: the static table's names have their own.
fn slot(index: usize) -> usize {
    match index {
        1..=61 => index,
        _ => 0,
    }
}

/// The status code a `:status` value says, if it is one.
fn status(v: &[u8]) -> Option<u16> {
    match v {
        [a, b, c] if v.iter().all(u8::is_ascii_digit) => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

impl Decoder {
    /// A decoder with an empty table of the default size.
    pub(super) fn new() -> Decoder {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max: TABLE_SIZE,
            name: Vec::new(),
            value: Vec::new(),
            spare: Vec::new(),
            memo: huffman::Memo::new(),
            repeat: Repeat::default(),
        }
    }

    /// Field `index` (static or dynamic), as (name, value).
    fn field(&self, index: usize) -> Result<(&[u8], &[u8]), BadBlock> {
        match index {
            0 => Err(BadBlock),
            1..=61 => {
                let (n, v) = STATIC[index - 1];
                Ok((n.as_bytes(), v.as_bytes()))
            }
            _ => {
                let (n, v) = self.table.get(index - 62).ok_or(BadBlock)?;
                Ok((n.as_slice(), v.as_slice()))
            }
        }
    }

    /// Drops the oldest entries until the table fits in `max` (§4.4).
    fn evict(&mut self, max: usize) {
        while self.size > max {
            let Some(e) = self.table.pop_back() else {
                break;
            };
            self.size -= e.0.len() + e.1.len() + 32;
            self.spare.push(e);
        }
    }

    /// Decodes a whole header block (a HEADERS frame's and its CONTINUATIONs'), updating the
    /// dynamic table; returns the `:status` it carries, if any.
    pub(super) fn block(&mut self, buf: &[u8]) -> Result<Option<u16>, BadBlock> {
        if self.repeat.steady && self.repeat.block.as_slice() == buf {
            return Ok(self.repeat.status);
        }
        let before = self.table.len();
        let (mut pure, mut inserts) = (true, 0);
        let code = self.decode(buf, &mut pure, &mut inserts);
        match code {
            Ok(status) => {
                let lens = (before, self.table.len());
                self.repeat.note(buf, status, pure, inserts, lens);
            }
            Err(BadBlock) => self.repeat.forget(),
        }
        code
    }

    /// Decodes `buf` as [`Decoder::block`] does, always; `pure` is cleared if it referred to a
    /// dynamic entry or updated the size, `inserts` counts the entries it inserted.
    fn decode(
        &mut self,
        buf: &[u8],
        pure: &mut bool,
        inserts: &mut usize,
    ) -> Result<Option<u16>, BadBlock> {
        let (mut at, mut code) = (0, None);
        while at < buf.len() {
            let b = buf[at];
            if b & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = integer(buf, &mut at, 7)?;
                *pure &= index <= STATIC.len();
                let (n, v) = self.field(index)?;
                if n == b":status" {
                    code = status(v);
                }
            } else if b & 0xc0 == 0x40 {
                // Literal with incremental indexing (§6.2.1): kept, so decoded in full.
                *pure &= self.literal(buf, &mut at, 6)? <= STATIC.len();
                if self.name == b":status" {
                    code = status(&self.value);
                }
                self.insert();
                *inserts += 1;
            } else if b & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3): at most what SETTINGS allowed.
                *pure = false;
                let max = integer(buf, &mut at, 5)?;
                if max > TABLE_SIZE {
                    return Err(BadBlock);
                }
                self.max = max;
                self.evict(max);
            } else {
                // Literal without indexing or never indexed (§6.2.2, §6.2.3): nothing is kept;
                // only a `:status` (the first field of a response, §8.3) is looked at.
                let index = integer(buf, &mut at, 4)?;
                *pure &= index <= STATIC.len();
                if code.is_some() {
                    if index == 0 {
                        string(buf, &mut at)?;
                    }
                    string(buf, &mut at)?;
                    continue;
                }
                let is_status = match index {
                    0 => {
                        decoded(&mut self.memo, 0, string(buf, &mut at)?, &mut self.name)?;
                        self.name == b":status"
                    }
                    i => self.field(i)?.0 == b":status",
                };
                let raw = string(buf, &mut at)?;
                if is_status {
                    decoded(&mut self.memo, slot(index), raw, &mut self.value)?;
                    code = status(&self.value);
                }
            }
        }
        Ok(code)
    }

    /// Reads a literal field with a `prefix`-bit name index into `name` and `value`; returns
    /// that index (0: a literal name).
    fn literal(&mut self, buf: &[u8], at: &mut usize, prefix: u32) -> Result<usize, BadBlock> {
        let index = integer(buf, at, prefix)?;
        match index {
            0 => decoded(&mut self.memo, 0, string(buf, at)?, &mut self.name)?,
            i => {
                // Not through `field`: the borrow of the table must stay apart from `name`'s.
                let name: &[u8] = match i {
                    1..=61 => STATIC[i - 1].0.as_bytes(),
                    _ => &self.table.get(i - 62).ok_or(BadBlock)?.0,
                };
                self.name.clear();
                self.name.extend_from_slice(name);
            }
        }
        decoded(
            &mut self.memo,
            slot(index),
            string(buf, at)?,
            &mut self.value,
        )?;
        Ok(index)
    }

    /// Adds the field in `name` and `value` to the dynamic table (§4.4).
    fn insert(&mut self) {
        let size = self.name.len() + self.value.len() + 32;
        if size > self.max {
            // Larger than the table: it empties the table and is not kept.
            self.evict(0);
            return;
        }
        self.evict(self.max - size);
        let mut e = self.spare.pop().unwrap_or_default();
        e.0.clear();
        e.0.extend_from_slice(&self.name);
        e.1.clear();
        e.1.extend_from_slice(&self.value);
        self.table.push_front(e);
        self.size += size;
    }
}

/// Appends an integer with an `n`-bit prefix and the first byte's flags `flags` (§5.1).
fn put_integer(out: &mut Vec<u8>, flags: u8, n: u32, v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut v = v - mask;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a raw string literal (§5.2, no Huffman coding: nothing to compute per request).
fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Appends a field: fully indexed when the static table has it (`:method GET`, `:path /`,
/// `:scheme http`), else a literal without indexing, its name indexed when the static table
/// has the name.
pub(in crate::driver::h2) fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let mut name_at = 0;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                return put_integer(out, 0x80, 7, i + 1);
            }
            if name_at == 0 {
                name_at = i + 1;
            }
        }
    }
    put_integer(out, 0, 4, name_at);
    if name_at == 0 {
        put_string(out, name);
    }
    put_string(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 7541 C.6: three responses with Huffman coding and a 256-byte table, which evicts.
    #[test]
    fn rfc_7541_c6_responses_keep_the_table_in_step() {
        let mut d = Decoder::new();
        d.max = 256;
        let first = hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3");
        assert_eq!(d.block(&first), Ok(Some(302)));
        assert_eq!((d.table.len(), d.size), (4, 222));
        let second = hex("4883 640e ffc1 c0bf");
        assert_eq!(d.block(&second), Ok(Some(307)));
        assert_eq!((d.table.len(), d.size), (4, 222));
        let third = hex("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07");
        assert_eq!(d.block(&third), Ok(Some(200)));
        assert_eq!((d.table.len(), d.size), (3, 215));
        assert_eq!(&*d.table[0].0, b"set-cookie");
        assert_eq!(&*d.table[2].1, b"Mon, 21 Oct 2013 20:13:22 GMT");
    }

    /// The same response again (nginx's case): its strings come from the memo, the same table.
    #[test]
    fn a_block_decoded_again_enters_the_same_fields() {
        let mut d = Decoder::new();
        d.max = 256;
        let first = hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3");
        assert_eq!(d.block(&first), Ok(Some(302)));
        let once: Vec<Entry> = d.table.iter().cloned().collect();
        assert_eq!(d.block(&first), Ok(Some(302)));
        assert_eq!(d.table.iter().cloned().collect::<Vec<_>>(), once);
        assert_eq!((d.table.len(), d.size), (4, 222));
        assert_eq!(&*once[0].1, b"https://www.example.com");
    }

    /// nginx's response head to `GET /small.bin` (1.22, h2c): `:status 200` indexed, then
    /// server, date, content-type, content-length and last-modified as literals with
    /// incremental indexing, etag and accept-ranges without.
    const NGINX: &str = "887689aa6355e580ae212e1f6196e4593e94136a693f75040138a05bb8cb9700e298b46f5f87497ca58ae819aa5c033130306c96e4593e94136a693f75040138a01fb8d06e05953168df00832a47378bfe5c8c0e0e465f59c6bf9f008919085ad2b583aa62a3848fd24a8f";

    /// The table of `d`, entry by entry, and its size.
    fn table(d: &Decoder) -> (Vec<Entry>, usize) {
        (d.table.iter().cloned().collect(), d.size)
    }

    /// A block decoded in full, whatever came before (the reference for the repeat's skip).
    fn in_full(d: &mut Decoder, buf: &[u8]) -> Result<Option<u16>, BadBlock> {
        d.decode(buf, &mut true, &mut 0)
    }

    #[test]
    fn a_repeated_response_head_is_skipped_once_the_table_is_steady_and_changes_nothing() {
        let (mut fast, mut full) = (Decoder::new(), Decoder::new());
        let head = hex(NGINX);
        let mut skipped = 0;
        for i in 0..40 {
            let steady = fast.repeat.steady;
            assert_eq!(fast.block(&head), Ok(Some(200)), "block {i}");
            assert_eq!(in_full(&mut full, &head), Ok(Some(200)));
            assert_eq!(table(&fast), table(&full), "block {i}");
            skipped += steady as usize;
        }
        // The 4096-byte table holds 14 heads' five entries; the first heads fill it.
        assert!(skipped >= 20, "only {skipped} of 40 skipped");
        assert_eq!(&*fast.table[0].0, b"last-modified");
        // Another head (the next second's date) is decoded, and the table moves on.
        let mut next = head.clone();
        next[30] ^= 1;
        let (a, b) = (fast.block(&next), in_full(&mut full, &next));
        assert_eq!(a, b);
        assert!(!fast.repeat.steady);
        assert_eq!(table(&fast), table(&full));
        assert_eq!(fast.block(&head), in_full(&mut full, &head));
        assert_eq!(table(&fast), table(&full));
    }

    /// One field of a random header block: indexed or literal, static or dynamic references,
    /// with or without indexing, values of any size (some larger than a small table), size
    /// updates.
    fn field() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            (1usize..70).prop_map(|i| {
                let mut o = Vec::new();
                put_integer(&mut o, 0x80, 7, i);
                o
            }),
            (0usize..66, 0usize..300, any::<bool>()).prop_map(|(i, len, keep)| {
                let mut o = Vec::new();
                match keep {
                    true => put_integer(&mut o, 0x40, 6, i),
                    false => put_integer(&mut o, 0x00, 4, i),
                }
                if i == 0 {
                    put_string(&mut o, b"x-name");
                }
                put_string(&mut o, &vec![b'v'; len]);
                o
            }),
            (0usize..400).prop_map(|max| {
                let mut o = Vec::new();
                put_integer(&mut o, 0x20, 5, max);
                o
            }),
        ]
    }

    proptest::proptest! {
        /// Whatever blocks come, in whatever order and repeated however often, the decoder
        /// that skips steady repeats gives what decoding every block in full gives: the same
        /// status or error, and the same table after each block.
        #[test]
        fn skipping_steady_repeats_decodes_as_decoding_everything(
            pool in proptest::collection::vec(proptest::collection::vec(field(), 0..5), 1..4),
            order in proptest::collection::vec(0usize..4, 1..80),
            max in proptest::prop_oneof![proptest::strategy::Just(4096usize), 0usize..400],
        ) {
            let (mut fast, mut full) = (Decoder::new(), Decoder::new());
            (fast.max, full.max) = (max, max);
            for i in order {
                let block = pool[i % pool.len()].concat();
                let (a, b) = (fast.block(&block), in_full(&mut full, &block));
                proptest::prop_assert_eq!(a, b);
                proptest::prop_assert_eq!(table(&fast), table(&full));
                if b.is_err() {
                    break; // the connection ends
                }
            }
        }
    }

    #[test]
    fn literals_without_indexing_are_skipped_and_a_literal_status_read() {
        let mut d = Decoder::new();
        let mut block = Vec::new();
        put_field(&mut block, b":status", b"503");
        put_field(&mut block, b"server", b"nginx");
        put_field(&mut block, b"x-own", b"1");
        assert_eq!(d.block(&block), Ok(Some(503)));
        assert!(d.table.is_empty());
        // Truncated: the last value is cut short.
        assert_eq!(d.block(&block[..block.len() - 1]), Err(BadBlock));
        // Index 70 does not exist in an empty table; a size update past 4096 is refused.
        assert_eq!(d.block(&[0x80 | 70]), Err(BadBlock));
        let mut up = Vec::new();
        put_integer(&mut up, 0x20, 5, 8192);
        assert_eq!(d.block(&up), Err(BadBlock));
    }

    #[test]
    fn requests_index_what_the_static_table_has() {
        let mut out = Vec::new();
        put_field(&mut out, b":method", b"GET");
        put_field(&mut out, b":path", b"/small.bin");
        put_field(&mut out, b"x-a", b"b");
        assert_eq!(out, b"\x82\x04\x0a/small.bin\x00\x03x-a\x01b");
    }
}
