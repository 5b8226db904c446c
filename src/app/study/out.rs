//! `--out DIR`: a finished study's files (report.md, report.html, study.json, one CSV per
//! table), each rendered in memory, written to a hidden temporary name, and renamed only once
//! all are written, so DIR holds every file of the study or none of them.

use crate::cli::RunArgs;
use crate::plan::file::PlanFile;
use crate::summary::diagnosis::Diagnosis;
use crate::summary::study::{self, Document, Methodology, Study, TargetInfo};
use std::path::Path;

/// The methodology facts, gathered before the runs start.
pub fn methodology(path: &str, text: &str, run: &RunArgs, plan: &PlanFile) -> Methodology {
    let (cpu, cpus) = crate::sys::host::cpu();
    let link = match &run.link {
        Some(l) => format!("--link {l}: each run's rates are set against it (its link lines)"),
        None => "none given (no --link): rates are not set against a line rate".into(),
    };
    Methodology {
        date: crate::sys::host::utc_now(),
        command: crate::app::command_line(),
        file: path.to_string(),
        plan: text.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        kernel: crate::sys::host::kernel(),
        pinning: crate::sys::host::pinning(cpus),
        cpu,
        cpus,
        link,
        cache: run.cache.map(|c| match c {
            crate::cli::CacheState::Cold => {
                "cold: dropped before each run (sync, then 3 into /proc/sys/vm/drop_caches)"
                    .to_string()
            }
            crate::cli::CacheState::Warm => "warm: as the machine left it".to_string(),
        }),
        server_memory: server_memory(plan),
    }
}

/// Each target's server memory limit, when its server listens on this machine under one:
/// `nginx 64 MiB, serve 64 MiB, lighttpd none`; None when no server has a limit.
fn server_memory(plan: &PlanFile) -> Option<String> {
    let mut any = false;
    let parts: Vec<String> = (plan.targets.iter())
        .map(|t| {
            let limit = local_port(&t.url)
                .and_then(crate::sys::cgroup::listener_of)
                .and_then(crate::sys::cgroup::memory_limit_of);
            any |= limit.is_some();
            match limit {
                Some(b) => format!("{} {} MiB", t.name, b >> 20),
                None => format!("{} none", t.name),
            }
        })
        .collect();
    any.then(|| parts.join(", ") + " (cgroup memory.limit_in_bytes of the process listening on its port, page cache included)")
}

/// The port of a URL on this machine (127.x.x.x, localhost, [::1]); None for another host.
fn local_port(url: &str) -> Option<u16> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let (host, port) = authority.rsplit_once(':')?;
    let local = host.starts_with("127.") || host == "localhost" || host == "[::1]";
    local.then(|| port.parse().ok()).flatten()
}

/// The whole study: the plan's title and targets, the methodology, the document and the
/// targets' diagnoses (if the plan asked for them).
pub fn study(
    path: &str,
    plan: &PlanFile,
    methodology: Methodology,
    document: Document,
    diagnoses: Vec<Diagnosis>,
) -> Study {
    let command = match &document {
        Document::Run(_) => "run",
        Document::Compare(_) => "compare",
        Document::Peak(_) => "peak",
    };
    Study {
        schema: study::SCHEMA.into(),
        title: plan.title.clone().unwrap_or_else(|| path.to_string()),
        command: command.into(),
        methodology,
        targets: plan
            .targets
            .iter()
            .map(|t| TargetInfo {
                name: t.name.clone(),
                url: t.url.clone(),
                server: t.server.clone(),
                version: t.version.clone(),
            })
            .collect(),
        document,
        diagnoses,
        interrupted: crate::app::signals::requested(),
    }
}

/// Writes report.md, study.json and the CSV tables into `dir`: all of them or none. Returns
/// how many CSV files were written.
pub fn write(dir: &Path, study: &Study) -> anyhow::Result<usize> {
    let mut report = Vec::new();
    crate::report::study::write(study, &mut report)?;
    let mut json = serde_json::to_vec_pretty(study)?;
    json.push(b'\n');
    let csvs = crate::report::csv::tables(&study.document);
    let count = csvs.len();
    let earlier = earlier_tables(dir);
    // The same study as one self-contained HTML page, charts included (report::html).
    let mut page = Vec::new();
    crate::report::html::render(&serde_json::to_value(study)?, &mut page)?;
    let mut files = vec![
        ("report.md".to_string(), report),
        ("report.html".to_string(), page),
        ("study.json".to_string(), json),
    ];
    files.extend(
        csvs.into_iter()
            .map(|(name, text)| (name, text.into_bytes())),
    );
    // Every file staged (written under a temporary name, see sys::write) before any is renamed:
    // a failure drops the staged ones, so the set is written whole or not at all.
    let mut staged = Vec::new();
    for (name, bytes) in &files {
        let s = crate::sys::write::stage(&dir.join(name), bytes, Default::default())
            .map_err(|e| unwritten(dir, &e))?;
        staged.push(s);
    }
    for s in staged {
        s.commit().map_err(|e| unwritten(dir, &e))?;
    }
    // An earlier study's tables that this one has not (another sweep's `runs_*.csv`) would
    // read as this study's: removed, so the directory holds one study (issue 40).
    for name in earlier {
        if !files.iter().any(|(n, _)| *n == name) {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    Ok(count)
}

/// The CSV tables the study in `dir/study.json` wrote there, if an earlier study wrote into
/// `dir`: only names a study writes, and only those that study made, so a file of the
/// user's is never removed. None when there is no earlier study (or it cannot be read).
fn earlier_tables(dir: &Path) -> Vec<String> {
    let path = dir.join("study.json");
    let small = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= 64 << 20);
    let Some(text) = small.then(|| std::fs::read(&path).ok()).flatten() else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    if doc["schema"] != crate::summary::study::SCHEMA {
        return Vec::new();
    }
    let mut earlier: crate::summary::study::Study = crate::summary::read::tolerant(&doc);
    match &mut earlier.document {
        Document::Run(s) => s.relocate(),
        Document::Compare(c) => c.sweep.relocate(),
        Document::Peak(_) => {}
    }
    crate::report::csv::tables(&earlier.document)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.ends_with(".csv") && !name.contains('/'))
        .collect()
}

/// The error of a study file that could not be written, naming the disk and the fix when the
/// disk is full.
fn unwritten(dir: &Path, e: &crate::sys::write::WriteError) -> anyhow::Error {
    match e.disk_full() {
        true => anyhow::anyhow!(
            "the disk holding {} is full: {e}: free space there, or give --out a directory on another disk, and run the study again",
            dir.display(),
        ),
        false => anyhow::anyhow!("{e}: check that {} is writable", dir.display()),
    }
}
