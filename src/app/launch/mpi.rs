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
    if !Path::new(&hostfile).is_file() {
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
    s +=
        "# shard of the load below (its share of the totals), all released at WIREBENCH_T0 + the\n";
    s += "# delay; each writes $dir/shard-RANK.json, then `wirebench merge` adds them exactly.\n";
    s += "set -uo pipefail\n";
    s += &format!("wirebench=${{WIREBENCH:-{}}}\n", quote(wirebench));
    s += &format!("dir={}\n", quote(dir));
    s += "mkdir -p \"$dir\"\nrm -f \"$dir\"/shard-*.json \"$dir/merged.json\"\n";
    s += "export WIREBENCH_T0=$(date +%s%3N)\n";
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
