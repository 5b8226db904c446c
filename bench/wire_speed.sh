#!/usr/bin/env bash
# wirebench's bulk headline against iperf3's receiver figure over a shaped link: two network
# namespaces of this script's own joined by a veth pair, `tc qdisc … tbf rate 100mbit burst
# 32kbit latency 50ms` on each end (as tests/common/netns_link.sh and tests/wire_speed.rs
# build it), 198.18.9.1 (clients) <-> 198.18.9.2 (servers). In each round, in turn:
#   wirebench run tcp://198.18.9.2:7000 --mode stream -d Ns --json -q  -> throughput.gbit_per_s
#   iperf3 -c 198.18.9.2 -t N -J                                    -> end.sum_received
# and the ratio of the two. Also shown: the sink's final count over the window (the headline
# before issue 17, which counted what drained from buffers after the window) and those
# drained bytes. The most a 100 Mbit tbf link carries is 100 × 1448 / 1514 = 95.64 Mbit/s of
# TCP payload (1448-byte segments in 1514-byte frames, as tbf counts them).
#
# Usage: bench/wire_speed.sh [--quick]   (as root: it makes and removes the namespaces)
#   --quick   1 round of 3 s runs, no discarded warm-up round: a smoke check
# Environment: ROUNDS=N (default 3; --quick 1), DUR=seconds per run (default 5; --quick 3).
# Writes bench/results/wire_speed_iperf3.txt; raw output in bench/results/raw/wire_speed/.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=${DUR:-3}
    WARM_ROUND=0
else
    ROUNDS=${ROUNDS:-3}
    DUR=${DUR:-5}
    WARM_ROUND=1 # one discarded 2 s round of each first (docs/method.md: the first run is an outlier)
fi
WARM_DUR=2
[[ $(id -u) -eq 0 ]] || { echo "$BENCH: needs root (network namespaces)" >&2; exit 1; }
command -v iperf3 >/dev/null 2>&1 || install_pkgs iperf3
require_cmds ip tc iperf3 python3 timeout cargo

OUT=bench/results/wire_speed_iperf3.txt
bench_setup "$ROOT/bench/results/raw/wire_speed"
export XDG_DATA_HOME=$RAW/data # the runs' history stays here, not in ~/.local/share

NS_A=wbsa$$
NS_B=wbsb$$
cleanup() {
    stop_all
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
}

link_up() { # the two namespaces and the shaped veth pair between them
    ip netns add "$NS_A"
    ip netns add "$NS_B"
    ip link add "wsa$$" type veth peer name "wsb$$"
    ip link set "wsa$$" netns "$NS_A"
    ip link set "wsb$$" netns "$NS_B"
    ip -n "$NS_A" addr add 198.18.9.1/24 dev "wsa$$"
    ip -n "$NS_B" addr add 198.18.9.2/24 dev "wsb$$"
    local ns dev
    for ns in "$NS_A:wsa$$" "$NS_B:wsb$$"; do
        dev=${ns#*:}
        ns=${ns%%:*}
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "$dev" up
        ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate 100mbit burst 32kbit latency 50ms
    done
}

echo "== link: $NS_A 198.18.9.1 <-> $NS_B 198.18.9.2, tbf 100mbit each way"
link_up
SINK_LOG=$RAW/sink.txt
ip netns exec "$NS_B" "$WB" serve tcp --mode sink -l 198.18.9.2:7000 >"$SINK_LOG" 2>&1 &
PIDS+=("$!")
wait_url "$SINK_LOG" "$!" >/dev/null
ip netns exec "$NS_B" iperf3 -s -B 198.18.9.2 -p 5201 >"$RAW/iperf3-server.txt" 2>&1 &
PIDS+=("$!")
sleep 0.5 # iperf3 -s prints nothing to wait for until a client comes

COMMANDS=$RAW/commands.txt
: >"$COMMANDS"
ROWS=$RAW/rows.txt
: >"$ROWS"

wb() { # ROUND DUR -> headline, sink count over the window, drained bytes
    local round=$1 dur=$2 out=$RAW/wirebench-r$1.json
    local cmd=(ip netns exec "$NS_A" "$WB" run tcp://198.18.9.2:7000 --mode stream -d "${dur}s" --json -q)
    [[ $round == warm-up ]] || logcmd "${cmd[@]}"
    bounded $((dur + 20)) "${cmd[@]}" >"$out"
    local head count drained
    head=$(json_get "$out" 'j["throughput"]["gbit_per_s"] * 1e3')
    count=$(json_get "$out" 'j["throughput"]["receiver_bytes"] * 8 / j["duration_s"] / 1e6')
    drained=$(json_get "$out" 'j["throughput"]["drained_bytes"] / 1e6')
    printf '   round %s wirebench  headline %6.2f Mbit/s   sink count / window %6.2f   drained %.2f MB\n' \
        "$round" "$head" "$count" "$drained"
    [[ $round == warm-up ]] || echo "$round wirebench $head $count $drained" >>"$ROWS"
}

ip3() { # ROUND DUR -> iperf3's receiver and sender figures
    local round=$1 dur=$2 out=$RAW/iperf3-r$1.json
    local cmd=(ip netns exec "$NS_A" iperf3 -c 198.18.9.2 -p 5201 -t "$dur" -J)
    [[ $round == warm-up ]] || logcmd "${cmd[@]}"
    bounded $((dur + 20)) "${cmd[@]}" >"$out"
    local rx tx
    rx=$(json_get "$out" 'j["end"]["sum_received"]["bits_per_second"] / 1e6')
    tx=$(json_get "$out" 'j["end"]["sum_sent"]["bits_per_second"] / 1e6')
    printf '   round %s iperf3     receiver %6.2f Mbit/s   sender %6.2f\n' "$round" "$rx" "$tx"
    [[ $round == warm-up ]] || echo "$round iperf3 $rx $tx" >>"$ROWS"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== $ROUNDS round(s) of ${DUR} s, wirebench then iperf3 (after a discarded warm-up round: $WARM_ROUND)"
alternate "$ROUNDS" wb ip3

LOAD="$LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after ($(nproc) CPUs)"
python3 - "$ROWS" "$DUR" "$COMMANDS" "$WARM_ROUND" "$LOAD" "$(date -u '+%F %H:%M UTC')" >"$OUT" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
dur, commands = sys.argv[2], open(sys.argv[3]).read().splitlines()
warm = ", after one discarded warm-up round of each" if sys.argv[4] == "1" else ""
LIMIT = 100 * 1448 / 1514
wb = {r[0]: list(map(float, r[2:])) for r in rows if r[1] == "wirebench"}
ip = {r[0]: list(map(float, r[2:])) for r in rows if r[1] == "iperf3"}
print(f"bulk headline vs iperf3's receiver over a 100 Mbit tbf link ({dur} s runs, "
      f"wirebench then iperf3 in each round{warm}; bench/wire_speed.sh)")
print(f"{sys.argv[6]}; load average {sys.argv[5]}")
print(f"most the link carries: 100 x 1448 / 1514 = {LIMIT:.2f} Mbit/s of TCP payload\n")
print("round  wirebench headline  iperf3 receiver  ratio   | sink count/window (old headline)  drained  iperf3 sender")
ratios = []
for r in wb:
    h, count, drained = wb[r]
    rx, tx = ip[r]
    ratios.append(h / rx)
    print(f"{r:>5}  {h:14.2f}      {rx:12.2f}     {h / rx:.4f}  | {count:20.2f}             {drained:5.2f} MB  {tx:8.2f}")
heads = [v[0] for v in wb.values()]
print(f"\nheadline: max {max(heads):.2f} Mbit/s ({'never above' if max(heads) <= LIMIT else 'ABOVE'} {LIMIT:.2f}); "
      f"ratio to iperf3's receiver: median {statistics.median(ratios):.4f}, "
      f"range {min(ratios):.4f}-{max(ratios):.4f} "
      f"({'within' if all(abs(x - 1) <= 0.01 for x in ratios) else 'NOT all within'} 1%)")
print("\ncommands:")
for c in commands:
    print("  " + c)
EOF
cat "$OUT"
echo "== written: $OUT"
