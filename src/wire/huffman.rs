//! HPACK's Huffman code (RFC 7541 Appendix B; QPACK's too, RFC 9204 §4.1.2) and a decoder for
//! it. The code is canonical (codes of one length are consecutive, in symbol order): a code of
//! at most 8 bits is one lookup of the next 8 bits, a longer one follows from comparing the next
//! 32 bits with one limit per length. The HTTP/2 client decodes only the strings it keeps:
//! entries of the dynamic table (nginx enters its `date`, `content-type`, `last-modified`,
//! `etag` with incremental indexing) and a literal `:status`; [`Memo`] decodes a value seen
//! again only once. HTTP/3's QPACK (`wire::h3`) decodes the few fields it reads with it.

/// The code of each octet, right-aligned (RFC 7541 Appendix B); the tests encode with it.
#[cfg(test)]
const ENCODE_CODES: [u32; 256] = [
    0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8,
    0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, 0xfffffed,
    0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4,
    0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8,
    0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,
    0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb,
    0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
    0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0,
    0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74, 0x75,
    0x28, 0x29, 0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe,
    0x7fc, 0x3ffd, 0x1ffd, 0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4,
    0x3fffd5, 0x7fffd9, 0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb,
    0x7fffdf, 0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,
    0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef, 0x3fffda,
    0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea, 0x3fffdd,
    0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0,
    0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4,
    0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7,
    0x7ffff2, 0x3fffe8, 0x1ffffec, 0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf,
    0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7,
    0x7ffffe2, 0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4,
    0x7ffffe5, 0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,
    0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, 0x3ffffeb,
    0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, 0x7ffffeb,
    0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
];

/// The length in bits of each octet's code.
const ENCODE_CODE_LENGTHS: [u8; 256] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
];

/// Per code length: the first code, where its octets start in `syms`, and the limit: the
/// first code longer than this length, left-aligned in 32 bits (a 32-bit window below the
/// limit of length L, and not below that of L-1, starts with a code of length L).
struct Canonical {
    first: [u32; 31],
    offset: [usize; 31],
    limit: [u64; 31],
    syms: [u8; 256],
}

/// Built at compile time from the two tables above.
const CANONICAL: Canonical = canonical();

const fn canonical() -> Canonical {
    let mut c = Canonical {
        first: [0; 31],
        offset: [0; 31],
        limit: [0; 31],
        syms: [0; 256],
    };
    let (mut len, mut k, mut code) = (1, 0, 0u64);
    while len <= 30 {
        c.offset[len] = k;
        c.first[len] = code as u32;
        let mut s = 0;
        while s < 256 {
            if ENCODE_CODE_LENGTHS[s] as usize == len {
                c.syms[k] = s as u8;
                k += 1;
                code += 1;
            }
            s += 1;
        }
        c.limit[len] = code << (32 - len);
        code <<= 1;
        len += 1;
    }
    c
}

/// Per value of a code's first 8 bits: its octet and length when the code is at most 8 bits
/// long (all of lower case, digits, upper case and the common punctuation), else length 0.
struct Fast {
    sym: [u8; 256],
    len: [u8; 256],
}

/// Built at compile time from [`CANONICAL`].
const FAST: Fast = fast();

const fn fast() -> Fast {
    let c = CANONICAL;
    let mut f = Fast {
        sym: [0; 256],
        len: [0; 256],
    };
    let mut top = 0;
    while top < 256 {
        // The lowest 32-bit window with these first 8 bits: when its code is at most 8 bits
        // long, every window with them has that code (a limit of length <= 8 is a multiple of
        // 2^24, so the whole range of the low 24 bits falls on one side of it).
        let window = (top as u64) << 24;
        let mut len = 5;
        while window >= c.limit[len] {
            len += 1;
        }
        if len <= 8 {
            f.len[top] = len as u8;
            f.sym[top] =
                c.syms[c.offset[len] + ((window >> (32 - len)) as u32 - c.first[len]) as usize];
        }
        top += 1;
    }
    f
}

/// A Huffman string that does not decode (RFC 7541 §5.2: a bad code, EOS, or bad padding).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadHuffman;

/// Appends the octets that `src` codes to `out`. A code of at most 8 bits (nearly every octet
/// of a header value) is one lookup of the next 8 bits in [`FAST`]; a longer one is found by
/// canonical decoding: the next 32 bits, compared with each length's limit from 9 bits up, give
/// its length, and its offset from that length's first code gives the octet.
pub(crate) fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let (c, f) = (&CANONICAL, &FAST);
    // At most 8/5 octets per coded octet: the shortest code is 5 bits.
    out.reserve(src.len() * 8 / 5);
    // The bits not yet decoded, left-aligned, and how many there are.
    let (mut acc, mut bits, mut i) = (0u64, 0u32, 0);
    loop {
        while bits <= 56 && i < src.len() {
            acc |= u64::from(src[i]) << (56 - bits);
            bits += 8;
            i += 1;
        }
        if bits == 0 {
            return Ok(());
        }
        let top = (acc >> 56) as usize;
        let (len, sym) = match f.len[top] {
            0 => {
                let window = acc >> 32;
                let mut len = 9;
                while len <= 30 && window >= c.limit[len] {
                    len += 1;
                }
                let sym = match len {
                    31 => 0,
                    _ => {
                        c.syms[c.offset[len]
                            + ((window >> (32 - len)) as u32 - c.first[len]) as usize]
                    }
                };
                (len as u32, sym)
            }
            len => (u32::from(len), f.sym[top]),
        };
        if len > bits || len > 30 {
            // Past the end: padding, at most 7 bits, the most significant bits of EOS (ones).
            return match bits <= 7 && acc >> (64 - bits) == (1u64 << bits) - 1 {
                true => Ok(()),
                false => Err(BadHuffman),
            };
        }
        out.push(sym);
        acc <<= len;
        bits -= len;
    }
}

/// How many decoded strings [`Memo`] keeps: one per name of HPACK's static table (1-61), and
/// one (0) for any other name and for names themselves.
pub(crate) const MEMO_SLOTS: usize = 62;

/// The last string decoded per field name, by its coded octets. A server that enters the
/// same values in the dynamic table response after response (nginx: `server`, `date`, which
/// changes once a second, `content-type`, `last-modified`, each with incremental indexing and
/// never referred to) has each decoded once, not once per response: a string's octets are a
/// pure function of its code, so a hit is as correct as decoding it again. Keyed by the name
/// (the caller's slot), not by the octets: `date` and `last-modified` values look alike (same
/// length, first and last octets), and comparing one slot's octets is all a lookup costs.
#[derive(Debug)]
pub(crate) struct Memo {
    /// Per slot: a coded string and what it decodes to (always `decode` of the first).
    slots: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Memo {
    /// An empty memo.
    pub(crate) fn new() -> Memo {
        Memo {
            slots: vec![Default::default(); MEMO_SLOTS],
        }
    }

    /// Appends the octets that `src` codes to `out`, as [`decode`] does; `slot` (taken modulo
    /// [`MEMO_SLOTS`]) is where it is kept: the index of the field's name in the static table.
    pub(crate) fn decode(
        &mut self,
        slot: usize,
        src: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), BadHuffman> {
        let at = slot % MEMO_SLOTS;
        let (coded, octets) = &mut self.slots[at];
        if coded.as_slice() != src {
            // Both emptied first: an error leaves the slot empty, which stays true.
            coded.clear();
            octets.clear();
            if let Err(e) = decode(src, octets) {
                octets.clear();
                return Err(e);
            }
            coded.extend_from_slice(src);
        }
        out.extend_from_slice(octets);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes every octet of `src` (for the tests: the client sends raw strings).
    fn encode(src: &[u8]) -> Vec<u8> {
        let (mut acc, mut bits, mut out) = (0u64, 0u32, Vec::new());
        for &b in src {
            let len = u32::from(ENCODE_CODE_LENGTHS[b as usize]);
            acc = (acc << len) | u64::from(ENCODE_CODES[b as usize]);
            bits += len;
            while bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) as u8) | (0xff >> bits));
        }
        out
    }

    #[test]
    fn every_octet_round_trips_so_the_code_is_canonical() {
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        decode(&encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
    }

    #[test]
    fn rfc_7541_examples_decode() {
        // C.4.1: "www.example.com"; C.6.1: "private", "Mon, 21 Oct 2013 20:13:21 GMT".
        let www = b"\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff";
        let mut out = Vec::new();
        decode(www, &mut out).unwrap();
        assert_eq!(out, b"www.example.com");
        out.clear();
        decode(b"\xae\xc3\x77\x1a\x4b", &mut out).unwrap();
        assert_eq!(out, b"private");
        out.clear();
        let date = b"\xd0\x7a\xbe\x94\x10\x54\xd4\x44\xa8\x20\x05\x95\x04\x0b\x81\x66\xe0\x82\xa6\x2d\x1b\xff";
        decode(date, &mut out).unwrap();
        assert_eq!(out, b"Mon, 21 Oct 2013 20:13:21 GMT");
    }

    /// A fixed pseudo-random sequence of octets (xorshift), weighted towards header text.
    fn octets(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let text = b"abcdefghijklmnopqrstuvwxyz0123456789 -:,/\"GMT";
                match x % 4 {
                    0 => (x >> 8) as u8,
                    _ => text[(x >> 8) as usize % text.len()],
                }
            })
            .collect()
    }

    #[test]
    fn strings_of_every_length_and_padding_round_trip_directly_and_through_the_memo() {
        let mut memo = Memo::new();
        let mut paddings = [false; 8];
        for n in 0..200 {
            let src = octets(n, n as u64 * 7919 + 1);
            let coded = encode(&src);
            let bits: u32 = src
                .iter()
                .map(|&b| u32::from(ENCODE_CODE_LENGTHS[b as usize]))
                .sum();
            paddings[(coded.len() * 8 - bits as usize) % 8] = true;
            let (mut direct, mut memoed, mut again) = (Vec::new(), Vec::new(), Vec::new());
            decode(&coded, &mut direct).unwrap();
            memo.decode(n, &coded, &mut memoed).unwrap();
            memo.decode(n, &coded, &mut again).unwrap();
            assert_eq!((&direct, &memoed, &again), (&src, &src, &src), "length {n}");
        }
        assert_eq!(paddings, [true; 8], "every padding length 0-7 was tried");
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        let mut out = Vec::new();
        // "0" is 00000 (5 bits): padded with zeros instead of ones.
        assert_eq!(decode(&[0x00], &mut out), Err(BadHuffman));
        // EOS itself (30 ones), then padding.
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xff], &mut out), Err(BadHuffman));
        // "0" padded with 11 ones: padding longer than 7 bits (RFC 7541 §5.2).
        assert_eq!(decode(&[0x07, 0xff], &mut out), Err(BadHuffman));
        // EOS between two "a"s (00011): a string containing EOS is an error.
        let a = u64::from(ENCODE_CODES[b'a' as usize]);
        let bits = (a << 35 | 0x3fff_ffff << 5 | a) << 24;
        assert_eq!(decode(&bits.to_be_bytes()[..5], &mut out), Err(BadHuffman));
        // Every 30-bit code but EOS decodes (the last octets of the table: 10, 13, 22).
        out.clear();
        decode(&encode(b"\n\r\x16"), &mut out).unwrap();
        assert_eq!(out, b"\n\r\x16");
    }

    #[test]
    fn the_memo_stays_true_after_a_bad_string_and_a_collision() {
        let mut memo = Memo::new();
        let mut out = Vec::new();
        assert_eq!(memo.decode(3, &[0x00], &mut out), Err(BadHuffman));
        assert_eq!(memo.decode(3, &[0x00], &mut out), Err(BadHuffman));
        assert_eq!(memo.decode(3, &[], &mut out), Ok(()));
        assert!(out.is_empty());
        // Three strings per slot, twice round: each is right whether it hits or not.
        let all: Vec<Vec<u8>> = (0..3 * MEMO_SLOTS)
            .map(|i| octets(12, i as u64 + 5))
            .collect();
        for (i, src) in all.iter().chain(&all).enumerate() {
            out.clear();
            memo.decode(i, &encode(src), &mut out).unwrap();
            assert_eq!(&out, src);
        }
    }
}
