#!/usr/bin/env bash
# How exact is `wirebench serve tcp --delay D`? On 127.0.0.1 only, for D = 0 (the round-trip
# floor), 200 µs, 1 ms, 5 ms and 50 ms, one wirebench client connection (run -c 1 --threads 1,
# closed loop, 64 B) measures the round trip, p50 and p99, against:
#   - serve tcp --threads 1 --delay D              (the event loop)
#   - serve tcp --threads 1 --blocking --delay D   (a thread per connection)
#   - a plain Python server that reads 64 B, time.sleep(D), writes them back (the baseline:
#     what an ordinary sleeping server gives; the client reaches it with --raw)
#   - the same Python server busy-waiting D on the clock instead of sleeping (the control: it
#     cannot wake late, so what its round trip adds beyond D is the machine's, not a timer's)
# Client and servers are all pinned to the SAME CPU (taskset -c 0): the client sleeps while the
# server waits, so there is no cross-CPU wake-up in the figures. As root, the client runs under
# SCHED_FIFO (chrt -f 5, below a --realtime server's 10), so other processes' builds on CPU 0 do
# not delay its reading of a reply, the same for every server (CLIENT_RT=0: as before, CFS).
# The servers take turns A B C A B C for each D; each measured run gets a fresh server, stopped
# after it, because a server with --delay holds a machine-wide CPU latency request (PM QoS,
# /dev/cpu_dma_latency) while it runs, and that would help the servers measured beside it.
# As root one more server is measured: "realtime", the event loop with --realtime (SCHED_FIFO). The table gives the error of p50 and p99 against D, and the goal
# D ± (1% + 50 µs), and each server's CPU while it served (the wait spins its last stretch).
# With tcpdump (installed as root when missing; WIRE=0 to skip), each measured run is also
# captured on lo by tcpdump pinned to the other CPU, and bench/wire_gaps.py takes from the capture
# the server's response time exactly: from each request segment to the first reply segment, both
# stamped by the kernel as they were sent, without the client's wake-up or clock reads. The goal
# is judged on both: the round trip a client sees, and the delay the server gave (the wire).
# See bench/README.md ("delay.sh").
#
# Usage: bench/delay.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 round, 2 s runs, no discarded warm-up round (~1 min): a smoke check, not a result
#   (full: 3 rounds of 5 s after a discarded warm-up round, then one run of 22 s per server at
#   D = 1 s, ~10 min)
# Environment: ROUNDS=N overrides the number of measured rounds (default 3; --quick 1).
#   LONG_DUR=S    seconds of the one run per server at D = 1 s (default 22; 0 leaves it out)
#   CLIENT_RT=0   leave the client under CFS (default 1 as root: chrt -f 5)
#   BEFORE=PATH   also measure the servers of another wirebench binary (e.g. a build of the
#                 commit before a change), as "async-before" and "blocking-before", in the same
#                 rounds (the client is always this tree's); the table then shows before and after.
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
    DUR=5          # at 50 ms a run holds ~100 requests, so its p99 is about its slowest one
    WARM_ROUND=1
fi
WARM_DUR=2
LONG_DUR=${LONG_DUR:-22}           # seconds per run at D = 1 s (0: leave D = 1 s out)
SIZE=64
CPU=0                              # client and every server
DELAYS=(0 200us 1ms 5ms 50ms)      # 0: no --delay, the round trip alone
KINDS=(async blocking)
((EUID != 0)) || KINDS+=(realtime)
BEFORE=${BEFORE:-}
if [[ -n $BEFORE ]]; then
    [[ -x $BEFORE ]] || { echo "bench/delay.sh: BEFORE=$BEFORE is not an executable wirebench" >&2; exit 2; }
    KINDS+=(async-before blocking-before)
fi
KINDS+=(python python-spin)
WIRE=${WIRE:-1}
CAP_CPU=1                          # tcpdump, away from the client and the servers
if ((WIRE)) && ! command -v tcpdump >/dev/null 2>&1; then
    if ((EUID == 0)); then install_pkgs tcpdump; else WIRE=0; fi
fi
((WIRE == 0)) || (($(nproc) >= 2)) || WIRE=0
CLIENT=()
if ((EUID == 0)) && [[ ${CLIENT_RT:-1} != 0 ]] && command -v chrt >/dev/null; then
    CLIENT=(chrt -f 5)
fi

require_cmds python3 taskset timeout cargo
RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/delay" # every run's own output, overwritten each time (ignored by git)
if [[ -n $BEFORE ]]; then
    cp "$BEFORE" "$RAW/wirebench-before"
    OLD_WB=$RAW/wirebench-before
fi
RECORDS=$RAW/records.jsonl       # one JSON object per measured run; the summary is computed from it
COMMANDS=$RAW/commands.txt       # every command exactly as run (without the timeout/CPU wrappers)
DIR_ALIAS=$RAW                   # shown as DIR in the commands
: >"$RECORDS"
: >"$COMMANDS"
TICK=$(getconf CLK_TCK)

record() { # key=value ... -> one JSON line in $RECORDS (delay, kind and round stay text)
    python3 - "$RECORDS" "$@" <<'EOF'
import json, sys
rec = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    try:
        rec[k] = v if k in ("delay", "kind", "round") else float(v)
    except ValueError:
        rec[k] = v
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(rec) + "\n")
EOF
}

# The baseline: one connection at a time, blocking calls, TCP_NODELAY, 64-byte requests. With a
# fourth argument `spin` (the control, "python busy-wait"), it never sleeps: it looks at the clock
# from the request until the reply is due, so it cannot wake late; what that server's round trip
# adds beyond D is the machine's (the client's wake-up, both kernels' paths), not a timer's.
SLEEPER=$RAW/sleep_echo.py
cat >"$SLEEPER" <<'EOF'
import socket, sys, time
port, delay, size = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
spin = sys.argv[4:] == ["spin"]
wait_ns = int(delay * 1e9)
clock = time.monotonic_ns
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(16)
while True:
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b""
    while True:
        data = conn.recv(65536)
        if not data:
            break
        pending += data
        while len(pending) >= size:
            if delay and spin:
                due = clock() + wait_ns
                while clock() < due:
                    pass
            elif delay:
                time.sleep(delay)
            conn.sendall(pending[:size])
            pending = pending[size:]
    conn.close()
EOF

seconds() { # 200us | 1ms | 50ms | 0 -> seconds, for Python
    python3 -c 'import sys; t = sys.argv[1]
for unit, f in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
    if t.endswith(unit):
        print("%g" % (float(t[: -len(unit)]) * f)); break
else:
    print("%g" % float(t))' "$1"
}

declare -A URL SRV_PID
start_server() { # kind delay -> URL[kind], SRV_PID[kind]
    local kind=$1 d=$2 log=$RAW/server-$1-$2.txt pid port cmd flag=()
    [[ $d == 0 ]] || flag=(--delay "$d")
    case "$kind" in
        async) cmd=(taskset -c "$CPU" "$WB" serve tcp --threads 1 "${flag[@]}") ;;
        blocking) cmd=(taskset -c "$CPU" "$WB" serve tcp --threads 1 --blocking "${flag[@]}") ;;
        realtime) cmd=(taskset -c "$CPU" "$WB" serve tcp --threads 1 --realtime "${flag[@]}") ;;
        async-before) cmd=(taskset -c "$CPU" "$OLD_WB" serve tcp --threads 1 "${flag[@]}") ;;
        blocking-before) cmd=(taskset -c "$CPU" "$OLD_WB" serve tcp --threads 1 --blocking "${flag[@]}") ;;
        python)
            port=$(free_port)
            cmd=(taskset -c "$CPU" python3 "$SLEEPER" "$port" "$(seconds "$d")" "$SIZE")
            ;;
        python-spin)
            port=$(free_port)
            cmd=(taskset -c "$CPU" python3 "$SLEEPER" "$port" "$(seconds "$d")" "$SIZE" spin)
            ;;
    esac
    logcmd "${cmd[@]}"
    # Emptied here, not only by the child's redirection: the log is reused by each round's
    # server, and wait_url must not read the last one's address before the child truncates it.
    : >"$log"
    "${cmd[@]}" >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    SRV_PID[$kind]=$pid
    if [[ $kind == python* ]]; then
        wait_bound tcp "$port" "$pid"
        URL[$kind]=tcp://127.0.0.1:$port
    else
        URL[$kind]=$(wait_url "$log" "$pid")
    fi
}

measure() { # kind delay round dur -> prints one line, records when not the warm-up
    local kind=$1 d=$2 round=$3 dur=$4 tag out rc=0 bg t0 t1 raw=() cmd
    tag=$kind-$d-r$round
    out=$RAW/$tag.json
    [[ $kind != python* ]] || raw=(--raw)
    start_server "$kind" "$d"
    cmd=("${CLIENT[@]}" taskset -c "$CPU" "$WB" run "${URL[$kind]}" "${raw[@]}" --size "$SIZE" -c 1 --threads 1
        -d "${dur}s" --warmup 1s --json -q)
    [[ $round != 1 ]] || logcmd "${cmd[@]}"
    local port=${URL[$kind]##*:} cap=$RAW/$tag.pcap cap_pid=""
    if ((WIRE)) && [[ $round != warm-up ]]; then
        : >"$RAW/$tag.tcpdump"
        timeout -k 5 $((dur + 40)) taskset -c "$CAP_CPU" tcpdump -i lo -n -s 128 -B 16384 \
            --time-stamp-precision=nano -w "$cap" "tcp port $port" 2>"$RAW/$tag.tcpdump" &
        cap_pid=$!
        PIDS+=("$cap_pid")
        local i
        for ((i = 0; i < 50; i++)); do
            grep -q "listening on" "$RAW/$tag.tcpdump" && break
            sleep 0.1
        done
        [[ $round != 1 ]] || logcmd taskset -c "$CAP_CPU" tcpdump -i lo -n -s 128 -B 16384 \
            --time-stamp-precision=nano -w DIR/RUN.pcap "tcp port PORT"
    fi
    wait_quiet
    t0=$(server_ticks "${SRV_PID[$kind]}")
    bounded $((dur + 31)) python3 "$CPUWRAP" "$RAW/$tag.cpu" "${cmd[@]}" >"$out" 2>"$RAW/$tag.err" || rc=$?
    t1=$(server_ticks "${SRV_PID[$kind]}")
    bg=$(bg_after)
    [[ -z $cap_pid ]] || stop_pid "$cap_pid" # tcpdump writes out what it holds on SIGTERM
    stop_pid "${SRV_PID[$kind]}"
    if [[ ! -s $out ]] || ((rc != 0)); then
        echo "wirebench run against $kind (delay $d) failed (exit $rc): $(cat "$RAW/$tag.err")" >&2
        exit 1
    fi
    local p50 p99 ok srv wire=() w50=-1 w99=-1
    p50=$(json_get "$out" 'j["latency"]["p50_us"]')
    p99=$(json_get "$out" 'j["latency"]["p99_us"]')
    if [[ -n $cap_pid && -s $cap ]]; then
        # the client's 1 s warm-up left out, as from its own figures
        python3 "$ROOT/bench/wire_gaps.py" "$cap" "$port" 1 >"$RAW/$tag.wire.json"
        w50=$(json_get "$RAW/$tag.wire.json" 'j["p50_us"] if j["n"] else -1')
        w99=$(json_get "$RAW/$tag.wire.json" 'j["p99_us"] if j["n"] else -1')
        rm -f "$cap"
        wire=("w50=$w50" "w99=$w99")
    fi
    ok=$(json_get "$out" 'j["ok"]')
    # The server's CPU over the client's whole life (its 1 s warm-up included).
    srv=$(awk -v t=$((t1 - t0)) -v hz="$TICK" '{ printf "%.1f", t / hz / $3 * 100 }' "$RAW/$tag.cpu")
    printf '   %-5s round %-7s %-15s p50 %9.1f µs  p99 %9.1f µs  wire p50 %9.1f  p99 %9.1f  %6d requests  server CPU %5s%%%s\n' \
        "$d" "$round" "$kind" "$p50" "$p99" "$w50" "$w99" "$ok" "$srv" "$(bg_note "$bg")"
    [[ $round == warm-up ]] ||
        record "delay=$d" "kind=$kind" "round=$round" "p50=$p50" "p99=$p99" "ok=$ok" "srv=$srv" "bg=$bg" "${wire[@]}"
}

for d in "${DELAYS[@]}"; do
    echo "== delay $d: client and servers on CPU $CPU"
    turns=()
    for kind in "${KINDS[@]}"; do turns+=("measure $kind $d"); done
    alternate "$ROUNDS" "${turns[@]}"
done
# The top of issue 21's range, D = 1 s: one measured round of LONG_DUR s per server (~20
# requests after the warm-up, so its p99 is its slowest request), no warm-up round; not in --quick.
if ((!QUICK && LONG_DUR > 0)); then
    echo "== delay 1s: client and servers on CPU $CPU, one round of $LONG_DUR s per server"
    for kind in "${KINDS[@]}"; do measure "$kind" 1s 1 "$LONG_DUR"; done
fi

# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------
HEADER=$(
    echo "wirebench bench/delay.sh$( ((QUICK)) && echo ' --quick')   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)');" \
        "$(python3 --version);" \
        "kernel $(uname -r); $(nproc) CPUs; client and every server on CPU $CPU (taskset -c $CPU), the client $( ((${#CLIENT[@]})) && echo "under SCHED_FIFO (${CLIENT[*]})" || echo "under CFS"), a fresh server per run;" \
        "$ROUNDS measured round(s) of ${DUR} s per server and delay, A B C$( ((WARM_ROUND)) && echo ', after one discarded warm-up round')"
    [[ -z $BEFORE ]] || echo "before: the servers of BEFORE=$BEFORE ($("$OLD_WB" --version 2>/dev/null || echo '?'))"
)
python3 - "$RECORDS" "$RESULTS/delay.txt" "$HEADER" "$QUIET_PCT" "$WAITED" "$COMMANDS" <<'EOF'
import json, re, statistics, sys

records, dest, header, quiet, waited, commands = sys.argv[1:]
quiet = int(quiet)
rows = [json.loads(l) for l in open(records) if l.strip()]
names = {
    "async": "serve tcp (event loop)",
    "blocking": "serve tcp --blocking",
    "realtime": "serve tcp --realtime",
    "async-before": "before: event loop",
    "blocking-before": "before: --blocking",
    "python": "python time.sleep",
    "python-spin": "python busy-wait",
}

def us(d):
    m = re.fullmatch(r"([\d.]+)(us|ms|s)?", d)
    return float(m.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6, None: 1e6}[m.group(2)]

def med(xs):
    return statistics.median(xs)

def verdict(p50, p99, d):
    """Issue 21's goal D ± (1% + 50 µs), for p50 and p99 (µs)."""
    tol = 0.01 * d + 50
    return ", ".join(f"{name} {'met' if abs(x - d) <= tol else 'MISSED'}" for name, x in (("p50", p50), ("p99", p99)))

def err(x, d):
    return f"{x - d:+9.1f} µs {(x - d) / d * 100:+6.1f}%" if d else f"{'':>18}"

table = [f"{'D':>6}  {'server':<23}{'p50 µs':>10}{'p99 µs':>10}   {'p50 − D':>18}   {'p99 − D':>18}   "
         f"{'goal D ± (1% + 50 µs)':<22}{'server CPU':>11}  {'p99 − control':>13}"
         f"   {'wire p50 − D':>12} {'wire p99 − D':>12}  {'goal on the wire':<22}"]
wired = any(r.get("w99", -1) >= 0 for r in rows)
# The control's p99 per delay: the round trip a server that cannot wake late gets here.
control = {}
for d in dict.fromkeys(r["delay"] for r in rows):
    rs = [r["p99"] for r in rows if r["delay"] == d and r["kind"] == "python-spin"]
    if rs and us(d):
        control[d] = med(rs)
detail = []
for d in dict.fromkeys(r["delay"] for r in rows):
    dus = us(d)
    for kind in names:
        rs = [r for r in rows if r["delay"] == d and r["kind"] == kind]
        if not rs:
            continue
        p50, p99 = med([r["p50"] for r in rs]), med([r["p99"] for r in rs])
        srv = med([r["srv"] for r in rs])
        goal = verdict(p50, p99, dus) if dus else ""
        beyond = f"{p99 - control[d]:+10.1f} µs" if d in control and kind != "python-spin" else ""
        wire = ""
        ws = [r for r in rs if r.get("w99", -1) >= 0]
        if ws:
            w50, w99 = med([r["w50"] for r in ws]), med([r["w99"] for r in ws])
            if dus:
                wire = f"   {w50 - dus:+9.1f} µs {w99 - dus:+9.1f} µs  {verdict(w50, w99, dus):<22}"
            else:
                wire = f"   {w50:9.1f} µs {w99:9.1f} µs  (the floor: D = 0)"
        table.append(f"{d:>6}  {names[kind]:<23}{p50:>10.1f}{p99:>10.1f}   {err(p50, dus)}   {err(p99, dus)}   "
                     f"{goal:<22}{srv:>10.1f}%  {beyond:>13}{wire}")
        per = lambda key, fmt: " ".join(fmt.format(r.get(key, -1)) for r in rs)
        wper = f"  wire p50 [{per('w50', '{:.1f}')}]  p99 [{per('w99', '{:.1f}')}]" if ws else ""
        detail.append(f"  {d:>5} {kind:<8} per round  p50 [{per('p50', '{:.1f}')}]  p99 [{per('p99', '{:.1f}')}]{wper}  "
                      f"requests [{per('ok', '{:.0f}')}]  server CPU % [{per('srv', '{:.1f}')}]")
    table.append("")

detail.append(f"  waited {waited} s in all for a quiet machine before runs")
busy = [f"{r['delay']} {r['kind']} round {r['round']} ({r['bg']:.0f}%)" for r in rows if r["bg"] > quiet]
void = []
if len(busy) * 2 > len(rows):
    void = [f"NOTE: {len(busy)} of {len(rows)} runs had other load above {quiet}% of a CPU on this machine:",
            "these figures are not a result; run the script again on a quiet machine.", ""]
if busy:
    detail.append(f"  background load above {quiet}% of a CPU (others using the machine) during: " + "; ".join(busy))
else:
    detail.append(f"  the machine was quiet (background load ≤ {quiet}% of a CPU) around every measured run")

seen, cmds = set(), []
for line in open(commands):
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.strip())
    line = re.sub(r"(sleep_echo\.py) \d+", r"\1 PORT", line)
    if line not in seen:
        seen.add(line)
        cmds.append("  " + line)

text = "\n".join(
    [header, "", *void, *table,
     "Figures are medians over the rounds of the round trip one wirebench connection measured",
     "(run -c 1 --threads 1, 64 B, closed loop), so each includes the round trip of the D = 0 rows.",
     "The goal is checked on the figures as measured. server CPU: the server process's user + system",
     "time over the client's whole run (1 s warm-up included), % of one CPU.",
     "python busy-wait is the control: it looks at the clock from each request until its reply is due",
     "and never sleeps, so it cannot reply late by its own clock; whatever its round trip adds beyond",
     "D (the D = 0 round trip, and more the longer the client slept) is this machine's, not a timer's.",
     "p99 − control: a server's p99 less the control's at the same D (< 0: closer to D than the control).",
     *(["wire: the server's response time in a capture on lo (tcpdump on the other CPU, kernel stamps at",
        "each segment's transmission): from a request's segment to the first segment of its reply, exact",
        "percentiles over every request after the client's warm-up (bench/wire_gaps.py). It is the delay",
        "the server gave, as the goal means it; the round trip adds the client's own path and wake-up.",
        "D = 0 rows show the floor: a server's read and write path with no delay."] if wired else []),
     "Per round (in run order):", *detail, "",
     "Commands (exactly as run, without the timeout/CPU-time wrappers; wirebench = a copy of",
     "target/release/wirebench; DIR = bench/results/raw/delay, where the script writes the Python",
     "server sleep_echo.py; PORT is a free port picked per server):", *cmds]
) + "\n"
print("\n== summary")
print(text, end="")
with open(dest, "w") as f:
    f.write(text)
EOF
echo "(written to bench/results/delay.txt; raw outputs in bench/results/raw/delay/)"
