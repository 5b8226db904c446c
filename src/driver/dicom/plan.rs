//! A DICOM run's workload from the flags: `--op`, the AE titles (`--calling-ae`, the URL's
//! path), and the images (`--size` of a generated CT slice, or the Part 10 files of `--files`);
//! DICOM's flags on other targets, and other protocols' flags here, are refused.

use super::flags::DicomArgs;
use crate::driver::dicom::dataset::{read_part10, DicomFile};
use crate::driver::dicom::spec::{
    check_ae, DicomSpec, Images, Op, DEFAULT_CALLED_AE, DEFAULT_CALLING_AE, DEFAULT_IMAGE,
    MAX_IMAGE,
};
use crate::driver::target::Target;
use crate::driver::tcp::flags::MessageArgs;
use crate::driver::workload::ClientMode;
use crate::error::{usage_of, UsageError};
use crate::units::parse_message_size;
use std::path::Path;
use std::sync::Arc;

/// What the DICOM part of a plan is built from: DICOM's flags, the message flags it refuses
/// or reads (`--size`), the client mode and `--pipeline`.
pub struct Args<'a> {
    /// `--op`, `--calling-ae`, `--files`.
    pub dicom: &'a DicomArgs,
    /// `--size` (a generated image's pixels); the others are refused.
    pub message: &'a MessageArgs,
    /// The client mode.
    pub mode: ClientMode,
    /// `--pipeline`, if given.
    pub pipeline: Option<usize>,
}

/// The DICOM workload of `a` against `target`.
pub fn spec(a: &Args, target: &Target) -> Result<DicomSpec, UsageError> {
    check_fit(a)?;
    let calling = a.dicom.calling_ae.as_deref().unwrap_or(DEFAULT_CALLING_AE);
    check_ae(calling).map_err(|e| {
        UsageError::flags(
            &["--calling-ae"],
            format!("--calling-ae: {e}: e.g. --calling-ae WIREBENCH"),
        )
    })?;
    let called = match target.path.trim_matches('/') {
        "" => DEFAULT_CALLED_AE,
        ae => ae,
    };
    check_ae(called).map_err(|e| {
        UsageError::target(&target.url, format!(
            "'{}': the called AE title {e}: write dicom://HOST:PORT/AE_TITLE, e.g. dicom://127.0.0.1:11112/STORESCP",
            target.url
        ))
    })?;
    let op = match a.dicom.op.as_deref() {
        None | Some("echo") => Op::Echo,
        Some("store") => Op::Store,
        Some(other) => {
            return usage_of(
                &["--op"],
                format!("--op {other}: give --op echo or --op store"),
            )
        }
    };
    let images = match (&a.dicom.files, &a.message.size) {
        (Some(_), Some(_)) => return usage_of(&["--size", "--files"], "--size sets a generated image's pixel bytes; --files sends the files as they are: give one of them"),
        (Some(dir), None) => Images::Files(files(dir)?),
        (None, size) => Images::Generated(image_size(size.as_deref())?),
    };
    if op == Op::Echo && (a.dicom.files.is_some() || a.message.size.is_some()) {
        return usage_of(&["--files", "--size", "--op"], "--files and --size say what --op store sends; --op echo (the default) sends no image: add --op store");
    }
    Ok(DicomSpec {
        op,
        calling: calling.to_string(),
        called: called.to_string(),
        images,
    })
}

/// The bytes one operation sends beyond its command: a generated image's pixels (rounded to
/// whole rows, as [`crate::driver::dicom::dataset::CtImage`] makes them), the files' mean
/// data set; for echo, the command itself.
pub fn request_bytes(spec: &DicomSpec) -> usize {
    match (spec.op, &spec.images) {
        (Op::Echo, _) => crate::driver::dicom::dimse::echo_rq(1).len(),
        (Op::Store, Images::Generated(size)) => {
            let (rows, columns) = crate::driver::dicom::dataset::CtImage::shape(*size);
            rows * columns * 2
        }
        (Op::Store, Images::Files(files)) => {
            files.iter().map(|f| f.dataset.len()).sum::<usize>() / files.len().max(1)
        }
    }
}

/// What does not fit DICOM: bulk modes, pipelining, raw bytes and reply shapes.
fn check_fit(a: &Args) -> Result<(), UsageError> {
    if !matches!(a.mode, ClientMode::Rr | ClientMode::Crr) {
        return usage_of(&["--mode"], format!(
            "--mode {} moves bytes; over dicom:// use --mode rr (an association per connection) or crr (one per operation)",
            a.mode.name()
        ));
    }
    if a.pipeline.is_some_and(|p| p > 1) {
        return usage_of(&["--pipeline"], "--pipeline: DICOM operations on an association go one at a time (no asynchronous operations window is negotiated): add connections with -c instead");
    }
    let foreign = [
        ("--payload", a.message.payload.is_some()),
        ("--expect-size", a.message.expect_size.is_some()),
        ("--until", a.message.until.is_some()),
        ("--raw", a.message.raw),
    ];
    if let Some((flag, _)) = foreign.iter().find(|f| f.1) {
        return usage_of(
            &["--op"],
            format!("{flag} shapes raw tcp:// requests; dicom:// sends C-ECHO or C-STORE (--op)"),
        );
    }
    Ok(())
}

/// `--size` of a generated image: pixel bytes, 512k by default.
fn image_size(text: Option<&str>) -> Result<usize, UsageError> {
    let Some(text) = text else {
        return Ok(DEFAULT_IMAGE);
    };
    let size = parse_message_size("--size", text).map_err(|e| UsageError::flag("--size", e))?;
    if size > MAX_IMAGE {
        return usage_of(&["--size", "--files"], format!(
            "--size {text}: a generated image is at most {} MiB (512 columns × 65535 rows of 16-bit pixels); use --files for larger objects",
            MAX_IMAGE >> 20
        ));
    }
    Ok(size)
}

/// Reads every file of `dir` (sorted by name, subdirectories skipped) as a Part 10 file.
fn files(dir: &str) -> Result<Arc<[DicomFile]>, UsageError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        UsageError::flags(
            &["--files"],
            format!("--files {dir}: cannot read the directory ({e}): check the path"),
        )
    })?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return usage_of(
            &["--files"],
            format!(
            "--files {dir}: the directory holds no files: give a directory of DICOM Part 10 files"
        ),
        );
    }
    paths.iter().map(|p| file(p)).collect()
}

fn file(path: &Path) -> Result<DicomFile, UsageError> {
    let shown = path.display();
    let bytes = crate::sys::file::read(path, crate::units::MAX_SIZE).map_err(|e| {
        UsageError::flags(
            &["--files"],
            format!("--files: {shown}: {e}: give DICOM files of at most 1 GiB"),
        )
    })?;
    read_part10(&bytes).map_err(|e| {
        UsageError::flags(
            &["--files"],
            format!(
            "--files: {shown}: {e}: remove it, or point --files at a directory of DICOM files only"
        ),
        )
    })
}
