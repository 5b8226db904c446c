#!/usr/bin/env bash
# wirebench's DICOM driver side by side with DCMTK's storescu, on one storescp of its own, on
# 127.0.0.1 only: the same 200 CT images of 512 KiB pixels (written by `wirebench run
# --save-example`), each sent over one association, C-STORE after C-STORE:
#   wirebench run dicom://127.0.0.1:PORT/STORESCP --op store --files DIR -n 200 -c 1 -t 1
#   storescu -aec STORESCP 127.0.0.1 PORT +sd DIR
# images/s (200 ÷ the client process's wall time, start-up included, the same measure for
# both) and images per client CPU-second (200 ÷ its user + system time, from wait4).
#   (1) storescp with TCP_NODELAY=1 in its environment (healthy)
#   (2) storescp with its defaults: DCMTK 3.6.7's acceptor leaves Nagle's algorithm on, and
#       each response waits for the client's delayed ACK (the DCMTK study, docs/studies.md)
# storescp is pinned to CPU 0 and writes into a tmpfs directory emptied after each run; each
# client is pinned to CPU 1 with taskset. Rounds alternate wirebench / storescu.
#
# Usage: bench/dicom.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 round, no discarded warm-up round (~20 s)
# Environment: ROUNDS=N overrides the measured rounds (default 5; --quick 1).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    WARM_ROUND=0
else
    ROUNDS=${ROUNDS:-5}
    WARM_ROUND=1
fi
IMAGES=200         # (1)
STALL_IMAGES=50    # (2): about 45 ms each
SERVER_CPU=0
CLIENT_CPU=1
TOOLS=(wirebench storescu storescu-nd)

command -v storescp >/dev/null 2>&1 || install_pkgs dcmtk
require_cmds python3 taskset timeout cargo storescu storescp
RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/dicom"
RECORDS=$RAW/records.tsv
: >"$RECORDS"
COMMANDS=$RAW/commands.txt
: >"$COMMANDS"
WORK=$(mktemp -d /dev/shm/wirebench-dicom.XXXXXX)
DIR_ALIAS=$WORK
cleanup() { stop_all; rm -rf "$WORK"; }

mkdir -p "$WORK/files" "$WORK/out"
echo "== writing $IMAGES CT images of 512 KiB pixels"
for ((i = 0; i < IMAGES; i++)); do
    "$WB" run dicom://127.0.0.1:1 --save-example "$(printf '%s/files/ct%03d.dcm' "$WORK" "$i")"
done
mkdir -p "$WORK/few"
cp "$WORK"/files/ct0[0-4]?.dcm "$WORK/few/"

start_scp() { # ENV... -> SCP_PORT, SCP_PID
    SCP_PORT=$(free_port)
    env "$@" taskset -c "$SERVER_CPU" storescp -aet STORESCP -od "$WORK/out" "$SCP_PORT" \
        >"$RAW/storescp.log" 2>&1 &
    SCP_PID=$!
    PIDS+=("$SCP_PID")
    wait_bound tcp "$SCP_PORT" "$SCP_PID"
}

one() { # section dir images tool round -> a record line
    local section=$1 dir=$2 n=$3 tool=$4 round=$5
    local cpu=$RAW/cpu.$section.$tool.$round stored user sys wall bg
    rm -rf "$WORK/out" && mkdir "$WORK/out"
    case "$tool" in
        wirebench)
            cmd=(taskset -c "$CLIENT_CPU" "$WB" run "dicom://127.0.0.1:$SCP_PORT/STORESCP" --op store
                --files "$dir" -n "$n" -c 1 -t 1 --timeout 5s --json -q)
            ;;
        storescu)
            cmd=(taskset -c "$CLIENT_CPU" storescu -aec STORESCP 127.0.0.1 "$SCP_PORT" +sd "$dir")
            ;;
        storescu-nd) # DCMTK's own fix on the client side too (envvars.txt: TCP_NODELAY)
            cmd=(env TCP_NODELAY=1 taskset -c "$CLIENT_CPU" storescu -aec STORESCP 127.0.0.1
                "$SCP_PORT" +sd "$dir")
            ;;
    esac
    [[ $round != 1 ]] || logcmd "${cmd[@]}"
    wait_quiet
    bounded 120 python3 "$CPUWRAP" "$cpu" "${cmd[@]}" >"$RAW/out.$section.$tool.$round" 2>&1
    stored=$(find "$WORK/out" -type f | wc -l)
    bg=$(bg_after)
    read -r user sys wall _ <"$cpu"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$section" "$tool" "$round" "$n" "$wall" "$user" "$sys" "$stored" "$bg" >>"$RECORDS"
    printf '   %-2s %-11s round %-7s %5.2f s wall, %.3f s CPU, %d stored%s\n' "$section" "$tool" "$round" \
        "$wall" "$(echo "$user + $sys" | bc -l)" "$stored" "$(bg_note "$bg")"
}

section() { # section env dir images
    local s=$1 envv=$2 dir=$3 n=$4 r
    start_scp $envv
    if ((WARM_ROUND)); then
        for tool in "${TOOLS[@]}"; do one "$s" "$dir" "$n" "$tool" warm-up; done
    fi
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in "${TOOLS[@]}"; do one "$s" "$dir" "$n" "$tool" "$r"; done
    done
    stop_pid "$SCP_PID"
}

echo "== (1) storescp TCP_NODELAY=1, $IMAGES images"
section 1 TCP_NODELAY=1 "$WORK/files" "$IMAGES"
echo "== (2) storescp defaults, $STALL_IMAGES images"
section 2 DCMTK_DEFAULTS=1 "$WORK/few" "$STALL_IMAGES"

OUT=$RESULTS/dicom.txt
{
    echo "wirebench bench/dicom.sh   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git rev-parse --short HEAD); $(storescu --version | head -n1 | tr -d '$'); kernel $(uname -r); $(nproc) CPUs"
    echo "storescp on CPU $SERVER_CPU (output to tmpfs), each client on CPU $CLIENT_CPU (taskset -c); $ROUNDS measured round(s), wirebench / storescu in turn$( ((WARM_ROUND)) && echo ', after one discarded warm-up round each')"
    echo
    python3 - "$RECORDS" <<'EOF'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
title = {"1": "(1) storescp with TCP_NODELAY=1: 200 images of 512 KiB, one association",
         "2": "(2) storescp with its defaults (Nagle on in the acceptor): 50 images, one association"}
for s in ("1", "2"):
    print(title[s] + "; medians over the rounds")
    print(f"    {'':11} {'images/s':>9} {'wb/scu':>7} {'images/CPU-s':>13} {'wb/scu':>7} {'client CPU':>11} {'stored':>7}")
    med = {}
    for tool in ("wirebench", "storescu", "storescu-nd"):
        rs = [r for r in rows if r[0] == s and r[1] == tool and r[2] != "warm-up"]
        if not rs:
            continue
        n = int(rs[0][3])
        rate = st.median(n / float(r[4]) for r in rs)
        per_cpu = st.median(n / (float(r[5]) + float(r[6])) for r in rs)
        cpu = st.median((float(r[5]) + float(r[6])) / float(r[4]) * 100 for r in rs)
        stored = min(int(r[7]) for r in rs)
        med[tool] = (rate, per_cpu)
        ratio = lambda i: "—" if tool == "wirebench" else f"{med['wirebench'][i] / med[tool][i]:.2f}"
        print(f"    {tool:11} {rate:9,.1f} {ratio(0):>7} {per_cpu:13,.0f} {ratio(1):>7} {cpu:10.0f}% {stored:7}")
    if s == "2":
        print("    every client waits about 40 ms an image for storescp's response, held by Nagle's algorithm until the")
        print("    client's delayed ACK: no client setting removes it; TCP_NODELAY=1 on storescp does (section 1).")
    elif len(med) == 3:
        a = med["wirebench"]
        # Against storescu's better configuration, on each measure.
        b = [max(med["storescu"][i], med["storescu-nd"][i]) for i in (0, 1)]
        goal = "met" if a[0] / b[0] >= 1.0 and a[1] / b[1] >= 1.0 else "not met"
        print(f"    goal ≥ 1.0× the better storescu in images/s and per client CPU-second: {goal} ({a[0] / b[0]:.2f}×, {a[1] / b[1]:.2f}×)")
    print()
measured = [r for r in rows if r[2] != "warm-up"]
busy = [r for r in measured if int(r[8]) > 10]
print(f"background load: {len(busy)} of {len(measured)} measured runs had other work above 10% of a CPU on the machine"
      + (f" (up to {max(int(r[8]) for r in busy)}%)" if busy else ""))
print()
EOF
    echo "images/s = images ÷ the client process's wall time from start to exit (start-up, association and"
    echo "release included, the same for both); images/CPU-s = images ÷ its user + system time (wait4)."
    echo "stored = the fewest files storescp wrote in any round (each round must store them all)."
    echo "storescu-nd = storescu with TCP_NODELAY=1 in its environment (DCMTK's documented switch,"
    echo "dcmtk/config/docs/envvars.txt); wirebench sets TCP_NODELAY on its sockets by default (--no-nodelay clears it)."
    echo
    echo "commands (DIR/files: the $IMAGES images, written by wirebench run --save-example; DIR/few: the first $STALL_IMAGES of them):"
    sed 's/^/    /' "$COMMANDS"
} >"$OUT"
cat "$OUT"
