#!/bin/bash
# A Slurm cluster on the hosts of net.sh (its own set-up, run by the test):
# slurmctld and munged in the root namespace, one slurmd per host namespace.
#   slurm.sh up DIR PREFIX NET N PORT   (slurmctld on PORT, slurmd on PORT+1; prints nothing)
#   slurm.sh down DIR                   stops what up started, by the PIDs it wrote to DIR
# Afterwards: SLURM_CONF=DIR/slurm.conf srun …
set -euo pipefail
cmd=$1; D=$2

up() {
  local P=$1 net=$2 n=$3 port=$4
  mkdir -p "$D/state" "$D/log" "$D/spool" "$D/munge"
  chown slurm:slurm "$D/state" "$D/log"
  chown munge:munge "$D/munge"
  chmod 711 "$D/munge"
  cat > "$D/slurm.conf" <<EOF
ClusterName=wbtest
SlurmctldHost=$(hostname)($net.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmdParameters=config_overrides
NodeName=$P-[1-$n] NodeAddr=$net.[11-$((10 + n))] CPUs=2 State=UNKNOWN
PartitionName=wb Nodes=$P-[1-$n] Default=YES MaxTime=INFINITE State=UP
EOF
  # munge: its own key and socket in DIR (no other munged on the machine is touched)
  dd if=/dev/urandom of="$D/munge/munge.key" bs=1 count=1024 2>/dev/null
  chown munge:munge "$D/munge/munge.key"; chmod 400 "$D/munge/munge.key"
  runuser -u munge -- /usr/sbin/munged --key-file="$D/munge/munge.key" \
    --socket="$D/munge/munge.socket" --pid-file="$D/munge/munged.pid" \
    --seed-file="$D/munge/seed" --log-file="$D/munge/munged.log"
  /usr/sbin/slurmctld -f "$D/slurm.conf"
  for i in $(seq 1 "$n"); do
    mkdir -p "$D/spool/$P-$i"
    # nsenter --net, not `ip netns exec`: the latter remounts /sys and hides /sys/fs/cgroup,
    # and slurmd 22.05 then fails with "No filesystem mounted on /sys/fs/cgroup".
    nsenter --net="/run/netns/$P-$i" unshare --uts sh -c "hostname $P-$i && exec /usr/sbin/slurmd -N $P-$i -f $D/slurm.conf"
  done
  for _ in $(seq 1 120); do
    [ "$(SLURM_CONF=$D/slurm.conf sinfo -h -t idle -o '%D')" = "$n" ] && return 0
    sleep 0.25
  done
  echo "slurm: nodes did not become idle" >&2; SLURM_CONF=$D/slurm.conf sinfo >&2; return 1
}

down() {
  set +e
  local pids=()
  for f in "$D"/slurmd-*.pid "$D/slurmctld.pid" "$D/munge/munged.pid"; do
    [ -s "$f" ] && pids+=("$(cat "$f")")
  done
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}"
  # Until they are gone: slurmctld saves its state as it stops, into DIR.
  for _ in $(seq 1 50); do
    alive=0
    for p in "${pids[@]}"; do [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  return 0
}

case $cmd in
up) up "$3" "$4" "$5" "$6" ;;
down) down ;;
esac
