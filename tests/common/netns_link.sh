#!/usr/bin/env bash
# Two hosts joined by a shaped link, for studies across a real network on one machine (root):
# two network namespaces joined by a veth pair, each end shaped by tbf (Linux has no netem here,
# so no delay is added in the kernel; a server can add its own with --delay).
#   tests/common/netns_link.sh up [RATE] [PREFIX]   e.g. up 100mbit: hosts wbA 198.18.0.1, wbB 198.18.0.2
#   tests/common/netns_link.sh down [PREFIX]
# Then: ip netns exec wbB wirebench serve tcp -l 198.18.0.2:7000 &
#       ip netns exec wbA wirebench run tcp://198.18.0.2:7000 --link 100Mbit ...
# Addresses stay in 198.18.0.0/15 (RFC 2544's benchmarking range); nothing is routed out.
set -eu
case "${1:-}" in
up)
  rate=${2:-100mbit}
  prefix=${3:-wb}
  a=${prefix}A b=${prefix}B
  ip netns add "$a"
  ip netns add "$b"
  ip link add "${a}0" type veth peer name "${b}0"
  ip link set "${a}0" netns "$a"
  ip link set "${b}0" netns "$b"
  ip -n "$a" addr add 198.18.0.1/24 dev "${a}0"
  ip -n "$b" addr add 198.18.0.2/24 dev "${b}0"
  for n in "$a" "$b"; do
    ip -n "$n" link set lo up
    ip -n "$n" link set "${n}0" up
    ip netns exec "$n" tc qdisc add dev "${n}0" root tbf rate "$rate" burst 32kbit latency 50ms
  done
  echo "up: $a 198.18.0.1 <-> $b 198.18.0.2, $rate each way"
  ;;
down)
  prefix=${2:-wb}
  ip netns del "${prefix}A" 2>/dev/null || true
  ip netns del "${prefix}B" 2>/dev/null || true
  echo down
  ;;
*)
  echo "usage: $0 up [RATE] [PREFIX] | down [PREFIX]" >&2
  exit 2
  ;;
esac
