//! A study's whole outcome (`wirebench study FILE.toml --out DIR`): what was run, on what, and
//! the document of the command the plan stands for (a sweep, a comparison or a peak search).
//! Field names are the JSON schema `schema/study.v1.json`; report.md and the CSV files render
//! the same value.

use super::compare::Comparison;
use super::peak::PeakSearch;
use super::sweep::Sweep;
use super::Name;
use serde::{Deserialize, Serialize};

/// The schema identifier of study.json.
pub const SCHEMA: &str = "wirebench.study/1";

/// A whole study.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Study {
    /// Always [`SCHEMA`].
    pub schema: Name,
    /// The plan's title (its path when it has none).
    pub title: String,
    /// `run`, `compare` or `peak`: which command the plan stands for.
    pub command: Name,
    /// How, when and on what it ran.
    pub methodology: Methodology,
    /// The targets as the plan names them.
    pub targets: Vec<TargetInfo>,
    /// The command's own document.
    pub document: Document,
    /// With `diagnose = true`: each target's diagnosis (`wirebench.diagnosis/1`), in target
    /// order; left out of the JSON otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnoses: Vec<super::diagnosis::Diagnosis>,
    /// Stopped by Ctrl-C (or SIGTERM): the document holds the runs measured until then, and
    /// no diagnosis was run. Left out of the JSON when the study ran to its end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Document {
    /// Why the command ended before its last run, when it did (see `Sweep::stopped`).
    pub fn stopped(&self) -> Option<&str> {
        match self {
            Document::Run(s) => s.stopped.as_deref(),
            Document::Compare(c) => c.sweep.stopped.as_deref(),
            Document::Peak(p) => p.stopped.as_deref(),
        }
    }
}

/// The document of the command a plan stands for, each with its own schema.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Document {
    /// `run`: `wirebench.sweep/1`, every point embedding its `wirebench.result/1` document.
    Run(Sweep),
    /// `compare`: `wirebench.compare/1`.
    Compare(Box<Comparison>),
    /// `peak`: `wirebench.peak/1`.
    Peak(Box<PeakSearch>),
}

/// What every wirebench document begins with: the schema that names its kind and version.
#[derive(Debug, Default, Deserialize)]
pub struct Head {
    /// `wirebench.KIND/VERSION`; empty when the document has none.
    #[serde(default)]
    pub schema: String,
}

impl Default for Document {
    fn default() -> Document {
        Document::Run(Sweep::default())
    }
}

/// Read by its `schema` field, not by trying each kind in turn: a comparison also holds a
/// sweep's fields under `sweep`, and the schema names the kind whatever fields are missing.
impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Document, D::Error> {
        use serde::de::Error;
        let doc = serde_json::Value::deserialize(d)?;
        let head = Head::deserialize(&doc).map_err(D::Error::custom)?;
        let read = match &*head.schema {
            super::compare::SCHEMA => serde_json::from_value(doc).map(Document::Compare),
            super::peak::PEAK_SCHEMA => serde_json::from_value(doc).map(Document::Peak),
            _ => serde_json::from_value(doc).map(Document::Run),
        };
        read.map_err(D::Error::custom)
    }
}

/// A target of the plan, with the free text the plan gives about it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Its name: the row label in the tables.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// What serves it (e.g. "nginx 1.22"), as the plan says.
    pub server: Option<String>,
    /// Its version, as the plan says.
    pub version: Option<String>,
}

/// How a study was run, gathered before the first run, so a reader can repeat it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Methodology {
    /// When it started, UTC (`YYYY-MM-DD HH:MM:SS UTC`).
    pub date: String,
    /// The command line.
    pub command: String,
    /// The plan file's path.
    pub file: String,
    /// The plan file's text, as it was.
    pub plan: String,
    /// wirebench's version.
    pub version: String,
    /// The kernel (`uname -srv`).
    pub kernel: String,
    /// The CPU model.
    pub cpu: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// Which CPUs the load generator may run on, and whether it is pinned.
    pub pinning: String,
    /// The link the rates are set against (`--link`), or why there is none.
    pub link: String,
    /// The page cache before each run (`--cache`), in words; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// The memory limit (cgroup, page cache included) of each target's server on this
    /// machine, in words; absent when no target's server has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_memory: Option<String>,
}
