#!/usr/bin/env bash
# Where an HTTP/1.1 client's CPU goes, wirebench beside wrk and ab (issue 21 item 1: why the
# per-CPU-second ratio to ab stays near 1.0): GET /small.bin (100 B) from nginx (1 worker, CPU 0)
# on 50 keep-alive connections, each client on CPU 1 for DUR seconds, three ways per tool:
#   cpu      user and system seconds (wait4, via /usr/bin/time), voluntary and involuntary
#            context switches, each per request
#   split    perf record -e cpu-clock (a software clock: this machine has no hardware counters),
#            the share of the client's samples in the kernel, in the tool's own code, in libc
#            and in the vDSO (clock reads)
#   kernel   system calls per request (strace -c -f; strace slows the client, the counts per
#            request do not change) and TCP segments sent per request, both directions, client
#            and nginx (nstat: TcpOutSegs, pure ACKs; loopback sees every segment once)
# The question it answers: how much of the client's CPU time a load generator's own code can
# still change. Where the kernel's share is ~85% for every tool and the system calls and
# segments per request are the same, no user-space change reaches 1.05x the best peer.
#
# Usage: bench/where_cpu.sh [--quick] [--crr]   (written to bench/results/where_cpu.txt, or
#   where_cpu_crr.txt)
#   --quick   2 s runs, one round: a smoke check
#   --crr     a new connection per request instead, 10 at a time (wirebench --no-keepalive, wrk
#             with Connection: close, ab without -k), as per_cpu.sh's crr
# Environment: DUR=seconds per run (default 4), ROUNDS=cpu rounds per tool (default 5)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CRR=0
args=()
for a in "$@"; do
    if [[ $a == --crr ]]; then CRR=1; else args+=("$a"); fi
done
bench_args "${args[@]}"
if ((QUICK)); then DUR=${DUR:-2} ROUNDS=${ROUNDS:-1}; else DUR=${DUR:-4} ROUNDS=${ROUNDS:-5}; fi
SERVER_CPU=0
CLIENT_CPU=1
NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
need=()
[[ -x $NGINX ]] || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v ab >/dev/null 2>&1 || need+=(apache2-utils)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v perf >/dev/null 2>&1 || need+=(linux-perf)
command -v nstat >/dev/null 2>&1 || need+=(iproute2)
[[ -x /usr/bin/time ]] || need+=(time)
install_pkgs "${need[@]}"
NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
require_cmds taskset timeout python3 strace perf nstat wrk ab "$NGINX"
bench_setup "$ROOT/bench/results/raw/where_cpu"
RESULTS=$ROOT/bench/results
OUT=$RESULTS/where_cpu.txt
((!CRR)) || OUT=$RESULTS/where_cpu_crr.txt

NGX=$RAW/nginx
mkdir -p "$NGX/www" "$NGX/logs" "$NGX/tmp"
head -c 100 /dev/zero >"$NGX/www/small.bin"
PORT=$(free_port)
nginx_conf "$NGX" "    server { listen 127.0.0.1:$PORT; root $NGX/www; }"
taskset -c "$SERVER_CPU" "$NGINX" -c "$NGX/nginx.conf" -p "$NGX" -e "$NGX/logs/error.log" \
    </dev/null >"$RAW/nginx.out" 2>&1 &
PIDS+=($!)
wait_bound tcp "$PORT" "$!"
URL=http://127.0.0.1:$PORT/small.bin
TOOLS=(wirebench wrk ab)

client_cmd() { # TOOL SECONDS -> CMD array (keep-alive, or with --crr a connection per request)
    local mode=keepalive
    ((!CRR)) || mode=crr
    case "$mode/$1" in
        keepalive/wirebench) CMD=("$WB" run --threads 1 -d "$2s" --json -q --no-save "$URL" -c 50) ;;
        keepalive/wrk) CMD=(wrk -t1 -c50 -d"$2s" "$URL") ;;
        keepalive/ab) CMD=(ab -k -c 50 -t "$2" -n 100000000 "$URL") ;;
        crr/wirebench) CMD=("$WB" run --threads 1 -d "$2s" --json -q --no-save "$URL" -c 10 --no-keepalive) ;;
        crr/wrk) CMD=(wrk -t1 -c10 -d"$2s" -H "Connection: close" "$URL") ;;
        crr/ab) CMD=(ab -c 10 -t "$2" -n 100000000 "$URL") ;;
    esac
}

REC=$RAW/records.tsv
: >"$REC"
((!CRR)) || echo "== a new connection per request (crr)"
echo "== nginx on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU; $ROUNDS round(s) of $DUR s per tool"
for ((r = 1; r <= ROUNDS; r++)); do
    for tool in "${TOOLS[@]}"; do
        client_cmd "$tool" "$DUR"
        out=$RAW/cpu-$tool-$r.out
        wait_quiet
        bounded $((DUR + 30)) /usr/bin/time -o "$RAW/time-$tool-$r" -f "%U %S %w %c" \
            taskset -c "$CLIENT_CPU" "${CMD[@]}" >"$out" 2>"$RAW/cpu-$tool-$r.err"
        read -r u s vol inv <"$RAW/time-$tool-$r"
        n=$(ok_of "$tool" "$out")
        printf 'cpu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$r" "$n" "$u" "$s" "$vol" "$inv" >>"$REC"
        echo "   cpu    $tool round $r: $n requests, user $u s, system $s s"
    done
done
for tool in "${TOOLS[@]}"; do
    client_cmd "$tool" "$DUR"
    # perf: the client's samples by where they fell
    bounded $((DUR + 30)) perf record -q -e cpu-clock -F 4000 -o "$RAW/perf-$tool.data" -- \
        taskset -c "$CLIENT_CPU" "${CMD[@]}" >"$RAW/perf-$tool.out" 2>&1
    perf report -i "$RAW/perf-$tool.data" --no-children --sort dso --stdio 2>/dev/null |
        awk -v t="$tool" '/^ +[0-9.]+%/ { sub(/%/, "", $1); printf "split\t%s\t%s\t%s\n", t, $2, $1 }' >>"$REC"
    # strace: system calls per request
    bounded $((DUR + 60)) strace -c -f -o "$RAW/strace-$tool.txt" \
        taskset -c "$CLIENT_CPU" "${CMD[@]}" >"$RAW/strace-$tool.out" 2>&1
    n=$(ok_of "$tool" "$RAW/strace-$tool.out")
    awk -v t="$tool" -v n="$n" '$NF ~ /^[a-z_0-9]+$/ && $(NF-1) ~ /^[0-9]+$/ && $NF != "total" && $NF != "syscall" {
        calls = ($(NF-2) ~ /^[0-9]+$/ && NF == 6) ? $(NF-2) : $(NF-1); printf "sys\t%s\t%s\t%s\t%s\n", t, $NF, calls, n }' \
        "$RAW/strace-$tool.txt" >>"$REC"
    # nstat: segments per request (all of loopback: the client's and nginx's)
    nstat -n >/dev/null 2>&1
    bounded $((DUR + 30)) taskset -c "$CLIENT_CPU" "${CMD[@]}" >"$RAW/nstat-$tool.out" 2>&1
    n=$(ok_of "$tool" "$RAW/nstat-$tool.out")
    nstat 2>/dev/null | awk -v t="$tool" -v n="$n" '$1 ~ /^(TcpOutSegs|TcpExtTCPPureAcks|TcpExtDelayedACKs)$/ {
        printf "seg\t%s\t%s\t%s\t%s\n", t, $1, $2, n }' >>"$REC"
done

python3 - "$REC" "$OUT" "$DUR" "$ROUNDS" "$CRR" "$(git -C "$ROOT" rev-parse --short HEAD)" \
    "$("$NGINX" -v 2>&1 | sed 's/.*: //')" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" <<'PY'
import statistics as st, sys, time
rec, out, dur, rounds, crr, rev, ngx, cpu = sys.argv[1:]
cpu_rows, split, sysc, seg = {}, {}, {}, {}
for line in open(rec):
    f = line.rstrip("\n").split("\t")
    if f[0] == "cpu":
        cpu_rows.setdefault(f[1], []).append(tuple(float(x) for x in f[3:]))
    elif f[0] == "split":
        split.setdefault(f[1], {})[f[2]] = float(f[3])
    elif f[0] == "sys":
        sysc.setdefault(f[1], []).append((f[2], int(f[3]), int(f[4])))
    elif f[0] == "seg":
        seg.setdefault(f[1], {})[f[2]] = (int(f[3]), int(f[4]))
tools = ["wirebench", "wrk", "ab"]
L = []
L.append(f"wirebench bench/where_cpu.sh   {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC   wirebench {rev}")
L.append(f"{ngx} (1 worker) on CPU 0, each client on CPU 1 (taskset -c); {cpu}; GET /small.bin (100 B),")
conns = "a new connection per request, 10 at a time" if crr == "1" else "50 keep-alive connections"
L.append(f"{conns}; {rounds} round(s) of {dur} s per tool for the cpu rows, one run each for the rest")
L.append("")
L.append("per request (medians over the rounds)   user µs  system µs  total µs  requests/CPU-s  vol. switches  invol.")
for t in tools:
    rows = cpu_rows.get(t, [])
    if not rows:
        continue
    us = st.median(r[1] / r[0] * 1e6 for r in rows)
    sy = st.median(r[2] / r[0] * 1e6 for r in rows)
    tot = st.median((r[1] + r[2]) / r[0] * 1e6 for r in rows)
    vol = st.median(r[3] / r[0] for r in rows)
    inv = st.median(r[4] / r[0] for r in rows)
    L.append(f"  {t:<38} {us:8.2f} {sy:10.2f} {tot:9.2f} {1e6 / tot:15,.0f} {vol:14.3f} {inv:7.4f}")
L.append("  (user and system split by the kernel's tick sampling: their sum is exact, the split is not)")
L.append("")
L.append("the client's CPU samples (perf record -e cpu-clock, 4 kHz) by where they fell, %")
L.append(f"  {'':<12} {'kernel':>8} {'own code':>9} {'libc':>6} {'vdso':>6} {'other':>6}")
for t in tools:
    s = split.get(t, {})
    k = s.get("[kernel.kallsyms]", 0.0)
    own = sum(v for d, v in s.items() if d in (t, "wirebench", "wrk", "ab"))
    libc = s.get("libc.so.6", 0.0)
    vdso = s.get("[vdso]", 0.0)
    other = max(0.0, 100.0 - k - own - libc - vdso)
    L.append(f"  {t:<12} {k:8.1f} {own:9.1f} {libc:6.1f} {vdso:6.1f} {other:6.1f}")
L.append("  other: the tool's libraries (ab: libapr; wrk: LuaJIT is inside wrk itself) and the loader")
L.append("")
L.append("system calls per request (strace -c -f; those at >= 0.01 per request)")
for t in tools:
    calls = sysc.get(t, [])
    if not calls:
        continue
    n = calls[0][2] or 1
    parts = [(name, c / n) for name, c, _ in calls if c / n >= 0.01]
    parts.sort(key=lambda p: -p[1])
    total = sum(c for _, c, _ in calls) / n
    L.append(f"  {t:<12} {total:5.2f} in all: " + ", ".join(f"{name} {v:.2f}" for name, v in parts))
L.append("")
L.append("TCP segments per request, client and nginx together (nstat over one run)")
for t in tools:
    s = seg.get(t, {})
    if "TcpOutSegs" not in s:
        continue
    segs, n = s["TcpOutSegs"]
    pure = s.get("TcpExtTCPPureAcks", (0, n))[0]
    L.append(f"  {t:<12} {segs / n:5.3f} segments, {pure / n:6.4f} pure ACKs received")
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
echo "== written to ${OUT#"$ROOT"/}"
