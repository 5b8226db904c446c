#!/usr/bin/env bash
# wirebench side by side with the reference tools, on 127.0.0.1 only:
#   (a) one-connection TCP ping-pong, 64 B: wirebench vs sockperf (round-trip p50, p99)
#   (b) one-stream TCP bulk: wirebench stream -> sink vs iperf3 (Gbit/s, sender side)
# Both tools are pinned the same way with taskset, and run alternately A B A B in one go
# (docs/method.md, "Comparing fairly"). See bench/README.md for how to read the output.
#
# Usage: bench/run.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 round per comparison, 3 s runs, no discarded warm-up round (~30 s)
# Environment: ROUNDS=N overrides the number of measured rounds (default 5; --quick 1).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=3          # seconds per measured run
    WARM_ROUND=0   # no discarded first round
else
    ROUNDS=${ROUNDS:-5}
    DUR=5
    WARM_ROUND=1   # one short, discarded round per tool before the measured ones
fi
WARM_DUR=2
SIZE=64          # ping-pong message bytes
BULK_SIZE=128k   # wirebench stream message (write) size; iperf3's default TCP write is 128 KiB
SERVER_CPU=0
CROSS_CPU=1

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
need_pkgs=()
command -v sockperf >/dev/null 2>&1 || need_pkgs+=(sockperf)
command -v iperf3 >/dev/null 2>&1 || need_pkgs+=(iperf3)
install_pkgs "${need_pkgs[@]}"
require_cmds python3 taskset timeout cargo
if [[ $(nproc) -lt 2 ]]; then
    echo "bench/run.sh: needs 2 CPUs (server on CPU $SERVER_CPU, client on CPU $CROSS_CPU); this machine has $(nproc)" >&2
    exit 1
fi

RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw" # every run's own output, overwritten each time (ignored by git)
RECORDS=$RAW/records.tsv   # one line per measured run; the summary is computed from it
: >"$RECORDS"


record() { # section placement round tool p50 p99 gbit gen_cpu client_cpu background_load
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RECORDS"
}

placement_cpu() { # placement -> client CPU
    case "$1" in
        same) echo "$SERVER_CPU" ;;
        cross) echo "$CROSS_CPU" ;;
    esac
}

# ---------------------------------------------------------------------------------------------
# (a) ping-pong
# ---------------------------------------------------------------------------------------------
# Both servers stay up for the whole section, pinned to CPU 0, idle while the other tool runs.
WB_ECHO_LOG=$RAW/wirebench-serve-echo.txt
taskset -c "$SERVER_CPU" "$WB" serve tcp --threads 1 --blocking >"$WB_ECHO_LOG" 2>&1 &
WB_ECHO_PID=$!
PIDS+=("$WB_ECHO_PID")
WB_ECHO_URL=$(wait_url "$WB_ECHO_LOG" "$WB_ECHO_PID")
echo "== wirebench echo server (pid $WB_ECHO_PID, CPU $SERVER_CPU): $WB_ECHO_URL — $(sed -n 2p "$WB_ECHO_LOG")"

SP_PORT=$(free_port)
taskset -c "$SERVER_CPU" sockperf server --tcp -i 127.0.0.1 -p "$SP_PORT" >"$RAW/sockperf-server.txt" 2>&1 &
SP_PID=$!
PIDS+=("$SP_PID")
wait_bound tcp "$SP_PORT" "$SP_PID"
echo "== sockperf server (pid $SP_PID, CPU $SERVER_CPU): 127.0.0.1:$SP_PORT"

pp_wirebench() { # placement round dur -> prints one line, records when round > 0
    local pl=$1 round=$2 dur=$3 cpu tag out rc=0 bg
    cpu=$(placement_cpu "$pl")
    tag=pp-$pl-r$round-wirebench
    out=$RAW/$tag.json
    wait_quiet
    bounded $((dur + 31)) python3 "$CPUWRAP" "$RAW/$tag.cpu" \
        taskset -c "$cpu" "$WB" run "$WB_ECHO_URL" --size "$SIZE" -c 1 --threads 1 \
        -d "${dur}s" --warmup 1s --json -q >"$out" 2>"$RAW/$tag.err" || rc=$?
    bg=$(bg_after)
    if [[ ! -s $out ]]; then
        echo "wirebench run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   (wirebench exit $rc: errors during the run, see $out)" >&2
    local p50 p99 gen cli
    p50=$(json_get "$out" 'j["latency"]["p50_us"]')
    p99=$(json_get "$out" 'j["latency"]["p99_us"]')
    gen=$(json_get "$out" 'round(j["generator"]["cpu_percent_of_threads"], 1)')
    cli=$(client_cpu_pct "$RAW/$tag.cpu")
    printf '   %-6s round %-7s wirebench  p50 %7.2f µs  p99 %7.2f µs  generator CPU %5.1f%% of 1 thread  (client CPU %s%%)%s\n' \
        "$pl" "$round" "$p50" "$p99" "$gen" "$cli" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || record pingpong "$pl" "$round" wirebench "$p50" "$p99" - "$gen" "$cli" "$bg"
}

pp_sockperf() {
    local pl=$1 round=$2 dur=$3 cpu tag out rc=0 bg
    cpu=$(placement_cpu "$pl")
    tag=pp-$pl-r$round-sockperf
    out=$RAW/$tag.txt
    # --full-rtt: report the round trip, as wirebench does; without it sockperf reports RTT/2.
    wait_quiet
    bounded $((dur + 31)) python3 "$CPUWRAP" "$RAW/$tag.cpu" \
        taskset -c "$cpu" sockperf ping-pong --tcp -i 127.0.0.1 -p "$SP_PORT" -m "$SIZE" \
        --mps=max -t "$dur" --full-rtt >"$out" 2>&1 || rc=$?
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
    [[ $round == warm-up ]] || record pingpong "$pl" "$round" sockperf "$p50" "$p99" - - "$cli" "$bg"
}

for pl in same cross; do
    if [[ $pl == same ]]; then
        echo "== (a) ping-pong ${SIZE} B, 1 connection, same CPU: server and client on CPU $SERVER_CPU"
    else
        echo "== (a) ping-pong ${SIZE} B, 1 connection, cross CPU: server on CPU $SERVER_CPU, client on CPU $CROSS_CPU"
    fi
    alternate "$ROUNDS" "pp_wirebench $pl" "pp_sockperf $pl"
done
stop_pid "$WB_ECHO_PID"
stop_pid "$SP_PID"
echo "   wirebench server: $(tail -n1 "$WB_ECHO_LOG")"

# ---------------------------------------------------------------------------------------------
# (b) bulk
# ---------------------------------------------------------------------------------------------
# Measured on the sender side for both: payload bytes the client wrote, per second of its
# measured time (wirebench throughput.sent_bytes; iperf3 end.sum_sent). The receiver-side
# figure of iperf3 (sum_received) is kept in the raw output; on loopback they differ by <0.1%.
echo "== (b) bulk TCP, 1 stream, server on CPU $SERVER_CPU, client on CPU $CROSS_CPU (sender-side Gbit/s)"
WB_SINK_LOG=$RAW/wirebench-serve-sink.txt
taskset -c "$SERVER_CPU" "$WB" serve tcp --mode sink --threads 1 --blocking >"$WB_SINK_LOG" 2>&1 &
WB_SINK_PID=$!
PIDS+=("$WB_SINK_PID")
WB_SINK_URL=$(wait_url "$WB_SINK_LOG" "$WB_SINK_PID")
echo "   wirebench sink server (pid $WB_SINK_PID): $WB_SINK_URL — $(sed -n 2p "$WB_SINK_LOG")"

bulk_wirebench() {
    local round=$1 dur=$2 tag out rc=0 t0 t1 bg
    tag=bulk-r$round-wirebench
    out=$RAW/$tag.json
    wait_quiet
    t0=$(server_ticks "$WB_SINK_PID")
    bounded $((dur + 30)) python3 "$CPUWRAP" "$RAW/$tag.cpu" \
        taskset -c "$CROSS_CPU" "$WB" run "$WB_SINK_URL" --mode stream --size "$BULK_SIZE" -c 1 \
        --threads 1 -d "${dur}s" --json -q >"$out" 2>"$RAW/$tag.err" || rc=$?
    bg=$(bg_after)
    t1=$(server_ticks "$WB_SINK_PID")
    if [[ ! -s $out ]]; then
        echo "wirebench stream run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   (wirebench exit $rc: errors during the run, see $out)" >&2
    local gbit gen cli srv
    gbit=$(json_get "$out" 'j["throughput"]["sent_bytes"] * 8 / j["duration_s"] / 1e9')
    gen=$(json_get "$out" 'round(j["generator"]["cpu_percent_of_threads"], 1)')
    cli=$(client_cpu_pct "$RAW/$tag.cpu")
    srv=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v d="$dur" 'BEGIN { printf "%.0f", (b - a) / hz / d * 100 }')
    printf '   round %-7s wirebench  %6.2f Gbit/s  generator CPU %5.1f%% of 1 thread  (client CPU %s%%, server CPU ~%s%%)%s\n' \
        "$round" "$gbit" "$gen" "$cli" "$srv" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || record bulk cross "$round" wirebench - - "$gbit" "$gen" "$cli" "$bg"
}

bulk_iperf3() {
    local round=$1 dur=$2 tag out port pid rc=0 bg
    tag=bulk-r$round-iperf3
    out=$RAW/$tag.json
    port=$(free_port)
    # -1: serve one test and exit.
    taskset -c "$SERVER_CPU" iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$RAW/$tag.server.txt" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_bound tcp "$port" "$pid"
    wait_quiet
    bounded $((dur + 30)) python3 "$CPUWRAP" "$RAW/$tag.cpu" \
        taskset -c "$CROSS_CPU" iperf3 -c 127.0.0.1 -p "$port" -t "$dur" -J >"$out" 2>&1 || rc=$?
    bg=$(bg_after)
    # The server exits by itself after one test; give it 5 s, then stop it.
    local i
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    stop_pid "$pid"
    local gbit cli srv
    if ((rc != 0)) || ! gbit=$(json_get "$out" 'j["end"]["sum_sent"]["bits_per_second"] / 1e9' 2>/dev/null); then
        echo "iperf3 client failed (exit $rc):" >&2
        cat "$out" >&2
        exit 1
    fi
    cli=$(client_cpu_pct "$RAW/$tag.cpu")
    srv=$(json_get "$out" 'round(j["end"]["cpu_utilization_percent"]["remote_total"])')
    printf '   round %-7s iperf3     %6.2f Gbit/s  %34s(client CPU %s%%, server CPU %s%%)%s\n' "$round" "$gbit" "" "$cli" "$srv" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || record bulk cross "$round" iperf3 - - "$gbit" - "$cli" "$bg"
}

alternate "$ROUNDS" bulk_wirebench bulk_iperf3
stop_pid "$WB_SINK_PID"
echo "   wirebench sink server: $(tail -n1 "$WB_SINK_LOG")"

# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------
HEADER=$(
    echo "wirebench bench/run.sh$( ((QUICK)) && echo ' --quick')   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)');" \
        "$(sockperf --version 2>&1 | grep -o 'version [^ ]*' | head -n1 | sed 's/version/sockperf/');" \
        "$(iperf3 --version | head -n1 | awk '{print "iperf3", $2}');" \
        "kernel $(uname -r); $(nproc) CPUs; $ROUNDS measured round(s) of ${DUR} s per tool and placement, A B A B"
)
python3 - "$RECORDS" "$RESULTS/latest.txt" "$HEADER" "$QUIET_PCT" "$WAITED" <<'EOF'
import statistics, sys

records, dest, header, quiet, waited = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rows = [l.rstrip("\n").split("\t") for l in open(records) if l.strip()]

def col(section, placement, tool, i):
    return [float(r[i]) for r in rows if r[0] == section and r[1] == placement and r[3] == tool]

def med(xs):
    return statistics.median(xs)

def fmt_list(xs, digits):
    return " ".join(f"{x:.{digits}f}" for x in xs)

out = []
label = {
    "same": "ping-pong 64 B, same CPU (taskset -c 0 both):",
    "cross": "ping-pong 64 B, cross CPU (server 0, client 1):",
    "bulk": "bulk TCP 1 stream (server 0, client 1):",
}
W = max(len(v) for v in label.values()) + 2
summary, detail = [], []
for pl in ("same", "cross"):
    w50, w99 = col("pingpong", pl, "wirebench", 4), col("pingpong", pl, "wirebench", 5)
    s50, s99 = col("pingpong", pl, "sockperf", 4), col("pingpong", pl, "sockperf", 5)
    wcpu = col("pingpong", pl, "wirebench", 7)
    r50, r99 = med(w50) / med(s50), med(w99) / med(s99)
    verdict = "met" if r50 <= 1.10 else "MISSED"
    summary.append(
        f"{label[pl]:<{W}}p50 wirebench {med(w50):.1f} µs  sockperf {med(s50):.1f} µs  ratio {r50:.2f} "
        f"(goal ≤ 1.10: {verdict})   p99 wirebench {med(w99):.1f} µs  sockperf {med(s99):.1f} µs  ratio {r99:.2f}"
    )
    detail.append(f"  ping-pong {pl:5} per round  wirebench p50 [{fmt_list(w50, 2)}]  p99 [{fmt_list(w99, 2)}]  generator CPU % [{fmt_list(wcpu, 1)}]")
    detail.append(f"  ping-pong {pl:5} per round  sockperf  p50 [{fmt_list(s50, 2)}]  p99 [{fmt_list(s99, 2)}]")

wg, ig = col("bulk", "cross", "wirebench", 6), col("bulk", "cross", "iperf3", 6)
wcpu = col("bulk", "cross", "wirebench", 7)
wcli, icli = col("bulk", "cross", "wirebench", 8), col("bulk", "cross", "iperf3", 8)
rb = med(wg) / med(ig)
verdict = "met" if rb >= 0.95 else "MISSED"
summary.append(
    f"{label['bulk']:<{W}}wirebench {med(wg):.1f} Gbit/s  iperf3 {med(ig):.1f} Gbit/s  "
    f"ratio {rb:.2f} (goal ≥ 0.95: {verdict})   sender side, payload"
)
detail.append(f"  bulk per round  wirebench Gbit/s [{fmt_list(wg, 2)}]  generator CPU % [{fmt_list(wcpu, 1)}]  client CPU % [{fmt_list(wcli, 1)}]")
detail.append(f"  bulk per round  iperf3    Gbit/s [{fmt_list(ig, 2)}]  client CPU % [{fmt_list(icli, 1)}]")
paired = [w / i for w, i in zip(wg, ig)]
detail.append(
    f"  bulk other views: best round wirebench {max(wg):.1f} Gbit/s, iperf3 {max(ig):.1f} Gbit/s, ratio {max(wg) / max(ig):.2f}; "
    f"median of the per-round ratios (each wirebench run / the iperf3 run after it) {med(paired):.2f} [{fmt_list(paired, 2)}]"
)

detail.append(f"  waited {waited} s in all for a quiet machine before runs")
busy = [f"{r[0]} {r[1]} round {r[2]} {r[3]} ({r[9]}%)" for r in rows if int(r[9]) > quiet]
if busy:
    detail.append(f"  background load above {quiet}% of a CPU (others using the machine) during: " + "; ".join(busy))
else:
    detail.append(f"  the machine was quiet (background load ≤ {quiet}% of a CPU) around every measured run")

text = "\n".join(
    [header, "", *summary, "",
     "Figures are medians over the rounds; latency is the round trip (sockperf --full-rtt);",
     "ratio = wirebench / reference (latency: lower is better; Gbit/s: higher is better).",
     "Per round (in run order):", *detail]
) + "\n"
print("\n== summary")
print(text, end="")
with open(dest, "w") as f:
    f.write(text)
EOF
echo "(written to bench/results/latest.txt; raw outputs in bench/results/raw/)"
