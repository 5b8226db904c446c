//! What a DICOM run is asked to do, as the plan validated it: the operation, the two AE titles
//! and the images to store.

use super::dataset::DicomFile;
use std::sync::Arc;

/// The AE title a run calls itself when `--calling-ae` is not given.
pub const DEFAULT_CALLING_AE: &str = "WIREBENCH";
/// The called AE title when the URL names none (DCMTK's storescu default).
pub const DEFAULT_CALLED_AE: &str = "ANY-SCP";
/// Pixel bytes of a generated image without `--size`: a 512 × 512 CT slice of 16-bit pixels.
pub const DEFAULT_IMAGE: usize = 512 * 1024;
/// The largest generated image: 512 columns × 65535 rows (Rows is a US, PS3.5 §6.2).
pub const MAX_IMAGE: usize = 512 * 65535 * 2;

/// The DIMSE operation each request is (`--op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// C-ECHO: the Verification service (PS3.4 Annex A), DICOM's ping.
    Echo,
    /// C-STORE of an image (PS3.4 Annex B).
    Store,
}

/// The images a store sends.
#[derive(Clone, Debug)]
pub enum Images {
    /// Generated CT images with this many pixel bytes, a fresh SOP Instance UID each.
    Generated(usize),
    /// These files' data sets, in turn.
    Files(Arc<[DicomFile]>),
}

/// A DICOM run's workload.
#[derive(Clone, Debug)]
pub struct DicomSpec {
    /// C-ECHO or C-STORE.
    pub op: Op,
    /// Our AE title (`--calling-ae`).
    pub calling: String,
    /// The peer's AE title (the URL's path).
    pub called: String,
    /// What a store sends.
    pub images: Images,
}

/// An AE title that PS3.5 does not allow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AeError {
    /// More than 16 characters.
    #[error("'{0}' has {1} characters; an AE title has at most 16")]
    TooLong(String, usize),
    /// Nothing but spaces.
    #[error("an AE title is empty or only spaces")]
    Empty,
    /// A character outside the default repertoire.
    #[error("'{0}' contains {1:?}; an AE title is ASCII without backslash or control characters")]
    Character(String, char),
}

/// Checks an AE title (PS3.5 §6.2, VR AE): 1 to 16 characters of the default repertoire, no
/// backslash or control characters, not only spaces. The error says what is wrong.
pub fn check_ae(ae: &str) -> Result<(), AeError> {
    if ae.len() > 16 {
        return Err(AeError::TooLong(ae.into(), ae.chars().count()));
    }
    if ae.trim().is_empty() {
        return Err(AeError::Empty);
    }
    if let Some(c) = ae
        .chars()
        .find(|c| !c.is_ascii() || c.is_ascii_control() || *c == '\\')
    {
        return Err(AeError::Character(ae.into(), c));
    }
    Ok(())
}

impl crate::driver::workload::Spec for DicomSpec {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ae_titles() {
        assert!(check_ae("STORESCP").is_ok());
        assert!(check_ae("SIXTEEN_CHARS_OK").is_ok());
        assert!(check_ae("SEVENTEEN_CHARS_X")
            .unwrap_err()
            .to_string()
            .contains("at most 16"));
        assert!(check_ae("   ").is_err());
        assert!(check_ae("A\\B").is_err());
    }
}
