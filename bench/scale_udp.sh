#!/usr/bin/env bash
# wirebench at scale and over UDP, on 127.0.0.1 only:
#   (1) one-flow UDP ping-pong, 64 B: wirebench vs sockperf (round-trip p50, p99), same CPU and
#       cross CPU, both tools pinned alike and run alternately A B A B; each tool against its
#       own server, both serving with blocking calls (wirebench serve udp --blocking --threads 1,
#       as sockperf's server does; a single-session wirebench client blocks by itself)
#   (2) open-loop peak: the highest --rate wirebench keeps within 1% of offered against its own
#       TCP echo server (server on CPU 0, client on CPU 1, 16 connections, 1 thread)
#   (3) peak RSS of the client (and the server's VmHWM) with 10,000 TCP connections, idle and busy
# See bench/README.md ("scale_udp.sh") for how to read the output.
#
# Usage: bench/scale_udp.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 ping-pong round, no discarded warm-up round, shorter runs (~1.5 min): a smoke check
# Environment: ROUNDS=N overrides the number of measured ping-pong rounds (default 3; --quick 1).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=3          # seconds per measured ping-pong run
    WARM_ROUND=0   # no discarded first round
    STEP_DUR=2     # seconds per open-loop rate step
    RSS_DUR=3      # seconds per 10,000-connection run
else
    ROUNDS=${ROUNDS:-3}
    DUR=5
    WARM_ROUND=1   # one short, discarded round per tool and placement before the measured ones
    STEP_DUR=3
    RSS_DUR=5
fi
WARM_DUR=2
SIZE=64            # ping-pong datagram bytes (UDP payload, both tools' headers included)
SERVER_CPU=0
CROSS_CPU=1
# (2) offered rates, requests/s in all, tried in order until one is not kept up with
RATES=(20000 40000 60000 80000 100000 130000 160000 200000 250000 300000 400000 500000 650000 800000 1000000)
RATE_CONNS=16
KEEP_UP=0.99       # achieved >= 99% of offered
# (3)
CONNS=10000
RSS_THREADS=2
THINK=30s          # idle: one request per connection, then a think longer than the run
NOFILE_NEED=10100  # wirebench run asks for 10,000 + 64 descriptors in a closed loop; and some margin
RSS_GOAL_KIB=97656 # "under 100 MB": 100 × 10^6 bytes = 97,656 KiB

# ---------------------------------------------------------------------------------------------
# Tools and limits
# ---------------------------------------------------------------------------------------------
command -v sockperf >/dev/null 2>&1 || install_pkgs sockperf
require_cmds python3 taskset timeout cargo
if [[ $(nproc) -lt 2 ]]; then
    echo "bench/scale_udp.sh: needs 2 CPUs (server on CPU $SERVER_CPU, client on CPU $CROSS_CPU); this machine has $(nproc)" >&2
    exit 1
fi

# Open files: (3) needs ulimit -n >= NOFILE_NEED. `wirebench run` asks for connections + 64
# descriptors in a closed loop (two more per worker thread in the open loop, for its timers) and raises its own
# soft limit up to the hard one; the server holds one per connection. Both inherit this shell's
# limit. Raising the hard limit needs CAP_SYS_RESOURCE; this only ever raises limits, and only in
# this shell. If the hard limit stays too low, (3) runs at the largest connection count the
# client's check allows, limit - 64, and the summary says so; below 1,000 it is skipped.
NOFILE_BEFORE="$(ulimit -Sn)/$(ulimit -Hn)"
if [[ $(ulimit -Sn) != unlimited ]] && (($(ulimit -Sn) < NOFILE_NEED)); then
    if [[ $(ulimit -Hn) != unlimited ]] && (($(ulimit -Hn) < 65536)); then
        ulimit -Hn 65536 2>/dev/null || true
    fi
    if [[ $(ulimit -Hn) == unlimited ]] || (($(ulimit -Hn) >= 65536)); then
        ulimit -Sn 65536 2>/dev/null || true
    else
        ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true
    fi
fi
NOFILE=$(ulimit -Sn)
NOFILE_NOTE=""
RSS_CONNS=$CONNS
if [[ $NOFILE != unlimited ]] && ((NOFILE < NOFILE_NEED)); then
    RSS_CONNS=$((NOFILE - 64))
    ((RSS_CONNS <= CONNS)) || RSS_CONNS=$CONNS
    NOFILE_NOTE="ulimit -n is $NOFILE (soft/hard before: $NOFILE_BEFORE) and could not be raised to $NOFILE_NEED (raising the hard limit needs CAP_SYS_RESOURCE); wirebench run needs connections + 64 descriptors, so (3) ran with $RSS_CONNS connections instead of $CONNS"
    echo "bench/scale_udp.sh: note: $NOFILE_NOTE" >&2
fi
if ((RSS_CONNS >= 1000)); then
    NOFILE_OK=1
else
    NOFILE_OK=0
    echo "bench/scale_udp.sh: ulimit -n is $NOFILE and could not be raised; (3) will be skipped." >&2
    echo "  Raise it first (as root: ulimit -Hn 65536; ulimit -n 65536), or see /etc/security/limits.conf." >&2
fi

RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/scale_udp" # every run's own output, overwritten each time (ignored by git)
RECORDS=$RAW/records.jsonl # one JSON object per measured run; the summary is computed from it
COMMANDS=$RAW/commands.txt # every tool command exactly as run (without the timeout/CPU wrappers)
: >"$RECORDS"
: >"$COMMANDS"


record() { # key=value ... -> one JSON line in $RECORDS (numbers stay numbers)
    python3 - "$RECORDS" "$@" <<'EOF'
import json, sys
rec = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    try:
        rec[k] = int(v)
    except ValueError:
        try:
            rec[k] = float(v)
        except ValueError:
            rec[k] = v
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(rec) + "\n")
EOF
}

placement_cpu() { # placement -> client CPU
    case "$1" in
        same) echo "$SERVER_CPU" ;;
        cross) echo "$CROSS_CPU" ;;
    esac
}

# ---------------------------------------------------------------------------------------------
# (1) UDP ping-pong
# ---------------------------------------------------------------------------------------------
# Both servers stay up for the whole section, pinned to CPU 0, idle while the other tool runs.
# The wirebench server blocks in recv_from/send_to (--blocking), one syscall each per request,
# instead of waiting in epoll first: the like of sockperf's server, so the comparison is of the
# clients' round trips (the client with one session blocks likewise, without a flag).
WB_UDP_LOG=$RAW/wirebench-serve-udp.txt
logcmd taskset -c "$SERVER_CPU" "$WB" serve udp --blocking --threads 1
taskset -c "$SERVER_CPU" "$WB" serve udp --blocking --threads 1 >"$WB_UDP_LOG" 2>&1 &
WB_UDP_PID=$!
PIDS+=("$WB_UDP_PID")
WB_UDP_URL=$(wait_url "$WB_UDP_LOG" "$WB_UDP_PID")
echo "== wirebench UDP echo server, blocking calls (serve udp --blocking --threads 1; pid $WB_UDP_PID, CPU $SERVER_CPU): $WB_UDP_URL — $(sed -n 2p "$WB_UDP_LOG")"

SP_PORT=$(free_port udp)
logcmd taskset -c "$SERVER_CPU" sockperf server -i 127.0.0.1 -p "$SP_PORT"
taskset -c "$SERVER_CPU" sockperf server -i 127.0.0.1 -p "$SP_PORT" >"$RAW/sockperf-server.txt" 2>&1 &
SP_PID=$!
PIDS+=("$SP_PID")
wait_bound udp "$SP_PORT" "$SP_PID"
echo "== sockperf UDP server (pid $SP_PID, CPU $SERVER_CPU): 127.0.0.1:$SP_PORT"

pp_wirebench() { # placement round dur -> prints one line, records when not the warm-up
    local pl=$1 round=$2 dur=$3 cpu tag out rc=0 bg cmd
    cpu=$(placement_cpu "$pl")
    tag=pp-$pl-r$round-wirebench
    out=$RAW/$tag.json
    cmd=(taskset -c "$cpu" "$WB" run "$WB_UDP_URL" --size "$SIZE" -c 1 --threads 1
        -d "${dur}s" --warmup 1s --json -q)
    logcmd "${cmd[@]}"
    wait_quiet
    bounded $((dur + 31)) python3 "$CPUWRAP" "$RAW/$tag.cpu" "${cmd[@]}" >"$out" 2>"$RAW/$tag.err" || rc=$?
    bg=$(bg_after)
    if [[ ! -s $out ]]; then
        echo "wirebench run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   (wirebench exit $rc: errors during the run, see $out)" >&2
    local p50 p99 gen cli errs
    p50=$(json_get "$out" 'j["latency"]["p50_us"]')
    p99=$(json_get "$out" 'j["latency"]["p99_us"]')
    gen=$(json_get "$out" 'round(j["generator"]["cpu_percent_of_threads"], 1)')
    errs=$(json_get "$out" 'j["errors"]["total"]')
    cli=$(client_cpu_pct "$RAW/$tag.cpu")
    printf '   %-6s round %-7s wirebench  p50 %7.2f µs  p99 %7.2f µs  generator CPU %5.1f%% of 1 thread  (client CPU %s%%)%s\n' \
        "$pl" "$round" "$p50" "$p99" "$gen" "$cli" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || record sec=pp pl="$pl" round="$round" tool=wirebench p50="$p50" p99="$p99" \
        gen="$gen" cli="$cli" errors="$errs" bg="$bg"
}

pp_sockperf() {
    local pl=$1 round=$2 dur=$3 cpu tag out rc=0 bg cmd
    cpu=$(placement_cpu "$pl")
    tag=pp-$pl-r$round-sockperf
    out=$RAW/$tag.txt
    # UDP is sockperf's default (no --tcp). --full-rtt: report the round trip, as wirebench
    # does; without it sockperf reports RTT/2.
    cmd=(taskset -c "$cpu" sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" -m "$SIZE"
        --mps=max -t "$dur" --full-rtt)
    logcmd "${cmd[@]}"
    wait_quiet
    bounded $((dur + 31)) python3 "$CPUWRAP" "$RAW/$tag.cpu" "${cmd[@]}" >"$out" 2>&1 || rc=$?
    bg=$(bg_after)
    local p50 p99 cli
    p50=$(sed -n 's/.*percentile 50\.000 = *\([0-9.]*\).*/\1/p' "$out")
    p99=$(sed -n 's/.*percentile 99\.000 = *\([0-9.]*\).*/\1/p' "$out")
    if ((rc != 0)) || [[ -z $p50 || -z $p99 ]] || ! grep -q 'Round trip' "$out"; then
        echo "sockperf ping-pong failed (exit $rc) or printed no round-trip percentiles:" >&2
        cat "$out" >&2
        exit 1
    fi
    cli=$(client_cpu_pct "$RAW/$tag.cpu")
    printf '   %-6s round %-7s sockperf   p50 %7.2f µs  p99 %7.2f µs  %35s(client CPU %s%%)%s\n' \
        "$pl" "$round" "$p50" "$p99" "" "$cli" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || record sec=pp pl="$pl" round="$round" tool=sockperf p50="$p50" p99="$p99" \
        cli="$cli" bg="$bg"
}

for pl in same cross; do
    if [[ $pl == same ]]; then
        echo "== (1) UDP ping-pong ${SIZE} B, 1 flow, same CPU: server and client on CPU $SERVER_CPU"
    else
        echo "== (1) UDP ping-pong ${SIZE} B, 1 flow, cross CPU: server on CPU $SERVER_CPU, client on CPU $CROSS_CPU"
    fi
    alternate "$ROUNDS" "pp_wirebench $pl" "pp_sockperf $pl"
done
stop_pid "$WB_UDP_PID"
stop_pid "$SP_PID"
echo "   wirebench UDP server: $(tail -n1 "$WB_UDP_LOG")"

# ---------------------------------------------------------------------------------------------
# (2) open-loop peak against the TCP echo server (event loop, 1 thread)
# ---------------------------------------------------------------------------------------------
echo "== (2) open-loop peak: TCP echo server (event loop, 1 thread) on CPU $SERVER_CPU, client on CPU $CROSS_CPU, -c $RATE_CONNS --threads 1, ${STEP_DUR} s per rate"
WB_TCP_LOG=$RAW/wirebench-serve-tcp-1thread.txt
logcmd taskset -c "$SERVER_CPU" "$WB" serve tcp --threads 1
taskset -c "$SERVER_CPU" "$WB" serve tcp --threads 1 >"$WB_TCP_LOG" 2>&1 &
WB_TCP_PID=$!
PIDS+=("$WB_TCP_PID")
WB_TCP_URL=$(wait_url "$WB_TCP_LOG" "$WB_TCP_PID")
echo "   wirebench TCP echo server (pid $WB_TCP_PID): $WB_TCP_URL — $(sed -n 2p "$WB_TCP_LOG")"

for rate in "${RATES[@]}"; do
    tag=rate-$rate
    out=$RAW/$tag.json
    rc=0
    cmd=(taskset -c "$CROSS_CPU" "$WB" run "$WB_TCP_URL" -c "$RATE_CONNS" --threads 1 --rate "$rate"
        -d "${STEP_DUR}s" --json -q)
    logcmd "${cmd[@]}"
    wait_quiet
    t0=$(server_ticks "$WB_TCP_PID")
    bounded $((STEP_DUR + 30)) python3 "$CPUWRAP" "$RAW/$tag.cpu" "${cmd[@]}" >"$out" 2>"$RAW/$tag.err" || rc=$?
    t1=$(server_ticks "$WB_TCP_PID")
    bg=$(bg_after)
    if [[ ! -s $out ]]; then
        echo "wirebench run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    read -r offered achieved p99 gen errs behind kept < <(json_get "$out" \
        '" ".join(str(x) for x in (round(j["open_loop"]["offered_per_s"]), round(j["open_loop"]["achieved_per_s"]), j["latency"]["p99_us"], round(j["generator"]["cpu_percent_of_threads"], 1), j["errors"]["total"], j["open_loop"]["behind_schedule"], j["open_loop"]["kept_up"]))')
    srv=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v d="$STEP_DUR" 'BEGIN { printf "%.0f", (b - a) / hz / d * 100 }')
    ok=$(awk -v a="$achieved" -v o="$offered" -v k="$KEEP_UP" 'BEGIN { print (a >= k * o) ? 1 : 0 }')
    printf '   --rate %-8s offered %8s/s  achieved %8s/s  %-9s p99 %9.1f µs  generator CPU %5.1f%%  server CPU ~%s%%  errors %s  behind schedule %s%s\n' \
        "$rate" "$offered" "$achieved" "$( ((ok)) && echo kept-up || echo BEHIND)" "$p99" "$gen" "$srv" "$errs" "$behind" "$(bg_note "$bg")"
    record sec=rate rate="$rate" offered="$offered" achieved="$achieved" p99="$p99" gen="$gen" srv="$srv" \
        errors="$errs" behind="$behind" ok="$ok" bg="$bg"
    ((ok)) || break
done
stop_pid "$WB_TCP_PID"
echo "   wirebench TCP server: $(tail -n1 "$WB_TCP_LOG")"

# ---------------------------------------------------------------------------------------------
# (3) peak RSS at 10,000 connections
# ---------------------------------------------------------------------------------------------
rss_case() { # idle|busy
    local kind=$1 tag out rc=0 log pid url cmd extra=()
    tag=rss-$kind
    out=$RAW/$tag.json
    [[ $kind == idle ]] && extra=(--think "$THINK")
    # A fresh server for each case, so its VmHWM is this case's. Default threads, unpinned.
    log=$RAW/wirebench-serve-tcp-$kind.txt
    logcmd "$WB" serve tcp
    "$WB" serve tcp >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    url=$(wait_url "$log" "$pid")
    cmd=("$WB" run "$url" -c "$RSS_CONNS" --threads "$RSS_THREADS" "${extra[@]}" -d "${RSS_DUR}s" --json -q)
    logcmd "${cmd[@]}"
    wait_quiet
    bounded $((RSS_DUR + 60)) python3 "$CPUWRAP" "$RAW/$tag.cpu" "${cmd[@]}" >"$out" 2>"$RAW/$tag.err" || rc=$?
    local bg srv_hwm
    bg=$(bg_after)
    srv_hwm=$(vm_hwm_kib "$pid")
    stop_pid "$pid"
    if [[ ! -s $out ]]; then
        echo "wirebench run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   (wirebench exit $rc: errors during the run, see $out)" >&2
    local rss conns okn errs ops gen wall maxrss
    read -r rss conns okn errs ops gen < <(json_get "$out" \
        '" ".join(str(x) for x in (j["generator"]["peak_rss_kib"], (j["connect"] or {}).get("count", 0), j["ok"], j["errors"]["total"], round(j["throughput"]["ops_per_s"]), round(j["generator"]["cpu_percent_of_threads"], 1)))')
    read -r _ _ wall maxrss _ <"$RAW/$tag.cpu"
    printf '   %-4s client peak RSS %7s KiB (%.1f MB)  server VmHWM %7s KiB (%.1f MB)  connections %s  ok %s (%s/s)  errors %s  generator CPU %s%%  client wall %.1f s%s\n' \
        "$kind" "$rss" "$(awk -v k="$rss" 'BEGIN { print k * 1024 / 1e6 }')" "$srv_hwm" \
        "$(awk -v k="$srv_hwm" 'BEGIN { print k * 1024 / 1e6 }')" "$conns" "$okn" "$ops" "$errs" "$gen" "$wall" "$(bg_note "$bg")"
    record sec=rss kind="$kind" rss="$rss" ru_maxrss="$maxrss" srv_hwm="$srv_hwm" conns="$conns" ok="$okn" \
        ops="$ops" errors="$errs" gen="$gen" wall="$wall" rc="$rc" bg="$bg"
}

if ((NOFILE_OK)); then
    echo "== (3) peak RSS at $RSS_CONNS TCP connections, client --threads $RSS_THREADS, server default threads, both unpinned (ulimit -n $NOFILE, was $NOFILE_BEFORE)"
    rss_case idle
    rss_case busy
else
    echo "== (3) skipped: ulimit -n is $NOFILE, too low for 1,000 connections"
fi

# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------
HEADER=$(
    echo "wirebench bench/scale_udp.sh$( ((QUICK)) && echo ' --quick')   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)');" \
        "$(sockperf --version 2>&1 | grep -o 'version [^ ]*' | head -n1 | sed 's/version/sockperf/');" \
        "kernel $(uname -r); $(nproc) CPUs; ulimit -n $NOFILE;" \
        "ping-pong: $ROUNDS measured round(s) of ${DUR} s per tool and placement, A B A B$( ((WARM_ROUND)) && echo ', after one discarded warm-up round')"
)
python3 - "$RECORDS" "$RESULTS/scale_udp.txt" "$HEADER" "$QUIET_PCT" "$WAITED" "$COMMANDS" \
    "$KEEP_UP" "$STEP_DUR" "$RATE_CONNS" "$RSS_CONNS" "$RSS_GOAL_KIB" "$NOFILE_OK" "$NOFILE_NOTE" <<'EOF'
import json, re, statistics, sys

(records, dest, header, quiet, waited, commands, keep_up, step_dur, rate_conns, conns,
 rss_goal, nofile_ok, nofile_note) = sys.argv[1:]
quiet, keep_up, rss_goal = int(quiet), float(keep_up), int(rss_goal)
rows = [json.loads(l) for l in open(records) if l.strip()]

def med(xs):
    return statistics.median(xs)

def fmt_list(xs, digits):
    return " ".join(f"{x:.{digits}f}" for x in xs)

def mb(kib):
    return kib * 1024 / 1e6

summary, detail = [], []

# (1)
label = {
    "same": "UDP ping-pong 64 B, same CPU (taskset -c 0 both):",
    "cross": "UDP ping-pong 64 B, cross CPU (server 0, client 1):",
}
W = max(len(v) for v in label.values()) + 2
for pl in ("same", "cross"):
    pick = lambda tool, k: [r[k] for r in rows if r["sec"] == "pp" and r["pl"] == pl and r["tool"] == tool]
    w50, w99, s50, s99 = pick("wirebench", "p50"), pick("wirebench", "p99"), pick("sockperf", "p50"), pick("sockperf", "p99")
    if not w50 or not s50:
        continue
    r50, r99 = med(w50) / med(s50), med(w99) / med(s99)
    verdict = "met" if r50 <= 1.10 else "MISSED"
    summary.append(
        f"{label[pl]:<{W}}p50 wirebench {med(w50):.1f} µs  sockperf {med(s50):.1f} µs  ratio {r50:.2f} "
        f"(goal ≤ 1.10: {verdict})   p99 wirebench {med(w99):.1f} µs  sockperf {med(s99):.1f} µs  ratio {r99:.2f}"
    )
    werr = sum(pick("wirebench", "errors"))
    detail.append(f"  UDP ping-pong {pl:5} per round  wirebench p50 [{fmt_list(w50, 2)}]  p99 [{fmt_list(w99, 2)}]  "
                  f"generator CPU % [{fmt_list(pick('wirebench', 'gen'), 1)}]  client CPU % [{fmt_list(pick('wirebench', 'cli'), 1)}]  errors {werr}")
    detail.append(f"  UDP ping-pong {pl:5} per round  sockperf  p50 [{fmt_list(s50, 2)}]  p99 [{fmt_list(s99, 2)}]  "
                  f"client CPU % [{fmt_list(pick('sockperf', 'cli'), 1)}]")

# (2)
steps = [r for r in rows if r["sec"] == "rate"]
if steps:
    kept = [r for r in steps if r["ok"]]
    failed = [r for r in steps if not r["ok"]]
    lab = f"open-loop peak, TCP echo (1-thread server on CPU 0; client -c {rate_conns} --threads 1 on CPU 1):"
    if kept:
        best = kept[-1]
        tail = (f"first miss --rate {failed[0]['rate']}: achieved {failed[0]['achieved']}/s of {failed[0]['offered']}/s "
                f"({failed[0]['achieved'] / max(failed[0]['offered'], 1) * 100:.1f}%), generator CPU {failed[0]['gen']}%, server CPU ~{failed[0]['srv']}%"
                if failed else "no miss up to the highest rate tried")
        summary.append(
            f"{lab}\n    highest rate kept within 1% of offered: --rate {best['rate']} (achieved {best['achieved']}/s), "
            f"p99 {best['p99']:.1f} µs, generator CPU {best['gen']}% of 1 thread, server CPU ~{best['srv']}%; {tail}"
        )
    else:
        summary.append(f"{lab}\n    not even the lowest rate ({steps[0]['rate']}/s) was kept up with")
    summary.append(
        "    wrk2, by reference only (not fetched, not run): its README's examples run -t2 -c100 -R2000 against a local\n"
        "    httpd, i.e. 2,000 req/s in all (~1,000 per thread), and give no per-thread peak; it also notes that its\n"
        "    constant-throughput latencies are only accurate to about ±1 ms (OS sleep granularity). So there is no\n"
        "    published wrk2 per-thread figure to hold this peak against; the comparison is by reference, not measured."
    )
    for r in steps:
        detail.append(
            f"  --rate {r['rate']:>8}: offered {r['offered']}/s achieved {r['achieved']}/s ({r['achieved'] / max(r['offered'], 1) * 100:.2f}%) "
            f"{'kept up' if r['ok'] else 'BEHIND'}; p99 {r['p99']:.1f} µs; generator CPU {r['gen']}%; server CPU ~{r['srv']}%; "
            f"errors {r['errors']}; behind schedule (>1 ms late) {r['behind']}"
        )

# (3)
rss = {r["kind"]: r for r in rows if r["sec"] == "rss"}
if rss:
    parts = []
    for kind in ("idle", "busy"):
        if kind in rss:
            r = rss[kind]
            verdict = "met" if r["rss"] < rss_goal else "MISSED"
            parts.append(
                f"    {kind}: client peak RSS {mb(r['rss']):.1f} MB ({r['rss']} KiB; goal < 100 MB: {verdict}), "
                f"server VmHWM {mb(r['srv_hwm']):.1f} MB ({r['srv_hwm']} KiB); {r['conns']} connections made, "
                f"{r['ok']} ok replies ({r['ops']}/s), errors {r['errors']}, generator CPU {r['gen']}%"
            )
            detail.append(f"  RSS {kind}: client getrusage ru_maxrss {r['ru_maxrss']} KiB (cross-check of peak_rss_kib), "
                          f"client wall time {r['wall']:.1f} s, wirebench exit {r['rc']}")
    summary.append(f"peak RSS at {conns} TCP connections (client --threads 2; server default threads; unpinned):")
    summary.extend(parts)
    if nofile_note:
        summary.append(f"    note: {nofile_note}")
elif nofile_ok == "0":
    summary.append(f"peak RSS at {conns} TCP connections: SKIPPED, ulimit -n too low and could not be raised")

detail.append(f"  waited {waited} s in all for a quiet machine before runs")
busy = [f"{r['sec']} {r.get('pl') or r.get('rate') or r.get('kind')} {r.get('round', '')} {r.get('tool', '')} ({r['bg']}%)".replace("  ", " ")
        for r in rows if int(r["bg"]) > quiet]
if busy:
    detail.append(f"  background load above {quiet}% of a CPU (others using the machine) during: " + "; ".join(busy))
else:
    detail.append(f"  the machine was quiet (background load ≤ {quiet}% of a CPU) around every measured run")

# The commands, exactly as run (wrappers left out), ports and rates generalised, each form once.
seen, cmds = set(), []
for line in open(commands):
    line = line.strip()
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line)
    line = re.sub(r"-p \d+", "-p PORT", line)
    line = re.sub(r"--rate \d+", "--rate RATE", line)
    if line not in seen:
        seen.add(line)
        cmds.append("  " + line)

text = "\n".join(
    [header, "", *summary, "",
     "Ping-pong figures are medians over the rounds; latency is the round trip (sockperf --full-rtt);",
     "ratio = wirebench / sockperf (lower is better). Each tool ran against its own server: wirebench's",
     "with blocking calls (serve udp --blocking --threads 1), sockperf's own. MB = 10^6 bytes.",
     "Per run (in run order):", *detail, "",
     "Commands (exactly as run, without the timeout/CPU-time wrappers; wirebench = a copy of",
     "target/release/wirebench; PORT is a free port picked per server, RATE each rate in turn):", *cmds]
) + "\n"
print("\n== summary")
print(text, end="")
with open(dest, "w") as f:
    f.write(text)
EOF
echo "(written to bench/results/scale_udp.txt; raw outputs in bench/results/raw/scale_udp/)"
