#!/usr/bin/env bash
# Hostile clients against `wirebench serve http`: does a well-behaved client keep its p99?
# Starts `serve http -t 1` pinned to CPU 0 and measures two well-behaved clients on CPU 1,
# quiet, then under each attack of bench/hostile.py (2,000 slowloris connections, a garbage
# flood, 1 MiB headers), then quiet again:
#   steady: `run --rate RATE -c 4` (open loop, default 2000/s, latency from the intended send
#           time): the bound of issue 16 (p99 under attack within 3x of quiet) is judged on it;
#   flat-out: `run -c 4` closed loop, as many requests as the server gives (its share of the
#           server under attack; its p99 is shown, not judged: a saturated server's tail moves
#           with whatever else runs).
# The attacker runs on ATTACKER_CPU (default 0, the server's CPU) at nice 19. On a network
# the attacker's sending would cost another host; here, on loopback, the kernel copies its bytes
# on the CPU it runs on. Put it on the client's CPU (ATTACKER_CPU=1) and the figure measures
# how two processes share one CPU, not the server. The server's CPU use is shown per phase.
# Usage: [SECS=5 RATE=2000 ATTACKER_CPU=0] bench/hostile.sh [SERVER FLAGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
B=./target/release/wirebench
SECS=${SECS:-5}
RATE=${RATE:-2000}
ATTACKER_CPU=${ATTACKER_CPU:-0}
[[ -x $B ]] || cargo build --release -q
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
out=$(mktemp -d)
taskset -c 0 "$B" serve http -t 1 -l 127.0.0.1:0 "$@" >"$out/serve" 2>&1 &
SERVER=$!
ATTACKS=()
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do [[ -s $out/serve ]] && break; sleep 0.1; done
URL=$(head -1 "$out/serve")
PORT=${URL##*:}
rss() { awk '/VmRSS/ { print $2 }' "/proc/$SERVER/status"; }
fds() { ls "/proc/$SERVER/fd" | wc -l; }
ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER/stat"; } # user + system, in clock ticks
cpu() { # ticks at the phase's start, seconds -> the server's CPU use over the phase, in %
    python3 -c "print(round(($(ticks) - $1) * 100 / $(getconf CLK_TCK) / $2))"
}
p99() { # phase, load flags -> p99 and p50 of a well-behaved client in µs, its ok and errors
    local phase=$1
    shift
    taskset -c 1 "$B" run "$URL/bytes/64" -c 4 -d "${SECS}s" "$@" --json -q >"$out/$phase.json" || true
    python3 - "$out/$phase.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lat = d.get("latency") or {}
print(lat.get("p99_us", "nan"), lat.get("p50_us", "nan"), d["ok"], d["errors"]["total"])
PY
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
echo "# bench/hostile.sh $* — $(date -u +%FT%TZ), $(nproc) vCPUs, $(uname -r)"
echo "# server: serve http -t 1 $* (CPU 0); clients on CPU 1, ${SECS}s each: steady = run /bytes/64"
echo "# --rate $RATE -c 4 (judged: p99 ratio <= 3), flat-out = run /bytes/64 -c 4 (closed loop);"
echo "# attacker: bench/hostile.py on CPU $ATTACKER_CPU at nice 19"
printf '%-11s %9s %9s %6s %7s %6s %9s %9s %6s %8s %5s %7s\n' phase p50_us p99_us ratio ok errors \
    flat_ok flat_p99 ratio rss_kib fds srv_cpu
row() { # phase
    local T0 R F C
    T0=$(ticks)
    read -r P99 P50 OK ERR < <(p99 "$1-steady" --rate "$RATE")
    read -r FP99 _ FOK FERR < <(p99 "$1-flat")
    R=$(rss) F=$(fds) C=$(cpu "$T0" $((2 * SECS)))
    [[ $1 == quiet ]] && QUIET=$P99 FQUIET=$FP99
    printf '%-11s %9s %9s %6s %7s %6s %9s %9s %6s %8s %5s %6s%%\n' "$1" "$P50" "$P99" \
        "$(ratio "$P99" "$QUIET")" "$OK" "$ERR" "$FOK" "$FP99" "$(ratio "$FP99" "$FQUIET")" "$R" "$F" \
        "$C"
}
row quiet
for attack in slowloris garbage oversized; do
    taskset -c "$ATTACKER_CPU" nice -n 19 python3 bench/hostile.py "$attack" 127.0.0.1 "$PORT" \
        $((2 * SECS + 6)) >"$out/$attack.att" 2>&1 &
    ATT=$!
    sleep 4 # slowloris needs its 2,000 connections open before the client starts
    row "$attack"
    wait $ATT || true
    ATTACKS+=("$attack: $(tail -1 "$out/$attack.att")")
    sleep 1
done
row quiet-after
printf '# %s\n' "${ATTACKS[@]}"
kill -INT $SERVER; wait $SERVER 2>/dev/null || true
echo "# server at the end: $(tail -1 "$out/serve")"
