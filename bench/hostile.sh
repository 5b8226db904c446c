#!/usr/bin/env bash
# Hostile clients against `wirebench serve http`: does a well-behaved client keep its p99?
# Starts `serve http -t 1` pinned to CPU 0, measures a well-behaved client (`run -c 4 -d 5s`,
# pinned to CPU 1) quiet, then under each attack of bench/hostile.py (2,000 slowloris
# connections, a garbage flood, 1 MiB headers; pinned to CPU 1 at nice 19, so the attacker
# costs the server its work, not the client its CPU), then quiet again. Prints p99 under
# attack / quiet p99, the server's RSS and open fds at the end of each phase, and its CPU use
# during the client's run (100%: its one thread saturated).
# Usage: bench/hostile.sh [SERVER FLAGS...]   (e.g. --request-timeout 2s)
set -euo pipefail
cd "$(dirname "$0")/.."
B=./target/release/wirebench
SECS=${SECS:-5}
[[ -x $B ]] || cargo build --release -q
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
out=$(mktemp -d)
taskset -c 0 "$B" serve http -t 1 -l 127.0.0.1:0 "$@" >"$out/serve" 2>&1 &
SERVER=$!
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
p99() { # phase -> p99 of the well-behaved client in µs, and its ok/errors
    taskset -c 1 "$B" run "$URL/bytes/64" -c 4 -d "${SECS}s" --json -q >"$out/$1.json" || true
    python3 - "$out/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lat = d.get("latency") or {}
print(lat.get("p99_us", "nan"), lat.get("p50_us", "nan"), d["ok"], d["errors"]["total"])
PY
}
echo "# bench/hostile.sh $* — $(date -u +%FT%TZ), $(nproc) vCPUs, $(uname -r)"
echo "# server: serve http -t 1 $* (CPU 0); client: run /bytes/64 -c 4 -d ${SECS}s (CPU 1);"
echo "# attacker: bench/hostile.py (CPU 1, nice 19)"
printf '%-10s %10s %10s %9s %7s %8s %9s %6s %7s  %s\n' phase p50_us p99_us ratio ok errors rss_kib fds srv_cpu attacker
T0=$(ticks)
read -r QUIET Q50 QOK QERR < <(p99 quiet)
printf '%-10s %10s %10s %9s %7s %8s %9s %6s %6s%%\n' quiet "$Q50" "$QUIET" 1.00 "$QOK" "$QERR" "$(rss)" "$(fds)" "$(cpu "$T0" "$SECS")"
for attack in slowloris garbage oversized; do
    taskset -c 1 nice -n 19 python3 bench/hostile.py "$attack" 127.0.0.1 "$PORT" $((SECS + 5)) \
        >"$out/$attack.att" 2>&1 &
    ATT=$!
    sleep 4 # slowloris needs its 2,000 connections open before the client starts
    T0=$(ticks)
    read -r P99 P50 OK ERR < <(p99 "$attack")
    R=$(rss) F=$(fds) C=$(cpu "$T0" "$SECS")
    wait $ATT || true
    ratio=$(python3 -c "print(f'{$P99 / $QUIET:.2f}')")
    printf '%-10s %10s %10s %9s %7s %8s %9s %6s %6s%%  %s\n' "$attack" "$P50" "$P99" "$ratio" "$OK" \
        "$ERR" "$R" "$F" "$C" "$(tail -1 "$out/$attack.att")"
    sleep 1
done
read -r P99 P50 OK ERR < <(p99 quiet-after)
ratio=$(python3 -c "print(f'{$P99 / $QUIET:.2f}')")
printf '%-10s %10s %10s %9s %7s %8s %9s %6s\n' quiet-after "$P50" "$P99" "$ratio" "$OK" "$ERR" "$(rss)" "$(fds)"
kill -INT $SERVER; wait $SERVER 2>/dev/null || true
tail -1 "$out/serve"
