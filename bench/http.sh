#!/usr/bin/env bash
# wirebench's HTTP/1.1 client side by side with wrk, h2load and ab, and with curl, against one
# nginx of its own, on 127.0.0.1 only:
#   (1) requests on keep-alive: a 100-byte file, 50 connections, one client thread, 5 s per run;
#       wirebench / wrk / h2load / ab in turn in each round: requests/s and requests per client
#       CPU-second (requests ÷ the client process's user + system time)
#   (2) a 1 GiB download (a sparse file), one connection: wirebench vs curl, MB/s and client CPU
#   (3) HTTP/2 cleartext (h2c, prior knowledge): the same file on 50 connections, one stream in
#       flight on each; wirebench --http2 / h2load in turn, requests/s and per client CPU-second
# nginx runs 1 worker pinned to CPU 0; every client is pinned to CPU 1.
# See bench/README.md ("http.sh") for how to read the output.
#
# Usage: bench/http.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   1 round of each, 3 s runs, no discarded warm-up round (~40 s): a smoke check
# Environment: ROUNDS=N overrides the measured rounds of (1) and (3), DL_ROUNDS=N those of (2) (default 3; --quick 1).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then
    ROUNDS=${ROUNDS:-1}
    DL_ROUNDS=${DL_ROUNDS:-1}
    DUR=3          # seconds per measured request run
    WARM_ROUND=0   # no discarded first round
else
    ROUNDS=${ROUNDS:-3}
    DL_ROUNDS=${DL_ROUNDS:-3}
    DUR=5
    WARM_ROUND=1   # one short, discarded round per tool before the measured ones
fi
WARM_DUR=2
CONNS=50           # the same connections for every tool
SMALL_BYTES=100    # the small file
SERVER_CPU=0       # nginx (master and its one worker)
CLIENT_CPU=1       # every client
TOOLS=(wirebench wrk h2load ab)
H2_TOOLS=(wirebench h2load) # (3)

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
# nginx may live in /usr/sbin, outside a non-root PATH.
NGINX=$(command -v nginx 2>/dev/null || true)
[[ -n $NGINX || ! -x /usr/sbin/nginx ]] || NGINX=/usr/sbin/nginx
need_pkgs=()
[[ -n $NGINX ]] || need_pkgs+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need_pkgs+=(wrk)
command -v h2load >/dev/null 2>&1 || need_pkgs+=(nghttp2-client)
command -v ab >/dev/null 2>&1 || need_pkgs+=(apache2-utils)
command -v curl >/dev/null 2>&1 || need_pkgs+=(curl)
if ((${#need_pkgs[@]})); then
    install_pkgs "${need_pkgs[@]}"
    NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
fi
require_cmds python3 taskset timeout cargo truncate "$NGINX"
if [[ $(nproc) -lt 2 ]]; then
    echo "bench/http.sh: needs 2 CPUs (nginx on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU); this machine has $(nproc)" >&2
    exit 1
fi
# h2load's -D is the duration of a timing-based run (nghttp2 ≥ 1.27); older ones lack it.
# (The help text is captured whole: `grep -q` could close the pipe early, and with pipefail
# h2load's SIGPIPE would read as "no -D".)
if [[ $(h2load --help 2>&1) != *--duration=* ]]; then
    echo "bench/http.sh: this h2load ($(h2load --version 2>&1 | head -n1)) has no -D/--duration" >&2
    exit 1
fi

RESULTS=$ROOT/bench/results
bench_setup "$RESULTS/raw/http" # every run's own output, overwritten each time (ignored by git)
RECORDS=$RAW/records.jsonl # one JSON object per measured run; the summary is computed from it
COMMANDS=$RAW/commands.txt # every tool command exactly as run (without the timeout/CPU wrappers)
: >"$RECORDS"
: >"$COMMANDS"

# ---------------------------------------------------------------------------------------------
# Process bookkeeping: every server we start is remembered by PID and stopped on exit.
# nginx is stopped with SIGTERM to its master (the master then stops its worker; SIGKILL to the
# master would orphan the worker). The temporary directory is removed after nginx has gone.
# ---------------------------------------------------------------------------------------------
NGX_DIR=""
NGX_PID=""
NGX_WORKERS=()
cleanup() {
    local pid i
    stop_all
    # The master waits for its worker before it exits; make sure, by the worker's own PID.
    for pid in "${NGX_WORKERS[@]}"; do
        for ((i = 0; i < 50; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "bench/http.sh: nginx worker $pid outlived its master; sending it SIGTERM" >&2
            kill -TERM "$pid" 2>/dev/null || true
        fi
    done
    if [[ -n $NGX_DIR && -d $NGX_DIR && $NGX_DIR == */wirebench-http.* ]]; then
        rm -rf "$NGX_DIR"
    fi
}


# Reads one client run's output and writes one record (a JSON line) plus the line printed for
# the run. Usage: python3 $PARSE KIND TOOL ROUND OUT CPUFILE RC SRV_TICKS BG RECORDS
PARSE=$RAW/parse.py
cat >"$PARSE" <<'EOF'
import json, os, re, sys

kind, tool, rnd, out, cpufile, rc, srv_ticks, bg, records = sys.argv[1:]
rc, srv_ticks, bg = int(rc), int(srv_ticks), int(bg)
user, sys_, wall, maxrss, nvcsw, nivcsw = open(cpufile).read().split()
user, sys_, wall, maxrss, nvcsw, nivcsw = float(user), float(sys_), float(wall), int(maxrss), int(nvcsw), int(nivcsw)
cpu = user + sys_
hz = os.sysconf("SC_CLK_TCK")
srv_pct = srv_ticks / hz / wall * 100 if wall > 0 else 0.0
text = open(out, errors="replace").read()

def fail(msg):
    sys.stderr.write(f"{tool} ({kind}, round {rnd}, exit {rc}): {msg}\n--- {out}:\n{text[-3000:]}\n")
    sys.exit(1)

def us(value, unit):  # a duration with a unit, as the tools print them -> µs
    return float(value) * {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6}[unit]

def grab(pattern, conv=float, flags=0):
    m = re.search(pattern, text, flags)
    return conv(m.group(1)) if m else None

rec = {"sec": kind, "tool": tool, "round": rnd, "rc": rc, "user": user, "sys": sys_, "cpu": cpu,
       "wall": wall, "maxrss": maxrss, "nvcsw": nvcsw, "nivcsw": nivcsw, "srv": round(srv_pct, 1), "bg": bg}

if kind in ("rps", "h2"):
    lat = ""
    if tool == "wirebench":
        try:
            j = json.loads(text)
        except ValueError:
            fail("no JSON result")
        ok, errs = j["ok"], j["errors"]["total"]
        rps = j["throughput"]["ops_per_s"]
        p50, p99 = j["latency"]["p50_us"], j["latency"]["p99_us"]
        rec.update(ok=ok, errors=errs, rps=rps, dur=j["duration_s"], p50=p50, p99=p99,
                   gen=j["generator"]["cpu_percent_of_threads"],
                   gen_cpu=j["generator"]["cpu_user_s"] + j["generator"]["cpu_sys_s"],
                   status_2xx=(j.get("http") or {}).get("status_2xx"))
        lat = f"p50 {p50:.0f} µs  p99 {p99:.0f} µs"
    elif tool == "wrk":
        m = re.search(r"(\d+) requests in ([\d.]+)(\w+),", text)
        rps = grab(r"Requests/sec:\s+([\d.]+)")
        if not m or rps is None:
            fail("no 'N requests in' / 'Requests/sec' line")
        done = int(m.group(1))
        sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
        errs = sum(map(int, sock.groups())) if sock else 0
        non2xx = grab(r"Non-2xx or 3xx responses: (\d+)", int) or 0
        a = re.search(r"Latency\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)", text)
        avg = us(a.group(1), a.group(2)) if a else None
        rec.update(ok=done - non2xx, errors=errs + non2xx, rps=rps, dur=us(m.group(2), m.group(3)) / 1e6, mean=avg)
        lat = f"mean {avg:.0f} µs" if avg is not None else ""
    elif tool == "h2load":
        m = re.search(r"finished in ([\d.]+)(\w+), ([\d.]+) req/s", text)
        r = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", text)
        if not m or not r:
            fail("no 'finished in' / 'requests:' line")
        t = re.search(r"time for request:\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)\s+([\d.]+)(\w+)", text)
        mean = us(t.group(5), t.group(6)) if t else None
        rec.update(ok=int(r.group(4)), errors=int(r.group(5)) + int(r.group(7)), rps=float(m.group(3)),
                   dur=us(m.group(1), m.group(2)) / 1e6, mean=mean)
        lat = f"mean {mean:.0f} µs" if mean is not None else ""
    elif tool == "ab":
        done = grab(r"Complete requests:\s+(\d+)", int)
        failed = grab(r"Failed requests:\s+(\d+)", int)
        rps = grab(r"Requests per second:\s+([\d.]+)")
        dur = grab(r"Time taken for tests:\s+([\d.]+) seconds")
        if done is None or rps is None:
            fail("no 'Complete requests' / 'Requests per second' line")
        non2xx = grab(r"Non-2xx responses:\s+(\d+)", int) or 0
        p50 = grab(r"^\s+50%\s+(\d+)", float, re.M)
        p99 = grab(r"^\s+99%\s+(\d+)", float, re.M)
        keep = grab(r"Keep-Alive requests:\s+(\d+)", int)
        rec.update(ok=done - failed - non2xx, errors=failed + non2xx, rps=rps, dur=dur,
                   p50=p50 * 1e3 if p50 is not None else None, p99=p99 * 1e3 if p99 is not None else None,
                   keepalive=keep)
        lat = f"p50 {p50:.0f} ms  p99 {p99:.0f} ms" if p50 is not None else ""
    rec["per_cpu_s"] = rec["ok"] / cpu if cpu > 0 else 0.0
    extra = f"  generator CPU {rec['gen']:.0f}%" if tool == "wirebench" else ""
    note = f"  [background load {bg}% of a CPU]" if bg > 10 else ""
    errn = f"  ERRORS {rec['errors']}" if rec["errors"] else ""
    print(f"   round {rnd:<7} {tool:<9} {rec['rps']:>9,.0f} req/s  {rec['ok']:>8,} ok in {rec['dur']:.2f} s  "
          f"client CPU {cpu:5.2f} s ({cpu / wall * 100:3.0f}% of {wall:.1f} s)  {rec['per_cpu_s']:>9,.0f} req/CPU-s  "
          f"nginx CPU ~{srv_pct:3.0f}%  {lat}{extra}{errn}{note}")
else:  # download
    if tool == "wirebench":
        try:
            j = json.loads(text)
        except ValueError:
            fail("no JSON result")
        h = j.get("http") or {}
        mbps, body = h.get("goodput_mb_per_s"), h.get("body_bytes")
        if mbps is None or body is None:
            fail("no http.goodput_mb_per_s / http.body_bytes")
        rec.update(mbps=mbps, body=body, dur=j["duration_s"], ok=j["ok"], errors=j["errors"]["total"],
                   gen=j["generator"]["cpu_percent_of_threads"])
    else:  # curl -w '%{speed_download} %{size_download} %{time_total} %{http_code}'
        f = text.split()
        if len(f) < 4 or rc != 0:
            fail("curl gave no speed/size/time/status")
        bps, size, total, code = float(f[0]), int(float(f[1])), float(f[2]), f[3]
        rec.update(mbps=bps / 1e6, body=size, dur=total, ok=1 if code == "200" else 0, errors=0 if code == "200" else 1)
    rec["wall_mbps"] = rec["body"] / wall / 1e6 if wall > 0 else 0.0
    note = f"  [background load {bg}% of a CPU]" if bg > 10 else ""
    short = "" if rec["body"] == 1 << 30 else f"  SHORT BODY ({rec['body']} of {1 << 30} bytes)"
    print(f"   round {rnd:<7} {tool:<9} {rec['mbps']:8.1f} MB/s  body {rec['body']:,} B in {rec['dur']:.3f} s  "
          f"client CPU {cpu:5.2f} s (user {user:.2f} + sys {sys_:.2f})  process wall {wall:.2f} s -> {rec['wall_mbps']:.0f} MB/s  "
          f"sleeps {nvcsw}  nginx CPU ~{srv_pct:3.0f}%{short}{note}")
if rnd != "warm-up":
    with open(records, "a") as f:
        f.write(json.dumps(rec) + "\n")
EOF

worker_ticks() { # -> user + system clock ticks used so far by the nginx worker(s)
    local pid sum=0 t
    for pid in "${NGX_WORKERS[@]}"; do
        t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
        sum=$((sum + t))
    done
    echo "$sum"
}

# ---------------------------------------------------------------------------------------------
# nginx of our own, from a temporary directory
# ---------------------------------------------------------------------------------------------
NGX_DIR=$(mktemp -d "${TMPDIR:-/tmp}/wirebench-http.XXXXXX")
DIR_ALIAS=$NGX_DIR # shown as DIR in the commands
# Run as root, nginx's worker switches to an unprivileged user: it must be able to read the files.
chmod 755 "$NGX_DIR"
mkdir -p "$NGX_DIR/www" "$NGX_DIR/tmp" "$NGX_DIR/logs"
head -c "$SMALL_BYTES" /dev/zero | tr '\0' 'x' >"$NGX_DIR/www/small.bin"
truncate -s 1G "$NGX_DIR/www/big.bin" # sparse: no data blocks, so nginx's reads cost no disk I/O
chmod 755 "$NGX_DIR/www"
chmod 644 "$NGX_DIR/www/small.bin" "$NGX_DIR/www/big.bin"
BIG_ON_DISK_KIB=$(du -k "$NGX_DIR/www/big.bin" | awk '{ print $1 }')
PORT=$(free_port)
H2_PORT=$(free_port)
NGX_CONF=$NGX_DIR/nginx.conf
cat >"$NGX_CONF" <<EOF
# bench/http.sh: one worker, no access log, sendfile, keep-alive for (almost) ever
worker_processes 1;
daemon off;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/logs/error.log warn;
events {
    worker_connections 1024;
}
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    default_type application/octet-stream;
    client_body_temp_path $NGX_DIR/tmp/body;
    proxy_temp_path $NGX_DIR/tmp/proxy;
    fastcgi_temp_path $NGX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGX_DIR/tmp/uwsgi;
    scgi_temp_path $NGX_DIR/tmp/scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $NGX_DIR/www;
        location / { }
    }
    # (3) h2c with prior knowledge. nginx turns TCP_NODELAY on only for keep-alive HTTP/1.1
    # and TLS, so Nagle stays on here, and with sendfile each small body would wait ~40 ms for
    # the client's delayed ACK; without sendfile a DATA frame's header and data go in one write.
    server {
        listen 127.0.0.1:$H2_PORT http2;
        sendfile off;
        root $NGX_DIR/www;
        location / { }
    }
}
EOF
cp "$NGX_CONF" "$RAW/nginx.conf"
# -e: nginx's start-up error log, before it has read the configuration (not /var/log).
logcmd taskset -c "$SERVER_CPU" "$NGINX" -c "$NGX_CONF" -p "$NGX_DIR" -e "$NGX_DIR/logs/error.log"
taskset -c "$SERVER_CPU" "$NGINX" -c "$NGX_CONF" -p "$NGX_DIR" -e "$NGX_DIR/logs/error.log" \
    </dev/null >"$RAW/nginx.out" 2>&1 &
NGX_PID=$!
PIDS+=("$NGX_PID")
if ! wait_bound tcp "$PORT" "$NGX_PID"; then
    cat "$RAW/nginx.out" "$NGX_DIR/logs/error.log" >&2 2>/dev/null || true
    exit 1
fi
for i in $(seq 50); do
    mapfile -t NGX_WORKERS < <(ps -o pid= --ppid "$NGX_PID" | tr -d ' ')
    ((${#NGX_WORKERS[@]} == 0)) || break
    sleep 0.1
done
BASE=http://127.0.0.1:$PORT
check=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "$BASE/small.bin")
if [[ $check != "200 $SMALL_BYTES" ]]; then
    echo "bench/http.sh: GET $BASE/small.bin gave '$check', expected '200 $SMALL_BYTES'" >&2
    exit 1
fi
H2_BASE=http://127.0.0.1:$H2_PORT
check=$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_version} %{http_code} %{size_download}' "$H2_BASE/small.bin")
if [[ $check != "2 200 $SMALL_BYTES" ]]; then
    echo "bench/http.sh: GET $H2_BASE/small.bin (h2c) gave '$check', expected '2 200 $SMALL_BYTES'" >&2
    exit 1
fi
echo "== nginx $("$NGINX" -v 2>&1 | sed 's#.*/##') (master pid $NGX_PID, worker ${NGX_WORKERS[*]:-?}, CPU $SERVER_CPU): $BASE/ from $NGX_DIR/www"
echo "   small.bin $SMALL_BYTES B; big.bin 1 GiB, sparse ($BIG_ON_DISK_KIB KiB on disk): its holes read as zeros, so disk reads cost nothing"

# ---------------------------------------------------------------------------------------------
# (1) requests on keep-alive
# ---------------------------------------------------------------------------------------------
rps_cmd() { # TOOL DUR -> sets CMD (the client command, without wrappers)
    local url=$BASE/small.bin
    case "$1" in
        wirebench) CMD=("$WB" run "$url" -c "$CONNS" --threads 1 -d "${2}s" --json -q) ;;
        wrk) CMD=(wrk -t1 -c"$CONNS" -d"${2}s" "$url") ;;
        # --h1: HTTP/1.1 (no pipelining: one request in flight per connection, like the others);
        # -D: a timing-based run of that many seconds (-n is then ignored).
        h2load) CMD=(h2load --h1 -c"$CONNS" -t1 -D "$2" "$url") ;;
        # -t: time limit; -n: a cap far above what fits in the time (ab stops at whichever comes first).
        ab) CMD=(ab -k -c "$CONNS" -t "$2" -n 10000000 "$url") ;;
    esac
}

h2_cmd() { # TOOL DUR -> sets CMD: h2c with prior knowledge, one stream in flight per connection
    local url=$H2_BASE/small.bin
    case "$1" in
        wirebench) CMD=("$WB" run --http2 "$url" -c "$CONNS" --pipeline 1 --threads 1 -d "${2}s" --json -q) ;;
        # h2load speaks h2c with prior knowledge to http:// URLs by default; -m 1: one stream each.
        h2load) CMD=(h2load -c"$CONNS" -m1 -t1 -D "$2" "$url") ;;
    esac
}

rps_run() { # KIND TOOL ROUND DUR: KIND rps (HTTP/1.1) or h2 (section 3)
    local kind=$1 tool=$2 round=$3 dur=$4 tag out rc=0 bg t0 t1
    tag=$kind-r$round-$tool
    out=$RAW/$tag.out
    if [[ $kind == h2 ]]; then h2_cmd "$tool" "$dur"; else rps_cmd "$tool" "$dur"; fi
    logcmd taskset -c "$CLIENT_CPU" "${CMD[@]}"
    wait_quiet
    t0=$(worker_ticks)
    bounded $((dur + 30)) python3 "$CPUWRAP" "$RAW/$tag.cpu" taskset -c "$CLIENT_CPU" "${CMD[@]}" \
        >"$out" 2>"$RAW/$tag.err" || rc=$?
    t1=$(worker_ticks)
    bg=$(bg_after)
    if [[ ! -s $RAW/$tag.cpu ]]; then
        echo "$tool did not finish (exit $rc): $(tail -n 5 "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   ($tool exit $rc, see $out and $RAW/$tag.err)" >&2
    python3 "$PARSE" "$kind" "$tool" "$round" "$out" "$RAW/$tag.cpu" "$rc" $((t1 - t0)) "$bg" "$RECORDS"
}

echo "== (1) GET /small.bin ($SMALL_BYTES B) on keep-alive: $CONNS connections, 1 client thread on CPU $CLIENT_CPU, ${DUR} s per run; nginx (1 worker) on CPU $SERVER_CPU"
alternate "$ROUNDS" "${TOOLS[@]/#/rps_run rps }"

# ---------------------------------------------------------------------------------------------
# (2) a 1 GiB download
# ---------------------------------------------------------------------------------------------
dl_cmd() { # TOOL -> sets CMD
    local url=$BASE/big.bin
    case "$1" in
        wirebench) CMD=("$WB" run "$url" -n 1 --threads 1 --timeout 60s --json -q) ;;
        curl) CMD=(curl -s -o /dev/null -w '%{speed_download} %{size_download} %{time_total} %{http_code}\n' "$url") ;;
    esac
}

dl_run() { # TOOL ROUND [DUR]: DUR unused, a download runs to its end
    local tool=$1 round=$2 tag out rc=0 bg t0 t1
    tag=dl-r$round-$tool
    out=$RAW/$tag.out
    dl_cmd "$tool"
    logcmd taskset -c "$CLIENT_CPU" "${CMD[@]}"
    wait_quiet
    t0=$(worker_ticks)
    bounded 90 python3 "$CPUWRAP" "$RAW/$tag.cpu" taskset -c "$CLIENT_CPU" "${CMD[@]}" \
        >"$out" 2>"$RAW/$tag.err" || rc=$?
    t1=$(worker_ticks)
    bg=$(bg_after)
    if [[ ! -s $RAW/$tag.cpu ]]; then
        echo "$tool did not finish (exit $rc): $(tail -n 5 "$RAW/$tag.err")" >&2
        exit 1
    fi
    ((rc == 0)) || echo "   ($tool exit $rc, see $out and $RAW/$tag.err)" >&2
    python3 "$PARSE" dl "$tool" "$round" "$out" "$RAW/$tag.cpu" "$rc" $((t1 - t0)) "$bg" "$RECORDS"
}

echo "== (2) GET /big.bin (1 GiB, sparse: no disk reads), 1 connection, client on CPU $CLIENT_CPU; nginx sendfile on CPU $SERVER_CPU"
# Read the file once so that every measured download finds the same (zero-filled) page cache.
cat "$NGX_DIR/www/big.bin" >/dev/null
alternate "$DL_ROUNDS" "dl_run wirebench" "dl_run curl"

# ---------------------------------------------------------------------------------------------
# (3) HTTP/2 cleartext (h2c, prior knowledge)
# ---------------------------------------------------------------------------------------------
echo "== (3) GET /small.bin ($SMALL_BYTES B) over h2c: $CONNS connections, 1 stream in flight on each, 1 client thread on CPU $CLIENT_CPU, ${DUR} s per run; nginx (same worker) on CPU $SERVER_CPU"
alternate "$ROUNDS" "${H2_TOOLS[@]/#/rps_run h2 }"

kill -TERM "$NGX_PID" 2>/dev/null || true
wait "$NGX_PID" 2>/dev/null || true
PIDS=()
echo "   nginx stopped (SIGTERM to master $NGX_PID); error log: $(wc -l <"$NGX_DIR/logs/error.log" 2>/dev/null || echo '?') line(s)"
cp "$NGX_DIR/logs/error.log" "$RAW/nginx-error.log" 2>/dev/null || true

# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------
HEADER=$(
    echo "wirebench bench/http.sh$( ((QUICK)) && echo ' --quick')   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "wirebench $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (+ uncommitted src changes)');" \
        "$("$NGINX" -v 2>&1 | sed 's#.*version: ##');" \
        "$(wrk -v 2>&1 | head -n1 | awk '{print "wrk", $2}');" \
        "$(h2load --version 2>&1 | head -n1);" \
        "ab $(ab -V | head -n1 | grep -o 'Version [^ ]*' | sed 's/Version //');" \
        "$(curl --version | head -n1 | awk '{print "curl", $2}');" \
        "kernel $(uname -r); $(nproc) CPUs"
    echo "(1) $ROUNDS measured round(s) of ${DUR} s per tool, $(printf '%s ' "${TOOLS[@]}" | sed 's/ $//; s# # / #g') in turn$( ((WARM_ROUND)) && echo ", after one discarded ${WARM_DUR} s warm-up round");" \
        "(2) $DL_ROUNDS measured round(s) per tool, wirebench / curl in turn$( ((WARM_ROUND)) && echo ', after one discarded warm-up round');" \
        "(3) $ROUNDS measured round(s) of ${DUR} s per tool, wirebench / h2load in turn$( ((WARM_ROUND)) && echo ", after one discarded ${WARM_DUR} s warm-up round")"
)
python3 - "$RECORDS" "$RESULTS/http.txt" "$HEADER" "$QUIET_PCT" "$WAITED" "$COMMANDS" "$CONNS" "$DUR" \
    "$SMALL_BYTES" "$BIG_ON_DISK_KIB" "$SERVER_CPU" "$CLIENT_CPU" <<'EOF'
import json, re, statistics, sys

(records, dest, header, quiet, waited, commands, conns, dur, small, big_kib, scpu, ccpu) = sys.argv[1:]
quiet = int(quiet)
rows = [json.loads(l) for l in open(records) if l.strip()]

def med(xs):
    return statistics.median(xs) if xs else float("nan")

def fmt_list(xs, digits=0):
    return " ".join(f"{x:,.{digits}f}" for x in xs)

def pick(sec, tool, key):
    return [r[key] for r in rows if r["sec"] == sec and r["tool"] == tool and r.get(key) is not None]

summary, detail = [], []

# (1)
tools = ["wirebench", "wrk", "h2load", "ab"]
rps = {t: med(pick("rps", t, "rps")) for t in tools}
per = {t: med(pick("rps", t, "per_cpu_s")) for t in tools}
summary.append(f"(1) GET /small.bin ({small} B) on keep-alive, {conns} connections, 1 client thread on CPU {ccpu}, "
               f"nginx 1 worker on CPU {scpu}, {dur} s runs; medians over the rounds")
summary.append(f"    {'':<10}{'requests/s':>12}{'wb/tool':>9}{'req per client CPU-s':>23}{'wb/tool':>9}"
               f"{'client CPU':>12}{'nginx CPU':>11}   latency as the tool reports it")
for t in tools:
    cli = med([r["cpu"] / r["wall"] * 100 for r in rows if r["sec"] == "rps" and r["tool"] == t])
    srv = med(pick("rps", t, "srv"))
    if t == "wirebench":
        lat = f"p50 {med(pick('rps', t, 'p50')):.0f} µs, p99 {med(pick('rps', t, 'p99')):.0f} µs"
        r1 = r2 = "—"
    else:
        r1, r2 = f"{rps['wirebench'] / rps[t]:.2f}", f"{per['wirebench'] / per[t]:.2f}"
        if t == "ab":
            lat = f"p50 {med(pick('rps', t, 'p50')) / 1e3:.0f} ms, p99 {med(pick('rps', t, 'p99')) / 1e3:.0f} ms (whole ms)"
        else:
            lat = f"mean {med(pick('rps', t, 'mean')):.0f} µs (no percentiles printed)"
    summary.append(f"    {t:<10}{rps[t]:>12,.0f}{r1:>9}{per[t]:>23,.0f}{r2:>9}{cli:>11.0f}%{srv:>10.0f}%   {lat}")
beats = {t: per["wirebench"] > per[t] for t in ("ab", "wrk")}
verdict = "met" if all(beats.values()) else "MISSED"
summary.append(
    f"    goal: wirebench beats ab and wrk on requests per client CPU-second: {verdict} "
    f"(wirebench/wrk {per['wirebench'] / per['wrk']:.2f}, wirebench/ab {per['wirebench'] / per['ab']:.2f}; "
    f"h2load, not in the goal: {per['wirebench'] / per['h2load']:.2f})")
def paired(sec, base, other, key):  # wirebench / other, each round against the same round's wirebench run
    b = {r["round"]: r[key] for r in rows if r["sec"] == sec and r["tool"] == base}
    return [b[r["round"]] / r[key] for r in rows if r["sec"] == sec and r["tool"] == other and r["round"] in b and r[key]]
pr = {t: (paired("rps", "wirebench", t, "rps"), paired("rps", "wirebench", t, "per_cpu_s")) for t in tools[1:]}
summary.append(
    "    paired (median of the per-round ratios wirebench/tool, each against the wirebench run of its round; less\n"
    "    sensitive to the machine changing state between rounds): "
    + "; ".join(f"{t} req/s {med(a):.2f}, req/CPU-s {med(b):.2f} [{fmt_list(b, 2)}]" for t, (a, b) in pr.items()))
summary.append(
    "    full latency histogram: wirebench (HdrHistogram, 3 significant digits, merged exactly, whole histogram in\n"
    "    its JSON) and wrk (every request counted in 1-µs bins up to its 2 s timeout; it prints percentiles only\n"
    "    with --latency, not passed here, so its line shows the mean). ab keeps every request's times (O(requests)\n"
    "    memory) but prints percentiles in whole milliseconds; h2load keeps a random sample of at most 1,000,000\n"
    "    request times per thread and prints only min/max/mean/sd. No histogram is exported by wrk, h2load or ab.")
errs = {t: sum(pick("rps", t, "errors")) for t in tools}
for t in tools:
    detail.append(f"  (1) {t:<9} req/s [{fmt_list(pick('rps', t, 'rps'))}]  req per CPU-s [{fmt_list(pick('rps', t, 'per_cpu_s'))}]  "
                  f"client CPU s [{fmt_list(pick('rps', t, 'cpu'), 2)}]  nginx CPU % [{fmt_list(pick('rps', t, 'srv'))}]  errors {errs[t]}")
detail.append(f"  (1) wirebench generator CPU % [{fmt_list(pick('rps', 'wirebench', 'gen'), 1)}] (its own figure; "
              f"user+sys by itself s [{fmt_list(pick('rps', 'wirebench', 'gen_cpu'), 2)}] vs by wait4 [{fmt_list(pick('rps', 'wirebench', 'cpu'), 2)}])")
ka = pick("rps", "ab", "keepalive")
if ka:
    detail.append(f"  (1) ab Keep-Alive requests [{fmt_list(ka)}] (of Complete requests [{fmt_list(pick('rps', 'ab', 'ok'))}])")

# (2)
wm, cm = pick("dl", "wirebench", "mbps"), pick("dl", "curl", "mbps")
if wm and cm:
    ratio = med(wm) / med(cm)
    verdict = "met" if ratio >= 0.95 else "MISSED"
    wc, cc = med(pick("dl", "wirebench", "cpu")), med(pick("dl", "curl", "cpu"))
    summary.append("")
    summary.append(f"(2) GET /big.bin, 1 GiB (a sparse file: its holes read as zeros, so disk reads cost nothing), 1 connection, "
                   f"client on CPU {ccpu}, nginx sendfile on CPU {scpu}")
    summary.append(f"    wirebench {med(wm):,.0f} MB/s  curl {med(cm):,.0f} MB/s  ratio wirebench/curl {ratio:.2f} "
                   f"(goal ≥ 0.95: {verdict}); client CPU wirebench {wc:.2f} s, curl {cc:.2f} s per GiB "
                   f"(ratio {wc / cc:.2f}); MB = 10^6 bytes")
    pd = paired("dl", "wirebench", "curl", "mbps")
    summary.append(f"    paired: median of the per-round ratios (each wirebench download / the curl one after it) "
                   f"{med(pd):.2f} [{fmt_list(pd, 2)}]; one download takes {med(pick('dl', 'curl', 'dur')):.2f} s here")
    for t in ("wirebench", "curl"):
        detail.append(f"  (2) {t:<9} MB/s [{fmt_list(pick('dl', t, 'mbps'))}]  by process wall time [{fmt_list(pick('dl', t, 'wall_mbps'))}]  "
                      f"client CPU s user [{fmt_list(pick('dl', t, 'user'), 2)}] sys [{fmt_list(pick('dl', t, 'sys'), 2)}]  "
                      f"sleeps (voluntary context switches) [{fmt_list(pick('dl', t, 'nvcsw'))}]  nginx CPU % [{fmt_list(pick('dl', t, 'srv'))}]  body bytes [{' '.join(str(b) for b in pick('dl', t, 'body'))}]")
    detail.append(f"  (2) big.bin on disk: {big_kib} KiB (sparse)")

# (3)
h2t = ["wirebench", "h2load"]
if all(pick("h2", t, "rps") for t in h2t):
    hr = {t: med(pick("h2", t, "rps")) for t in h2t}
    hp = {t: med(pick("h2", t, "per_cpu_s")) for t in h2t}
    summary.append("")
    summary.append(f"(3) GET /small.bin ({small} B) over HTTP/2 cleartext (h2c, prior knowledge), {conns} connections, one stream in "
                   f"flight on each, 1 client thread on CPU {ccpu}, nginx 1 worker on CPU {scpu}, {dur} s runs; medians")
    summary.append(f"    {'':<10}{'requests/s':>12}{'wb/tool':>9}{'req per client CPU-s':>23}{'wb/tool':>9}"
                   f"{'client CPU':>12}{'nginx CPU':>11}   latency as the tool reports it")
    for t in h2t:
        cli = med([r["cpu"] / r["wall"] * 100 for r in rows if r["sec"] == "h2" and r["tool"] == t])
        srv = med(pick("h2", t, "srv"))
        if t == "wirebench":
            lat = f"p50 {med(pick('h2', t, 'p50')):.0f} µs, p99 {med(pick('h2', t, 'p99')):.0f} µs"
            r1 = r2 = "—"
        else:
            r1, r2 = f"{hr['wirebench'] / hr[t]:.2f}", f"{hp['wirebench'] / hp[t]:.2f}"
            lat = f"mean {med(pick('h2', t, 'mean')):.0f} µs (no percentiles printed)"
        summary.append(f"    {t:<10}{hr[t]:>12,.0f}{r1:>9}{hp[t]:>23,.0f}{r2:>9}{cli:>11.0f}%{srv:>10.0f}%   {lat}")
    a, b = paired("h2", "wirebench", "h2load", "rps"), paired("h2", "wirebench", "h2load", "per_cpu_s")
    summary.append(f"    paired (per-round ratios wirebench/h2load): req/s {med(a):.2f}, req/CPU-s {med(b):.2f} [{fmt_list(b, 2)}]")
    for t in h2t:
        detail.append(f"  (3) {t:<9} req/s [{fmt_list(pick('h2', t, 'rps'))}]  req per CPU-s [{fmt_list(pick('h2', t, 'per_cpu_s'))}]  "
                      f"client CPU s [{fmt_list(pick('h2', t, 'cpu'), 2)}]  nginx CPU % [{fmt_list(pick('h2', t, 'srv'))}]  errors {sum(pick('h2', t, 'errors'))}")

detail.append(f"  waited {waited} s in all for a quiet machine before runs")
busy = [f"{r['sec']} round {r['round']} {r['tool']} ({r['bg']}%)" for r in rows if int(r["bg"]) > quiet]
if busy:
    detail.append(f"  background load above {quiet}% of a CPU (others using the machine) during: " + "; ".join(busy))
else:
    detail.append(f"  the machine was quiet (background load ≤ {quiet}% of a CPU) around every measured run")

seen, cmds = set(), []
for line in open(commands):
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line.strip())
    if line not in seen:
        seen.add(line)
        cmds.append("  " + line)

text = "\n".join(
    [header, "", *summary, "",
     "wb/tool = wirebench / that tool, from the medians (higher: wirebench did more). requests/s is each tool's own",
     "figure; requests per client CPU-second = successful requests ÷ (user + system CPU seconds of the client",
     "process over its whole life, start-up and wind-down included, by wait4), the same measure for every tool.",
     "client CPU = that CPU time over the process's wall time; nginx CPU = its worker's CPU over the same time.",
     "Per run (in run order within each tool):", *detail, "",
     "Commands (exactly as run, without the timeout/CPU-time wrappers; wirebench = a copy of",
     "target/release/wirebench; DIR = the temporary directory, PORT = a free port; nginx.conf in raw/http/):", *cmds]
) + "\n"
print("\n== summary")
print(text, end="")
with open(dest, "w") as f:
    f.write(text)
EOF
echo "(written to bench/results/http.txt; raw outputs in bench/results/raw/http/)"
