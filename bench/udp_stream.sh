#!/usr/bin/env bash
# A UDP stream as iperf3 measures it, over a shaped link: two network namespaces of this
# script's own joined by a veth pair, `tc qdisc … tbf rate 100mbit burst 32kbit latency 50ms`
# on each end, 198.18.38.1 (clients) <-> 198.18.38.2 (servers). Offered 150 Mbit/s (more than
# the link carries) and 50 Mbit/s (less), 1400-byte datagrams, in turn in each round:
#   wirebench run udp://198.18.38.2:7000 --mode stream --bandwidth RATE --size 1400 -d Ns --json -q
#   iperf3 -c 198.18.38.2 -u -b RATE -l 1400 -t N -J                 (iperf3's default pacing)
#   iperf3 -c 198.18.38.2 -u -b RATE -l 1400 -t N -J --pacing-timer 10   (iperf3 paced finely)
# with, for each: the receiver's rate, the sender's rate over its window, loss and jitter (as
# each receiver counted them: wirebench's sink, iperf3's server), and whether wirebench got the
# receiver's count at all. Then the same beside a CPU hog pinned to CPU 0 (`taskset -c 0 sh -c
# 'while :; do :; done'`, started and killed by its PID). The most the link carries is
# 100 × 1400 / 1442 = 97.09 Mbit/s of UDP payload (1400-byte payloads in 1442-byte frames, as
# tbf counts them); no sender rate over its window may exceed the link's 100 Mbit/s.
#
# Usage: bench/udp_stream.sh [--quick]   (as root: it makes and removes the namespaces)
#   --quick   1 round of 3 s runs: a smoke check
# Environment: ROUNDS=N (default 5; --quick 1), DUR=seconds per run (default 5; --quick 3),
#   WB=path/to/wirebench to measure that binary instead of building the release one.
# Writes bench/results/udp_stream_iperf3.txt; raw output in bench/results/raw/udp_stream/.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=${DUR:-3}
else
    ROUNDS=${ROUNDS:-5}
    DUR=${DUR:-5}
fi
[[ $(id -u) -eq 0 ]] || { echo "$BENCH: needs root (network namespaces)" >&2; exit 1; }
command -v iperf3 >/dev/null 2>&1 || install_pkgs iperf3
require_cmds ip tc iperf3 python3 timeout taskset

OUT=bench/results/udp_stream_iperf3.txt
GIVEN_WB=${WB:-}
if [[ -n $GIVEN_WB ]]; then
    RAW=$ROOT/bench/results/raw/udp_stream
    rm -rf "$RAW"
    mkdir -p "$RAW"
    cp "$GIVEN_WB" "$RAW/wirebench"
    WB=$RAW/wirebench
else
    bench_setup "$ROOT/bench/results/raw/udp_stream"
fi
export XDG_DATA_HOME=$RAW/data # the runs' history stays here, not in ~/.local/share

NS_A=wbua$$
NS_B=wbub$$
HOG=
cleanup() {
    [[ -z $HOG ]] || kill "$HOG" 2>/dev/null || true
    stop_all
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
}

link_up() { # the two namespaces and the shaped veth pair between them
    ip netns add "$NS_A"
    ip netns add "$NS_B"
    ip link add "wua$$" type veth peer name "wub$$"
    ip link set "wua$$" netns "$NS_A"
    ip link set "wub$$" netns "$NS_B"
    ip -n "$NS_A" addr add 198.18.38.1/24 dev "wua$$"
    ip -n "$NS_B" addr add 198.18.38.2/24 dev "wub$$"
    local ns dev
    for ns in "$NS_A:wua$$" "$NS_B:wub$$"; do
        dev=${ns#*:}
        ns=${ns%%:*}
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "$dev" up
        ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate 100mbit burst 32kbit latency 50ms
    done
}

echo "== link: $NS_A 198.18.38.1 <-> $NS_B 198.18.38.2, tbf 100mbit each way"
link_up
SINK_LOG=$RAW/sink.txt
ip netns exec "$NS_B" "$WB" serve udp --mode sink -l 198.18.38.2:7000 >"$SINK_LOG" 2>&1 &
PIDS+=("$!")
wait_url "$SINK_LOG" "$!" >/dev/null
ip netns exec "$NS_B" iperf3 -s -B 198.18.38.2 -p 5201 >"$RAW/iperf3-server.txt" 2>&1 &
PIDS+=("$!")
sleep 0.5 # iperf3 -s prints nothing to wait for until a client comes

COMMANDS=$RAW/commands.txt
: >"$COMMANDS"
ROWS=$RAW/rows.txt
: >"$ROWS"

wb() { # COND RATE ROUND DUR -> a row: received, sender, loss, jitter, count present
    local cond=$1 rate=$2 round=$3 dur=$4 out=$RAW/wirebench-$1-$2-r$3.json
    local cmd=(ip netns exec "$NS_A" "$WB" run udp://198.18.38.2:7000 --mode stream
        --bandwidth "${rate}bit" --size 1400 -d "${dur}s" --json -q --no-save)
    logcmd "${cmd[@]}"
    bounded $((dur + 30)) "${cmd[@]}" >"$out" || true
    python3 - "$out" "$cond" "$rate" "$round" >>"$ROWS" <<'EOF'
import json, sys
out, cond, rate, rnd = sys.argv[1:]
try:
    j = json.load(open(out))
except Exception:
    print(cond, rate, rnd, "wirebench", "nan nan nan nan 0")
    sys.exit()
t, s = j["throughput"], (j.get("datagrams") or {}).get("server")
sender = (t.get("sender_gbit_per_s") or t["gbit_per_s"]) * 1e3
if s is None:
    print(cond, rate, rnd, "wirebench", "nan", sender, "nan nan 0")
else:
    print(cond, rate, rnd, "wirebench", t["gbit_per_s"] * 1e3, sender, s["loss_percent"], s["jitter_us"], 1)
EOF
    tail -n1 "$ROWS"
}

ip3() { # COND RATE ROUND DUR [PACING] -> a row: received, sender, loss, jitter
    local cond=$1 rate=$2 round=$3 dur=$4 pacing=${5:-} name=iperf3
    local cmd=(ip netns exec "$NS_A" iperf3 -c 198.18.38.2 -p 5201 -u -b "$rate" -l 1400 -t "$dur" -J)
    if [[ -n $pacing ]]; then
        cmd+=(--pacing-timer "$pacing")
        name=iperf3-p$pacing
    fi
    local out=$RAW/$name-$cond-$rate-r$round.json
    logcmd "${cmd[@]}"
    bounded $((dur + 30)) "${cmd[@]}" >"$out" || true
    python3 - "$out" "$cond" "$rate" "$round" "$name" "$dur" >>"$ROWS" <<'EOF'
import json, sys
out, cond, rate, rnd, name, dur = sys.argv[1:]
try:
    j = json.load(open(out))
    s = j["end"]["sum"]
    # iperf3's sum: the receiver's packets, loss and jitter as its server counted them (sent
    # back to the client); the sender's own bytes over its own time are in the streams' "sender".
    snd = j["end"]["streams"][0]["udp"]
    sent_bps = snd["bytes"] * 8 / snd["seconds"] if snd.get("seconds") else s["bits_per_second"]
    recv = (s["packets"] - s["lost_packets"]) * 1400 * 8 / s["seconds"] / 1e6
    print(cond, rate, rnd, name, recv, sent_bps / 1e6, s["lost_percent"], s["jitter_ms"] * 1e3, 1)
except Exception as e:
    print(cond, rate, rnd, name, "nan nan nan nan 0")
EOF
    tail -n1 "$ROWS"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for cond in calm hog; do
    if [[ $cond == hog ]]; then
        taskset -c 0 sh -c 'while :; do :; done' &
        HOG=$!
        echo "== beside a CPU hog on CPU 0 (pid $HOG)"
        logcmd taskset -c 0 sh -c 'while :; do :; done'
    fi
    for ((r = 1; r <= ROUNDS; r++)); do
        for rate in 150M 50M; do
            wb "$cond" "$rate" "$r" "$DUR"
            ip3 "$cond" "$rate" "$r" "$DUR"
            ip3 "$cond" "$rate" "$r" "$DUR" 10
        done
    done
    if [[ -n $HOG ]]; then
        kill "$HOG" 2>/dev/null || true
        wait "$HOG" 2>/dev/null || true
        HOG=
    fi
done

LOAD="$LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after ($(nproc) CPUs)"
python3 - "$ROWS" "$DUR" "$COMMANDS" "$LOAD" "$(date -u '+%F %H:%M UTC')" "$(git -C "$ROOT" rev-parse --short HEAD)" "${GIVEN_WB:+$GIVEN_WB}" >"$OUT" <<'EOF'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
dur, commands, load, date, head, given = sys.argv[2], open(sys.argv[3]).read().splitlines(), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
LINK, PAYLOAD = 100.0, 100 * 1400 / 1442
print(f"UDP stream beside iperf3 -u over a 100 Mbit tbf link ({dur} s runs; bench/udp_stream.sh)")
print(f"{date}, wirebench at {head}{' (binary ' + given + ')' if given else ' (release build)'}; load average {load}")
print(f"most the link carries: {PAYLOAD:.2f} Mbit/s of UDP payload (1400 of every 1442 bytes); link {LINK:.0f} Mbit/s\n")
print("each cell: median (min-max) over the rounds; jitter and loss as each tool's receiver counted them")
print(f"{'condition':9} {'offered':7} {'tool':14} {'received Mbit/s':22} {'sender Mbit/s':22} {'loss %':18} {'jitter µs':20} count")
def cell(xs, fmt):
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "-"
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"
keys = []
for r in rows:
    k = (r[0], r[1], r[3])
    if k not in keys:
        keys.append(k)
over = []
for k in keys:
    rs = [r for r in rows if (r[0], r[1], r[3]) == k]
    v = [[float(x) for x in r[4:8]] for r in rs]
    present = sum(int(r[8]) for r in rs)
    senders = [x[1] for x in v if not math.isnan(x[1])]
    over += [(k, s) for s in senders if s > LINK]
    print(f"{k[0]:9} {k[1]:7} {k[2]:14} {cell([x[0] for x in v], '.2f'):22} {cell([x[1] for x in v], '.2f'):22} "
          f"{cell([x[2] for x in v], '.2f'):18} {cell([x[3] for x in v], '.1f'):20} {present}/{len(rs)}")
wb = [r for r in rows if r[3] == "wirebench"]
got = sum(int(r[8]) for r in wb)
print(f"\nwirebench got the receiver's count in {got} of {len(wb)} runs; "
      f"sender rates over the link's {LINK:.0f} Mbit/s: {len(over)} ({', '.join(f'{k[2]} {k[0]} {k[1]} {s:.2f}' for k, s in over) or 'none'})")
def med(cond, rate, tool, i):
    xs = [float(r[4 + i]) for r in rows if (r[0], r[1], r[3]) == (cond, rate, tool) and not math.isnan(float(r[4 + i]))]
    return statistics.median(xs) if xs else float("nan")
print("jitter, wirebench / iperf3 (medians): " + "; ".join(
    f"{c} {rate}: {med(c, rate, 'wirebench', 3) / med(c, rate, 'iperf3', 3):.2f}x of default pacing, "
    f"{med(c, rate, 'wirebench', 3) / med(c, rate, 'iperf3-p10', 3):.2f}x of --pacing-timer 10"
    for c in ("calm", "hog") for rate in ("150M", "50M")))
print("\ncommands (hog: started before its condition's rounds, killed by its PID after them):")
for c in commands:
    print("  " + c)
EOF
cat "$OUT"
echo "== written: $OUT"
