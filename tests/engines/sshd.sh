#!/bin/bash
# An sshd in each host namespace of net.sh, for mpirun's ssh launch: a host key and a client
# key of their own in DIR (root's ~/.ssh is not touched); root logs in with DIR/id only.
#   sshd.sh up DIR PREFIX N     (then: ssh -F DIR/ssh_config NET.11 …)
#   sshd.sh down DIR            stops the sshd's, by the PIDs they wrote to DIR
set -euo pipefail
cmd=$1; D=$2

up() {
  local P=$1 n=$2
  mkdir -p "$D" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$D/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$D/id"
  cp "$D/id.pub" "$D/authorized_keys"
  chmod 600 "$D/authorized_keys"
  cat > "$D/ssh_config" <<EOF
Host *
  IdentityFile $D/id
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  BatchMode yes
  LogLevel ERROR
EOF
  for i in $(seq 1 "$n"); do
    cat > "$D/sshd_config-$i" <<EOF
Port 22
HostKey $D/host_key
PidFile $D/sshd-$i.pid
AuthorizedKeysFile $D/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
    ip netns exec "$P-$i" /usr/sbin/sshd -f "$D/sshd_config-$i"
  done
}

down() {
  set +e
  for f in "$D"/sshd-*.pid; do [ -s "$f" ] && kill "$(cat "$f")"; done
  return 0
}

case $cmd in
up) up "$3" "$4" ;;
down) down ;;
esac
