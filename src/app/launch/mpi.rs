//! `wirebench launch mpi --hostfile F -np N [--submit|--print] -- run …`: a shell script whose
//! `mpirun` starts one shard per process (rank and size from OMPI_COMM_WORLD_RANK/SIZE or
//! PMI_RANK/SIZE: the binary links no MPI), then `wirebench merge` of the shards.

use super::{absolute, binary, check_command, need, quote, write_file};
use crate::cli::launch::MpiArgs;
use crate::error::UsageError;
use std::path::Path;
use std::process::ExitCode;

/// `wirebench launch mpi`.
pub fn main(a: &MpiArgs) -> anyhow::Result<ExitCode> {
    check_command(&a.shared.command, a.np)?;
    let hostfile = absolute(&a.hostfile)?;
    // Printing the script needs no host list: it may be written on the cluster later.
    if a.shared.submit && !Path::new(&hostfile).is_file() {
        return Err(UsageError::flag(
            "--hostfile",
            format!("--hostfile {}: no such file: give mpirun's host list (one host a line, e.g. `node1 slots=2`)", a.hostfile),
        )
        .into());
    }
    let mpirun = match a.shared.submit {
        true => Some(need("mpirun", "Open MPI or MPICH")?),
        false => None,
    };
    let dir = absolute(&a.dir)?;
    let start = super::start_in_ms(&a.shared, "5s")?;
    let text = script(a, &hostfile, &dir, &binary(&a.shared)?, start);
    if mpirun.is_none() {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let file = Path::new(&dir).join("job.sh");
    write_file(&file, &text, true)?;
    let status = std::process::Command::new("bash")
        .arg(&file)
        .status()
        .map_err(|e| anyhow::anyhow!("bash {}: {e}", file.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        _ => ExitCode::from(super::super::EXIT_FAILED),
    })
}

/// The script: the agreed time zero, `mpirun` of the shards (passing it on), the merge.
pub fn script(a: &MpiArgs, hostfile: &str, dir: &str, wirebench: &str, start_in_ms: u64) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s += &format!(
        "# Written by `wirebench launch mpi` (wirebench {}): mpirun starts {} processes, each one\n",
        env!("CARGO_PKG_VERSION"),
        a.np
    );
    s += &super::preamble(wirebench, dir);
    let extra: String = a
        .mpirun_args
        .iter()
        .map(|x| format!("{} ", quote(x)))
        .collect();
    let mpirun = format!(
        "mpirun --hostfile {} -np {} -x WIREBENCH_T0 {extra}",
        quote(hostfile),
        a.np
    );
    s + &super::body(&a.shared.command, start_in_ms, mpirun.trim_end(), a.np)
}
