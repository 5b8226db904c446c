#!/bin/bash
# Simulated hosts for tests/engines.rs (its own set-up, run by the test): a bridge
# in the root namespace at $NET.1/24, the target server's namespace at $NET.2, and N host
# namespaces at $NET.11, $NET.12 … No default route: nothing leaves $NET.0/24.
#   net.sh up PREFIX NET N     e.g. up wb19s 198.19.19 2 -> bridge wb19s, ns wb19s-srv, wb19s-1 …
#   net.sh down PREFIX         removes the namespaces and the bridge of PREFIX only
set -euo pipefail
cmd=$1; P=$2

up() {
  local net=$1 n=$2
  ip link add "$P" type bridge
  ip addr add "$net.1/24" dev "$P"
  ip link set "$P" up
  host "$P-srv" "${P}v0" "$net.2"
  for i in $(seq 1 "$n"); do host "$P-$i" "${P}v$i" "$net.$((10 + i))"; done
}

# One namespace NAME whose eth0 (veth VETH on the bridge) has ADDR.
host() {
  ip netns add "$1"
  ip link add "$2" type veth peer name eth0 netns "$1"
  ip link set "$2" master "$P" up
  ip -n "$1" addr add "$3/24" dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$1" link set lo up
}

down() {
  set +e
  for ns in $(ip netns list | awk -v p="$P-" 'index($1, p) == 1 {print $1}'); do ip netns del "$ns"; done
  ip link del "$P" 2>/dev/null
  return 0
}

case $cmd in
up) up "$3" "$4" ;;
down) down ;;
esac
