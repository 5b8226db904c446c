#!/usr/bin/env bash
# Work per client CPU-second, wirebench beside its peers, on 127.0.0.1 only (issue 21 items 2, 3):
#   udp     64 B UDP request/response, one flow: wirebench run udp:// against its UDP echo
#           server vs sockperf ping-pong against sockperf's UDP server
#   crr     GET /small.bin (100 B) from nginx, a new connection per request, 10 at a time:
#           wirebench --no-keepalive vs ab (no -k) vs wrk with Connection: close
#   http1   (--http1) GET /small.bin on 50 (CONNS) keep-alive connections: wirebench vs wrk -t1 vs ab -k,
#           and the floor (bench/floor.rs: the same requests with nothing but send, recv and
#           epoll_wait, no parsing or clock per request): a reference for the kernel's share, no goal;
#           with FLOORS=1 also floor-work, the floor with the least a load generator must do per
#           request (the head parsed, two clock reads, the latency into an HdrHistogram), and
#           floor-tokio, that work on tokio with a task per connection: references, no goal
#   tls     (--tls) HTTPS/1.1 on 50 keep-alive connections: wirebench vs wrk vs h2load --h1
#   h2-m1, h2-m10, h2-m100 (--h2) GET /small.bin over h2c (prior knowledge), 10 connections
#           with 1, 10 or 100 streams each: wirebench --http2 --pipeline M vs h2load -c10 -mM -t1
#   h2tls-m1, h2tls-m10, h2tls-m100 (--h2tls) the same over TLS (h2 by ALPN, nginx's self-signed
#           certificate: wirebench --insecure; h2load does not check it)
#   tls-crr (--tls) HTTPS, a new connection (a TLS handshake) per request, 10 at a time:
#           wirebench (session resumption on, its default) and wirebench --no-tls-resume vs ab
#           (no -k) vs wrk with Connection: close; nginx logs $ssl_session_reused, so the share
#           of resumed handshakes is counted for each tool
# Servers (nginx with one worker, wirebench's and sockperf's UDP servers) are pinned to CPU 0,
# every client to CPU 1 (taskset -c). Each round runs every tool of a comparison in turn for DUR
# seconds; the figure is successful requests ÷ the client process's user + system CPU seconds
# (os.wait4), the ratio wirebench/peer is taken per round (paired), and the table shows its
# median and the range over the rounds, and its geometric mean with a 95% interval, which
# settles issue 21's goal for the comparison (met, NOT met) or says the rounds did not.
#
# Usage: bench/per_cpu.sh [--quick] [--tls | --http1 | --crr | --h2 | --h2tls]   (without any: udp and crr,
#   written to bench/results/per_cpu.txt; with --tls: tls and tls-crr, written to
#   bench/results/tls.txt; with --http1: http1, written to bench/results/http1_per_cpu.txt; with
#   --crr: crr alone, written to bench/results/crr_per_cpu.txt; with --h2: h2-m1, h2-m10 and
#   h2-m100, written to bench/results/h2_per_cpu.txt; with --h2tls: h2tls-m1, h2tls-m10 and
#   h2tls-m100, written to bench/results/h2tls_per_cpu.txt)
#   WB_OLD=PATH (with --http1, --crr, --h2 or --h2tls) runs that wirebench binary too, as wirebench-old: before/after
#   --quick   1 round of 2 s runs, no warm-up round: a smoke check
# Environment: ROUNDS=N measured rounds (default 5; --quick 1), DUR=seconds per run (default 4),
#   TOGETHER=1 the tools of a comparison run at the same time on CPU 1 instead of in turn, so
#   that the machine's state is the same for all of them (written to NAME_together.txt; not
#   with --tls, whose count of resumed sessions reads one log per run).
#   With --http1: FLOORS=1 adds floor-work and floor-tokio (into http1_floors*.txt); CONNS=N
#   connections per client instead of 50, and HTTP1_TOOLS="wirebench ab" just those tools
#   (both into a file named after them, e.g. http1_per_cpu_c10_together.txt); the tool floor-pad
#   is floor-tokio with FLOOR_PAD's options (default --touch 16; see bench/floor.rs), to price
#   a kind of work per request beside floor-tokio.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TLS=0
HTTP1=0
CRR=0
H2=0
H2TLS=0
args=()
for a in "$@"; do
    case "$a" in
        --tls) TLS=1 ;;
        --http1) HTTP1=1 ;;
        --crr) CRR=1 ;;
        --h2) H2=1 ;;
        --h2tls) H2TLS=1 ;;
        *) args+=("$a") ;;
    esac
done
bench_args "${args[@]}"
if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DUR=${DUR:-2}
    WARM_ROUND=0
else
    ROUNDS=${ROUNDS:-5}
    DUR=${DUR:-4}
    WARM_ROUND=1
fi
WARM_DUR=1
SERVER_CPU=0
CLIENT_CPU=1
NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
require_cmds python3 taskset timeout sockperf ab wrk h2load openssl "$NGINX"
RESULTS=$ROOT/bench/results
OUT_NAME=per_cpu
((TLS)) && OUT_NAME=tls
((HTTP1)) && OUT_NAME=http1_per_cpu
((CRR)) && OUT_NAME=crr_per_cpu
((H2)) && OUT_NAME=h2_per_cpu
((HTTP1 && ${FLOORS:-0})) && OUT_NAME=http1_floors
# With --http1: CONNS keep-alive connections per client (default 50); another count, or
# HTTP1_TOOLS, writes a results file of its own (e.g. http1_per_cpu_c10_together.txt).
CONNS=${CONNS:-50}
if [[ ! $CONNS =~ ^[1-9][0-9]{0,4}$ ]]; then
    echo "$BENCH: CONNS=$CONNS: give a whole number of connections, e.g. CONNS=10" >&2
    exit 2
fi
for t in ${HTTP1_TOOLS:-}; do
    case $t in
        wirebench | wrk | ab | floor | floor-work | floor-tokio | floor-pad) ;;
        wirebench-old) [[ -n ${WB_OLD:-} ]] || { echo "$BENCH: HTTP1_TOOLS: wirebench-old needs WB_OLD=PATH" >&2; exit 2; } ;;
        *)
            echo "$BENCH: HTTP1_TOOLS: no tool '$t' (wirebench, wirebench-old, wrk, ab, floor, floor-work, floor-tokio, floor-pad)" >&2
            exit 2
            ;;
    esac
done
((!HTTP1 || CONNS == 50)) || OUT_NAME+=_c$CONNS
((!HTTP1)) || [[ -z ${HTTP1_TOOLS:-} ]] || OUT_NAME+=_$(tr ' ' '_' <<<"$HTTP1_TOOLS")
# floor-pad's options name its file too (e.g. ..._floor-pad_tick50_together.txt).
FLOOR_PAD=${FLOOR_PAD:---touch 16}
[[ " ${HTTP1_TOOLS:-} " != *" floor-pad "* ]] || OUT_NAME+=_$(tr -d ' -' <<<"$FLOOR_PAD")
((H2TLS)) && OUT_NAME=h2tls_per_cpu
((!${TOGETHER:-0})) || OUT_NAME+=_together
if ((TLS + HTTP1 + CRR + H2 + H2TLS > 1)); then
    echo "$BENCH: --tls, --http1, --crr, --h2 and --h2tls are separate runs: give one of them" >&2
    exit 2
fi
if ((${TOGETHER:-0} && TLS)); then
    echo "$BENCH: TOGETHER=1 and --tls: the resumed sessions are counted from one log per run; run --tls in turn" >&2
    exit 2
fi
bench_setup "$RESULTS/raw/$OUT_NAME"
if ((HTTP1)); then
    cargo build --release --quiet --example floor
    cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/floor" "$RAW/floor"
    FLOOR=$RAW/floor
fi
RECORDS=$RAW/records.jsonl
COMMANDS=$RAW/commands.txt
: >"$RECORDS"
: >"$COMMANDS"

NGX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-percpu.XXXXXX")
cleanup() {
    stop_all
    if [[ $NGX_DIR == */wirebench-percpu.* ]]; then rm -rf "$NGX_DIR"; fi
}
chmod 755 "$NGX_DIR"
mkdir -p "$NGX_DIR/www" "$NGX_DIR/tmp" "$NGX_DIR/logs"
head -c 100 /dev/zero | tr '\0' 'x' >"$NGX_DIR/www/small.bin"
chmod -R a+rX "$NGX_DIR/www"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 \
    -keyout "$NGX_DIR/key.pem" -out "$NGX_DIR/cert.pem" \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1
PORT=$(free_port)
TLS_PORT=$(free_port)
H2_PORT=$(free_port)
H2TLS_PORT=$(free_port)
nginx_conf "$NGX_DIR" "    log_format reuse '\$ssl_session_reused';
    http2_max_concurrent_streams 128;
    server { listen 127.0.0.1:$PORT; root $NGX_DIR/www; }
    server { listen 127.0.0.1:$H2_PORT http2; root $NGX_DIR/www; }
    server {
        listen 127.0.0.1:$H2TLS_PORT ssl http2;
        ssl_certificate $NGX_DIR/cert.pem;
        ssl_certificate_key $NGX_DIR/key.pem;
        root $NGX_DIR/www;
    }
    server {
        listen 127.0.0.1:$TLS_PORT ssl;
        ssl_certificate $NGX_DIR/cert.pem;
        ssl_certificate_key $NGX_DIR/key.pem;
        access_log $NGX_DIR/logs/reuse.log reuse;
        root $NGX_DIR/www;
    }"
taskset -c "$SERVER_CPU" "$NGINX" -c "$NGX_DIR/nginx.conf" -p "$NGX_DIR" -e "$NGX_DIR/logs/error.log" \
    </dev/null >"$RAW/nginx.out" 2>&1 &
PIDS+=($!)
wait_bound tcp "$PORT" "$!"
wait_bound tcp "$TLS_PORT" "${PIDS[-1]}"
wait_bound tcp "$H2_PORT" "${PIDS[-1]}"
wait_bound tcp "$H2TLS_PORT" "${PIDS[-1]}"
URL=http://127.0.0.1:$PORT/small.bin
H2_URL=http://127.0.0.1:$H2_PORT/small.bin
H2TLS_URL=https://127.0.0.1:$H2TLS_PORT/small.bin
TLS_URL=https://127.0.0.1:$TLS_PORT/small.bin
REUSE_LOG=$NGX_DIR/logs/reuse.log

if ((!TLS && !HTTP1 && !CRR && !H2 && !H2TLS)); then
    taskset -c "$SERVER_CPU" "$WB" serve udp --threads 1 >"$RAW/udp-echo.txt" 2>&1 &
    PIDS+=($!)
    UDP_URL=$(wait_url "$RAW/udp-echo.txt" "$!")
    SPU_PORT=$(free_port udp)
    taskset -c "$SERVER_CPU" sockperf server -i 127.0.0.1 -p "$SPU_PORT" >"$RAW/sockperf-server.txt" 2>&1 &
    PIDS+=($!)
    wait_bound udp "$SPU_PORT" "$!"
fi

# The client command of TOOL in comparison CMP for SECONDS.
client_cmd() { # CMP TOOL SECONDS -> CMD array
    local cmp=$1 tool=$2 s=$3
    local wbr=("$WB" run --threads 1 -d "${s}s" --json -q --no-save)
    case "$cmp/$tool" in
        udp/wirebench) CMD=("${wbr[@]}" "$UDP_URL" --size 64 -c 1) ;;
        udp/sockperf) CMD=(sockperf ping-pong -i 127.0.0.1 -p "$SPU_PORT" -m 64 --mps=max -t "$s") ;;
        http1/wirebench) CMD=("${wbr[@]}" "$URL" -c "$CONNS") ;;
        http1/wirebench-old) CMD=("$WB_OLD" "${wbr[@]:1}" "$URL" -c "$CONNS") ;;
        http1/wrk) CMD=(wrk -t1 -c"$CONNS" -d"${s}s" "$URL") ;;
        http1/ab) CMD=(ab -k -c "$CONNS" -t "$s" -n 100000000 "$URL") ;;
        http1/floor) CMD=("$FLOOR" "127.0.0.1:$PORT" /small.bin "$CONNS" "$s") ;;
        http1/floor-work) CMD=("$FLOOR" "127.0.0.1:$PORT" /small.bin "$CONNS" "$s" --work) ;;
        http1/floor-tokio) CMD=("$FLOOR" "127.0.0.1:$PORT" /small.bin "$CONNS" "$s" --tokio) ;;
        # shellcheck disable=SC2086 # FLOOR_PAD is options, split on purpose
        http1/floor-pad) CMD=("$FLOOR" "127.0.0.1:$PORT" /small.bin "$CONNS" "$s" --tokio $FLOOR_PAD) ;;
        crr/wirebench) CMD=("${wbr[@]}" "$URL" -c 10 --no-keepalive) ;;
        crr/wirebench-old) CMD=("$WB_OLD" "${wbr[@]:1}" "$URL" -c 10 --no-keepalive) ;;
        crr/ab) CMD=(ab -c 10 -t "$s" -n 100000000 "$URL") ;;
        crr/wrk) CMD=(wrk -t1 -c10 -d"${s}s" -H "Connection: close" "$URL") ;;
        h2-m*/wirebench) CMD=("${wbr[@]}" --http2 "$H2_URL" -c 10 --pipeline "${cmp#h2-m}") ;;
        h2-m*/wirebench-old) CMD=("$WB_OLD" "${wbr[@]:1}" --http2 "$H2_URL" -c 10 --pipeline "${cmp#h2-m}") ;;
        h2-m*/h2load) CMD=(h2load -c10 -m"${cmp#h2-m}" -t1 -D "$s" "$H2_URL") ;;
        h2tls-m*/wirebench) CMD=("${wbr[@]}" --http2 "$H2TLS_URL" --insecure -c 10 --pipeline "${cmp#h2tls-m}") ;;
        h2tls-m*/wirebench-old) CMD=("$WB_OLD" "${wbr[@]:1}" --http2 "$H2TLS_URL" --insecure -c 10 --pipeline "${cmp#h2tls-m}") ;;
        h2tls-m*/h2load) CMD=(h2load -c10 -m"${cmp#h2tls-m}" -t1 -D "$s" "$H2TLS_URL") ;;
        tls/wirebench) CMD=("${wbr[@]}" "$TLS_URL" -c 50 --insecure) ;;
        tls/wrk) CMD=(wrk -t1 -c50 -d"${s}s" "$TLS_URL") ;;
        tls/h2load) CMD=(h2load --h1 -c50 -t1 -D "$s" "$TLS_URL") ;;
        tls-crr/wirebench) CMD=("${wbr[@]}" "$TLS_URL" -c 10 --no-keepalive --insecure) ;;
        tls-crr/wirebench-noresume) CMD=("${wbr[@]}" "$TLS_URL" -c 10 --no-keepalive --insecure --no-tls-resume) ;;
        tls-crr/ab) CMD=(ab -c 10 -t "$s" -n 100000000 "$TLS_URL") ;;
        tls-crr/wrk) CMD=(wrk -t1 -c10 -d"${s}s" -H "Connection: close" "$TLS_URL") ;;
    esac
}

measure() { # CMP TOOL ROUND -> one line; a record unless the warm-up
    local cmp=$1 tool=$2 round=$3 s=$DUR tag out rc=0 ok cpu lines0 lines1 reused=0 full=0
    [[ $round != warm-up ]] || s=$WARM_DUR
    tag=$cmp-$tool-r$round
    out=$RAW/$tag.out
    client_cmd "$cmp" "$tool" "$s"
    [[ $round != 1 ]] || logcmd taskset -c "$CLIENT_CPU" "${CMD[@]}"
    lines0=$(wc -l <"$REUSE_LOG" 2>/dev/null || echo 0)
    bounded $((s + 30)) python3 "$CPUWRAP" "$RAW/$tag.cpu" taskset -c "$CLIENT_CPU" "${CMD[@]}" \
        >"$out" 2>"$RAW/$tag.err" || rc=$?
    sleep 0.2 # nginx writes a request's log line after its response
    if [[ $cmp == tls* && -f $REUSE_LOG ]]; then
        reused=$(tail -n +"$((lines0 + 1))" "$REUSE_LOG" | grep -c '^r$' || true)
        full=$(tail -n +"$((lines0 + 1))" "$REUSE_LOG" | grep -c '^\.$' || true)
    fi
    ok=$(ok_of "$tool" "$out" 2>/dev/null || true)
    if ((rc != 0)) || [[ -z $ok || $ok == 0 ]]; then
        echo "$BENCH: $tool ($cmp) failed (exit $rc) or counted nothing; see $out" >&2
        tail -n 5 "$out" "$RAW/$tag.err" >&2
        exit 1
    fi
    cpu=$(awk '{ print $1 + $2 }' "$RAW/$tag.cpu")
    printf '   %-8s round %-7s %-19s %9d ok  client CPU %6.2f s  %9.0f per CPU-s%s\n' "$cmp" "$round" \
        "$tool" "$ok" "$cpu" "$(awk -v a="$ok" -v b="$cpu" 'BEGIN { print a / b }')" \
        "$([[ $cmp != tls* ]] || echo "  TLS sessions resumed $reused, full $full")"
    [[ $round == warm-up ]] ||
        printf '{"cmp": "%s", "tool": "%s", "round": "%s", "ok": %s, "cpu": %s, "reused": %s, "full": %s}\n' \
            "$cmp" "$tool" "$round" "$ok" "$cpu" "$reused" "$full" >>"$RECORDS"
}

if ((HTTP1)); then
    declare -A TOOLS=([http1]="wirebench${WB_OLD:+ wirebench-old} wrk ab floor$( ((${FLOORS:-0})) && echo " floor-work floor-tokio")")
    # HTTP1_TOOLS="wirebench ab": just these, e.g. a pair together with no third client beside it.
    TOOLS[http1]=${HTTP1_TOOLS:-${TOOLS[http1]}}
    ORDER=(http1)
elif ((CRR)); then
    declare -A TOOLS=([crr]="wirebench${WB_OLD:+ wirebench-old} ab wrk")
    ORDER=(crr)
elif ((H2)); then
    declare -A TOOLS=([h2-m1]="wirebench${WB_OLD:+ wirebench-old} h2load")
    TOOLS[h2-m10]=${TOOLS[h2-m1]}
    TOOLS[h2-m100]=${TOOLS[h2-m1]}
    ORDER=(h2-m1 h2-m10 h2-m100)
elif ((H2TLS)); then
    declare -A TOOLS=([h2tls-m1]="wirebench${WB_OLD:+ wirebench-old} h2load")
    TOOLS[h2tls-m10]=${TOOLS[h2tls-m1]}
    TOOLS[h2tls-m100]=${TOOLS[h2tls-m1]}
    ORDER=(h2tls-m1 h2tls-m10 h2tls-m100)
elif ((TLS)); then
    declare -A TOOLS=([tls]="wirebench wrk h2load" [tls-crr]="wirebench wirebench-noresume ab wrk")
    ORDER=(tls tls-crr)
else
    declare -A TOOLS=([udp]="wirebench sockperf" [crr]="wirebench ab wrk")
    ORDER=(udp crr)
fi
echo "== servers on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU; $ROUNDS round(s) of $DUR s"
# TOGETHER=1: the tools of a comparison run at the same time, all on CPU 1, against the same
# nginx, each for DUR seconds: the machine's state (the VM's steal, nginx's speed) is the same
# for all of them, instead of whatever it is in each one's turn. In turn, the same binary's
# rounds spread ±25% and a paired ratio 0.77-1.47 (h2c, 12 rounds); together, 1.00-1.06 for the
# same pair. It is another operating point: the client CPU is shared, so each tool runs with the
# others' code and data in its caches (user time per request rises for all, more for the tools
# whose per-request code is larger), and the tools compete for it rather than each waiting on nginx.
together() { # CMP ROUND
    local cmp=$1 round=$2 tool pids=() p
    for tool in ${TOOLS[$cmp]}; do
        measure "$cmp" "$tool" "$round" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || exit 1; done
}
for cmp in "${ORDER[@]}"; do
    if ((${TOGETHER:-0})); then
        ((!WARM_ROUND)) || together "$cmp" warm-up
        for ((r = 1; r <= ROUNDS; r++)); do together "$cmp" "$r"; done
        continue
    fi
    turns=()
    for tool in ${TOOLS[$cmp]}; do turns+=("measure $cmp $tool"); done
    alternate "$ROUNDS" "${turns[@]}"
done

python3 - "$RECORDS" "$RESULTS/$OUT_NAME.txt" "$COMMANDS" "$ROUNDS" "$DUR" \
    "$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo '+')" \
    "$(nginx -v 2>&1 | sed 's/.*: //'); $(sockperf --version 2>&1 | grep -o 'version [^ ]*' | head -n1 | sed 's/version/sockperf/'); $(wrk -v 2>&1 | head -n1 | awk '{print $1, $2}'); $(h2load --version 2>&1 | head -n1)" <<'EOF'
import json, math, os, re, statistics, sys, time
records, dest, commands, rounds, dur, rev, tools = sys.argv[1:]
rows = [json.loads(l) for l in open(records) if l.strip()]
med = statistics.median
# Issue 21's goals: wirebench's requests per client CPU-second over the peer's, per comparison.
GOALS = {"http1": 1.05, "h2-m1": 1.05, "h2-m10": 1.05, "h2-m100": 1.05, "h2tls-m1": 1.05,
         "h2tls-m10": 1.05, "h2tls-m100": 1.05, "tls": 1.0, "tls-crr": 1.0, "udp": 1.0, "crr": 1.0}
# Student's t, 97.5% quantile, by degrees of freedom (1.96 beyond the table).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

def interval(rr):
    """The geometric mean of paired ratios and its 95% t-interval (on the log-ratios, as
    `wirebench compare` does: src/summary/paired.rs)."""
    logs = [math.log(r) for r in rr]
    n = len(logs)
    m = statistics.fmean(logs)
    if n < 2:
        return math.exp(m), None, None
    half = (T975[n - 2] if n - 2 < len(T975) else 1.96) * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(m), math.exp(m - half), math.exp(m + half)

def verdict(cmp, rr):
    gm, lo, hi = interval(rr)
    if lo is None:
        return ""
    text = f"  geo-mean {gm:.2f} (95% CI {lo:.2f} - {hi:.2f})"
    goal = GOALS.get(cmp)
    if goal is not None:
        state = "met" if lo >= goal else "NOT met" if hi < goal else "not settled"
        text += f", goal >= {goal:.2f}: {state}"
    return text

lines = [f"wirebench bench/per_cpu.sh   {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}   wirebench {rev}",
         f"{tools}; nginx (1 worker) and the UDP servers on CPU 0, every client on CPU 1 (taskset -c);",
         f"{rounds} measured rounds of {dur} s per tool, "
         + ("the tools of a round all at once on CPU 1 (TOGETHER=1)" if os.environ.get("TOGETHER", "0") != "0" else "tools in turn within a round")
         + ", after a discarded warm-up round",
         "per CPU-s: successful requests / the client's user + system CPU seconds (wait4), median over rounds;",
         "ratio: wirebench / peer per round (paired), median [min - max] over the rounds (> 1: wirebench does more per CPU-s)",
         "geo-mean: the geometric mean of those ratios with its 95% t-interval (as `wirebench compare`); a goal is",
         "met when the whole interval is at or above it, NOT met when all of it is below, otherwise not settled",
         "by this many rounds on this machine",
         "on resumed TLS sessions: the share of nginx's log lines with $ssl_session_reused = r (in crr a request is a handshake)",
         ""]
for cmp in dict.fromkeys(r["cmp"] for r in rows):
    by = {}
    for r in rows:
        if r["cmp"] == cmp:
            by.setdefault(r["tool"], {})[r["round"]] = r
    wb = by.get("wirebench", {})
    for tool, rs in by.items():
        per = [r["ok"] / r["cpu"] for r in rs.values()]
        reuse = ""
        if cmp.startswith("tls"):
            ru, fu = sum(r["reused"] for r in rs.values()), sum(r["full"] for r in rs.values())
            reuse = f"  on resumed TLS sessions: {ru / max(ru + fu, 1) * 100:5.1f}% of {ru + fu} requests"
        ratio = ""
        for base in ("wirebench", "wirebench-old", "wirebench-noresume", "floor-pad"):
            if tool.startswith("wirebench") or tool == base or base not in by:
                continue
            b = by[base]
            rr = [b[k]["ok"] / b[k]["cpu"] / (rs[k]["ok"] / rs[k]["cpu"]) for k in rs if k in b]
            ratio += f"  {base}/{tool} {med(rr):.2f} [{min(rr):.2f} - {max(rr):.2f}]"
            if base in ("wirebench", "floor-pad"):
                # The floors are references (the kernel's share, and that plus the least work a
                # load generator must do), not peers with a goal; so is floor-pad, the price of
                # the work it adds.
                ratio += verdict(None if tool.startswith("floor") else cmp, rr)
        if tool.startswith("wirebench-"):
            rr = [wb[k]["ok"] / wb[k]["cpu"] / (rs[k]["ok"] / rs[k]["cpu"]) for k in rs if k in wb]
            ratio = f"  wirebench/{tool} {med(rr):.2f} [{min(rr):.2f} - {max(rr):.2f}]"
        lines.append(f"{cmp:<8} {tool:<19} {med(per):>10,.0f} per CPU-s  (rounds: {', '.join(f'{p:,.0f}' for p in per)}){ratio}{reuse}")
    lines.append("")
seen, cmds = set(), []
for line in open(commands):
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.strip())
    line = re.sub(r"-p \d+", "-p PORT", line)
    if line not in seen:
        seen.add(line)
        cmds.append("  " + line)
lines += ["Commands (as run, without the timeout/CPU wrappers; first round's durations):", *cmds]
text = "\n".join(lines) + "\n"
print("\n== summary\n" + text, end="")
open(dest, "w").write(text)
EOF
