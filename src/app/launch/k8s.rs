//! `wirebench launch k8s --parallelism N --image IMG -- run …`: a Kubernetes Indexed Job, one
//! pod per node (a required anti-affinity on the Job's pods), each the shard its
//! JOB_COMPLETION_INDEX names, all released at one absolute start; each prints its result
//! (`--json`) to its log, or writes it to a shared claim; the comments say how to merge.

use super::{check_command, need, quiet_flags};
use crate::cli::launch::K8sArgs;
use crate::error::UsageError;
use std::io::Write;
use std::process::{ExitCode, Stdio};

/// Where a claim is mounted in each pod.
const RESULTS: &str = "/results";

/// `wirebench launch k8s`.
pub fn main(a: &K8sArgs) -> anyhow::Result<ExitCode> {
    if a.shared.command.first().map(String::as_str) == Some("peak") {
        return Err(UsageError::new("a peak search on Kubernetes would be a Job per step: launch `-- run …` here, or run `wirebench peak URL --shards N --launcher CMD` where a launcher (srun, mpirun) reaches the nodes").into());
    }
    check_command(&a.shared.command, a.parallelism)?;
    let name_ok = !a.name.is_empty()
        && a.name.len() <= 63
        && a.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !a.name.starts_with('-')
        && !a.name.ends_with('-');
    if !name_ok {
        return Err(UsageError::flag("--name", format!("--name '{}': a Job's name is lowercase letters, digits and '-' (at most 63), e.g. wirebench-1", a.name)).into());
    }
    if a.image.trim().is_empty() || a.image.contains(char::is_whitespace) {
        return Err(UsageError::flag(
            "--image",
            "--image: give the image that holds wirebench, e.g. registry.example/wirebench:0.1",
        )
        .into());
    }
    let kubectl = match a.shared.submit {
        true => Some(need("kubectl", "Kubernetes")?),
        false => None,
    };
    let start = match a.start_at {
        Some(ms) => ms,
        None => crate::store::now_ms().max(0) as u64 + super::start_in_ms(&a.shared, "60s")?,
    };
    let text = manifest(a, start);
    let Some(kubectl) = kubectl else {
        print!("{text}");
        if a.start_at.is_none() {
            // Written to a file to apply later (as the README does), its absolute start may
            // pass before the pods run: said where the user looks, not only in a comment.
            let left = start.saturating_sub(crate::store::now_ms().max(0) as u64) / 1000;
            eprintln!(
                "note: the pods start together at {start} (unix ms), {left} s from now: apply the manifest before then, or write it with a longer --start-in (e.g. 10m) or --start-at"
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    let mut child = std::process::Command::new(kubectl)
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow::anyhow!("kubectl: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        eprintln!("error: kubectl apply failed ({status}): see its message above");
        return Ok(ExitCode::from(super::super::EXIT_FAILED));
    }
    eprint!("{}", collect_comment(a, start).replace("# ", ""));
    Ok(ExitCode::SUCCESS)
}

/// The arguments of every pod's wirebench: the command with the shard flags.
pub fn pod_args(a: &K8sArgs, start_at_ms: u64) -> Vec<String> {
    let mut args = a.shared.command.clone();
    let n = a.parallelism.to_string();
    let start = start_at_ms.to_string();
    args.extend(["--shard", "auto", "--world", &n, "--start-at", &start].map(String::from));
    match &a.claim {
        Some(_) => args.extend(["--out".into(), format!("{RESULTS}/shard-%r.json")]),
        None if !args.iter().any(|w| w == "--json") => args.push("--json".into()),
        None => {}
    }
    args.extend(quiet_flags(&a.shared.command).iter().map(|s| s.to_string()));
    args
}

/// How the shards' results are gathered and merged, as comment lines.
fn collect_comment(a: &K8sArgs, start_at_ms: u64) -> String {
    let (name, last) = (&a.name, a.parallelism - 1);
    let mut s = format!("# Apply:   kubectl apply -f job.yaml, before {start_at_ms} (unix ms; `date +%s%3N` is now): a pod started after it runs late\n# Wait:    kubectl wait --for=condition=complete job/{name} --timeout=30m\n");
    match &a.claim {
        Some(claim) => s += &format!("# Collect: copy shard-0.json … shard-{last}.json from the claim {claim} (mounted at {RESULTS} in each pod)\n"),
        None => s += &format!("# Collect: for i in $(seq 0 {last}); do kubectl logs --tail=-1 -l job-name={name},batch.kubernetes.io/job-completion-index=$i > shard-$i.json; done\n"),
    }
    s + "# Merge:   wirebench merge shard-*.json > merged.json\n"
}

/// The Indexed Job manifest (YAML; the arguments as a JSON flow sequence, which YAML reads).
pub fn manifest(a: &K8sArgs, start_at_ms: u64) -> String {
    let (name, n) = (&a.name, a.parallelism);
    let args = serde_json::to_string(&pod_args(a, start_at_ms)).unwrap_or_default();
    let image = serde_json::to_string(&a.image).unwrap_or_default();
    let mut s = format!(
        "# Written by `wirebench launch k8s` (wirebench {}): an Indexed Job of {n} pods, one per\n\
         # node, each one shard of the load below (rank = JOB_COMPLETION_INDEX), all released at\n\
         # {start_at_ms} (unix ms): the nodes' clocks must agree (NTP), as the shards' skews show.\n",
        env!("CARGO_PKG_VERSION")
    );
    s += &collect_comment(a, start_at_ms);
    s += &format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels:
    app.kubernetes.io/name: wirebench
spec:
  completionMode: Indexed
  completions: {n}
  parallelism: {n}
  backoffLimit: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: wirebench
    spec:
      restartPolicy: Never
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels:
                job-name: {name}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: wirebench
        image: {image}
        args: {args}
"
    );
    if let Some(claim) = &a.claim {
        s += &format!(
            "        volumeMounts:
        - name: results
          mountPath: {RESULTS}
      volumes:
      - name: results
        persistentVolumeClaim:
          claimName: {}
",
            serde_json::to_string(claim).unwrap_or_default()
        );
    }
    s
}
