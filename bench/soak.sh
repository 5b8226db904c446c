#!/usr/bin/env bash
# Soak: a steady open-loop --rate against `wirebench serve http` and, if installed, nginx, both
# at once for DURATION (default 30m), each server pinned to CPU 0 and each client to CPU 1.
# Samples each server's RSS and open fds every 10 s and checks, after the first minute:
# RSS and fds flat within ±5% of their value at the first minute; ok = sent (every request
# answered); no drift in the run's per-second series (per-second p99 of the last third of the
# run within 0.5–2× that of the first third, and the ok rate of the last third within ±1% of
# the first third's; seconds and whole minutes off the rate are counted and shown, not judged:
# a machine stall moves replies from one second into the next, which is not drift).
# Usage: DURATION=2m RATE=2000 bench/soak.sh     (prints a table and a verdict per server)
# WIREBENCH=PATH runs another build (e.g. a copy, so a rebuild during the soak cannot touch it).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${WIREBENCH:-./target/release/wirebench}
DURATION=${DURATION:-30m}
RATE=${RATE:-2000}
[[ -x $B ]] || cargo build --release -q
ulimit -n 65536 2>/dev/null || true
out=$(mktemp -d)
PIDS=()
CLIENTS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$out"
}
trap cleanup EXIT
secs=$(python3 -c "
import re,sys; m=re.fullmatch(r'(\d+)(s|m|h)?', '$DURATION') or sys.exit('DURATION: e.g. 120s, 2m, 30m')
print(int(m[1]) * {'s':1,'m':60,'h':3600,None:1}[m[2]])")

taskset -c 0 "$B" serve http -t 1 -l 127.0.0.1:0 >"$out/serve" 2>&1 &
WB=$!
PIDS+=("$WB")
for _ in $(seq 50); do [[ -s $out/serve ]] && break; sleep 0.1; done
declare -A URL PID
URL[wirebench]="$(head -1 "$out/serve")/bytes/64"
PID[wirebench]=$WB
if command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]]; then
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
    port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
    mkdir -p "$out/nginx"
    cat >"$out/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $out/nginx/nginx.pid;
error_log $out/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $out/nginx; proxy_temp_path $out/nginx; fastcgi_temp_path $out/nginx;
    uwsgi_temp_path $out/nginx; scgi_temp_path $out/nginx;
    server {
        listen 127.0.0.1:$port; keepalive_requests 1000000; default_type application/octet-stream;
        location / { return 200 "$(head -c 64 /dev/zero | tr '\0' a)"; }  # as /bytes/64: from memory
    }
}
CONF
    taskset -c 0 "$NGINX" -p "$out/nginx" -c "$out/nginx/nginx.conf" -g 'daemon off;' \
        2>"$out/nginx/stderr" &
    PID[nginx]=$!
    PIDS+=("${PID[nginx]}")
    URL[nginx]="http://127.0.0.1:$port/f"
    sleep 0.5
fi
# RSS (KiB) and fds of a server and its children (nginx's worker).
usage() {
    local rss=0 fds=0 p
    for p in $1 $(pgrep -P "$1" || true); do
        rss=$((rss + $(awk '/VmRSS/ { print $2 }' "/proc/$p/status")))
        fds=$((fds + $(ls "/proc/$p/fd" | wc -l)))
    done
    echo "$rss $fds"
}
echo "# bench/soak.sh — $(date -u +%FT%TZ), DURATION=$DURATION RATE=$RATE/s per server, $(nproc) vCPUs"
for name in "${!URL[@]}"; do
    taskset -c 1 "$B" run "${URL[$name]}" --rate "$RATE" -c 8 -d "$DURATION" --json -q \
        >"$out/$name.json" 2>"$out/$name.err" &
    PIDS+=($!)
    CLIENTS+=($!)
    echo "# $name: ${URL[$name]}"
done
start=$(date +%s)
while (($(date +%s) - start < secs)); do
    for name in "${!URL[@]}"; do
        echo "$name $(($(date +%s) - start)) $(usage "${PID[$name]}")" >>"$out/samples"
    done
    sleep 10
done
wait "${CLIENTS[@]}" 2>/dev/null || true
sleep 2
python3 - "$out" "$RATE" "${!URL[@]}" <<'PY'
import json, statistics, sys
out, rate, names = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
samples = [l.split() for l in open(f"{out}/samples")]
verdict = 0
for name in names:
    rows = [(int(t), int(r), int(f)) for n, t, r, f in samples if n == name]
    print(f"\n== {name}: t_s rss_kib fds (every 10 s)")
    print("  ".join(f"{t}:{r}/{f}" for t, r, f in rows))
    late = [r for r in rows if r[0] >= 60] or rows[-1:]
    base_rss, base_fds = late[0][1], late[0][2]
    rss_dev = max(abs(r[1] - base_rss) / base_rss for r in late)
    fds_dev = max(abs(r[2] - base_fds) / base_fds for r in late)
    try:
        d = json.load(open(f"{out}/{name}.json"))
    except (OSError, ValueError) as e:
        print(f"  no result: {e}; stderr: {open(f'{out}/{name}.err').read().strip()}")
        verdict = 1
        continue
    ol = d["open_loop"]
    ok, sent, errors = d["ok"], ol["sent"], d["errors"]["total"]
    series = [s for s in d["series"] if s["duration_s"] >= 0.99][60:] or d["series"]
    third = max(1, len(series) // 3)
    def p99(part):
        values = [s["p99_us"] for s in part if s["p99_us"] is not None]
        return statistics.median(values) if values else float("nan")
    first, last = p99(series[:third]), p99(series[-third:])
    off = [s for s in series if abs(s["ok"] - rate) > 0.05 * rate]
    minutes = [series[i:i + 60] for i in range(0, len(series) - 59, 60)]
    minute_ok = [sum(s["ok"] for s in m) for m in minutes]
    minute_off = [m for m in minute_ok if abs(m - 60 * rate) > 0.01 * 60 * rate]
    def ok_rate(part):
        return sum(s["ok"] for s in part) / max(1e-9, sum(s["duration_s"] for s in part))
    ok_first, ok_last = ok_rate(series[:third]), ok_rate(series[-third:])
    checks = {
        "RSS flat ±5% after 1 min": rss_dev <= 0.05,
        "fds flat ±5% after 1 min": fds_dev <= 0.05,
        "ok = sent": ok == sent and errors == 0,
        "p99 no drift (last/first third in 0.5–2×)": 0.5 <= last / first <= 2,
        "ok rate no drift (last/first third within ±1%)": abs(ok_last / ok_first - 1) <= 0.01,
    }
    lat = d["latency"] or {"p50_us": float("nan"), "p99_us": float("nan"), "max_us": float("nan")}
    print(f"  sent {sent}, ok {ok}, errors {errors}, kept up {ol['kept_up']}, "
          f"p50 {lat['p50_us']:.0f} µs, p99 {lat['p99_us']:.0f} µs, max {lat['max_us']:.0f} µs")
    for kind in d["errors"]["by_kind"]:
        print(f"  errors: {kind['count']} {kind['kind']} ({kind['sample']})")
    print(f"  RSS {base_rss} KiB at 1 min, largest deviation {rss_dev:.1%}; fds {base_fds}, "
          f"largest deviation {fds_dev:.1%}")
    print(f"  per-second p99 median: first third {first:.0f} µs, last third {last:.0f} µs "
          f"(×{last / first:.2f}); seconds with ok off the rate by >5%: {len(off)} of {len(series)}")
    print(f"  ok per second: first third {ok_first:.1f}/s, last third {ok_last:.1f}/s "
          f"(×{ok_last / ok_first:.4f})")
    if minute_ok:
        print(f"  ok per whole minute after the first: {min(minute_ok)}–{max(minute_ok)} "
              f"(rate × 60 = {60 * rate:.0f}; {len(minute_off)} of {len(minute_ok)} off by >1%)")
    for what, good in checks.items():
        print(f"  {'ok  ' if good else 'FAIL'} {what}")
        verdict |= not good
print("\nverdict:", "all checks pass" if not verdict else "some checks failed (see FAIL)")
PY
