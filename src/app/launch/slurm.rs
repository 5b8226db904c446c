//! `wirebench launch slurm -N N [--ntasks-per-node K] [--submit|--print] -- run …`: an sbatch
//! script whose `srun` step runs one shard per task, all released at one agreed start, then
//! `wirebench merge` of the shards into DIR/merged.json.

use super::{absolute, binary, check_command, need, quote, write_file};
use crate::cli::launch::SlurmArgs;
use crate::error::UsageError;
use std::path::Path;
use std::process::ExitCode;

/// `wirebench launch slurm`.
pub fn main(a: &SlurmArgs) -> anyhow::Result<ExitCode> {
    let tasks = a.nodes.saturating_mul(a.ntasks_per_node);
    if a.nodes == 0 || a.ntasks_per_node == 0 {
        return Err(
            UsageError::flag("--nodes", "-N and --ntasks-per-node must be at least 1").into(),
        );
    }
    check_command(&a.shared.command, tasks)?;
    let sbatch = match a.shared.submit {
        true => Some(need("sbatch", "Slurm")?),
        false => None,
    };
    let dir = absolute(&a.dir)?;
    let script = script(
        a,
        &dir,
        &binary(&a.shared)?,
        super::start_in_ms(&a.shared, "5s")?,
    );
    let Some(sbatch) = sbatch else {
        print!("{script}");
        return Ok(ExitCode::SUCCESS);
    };
    let file = Path::new(&dir).join("job.sbatch");
    write_file(&file, &script, true)?;
    let mut cmd = std::process::Command::new(sbatch);
    cmd.arg("--parsable");
    if a.wait {
        cmd.arg("--wait");
    }
    let status = cmd
        .arg(&file)
        .status()
        .map_err(|e| anyhow::anyhow!("sbatch: {e}"))?;
    if !status.success() {
        eprintln!(
            "error: sbatch {} failed ({status}): see its message above",
            file.display()
        );
        return Ok(ExitCode::from(super::super::EXIT_FAILED));
    }
    eprintln!(
        "submitted {}: {tasks} shards write {dir}/shard-RANK.json, merged into {dir}/merged.json",
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The sbatch script: its header, the agreed time zero, the `srun` of the shards, the merge.
pub fn script(a: &SlurmArgs, dir: &str, wirebench: &str, start_in_ms: u64) -> String {
    let tasks = a.nodes * a.ntasks_per_node;
    let mut s = String::from("#!/bin/bash\n");
    s += "#SBATCH --job-name=wirebench\n";
    s += &format!("#SBATCH --nodes={}\n", a.nodes);
    s += &format!("#SBATCH --ntasks-per-node={}\n", a.ntasks_per_node);
    s += &format!(
        "#SBATCH --output={}\n",
        quote(&format!("{dir}/slurm-%j.out"))
    );
    for line in &a.sbatch {
        s += &format!("#SBATCH {line}\n");
    }
    s += &format!(
        "# Written by `wirebench launch slurm` (wirebench {}): each of the {tasks} tasks runs one\n",
        env!("CARGO_PKG_VERSION")
    );
    s += &super::preamble(wirebench, dir);
    let srun = format!(
        "srun --nodes={} --ntasks={tasks} --ntasks-per-node={}",
        a.nodes, a.ntasks_per_node
    );
    s + &super::body(&a.shared.command, start_in_ms, &srun, tasks)
}
