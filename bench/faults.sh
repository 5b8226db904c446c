#!/usr/bin/env bash
# The fault matrix (issue 16, deliver 4), whole: tests/functional/faults.rs runs a sample of it in CI.
# protocol (tcp, udp, http: wirebench's own servers; h2: nginx, h2c with prior knowledge, if
# installed; dicom: DCMTK's storescp, C-ECHO, if installed)
#   × load (closed, open --rate 500, crr, stream, sweep -c 1,2,3,4, compare, peak, study)
#   × fault (killed: SIGKILL; frozen: SIGSTOP, SIGCONT + SIGKILL after; reset: every
#     connection of the target's port reset with `ss -K` every 100 ms, and for crr, whose
#     connections live ~100 µs (ss -K almost never catches one: http/crr/reset measured no
#     error at all), the target replaced by a resetting server: one that binds its port the
#     moment it is free, accepts every connection and closes it with a reset (SO_LINGER 0);
#     never: a socket that listens (or is bound) and never reads, from the start)
# Killed, frozen and reset come once the load has run for a while (0.7 s for one run, 1.2 s for
# the multi-run commands). Every command has --timeout 300ms, runs under `timeout -s KILL 60`
# and saves into its own history (--db); loopback only; every server is ours, stopped by PID.
# Printed and written to bench/results/faults.txt: case, ended in (s), exit code, ok (added
# over every result of the saved document), errors by kind (likewise), saved (the history row's
# status, or no).
#
# Usage: bench/faults.sh [--quick]      (from the repository root, or from anywhere; root for ss -K)
#   --quick   tcp and http only
# Environment: ONLY_PROTOS, ONLY_LOADS, ONLY_FAULTS restrict the matrix (e.g. ONLY_PROTOS=h2);
# a part is written to bench/results/faults-part.txt instead.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

require_cmds python3 jq ss timeout cargo
NGINX=$(command -v nginx 2>/dev/null || true)
[[ -n $NGINX || ! -x /usr/sbin/nginx ]] || NGINX=/usr/sbin/nginx
PROTOS=(tcp udp http)
[[ -n $NGINX ]] && PROTOS+=(h2)
command -v storescp >/dev/null 2>&1 && PROTOS+=(dicom)
((QUICK)) && PROTOS=(tcp http)
LOADS=(closed open crr stream sweep compare peak study)
FAULTS=(killed frozen reset never)
# A part of the matrix: ONLY_PROTOS, ONLY_LOADS, ONLY_FAULTS (space-separated lists).
[[ -n ${ONLY_PROTOS:-} ]] && read -ra PROTOS <<<"$ONLY_PROTOS"
[[ -n ${ONLY_LOADS:-} ]] && read -ra LOADS <<<"$ONLY_LOADS"
[[ -n ${ONLY_FAULTS:-} ]] && read -ra FAULTS <<<"$ONLY_FAULTS"
RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/faults"
OUT=$RESULTS/faults.txt
[[ -z ${ONLY_PROTOS:-}${ONLY_LOADS:-}${ONLY_FAULTS:-} ]] || OUT=$RESULTS/faults-part.txt

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

applies() { # PROTO LOAD FAULT -> true when the cell exists
    case "$2" in stream) [[ $1 == tcp || $1 == udp ]] || return 1 ;; crr) [[ $1 != udp ]] || return 1 ;; esac
    [[ $3 != reset || $1 != udp ]]
}

wait_line() { # FILE -> once FILE holds a whole first line (≤ 10 s)
    local _
    for _ in $(seq 200); do
        [[ $(wc -l <"$1") -ge 1 ]] && return
        sleep 0.05
    done
}

start_target() { # PROTO LOAD FAULT -> SPID (the process to fault), URL
    local proto=$1 load=$2 fault=$3 port mode=()
    [[ $load == stream ]] && mode=(--mode sink)
    if [[ $fault == never ]]; then
        port=$(free_port)
        : >"$RAW/server.out"
        python3 -c '
import socket, sys, time
kind = socket.SOCK_DGRAM if sys.argv[1] == "udp" else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, kind)
s.bind(("127.0.0.1", int(sys.argv[2])))
if kind == socket.SOCK_STREAM:
    s.listen(16)  # and never accept, never read
print("ready", flush=True)
time.sleep(120)' "$proto" "$port" >"$RAW/server.out" &
        SPID=$!
        wait_line "$RAW/server.out"
    else
        case "$proto" in
            tcp | udp | http)
                : >"$RAW/server.out"
                "$WB" serve "$proto" "${mode[@]}" >"$RAW/server.out" 2>/dev/null &
                SPID=$!
                wait_line "$RAW/server.out"
                port=$(head -n1 "$RAW/server.out" | sed 's/.*://')
                ;;
            h2)
                port=$(free_port)
                mkdir -p "$RAW/nginx/logs"
                cat >"$RAW/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $RAW/nginx/logs/error.log;
pid $RAW/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    server { listen 127.0.0.1:$port http2; location / { return 200 "hello\n"; } }
}
EOF
                "$NGINX" -p "$RAW/nginx" -c "$RAW/nginx/nginx.conf" -e "$RAW/nginx/logs/error.log" </dev/null >/dev/null 2>&1 &
                SPID=$!
                sleep 0.3
                ;;
            dicom)
                port=$(free_port)
                storescp -aet STORESCP "$port" </dev/null >/dev/null 2>&1 &
                SPID=$!
                sleep 0.3
                ;;
        esac
    fi
    case "$proto" in
        tcp | udp) URL=$proto://127.0.0.1:$port ;;
        http) URL=http://127.0.0.1:$port/bytes/100 ;;
        h2) URL=http://127.0.0.1:$port/ ;;
        dicom) URL=dicom://127.0.0.1:$port/STORESCP ;;
    esac
    PORT=$port
}

command_of() { # PROTO LOAD -> CMD (array): the wirebench command, AT: seconds before the fault
    local proto=$1 load=$2 extra=(--timeout 300ms)
    [[ $proto == h2 ]] && extra+=(--http2)
    AT=0.7
    case "$load" in
        closed) CMD=(run "$URL" -d 2s) ;;
        open) CMD=(run "$URL" --rate 500 -d 2s) ;;
        crr) CMD=(run "$URL" --mode crr -d 2s) ;;
        stream) CMD=(run "$URL" --mode stream -d 2s) ;;
        sweep) CMD=(run "$URL" -c 1,2,3,4 -d 500ms) AT=1.2 ;;
        compare) CMD=(compare "a=$URL" "b=$URL" --runs 3 -d 300ms) AT=1.2 ;;
        peak) CMD=(peak "$URL" --slo 'p99<=50ms' --step 300ms --rest 0s) AT=1.2 ;;
        study)
            local h2=""
            [[ $proto == h2 ]] && h2=$'http2 = true\n'
            printf 'title = "faults"\n[targets]\nlocal = "%s"\n[run]\nconnections = [1, 2, 3, 4]\nduration = "400ms"\ntimeout = "300ms"\n%s' \
                "$URL" "$h2" >"$RAW/plan.toml"
            CMD=(study "$RAW/plan.toml" --out "$RAW/study-out") AT=1.2
            rm -rf "$RAW/study-out"
            return
            ;;
    esac
    CMD+=("${extra[@]}")
}

resetting_server() { # PORT -> RPID, once it runs: binds 127.0.0.1:PORT as soon as it is free
    # (≤ 10 s), then accepts every connection and resets it (SO_LINGER 0, then close)
    python3 -c '
import socket, struct, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
print("ready", flush=True)
end = time.time() + 10
while True:
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
        break
    except OSError:
        if time.time() > end:
            sys.exit(1)
        time.sleep(0.001)
s.listen(128)
print("bound", flush=True)
while True:
    c, _ = s.accept()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()' "$1" </dev/null >"$RAW/resetter.out" 2>/dev/null &
    RPID=$!
    wait_line "$RAW/resetter.out"
}

bring_fault() { # FAULT LOAD PID_OF_LOAD -> the fault, once the load has run AT seconds
    local fault=$1 load=$2 load_pid=$3
    [[ $fault == never ]] && return
    sleep "$AT"
    case "$fault" in
        killed) kill -KILL "$SPID" 2>/dev/null || true ;;
        frozen) kill -STOP "$SPID" 2>/dev/null || true ;;
        reset)
            if [[ $load == crr ]]; then
                # Running first, it binds within a millisecond of the kill: few refused.
                : >"$RAW/resetter.out"
                resetting_server "$PORT"
                kill -KILL "$SPID" 2>/dev/null || true
                local _
                for _ in $(seq 20); do
                    [[ $(wc -l <"$RAW/resetter.out") -ge 2 ]] && break
                    sleep 0.05
                done
                [[ $(wc -l <"$RAW/resetter.out") -ge 2 ]] ||
                    echo "$BENCH: $PORT: the resetting server did not take the port within 1 s" >&2
                while kill -0 "$load_pid" 2>/dev/null; do sleep 0.1; done
                kill -KILL "$RPID" 2>/dev/null || true
                wait "$RPID" 2>/dev/null || true
                return
            fi
            while kill -0 "$load_pid" 2>/dev/null; do
                ss -K "( sport = :$PORT or dport = :$PORT )" >/dev/null 2>&1 || true
                sleep 0.1
            done
            ;;
    esac
}

summarize() { # DB -> "ok<TAB>errors<TAB>saved" from the history
    local db=$1 status doc
    status=$("$WB" history --json --db "$db" 2>/dev/null | jq -r '.runs[0].status // empty' 2>/dev/null || true)
    if [[ -z $status ]]; then
        printf -- '-\t-\tno\n'
        return
    fi
    doc=$("$WB" show last --json --db "$db" 2>/dev/null)
    jq -r --arg st "$status" '
        ([.. | objects | select(has("ok") and has("errors")) | .ok | numbers] | add // 0) as $ok
        | ([.. | objects | select(has("by_kind")) | .by_kind[]] | group_by(.kind)
           | map("\(.[0].kind)=\(map(.count) | add)") | join(",")) as $e
        | "\($ok)\t\(if $e == "" then "none" else $e end)\tyes (\($st))"' <<<"$doc"
}

one() { # PROTO LOAD FAULT -> one row of the table
    local proto=$1 load=$2 fault=$3 db=$RAW/$1-$2-$3.db start end code
    start_target "$proto" "$load" "$fault"
    command_of "$proto" "$load"
    start=$(date +%s.%N)
    timeout -s KILL 60 "$WB" "${CMD[@]}" --db "$db" </dev/null >"$RAW/$proto-$load-$fault.out" 2>&1 &
    local load_pid=$!
    bring_fault "$fault" "$load" "$load_pid" &
    local fault_pid=$!
    code=0
    wait "$load_pid" || code=$?
    end=$(date +%s.%N)
    wait "$fault_pid" 2>/dev/null || true
    kill -CONT "$SPID" 2>/dev/null || true
    kill -KILL "$SPID" 2>/dev/null || true
    wait "$SPID" 2>/dev/null || true
    local ok errs saved
    IFS=$'\t' read -r ok errs saved < <(summarize "$db")
    printf '%-22s %8.1f %5s %10s  %-48s %s\n' "$proto/$load/$fault" "$(echo "$end - $start" | bc)" \
        "$code" "$ok" "$errs" "$saved"
}

{
    echo "# bench/faults.sh on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, wirebench $(git describe --always --dirty)"
    printf '%-22s %8s %5s %10s  %-48s %s\n' case "ended s" exit ok "errors by kind" saved
    for proto in "${PROTOS[@]}"; do
        for load in "${LOADS[@]}"; do
            for fault in "${FAULTS[@]}"; do
                applies "$proto" "$load" "$fault" && one "$proto" "$load" "$fault"
            done
        done
    done
} | tee "$OUT"
