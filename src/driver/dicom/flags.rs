//! DICOM's flags of `wirebench run`: the operation, our AE title and the files to store.
//! clap parses them (`cli::RunArgs` flattens this group); the plan validates them.

use clap::Args;

/// DICOM: what each operation is.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DicomArgs {
    /// DICOM: what each request is: echo (C-ECHO, DICOM's ping, as echoscu) or store (C-STORE
    /// of an image, as storescu: a generated CT slice of --size pixel bytes, 512k unless
    /// given, with a fresh SOP Instance UID; or the files of --files) [default: echo]
    #[arg(long, value_name = "OP", value_parser = ["echo", "store"], help_heading = "DICOM")]
    pub op: Option<String>,

    /// DICOM: our AE title in the association request (storescu's -aet); the called AE is the
    /// URL's path, dicom://HOST:PORT/CALLED_AE [default: WIREBENCH]
    #[arg(long, value_name = "AE", help_heading = "DICOM")]
    pub calling_ae: Option<String>,

    /// DICOM: with --op store, send the Part 10 files of DIR in turn, each with its own SOP class
    /// and transfer syntax, instead of generated images.
    #[arg(long, value_name = "DIR", help_heading = "DICOM")]
    pub files: Option<String>,

    /// Write one generated CT image (--size pixel bytes) as a Part 10 file and exit, e.g. for
    /// storescu as a second opinion.
    #[arg(long, value_name = "FILE", hide = true)]
    pub save_example: Option<String>,
}

/// The group's name in [`crate::driver::Protocol::FLAGS`].
pub const DICOM: &str = "dicom";

impl crate::driver::FlagGroup for DicomArgs {
    fn name(&self) -> &'static str {
        DICOM
    }

    fn given(&self) -> Option<&'static str> {
        [
            ("--op", self.op.is_some()),
            ("--calling-ae", self.calling_ae.is_some()),
            ("--files", self.files.is_some()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    fn fits(&self) -> &'static str {
        "dicom://"
    }

    // Not --save-example: it writes a file and measures nothing.
    fn plan(&self) -> Vec<(&'static str, String)> {
        use crate::driver::plan_value as d;
        vec![
            ("--op", d(&self.op)),
            ("--calling-ae", d(&self.calling_ae)),
            ("--files", d(&self.files)),
        ]
    }

    fn instead(
        &self,
        groups: &[&dyn crate::driver::FlagGroup],
    ) -> Option<Result<(), crate::error::UsageError>> {
        let file = self.save_example.as_deref()?;
        Some(save_example(file, groups))
    }
}

/// `--save-example FILE`: one generated CT image (`--size` pixel bytes) as a Part 10 file.
fn save_example(
    file: &str,
    groups: &[&dyn crate::driver::FlagGroup],
) -> Result<(), crate::error::UsageError> {
    use crate::error::UsageError;
    let message = crate::driver::group::<crate::driver::tcp::flags::MessageArgs>(groups)?;
    let size = match &message.size {
        Some(s) => crate::units::parse_message_size("--size", s)
            .map_err(|e| UsageError::flag("--size", e))?,
        None => super::spec::DEFAULT_IMAGE,
    };
    let bytes = super::dataset::example_file(size);
    crate::sys::write::file(std::path::Path::new(file), &bytes)
        .map_err(|e| UsageError::flag("--save-example", format!("--save-example {e}")))
}
