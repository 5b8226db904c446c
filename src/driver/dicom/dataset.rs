//! What a C-STORE carries: a generated CT image in explicit VR little endian (PS3.5 §7.1.2),
//! with the attributes the CT Image IOD makes mandatory (PS3.3 §A.3), a fresh SOP Instance UID
//! per image (a 2.25 UID from a random UUID, PS3.5 §B.2); or a Part 10 file's data set with its
//! SOP class and transfer syntax (PS3.10 §7.1).

use super::pdu::{uid_text, IMPLEMENTATION_UID};
use crate::driver::http::template::Rng;
use std::sync::Arc;

/// CT Image Storage (PS3.4 Annex B.5).
pub const CT_IMAGE: &str = "1.2.840.10008.5.1.4.1.1.2";
/// Explicit VR Little Endian (PS3.5 §A.2).
pub const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";
/// Implicit VR Little Endian, the default transfer syntax (PS3.5 §A.1).
pub const IMPLICIT_LE: &str = "1.2.840.10008.1.2";
/// A data element's tag: (group, element).
type Tag = (u16, u16);
/// Columns of a generated image: a CT slice's usual 512.
const COLUMNS: usize = 512;

/// A fresh UID under the 2.25 root: a version 4 UUID read as one integer (PS3.5 §B.2, ITU-T
/// X.667), so no registered root is needed and no two runs collide.
pub fn new_uid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    // Version 4 and variant 10xx (RFC 9562 §5.4).
    let a = (a & !0xf000) | 0x4000;
    let b = (b & !(0xc << 60)) | (0x8 << 60);
    format!("2.25.{}", (u128::from(a) << 64) | u128::from(b))
}

/// VRs whose length field is 4 bytes after 2 reserved ones (PS3.5 §7.1.2, Table 7.1-1).
fn long_form(vr: &[u8; 2]) -> bool {
    matches!(
        vr,
        b"OB"
            | b"OD"
            | b"OF"
            | b"OL"
            | b"OV"
            | b"OW"
            | b"SQ"
            | b"SV"
            | b"UC"
            | b"UN"
            | b"UR"
            | b"UT"
            | b"UV"
    )
}

/// One explicit VR little endian element, its value padded to even length (PS3.5 §7.1.2; UIDs
/// and binary values with a NUL, text with a space, §6.2).
pub fn element(out: &mut Vec<u8>, tag: Tag, vr: &[u8; 2], value: &[u8]) {
    let padded = value.len() + value.len() % 2;
    out.extend_from_slice(&tag.0.to_le_bytes());
    out.extend_from_slice(&tag.1.to_le_bytes());
    out.extend_from_slice(vr);
    if long_form(vr) {
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(padded as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(padded as u16).to_le_bytes());
    }
    out.extend_from_slice(value);
    if value.len() % 2 == 1 {
        out.push(if matches!(vr, b"UI" | b"OB") { 0 } else { b' ' });
    }
}

/// A generated CT image: the bytes before and after the SOP Instance UID, which alone changes
/// from image to image, are made once.
#[derive(Debug)]
pub struct CtImage {
    /// Elements up to (0008,0016) SOP Class UID.
    before: Vec<u8>,
    /// Elements after (0008,0018), pixel data last.
    after: Arc<[u8]>,
    /// Rows × columns of 16-bit pixels.
    pub rows: usize,
    /// Columns.
    pub columns: usize,
}

impl CtImage {
    /// An image of at least `pixel_bytes` bytes of 16-bit pixels, 512 wide (fewer if smaller),
    /// in a study and series of its own (UIDs from `rng`).
    pub fn new(pixel_bytes: usize, rng: &mut Rng) -> CtImage {
        let (rows, columns) = CtImage::shape(pixel_bytes);
        let mut before = Vec::with_capacity(128);
        element(
            &mut before,
            (0x0008, 0x0008),
            b"CS",
            b"ORIGINAL\\PRIMARY\\AXIAL",
        );
        element(&mut before, (0x0008, 0x0016), b"UI", CT_IMAGE.as_bytes());
        let mut a = Vec::with_capacity(1024 + rows * columns * 2);
        let (study, series) = (new_uid(rng), new_uid(rng));
        let text: [(Tag, &[u8; 2], &[u8]); 18] = [
            ((0x0008, 0x0020), b"DA", b"20260101"),
            ((0x0008, 0x0030), b"TM", b"120000"),
            ((0x0008, 0x0050), b"SH", b""),
            ((0x0008, 0x0060), b"CS", b"CT"),
            ((0x0008, 0x0070), b"LO", b"wirebench"),
            ((0x0008, 0x0090), b"PN", b""),
            ((0x0010, 0x0010), b"PN", b"WIREBENCH^TEST"),
            ((0x0010, 0x0020), b"LO", b"WB0001"),
            ((0x0010, 0x0030), b"DA", b""),
            ((0x0010, 0x0040), b"CS", b"O"),
            ((0x0018, 0x0050), b"DS", b"1.0"),
            ((0x0018, 0x0060), b"DS", b"120"),
            ((0x0020, 0x000D), b"UI", study.as_bytes()),
            ((0x0020, 0x000E), b"UI", series.as_bytes()),
            ((0x0020, 0x0010), b"SH", b"1"),
            ((0x0020, 0x0011), b"IS", b"1"),
            ((0x0020, 0x0013), b"IS", b"1"),
            ((0x0020, 0x0032), b"DS", b"-250\\-250\\0"),
        ];
        for (tag, vr, v) in text {
            element(&mut a, tag, vr, v);
        }
        element(&mut a, (0x0020, 0x0037), b"DS", b"1\\0\\0\\0\\1\\0");
        element(&mut a, (0x0020, 0x0052), b"UI", new_uid(rng).as_bytes());
        element(&mut a, (0x0020, 0x1040), b"LO", b"");
        let us = |v: usize| (v as u16).to_le_bytes();
        element(&mut a, (0x0028, 0x0002), b"US", &us(1));
        element(&mut a, (0x0028, 0x0004), b"CS", b"MONOCHROME2");
        element(&mut a, (0x0028, 0x0010), b"US", &us(rows));
        element(&mut a, (0x0028, 0x0011), b"US", &us(columns));
        element(&mut a, (0x0028, 0x0030), b"DS", b"0.9765625\\0.9765625");
        element(&mut a, (0x0028, 0x0100), b"US", &us(16));
        element(&mut a, (0x0028, 0x0101), b"US", &us(12));
        element(&mut a, (0x0028, 0x0102), b"US", &us(11));
        element(&mut a, (0x0028, 0x0103), b"US", &us(0));
        element(&mut a, (0x0028, 0x1052), b"DS", b"-1024");
        element(&mut a, (0x0028, 0x1053), b"DS", b"1");
        element(&mut a, (0x7FE0, 0x0010), b"OW", &phantom(rows, columns));
        CtImage {
            before,
            after: a.into(),
            rows,
            columns,
        }
    }

    /// Rows and columns of an image of at least `pixel_bytes` bytes of 16-bit pixels.
    pub fn shape(pixel_bytes: usize) -> (usize, usize) {
        let pixels = pixel_bytes.div_ceil(2).max(1);
        let columns = pixels.min(COLUMNS);
        (pixels.div_ceil(columns), columns)
    }

    /// The SOP Instance UID element (0008,0018) for `uid`.
    pub fn uid_element(uid: &str) -> Vec<u8> {
        let mut e = Vec::with_capacity(80);
        element(&mut e, (0x0008, 0x0018), b"UI", uid.as_bytes());
        e
    }

    /// The data set with `uid_element` in its place, as three pieces.
    pub fn parts<'a>(&'a self, uid_element: &'a [u8]) -> [&'a [u8]; 3] {
        [&self.before, uid_element, &self.after]
    }

    /// The whole data set with SOP Instance UID `uid`.
    pub fn dataset(&self, uid: &str) -> Vec<u8> {
        self.parts(&CtImage::uid_element(uid)).concat()
    }
}

/// 12-bit pixels of a water-filled disc in air (CT numbers 0 and -1000 after the rescale):
/// something a viewer shows as an image, made once per run.
fn phantom(rows: usize, columns: usize) -> Vec<u8> {
    let (cy, cx) = (rows as f64 / 2.0, columns as f64 / 2.0);
    let r2 = (cx.min(cy) * 0.8).powi(2);
    let mut px = Vec::with_capacity(rows * columns * 2);
    for y in 0..rows {
        for x in 0..columns {
            let d2 = (y as f64 - cy).powi(2) + (x as f64 - cx).powi(2);
            let v: u16 = if d2 < r2 {
                1024 + ((x ^ y) & 15) as u16
            } else {
                24
            };
            px.extend_from_slice(&v.to_le_bytes());
        }
    }
    px
}

/// A data set read from a Part 10 file, with what its file meta information says.
#[derive(Clone, Debug)]
pub struct DicomFile {
    /// Media Storage SOP Class UID (0002,0002).
    pub sop_class: String,
    /// Media Storage SOP Instance UID (0002,0003).
    pub sop_instance: String,
    /// Transfer Syntax UID (0002,0010): the data set's encoding.
    pub transfer_syntax: String,
    /// The data set, after the file meta information.
    pub dataset: Arc<[u8]>,
}

/// Bytes that are not a DICOM Part 10 file wirebench can send.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Part10Error {
    /// No `DICM` after the preamble.
    #[error("not a DICOM Part 10 file (no 'DICM' after the 128-byte preamble)")]
    NotPart10,
    /// The file ends inside an element's header.
    #[error("truncated file meta")]
    Truncated,
    /// An element's value runs past the end.
    #[error("a file meta element runs past the end of the file")]
    PastEnd,
    /// A file meta element it needs, missing or empty.
    #[error("its file meta information lacks {0}")]
    Lacks(&'static str),
}

/// Reads a Part 10 file's bytes: the 128-byte preamble, "DICM", the group 0002 file meta
/// elements (always explicit VR little endian), then the data set (PS3.10 §7.1).
pub fn read_part10(b: &[u8]) -> Result<DicomFile, Part10Error> {
    if b.get(128..132) != Some(&b"DICM"[..]) {
        return Err(Part10Error::NotPart10);
    }
    let mut pos = 132;
    let (mut class, mut instance, mut ts) = (None, None, None);
    while let Some(h) = b.get(pos..pos + 8) {
        if u16::from_le_bytes([h[0], h[1]]) != 0x0002 {
            break;
        }
        let elem = u16::from_le_bytes([h[2], h[3]]);
        let vr: [u8; 2] = [h[4], h[5]];
        let (len, head) = if long_form(&vr) {
            let l = b.get(pos + 8..pos + 12).ok_or(Part10Error::Truncated)?;
            (u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize, 12)
        } else {
            (u16::from_le_bytes([h[6], h[7]]) as usize, 8)
        };
        let v = b
            .get(pos + head..pos + head + len)
            .ok_or(Part10Error::PastEnd)?;
        match elem {
            0x0002 => class = Some(uid_text(v)),
            0x0003 => instance = Some(uid_text(v)),
            0x0010 => ts = Some(uid_text(v)),
            _ => {}
        }
        pos += head + len;
    }
    let need = |v: Option<String>, what: &'static str| {
        v.filter(|s| !s.is_empty()).ok_or(Part10Error::Lacks(what))
    };
    Ok(DicomFile {
        sop_class: need(class, "the SOP class (0002,0002)")?,
        sop_instance: need(instance, "the SOP instance UID (0002,0003)")?,
        transfer_syntax: need(ts, "the transfer syntax (0002,0010)")?,
        dataset: b[pos..].into(),
    })
}

/// A Part 10 file of `file` (PS3.10 §7.1, PS3.5 §7.1 for the meta group's encoding).
pub fn write_part10(file: &DicomFile) -> Vec<u8> {
    let mut meta = Vec::with_capacity(256);
    element(&mut meta, (0x0002, 0x0001), b"OB", &[0, 1]);
    element(
        &mut meta,
        (0x0002, 0x0002),
        b"UI",
        file.sop_class.as_bytes(),
    );
    element(
        &mut meta,
        (0x0002, 0x0003),
        b"UI",
        file.sop_instance.as_bytes(),
    );
    element(
        &mut meta,
        (0x0002, 0x0010),
        b"UI",
        file.transfer_syntax.as_bytes(),
    );
    element(
        &mut meta,
        (0x0002, 0x0012),
        b"UI",
        IMPLEMENTATION_UID.as_bytes(),
    );
    element(&mut meta, (0x0002, 0x0013), b"SH", b"WIREBENCH");
    let mut out = vec![0u8; 128];
    out.extend_from_slice(b"DICM");
    element(
        &mut out,
        (0x0002, 0x0000),
        b"UL",
        &(meta.len() as u32).to_le_bytes(),
    );
    out.extend_from_slice(&meta);
    out.extend_from_slice(&file.dataset);
    out
}

/// A generated CT image as a Part 10 file (`--save-example`, and the tests' files).
pub fn example_file(pixel_bytes: usize) -> Vec<u8> {
    let mut rng = Rng::new();
    let image = CtImage::new(pixel_bytes, &mut rng);
    let uid = new_uid(&mut rng);
    write_part10(&DicomFile {
        sop_class: CT_IMAGE.into(),
        dataset: image.dataset(&uid).into(),
        sop_instance: uid,
        transfer_syntax: EXPLICIT_LE.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_fresh_and_valid() {
        let mut rng = Rng::new();
        let (a, b) = (new_uid(&mut rng), new_uid(&mut rng));
        assert_ne!(a, b);
        assert!(a.len() <= 64 && a.starts_with("2.25.") && !a[5..].starts_with('0'));
    }

    #[test]
    fn part10_round_trip() {
        let bytes = example_file(1000);
        let f = read_part10(&bytes).unwrap();
        assert_eq!(
            (f.sop_class.as_str(), f.transfer_syntax.as_str()),
            (CT_IMAGE, EXPLICIT_LE)
        );
        assert!(f.dataset.ends_with(&24u16.to_le_bytes()));
        assert!(read_part10(b"hello").is_err());
    }

    #[test]
    fn sizes_round_to_whole_rows() {
        let mut rng = Rng::new();
        let i = CtImage::new(512 * 1024, &mut rng);
        assert_eq!((i.rows, i.columns), (512, 512));
        let i = CtImage::new(100, &mut rng);
        assert_eq!((i.rows, i.columns), (1, 50));
    }
}
