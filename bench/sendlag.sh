#!/usr/bin/env bash
# Open-loop send lag: how far behind their intended send times wirebench's requests go out
# (open_loop.send_lag = actual send − intended send; p50, p99, max), on 127.0.0.1 only, at
# 5,000, 20,000 and 100,000 requests/s. The generator runs pinned on its own CPU
# (taskset -c 1, one worker thread), the server on the other (taskset -c 0: wirebench serve tcp
# --threads 1, the event loop). Two client settings per rate:
#   window 64: -c 8 --pipeline 64, so a due request never waits for a reply: the generator's own lag
#   window 1:  -c 8 (TCP's default window): a request due while all 8 connections await replies
#              waits, so the server's hiccups show in the lag too
# and, as the floor of this machine, cyclictest (rt-tests) waking a thread on the same CPU at
# the same interval (1/rate) with no other work. Goal: p99 < 100 µs at 20,000/s (window 64).
# Runs alternate wirebench (64, 1) and cyclictest in each round (docs/method.md, "Comparing
# comparison"). See bench/README.md ("sendlag.sh") for how to read the output.
#
# Usage: bench/sendlag.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 round, 2 s runs, no discarded warm-up round (~30 s): a smoke check, not a result
# Environment: ROUNDS=N overrides the number of measured rounds (default 3; --quick 1).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=2          # seconds per measured run
    WARM_ROUND=0   # no discarded first round
else
    ROUNDS=${ROUNDS:-3}
    DUR=5
    WARM_ROUND=1   # one short, discarded round before the measured ones
fi
WARM_DUR=1
RATES=(5000 20000 100000)
CONNS=8
SERVER_CPU=0
CLIENT_CPU=1
GOAL_US=100        # p99 send lag at 20,000/s, window 64
GOAL_RATE=20000

command -v cyclictest >/dev/null 2>&1 || install_pkgs rt-tests
require_cmds python3 taskset timeout cargo cyclictest
if [[ $(nproc) -lt 2 ]]; then
    echo "bench/sendlag.sh: needs 2 CPUs (server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU); this machine has $(nproc)" >&2
    exit 1
fi

RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/sendlag" # every run's own output, overwritten each time (ignored by git)
RECORDS=$RAW/records.tsv   # rate tool round p50 p99 max behind sent gen_cpu background
COMMANDS=$RAW/commands.txt # every command exactly as run (without the timeout wrapper)
: >"$RECORDS"
: >"$COMMANDS"

WB_LOG=$RAW/wirebench-serve-tcp.txt
logcmd taskset -c "$SERVER_CPU" "$WB" serve tcp --threads 1
taskset -c "$SERVER_CPU" "$WB" serve tcp --threads 1 >"$WB_LOG" 2>&1 &
WB_PID=$!
PIDS+=("$WB_PID")
URL=$(wait_url "$WB_LOG" "$WB_PID")
echo "== wirebench echo server (pid $WB_PID, CPU $SERVER_CPU): $URL; client on CPU $CLIENT_CPU"

sl_wirebench() { # window rate round dur -> one line, recorded unless the warm-up round
    local win=$1 rate=$2 round=$3 dur=$4 tag out rc=0 bg cmd
    tag=wb-w$win-$rate-r$round
    out=$RAW/$tag.json
    cmd=(taskset -c "$CLIENT_CPU" "$WB" run "$URL" --rate "$rate" -c "$CONNS" --pipeline "$win"
        --threads 1 -d "${dur}s" --json -q)
    [[ $round != 1 ]] || logcmd "${cmd[@]}"
    wait_quiet
    bounded $((dur + 30)) "${cmd[@]}" >"$out" 2>"$RAW/$tag.err" || rc=$?
    bg=$(bg_after)
    if [[ ! -s $out ]]; then
        echo "wirebench run failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    local p50 p99 max behind sent gen
    read -r p50 p99 max behind sent gen < <(json_get "$out" \
        '" ".join(str(x) for x in (j["open_loop"]["send_lag"]["p50_us"], j["open_loop"]["send_lag"]["p99_us"], j["open_loop"]["send_lag"]["max_us"], j["open_loop"]["behind_schedule"], j["open_loop"]["sent"], round(j["generator"]["cpu_percent_of_threads"], 1)))')
    printf '   %7s/s round %-7s wirebench window %-2s  send lag p50 %8.1f µs  p99 %8.1f µs  max %8.1f µs  >1 ms %5s of %6s  generator CPU %5.1f%%%s\n' \
        "$rate" "$round" "$win" "$p50" "$p99" "$max" "$behind" "$sent" "$gen" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$rate" "wirebench-w$win" "$round" "$p50" "$p99" "$max" "$behind" "$sent" "$gen" "$bg" >>"$RECORDS"
}

sl_cyclictest() { # rate round dur: one SCHED_OTHER thread on the client's CPU, waking every
    # 1/rate (clock_nanosleep), as many times as the rate over dur; --laptop leaves
    # /dev/cpu_dma_latency alone, so the CPUs idle as they do for wirebench
    local rate=$1 round=$2 dur=$3 tag out rc=0 bg cmd interval loops
    interval=$((1000000 / rate))
    loops=$((rate * dur))
    tag=ct-$rate-r$round
    out=$RAW/$tag.txt
    cmd=(cyclictest --laptop -q -t 1 -a "$CLIENT_CPU" -i "$interval" -l "$loops" -h 20000)
    [[ $round != 1 ]] || logcmd "${cmd[@]}"
    wait_quiet
    # Each of its wake-ups takes longer than a 10 µs interval at 100k/s (the VM's wake-up
    # cost), so its loops can last several times `dur`: allow ten times, then a margin.
    bounded $((10 * dur + 30)) "${cmd[@]}" >"$out" 2>&1 || rc=$?
    bg=$(bg_after)
    local p50 p99 max over
    read -r p50 p99 max over < <(python3 - "$out" <<'EOF' || true
import sys
hist, total, mx, overflow = [], 0, None, 0
for line in open(sys.argv[1]):
    if line.startswith("# Max Latencies:"):
        mx = int(line.split(":")[1])
    elif line.startswith("# Histogram Overflows:"):
        overflow = int(line.split(":")[1])
    elif line[:1].isdigit():
        us, n = map(int, line.split()[:2])
        if n:
            hist.append((us, n))
            total += n
total += overflow  # wakes later than the histogram's 20 ms
def q(p):
    seen = 0
    for us, n in hist:
        seen += n
        if seen >= p * total:
            return us
if total and mx is not None:
    print(q(0.5), q(0.99) or mx, mx, sum(n for us, n in hist if us > 1000) + overflow)
EOF
)
    if ((rc != 0)) || [[ -z ${p99:-} ]]; then
        echo "cyclictest failed (exit $rc) or printed no histogram:" >&2
        tail -n 20 "$out" >&2
        exit 1
    fi
    printf '   %7s/s round %-7s cyclictest (floor)   wake-up lag  p50 %8.1f µs  p99 %8.1f µs  max %8.1f µs  >1 ms %5s of %6s%s\n' \
        "$rate" "$round" "$p50" "$p99" "$max" "$over" "$loops" "$(bg_note "$bg")"
    [[ $round == warm-up ]] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$rate" cyclictest "$round" "$p50" "$p99" "$max" "$over" "$loops" - "$bg" >>"$RECORDS"
}

for rate in "${RATES[@]}"; do
    echo "== --rate $rate: wirebench (window 64, window 1) and cyclictest at a ${rate}/s interval, in turn"
    alternate "$ROUNDS" "sl_wirebench 64 $rate" "sl_wirebench 1 $rate" "sl_cyclictest $rate"
done
stop_pid "$WB_PID"
echo "   wirebench server: $(tail -n1 "$WB_LOG")"

HEADER=$(
    echo "wirebench bench/sendlag.sh$( ((QUICK)) && echo ' --quick')   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)');" \
        "$(cyclictest --help 2>&1 | grep -o 'cyclictest V [0-9.]*' | head -n1 || true);" \
        "kernel $(uname -r); $(nproc) CPUs; $ROUNDS measured round(s) of ${DUR} s per setting, in turn$( ((WARM_ROUND)) && echo ', after one discarded warm-up round')"
)
python3 - "$RECORDS" "$RESULTS/sendlag.txt" "$HEADER" "$QUIET_PCT" "$WAITED" "$COMMANDS" "$GOAL_US" "$GOAL_RATE" <<'EOF'
import re, statistics, sys
records, dest, header, quiet, waited, commands, goal_us, goal_rate = sys.argv[1:]
quiet, goal_us, goal_rate = int(quiet), float(goal_us), int(goal_rate)
rows = []
for line in open(records):
    rate, tool, rnd, p50, p99, mx, over, n, gen, bg = line.rstrip("\n").split("\t")
    rows.append(dict(rate=int(rate), tool=tool, round=rnd, p50=float(p50), p99=float(p99), max=float(mx),
                     over=int(over), n=int(n), gen=gen, bg=int(bg)))
names = {"wirebench-w64": "wirebench, window 64", "wirebench-w1": "wirebench, window 1 ",
         "cyclictest": "cyclictest (floor)  "}
summary, detail = [], []
for rate in sorted({r["rate"] for r in rows}):
    summary.append(f"--rate {rate}/s (client on CPU 1, server on CPU 0):")
    for tool in ("wirebench-w64", "wirebench-w1", "cyclictest"):
        rs = [r for r in rows if r["rate"] == rate and r["tool"] == tool]
        if not rs:
            continue
        med = lambda k: statistics.median(r[k] for r in rs)
        goal = ""
        if tool == "wirebench-w64" and rate == goal_rate:
            goal = f"  (goal p99 < {goal_us:.0f} µs: {'met' if med('p99') < goal_us else 'MISSED'})"
        cpu = f"  generator CPU {statistics.median(float(r['gen']) for r in rs):.1f}%" if tool != "cyclictest" else ""
        summary.append(f"    {names[tool]}  p50 {med('p50'):8.1f} µs  p99 {med('p99'):8.1f} µs  max {med('max'):8.1f} µs"
                       f"  >1 ms {sum(r['over'] for r in rs)} of {sum(r['n'] for r in rs)}{cpu}{goal}")
        for r in rs:
            detail.append(f"  {rate:>6}/s {names[tool]} round {r['round']}: p50 {r['p50']:.1f}  p99 {r['p99']:.1f}  max {r['max']:.1f} µs"
                          f"  >1 ms {r['over']} of {r['n']}  background {r['bg']}%")
detail.append(f"  waited {waited} s in all for a quiet machine before runs")
busy = [f"{r['rate']}/s {r['tool']} round {r['round']} ({r['bg']}%)" for r in rows if r["bg"] > quiet]
detail.append(f"  background load above {quiet}% of a CPU (others using the machine) during: " + "; ".join(busy)
              if busy else f"  the machine was quiet (background load ≤ {quiet}% of a CPU) around every measured run")
seen, cmds = set(), []
for line in open(commands):
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.strip())
    line = re.sub(r"--rate \d+", "--rate RATE", line)
    line = re.sub(r"--pipeline \d+", "--pipeline WINDOW", line)
    line = re.sub(r"-i \d+ -l \d+", "-i INTERVAL_US -l LOOPS", line)
    line = re.sub(r"-d \d+s", "-d DURs", line)
    if line not in seen:
        seen.add(line)
        cmds.append("  " + line)
text = "\n".join(
    [header, "", *summary, "",
     "Send lag = actual send − intended send of each request (open_loop.send_lag in the JSON; p50, p99, max",
     "from its HdrHistogram), medians over the rounds. cyclictest: how late a bare thread on the same CPU",
     "wakes from clock_nanosleep at the same interval, with nothing else to do: the floor of this machine,",
     "though Linux delays a normal thread's nanosleep by its timer slack (50 µs by default) and wirebench's",
     "timerfd by none, so cyclictest's p50 sits up to 50 µs higher; its >1 ms count is the machine's own stalls.",
     "Window 1 at a rate 8 connections cannot carry (sent < RATE × DUR) measures the server, not the pacing.",
     "'>1 ms': sends (wakes) more than 1 ms late, added over the rounds.",
     "Per run (in run order):", *detail, "",
     "Commands (exactly as run, without the timeout wrapper; wirebench = a copy of target/release/wirebench;",
     "PORT is a free port, RATE each rate, WINDOW 64 or 1, INTERVAL_US = 10^6 / RATE, LOOPS = RATE × DUR):", *cmds]
) + "\n"
print("\n== summary")
print(text, end="")
with open(dest, "w") as f:
    f.write(text)
EOF
echo "(written to bench/results/sendlag.txt; raw outputs in bench/results/raw/sendlag/)"
