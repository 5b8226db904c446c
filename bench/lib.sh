# Shared by the bench scripts. Source it first thing, then call bench_args "$@":
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"; bench_args "$@"
# It moves to the repository root (ROOT), parses --quick / --help, and provides the set-up
# (bench_setup), process bookkeeping (PIDS, stop_pid, cleanup on exit), ports and readiness
# waits, the CPU-time wrapper, the quiet-machine check and small helpers. Nothing here starts a
# process that outlives the call (or, for servers in PIDS, the script) that started it.

BENCH=bench/$(basename "$0")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

bench_args() { # "$@" -> QUICK (0 or 1); --help prints the script's leading comment block
    local arg
    QUICK=0
    for arg in "$@"; do
        case "$arg" in
            --quick) QUICK=1 ;;
            -h | --help)
                awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
                exit 0
                ;;
            *)
                echo "$BENCH: unknown argument '$arg' (only --quick is accepted)" >&2
                exit 2
                ;;
        esac
    done
    if ((QUICK)); then WAIT_BUDGET=15; else WAIT_BUDGET=60; fi # seconds of waiting in all
}

install_pkgs() { # PACKAGE... -> installed from Debian's packages (needs root; says how if not)
    (($#)) || return 0
    if [[ $(id -u) -ne 0 ]]; then
        echo "$BENCH: missing $*; run as root or: sudo apt-get install -y $*" >&2
        exit 1
    fi
    echo "== installing $* (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y "$@"; then
        apt-get update
        apt-get install -y "$@"
    fi
}

require_cmds() { # CMD... -> exits naming the first one missing
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || { echo "$BENCH: '$tool' not found" >&2; exit 1; }
    done
}

bench_setup() { # DIR -> RAW=DIR made afresh (ignored by git), the CPU wrapper in it, and WB: a
    # snapshot of the release binary, so that a rebuild in target/ during the bench changes nothing.
    RAW=$1
    rm -rf "$RAW"
    mkdir -p "$RAW"
    write_cpuwrap
    if [[ -n ${WB_BIN:-} ]]; then
        # A binary given (WB_BIN=PATH, e.g. the ci profile's: release without LTO, for benches of
        # verdicts rather than speed): no build.
        echo "== using $WB_BIN"
        cp "$WB_BIN" "$RAW/wirebench"
    else
        echo "== cargo build --release"
        cargo build --release --quiet
        # Where cargo built it: CARGO_TARGET_DIR (another profile's build, say) if set.
        cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/wirebench" "$RAW/wirebench"
    fi
    WB=$RAW/wirebench
    autogroup_note
}

# With the scheduler's autogroups on, nice acts only within a session: another session's build
# at nice 10 takes a whole CPU share from a benchmark whatever its priority (a 1 ms server
# measured p50 1-20 ms with it on, 1.10-1.12 ms with it off). Said, not changed: it is the
# machine's setting.
autogroup_note() {
    local f=/proc/sys/kernel/sched_autogroup_enabled
    if [[ -r $f && $(<"$f") == 1 ]]; then
        echo "$BENCH: note: kernel.sched_autogroup_enabled=1, so other sessions' work is not held back by nice; for quiet figures: sysctl -w kernel.sched_autogroup_enabled=0" >&2
    fi
}

# Process bookkeeping: every server we start goes in PIDS and is stopped on exit. A script with
# more to undo (http.sh: nginx's worker, a temporary directory) defines its own cleanup, which
# calls stop_all.
PIDS=()
stop_all() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
cleanup() { stop_all; }
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_pid() { # stop one server we started, wait for it, and forget its PID (it may be reused)
    local pid keep=()
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    for pid in "${PIDS[@]}"; do
        [[ $pid == "$1" ]] || keep+=("$pid")
    done
    PIDS=("${keep[@]}")
}

alternate() { # N CMD... -> each CMD (a function and its first arguments, as one string) is run
    # with ROUND DUR appended, in turn: one discarded warm-up round of WARM_DUR first when
    # WARM_ROUND is set, then N measured rounds of DUR, A B A B (docs/method.md, "Comparing fairly")
    local n=$1 r cmd
    shift
    if ((WARM_ROUND)); then
        for cmd in "$@"; do $cmd warm-up "$WARM_DUR"; done
    fi
    for ((r = 1; r <= n; r++)); do
        for cmd in "$@"; do $cmd "$r" "$DUR"; done
    done
}

logcmd() { # cmd... -> appended to $COMMANDS, shell-quoted, the binary shown as "wirebench" and
    # $DIR_ALIAS (a temporary directory, if set) as DIR
    local line="" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then
            line+=" $arg"
        else
            line+=" '${arg//\'/\'\\\'\'}'"
        fi
    done
    line=${line# }
    line=${line//"$WB"/wirebench}
    [[ -z ${DIR_ALIAS:-} ]] || line=${line//"$DIR_ALIAS"/DIR}
    echo "$line" >>"$COMMANDS"
}

free_port() { # [PROTO] (tcp, the default, or udp) -> a port free on 127.0.0.1 for that protocol
    python3 - "${1:-tcp}" <<'EOF'
import socket, sys
kind = socket.SOCK_STREAM if sys.argv[1] == "tcp" else socket.SOCK_DGRAM
s = socket.socket(socket.AF_INET, kind)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
EOF
}

wait_bound() { # PROTO PORT PID: wait (≤ 5 s) until a socket listens (tcp) or is bound (udp) on PORT
    python3 - "$1" "$2" "$3" <<'EOF'
import os, sys, time
proto, port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    with open(f"/proc/net/{proto}") as f:
        for line in f.readlines()[1:]:
            local, st = line.split()[1], line.split()[3]
            if int(local.split(":")[1], 16) == port and (proto == "udp" or st == "0A"):
                sys.exit(0)
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(f"server (pid {pid}) exited before binding {proto} port {port}")
    time.sleep(0.05)
sys.exit(f"nothing bound to {proto} 127.0.0.1:{port} after 5 s")
EOF
}

wait_url() { # FILE PID: wait (≤ 5 s) for a wirebench server's first stdout line, its URL
    local i
    for ((i = 0; i < 100; i++)); do
        if [[ -s $1 && $(head -n1 "$1") =~ ^(tcp|udp|http)://[^[:space:]]+ ]]; then
            echo "${BASH_REMATCH[0]}"
            return 0
        fi
        kill -0 "$2" 2>/dev/null || { echo "wirebench server exited: $(cat "$1")" >&2; return 1; }
        sleep 0.05
    done
    echo "wirebench server printed no URL in 5 s" >&2
    return 1
}

# Runs a client and writes the client process's own CPU time (wait4 rusage of that child: user,
# sys), its wall time, peak RSS (KiB) and voluntary / involuntary context switches to FILE: the
# same measure for every tool, start-up and wind-down included, beside wirebench's self-reported
# generator CPU. Usage: python3 "$CPUWRAP" FILE cmd...
write_cpuwrap() { # -> $CPUWRAP, in $RAW
    CPUWRAP=$RAW/cpuwrap.py
    cat >"$CPUWRAP" <<'EOF'
import os, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
p = subprocess.Popen(cmd)
_, status, ru = os.wait4(p.pid, 0)
p.returncode = os.waitstatus_to_exitcode(status)
wall = time.monotonic() - t0
with open(out, "w") as f:
    f.write(f"{ru.ru_utime} {ru.ru_stime} {wall} {ru.ru_maxrss} {ru.ru_nvcsw} {ru.ru_nivcsw}\n")
sys.exit(p.returncode % 256)
EOF
}

server_ticks() { # PID -> user + system clock ticks used so far
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

vm_hwm_kib() { # PID -> the process's peak resident set (VmHWM), KiB
    awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# Background load: others may be building or measuring on this machine too. Before each run we
# wait (within a budget) until the machine is quiet, and after it we look again; the larger of the
# two busy figures (% of one CPU, outside our idle servers) is printed with the run and flagged
# in the summary when above QUIET_PCT.
QUIET_PCT=10
WAITED=0
busy_pct() { # SECONDS -> % of one CPU that was busy (all CPUs added) over the next SECONDS
    python3 - "$1" <<'EOF2'
import sys, time
def busy():
    f = open("/proc/stat").readline().split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, f[:8])
    return user + nice + system + irq + softirq + steal, user + nice + system + idle + iowait + irq + softirq + steal
b0, t0 = busy(); time.sleep(float(sys.argv[1])); b1, t1 = busy()
ncpu = len([l for l in open("/proc/stat") if l.startswith("cpu") and l[3].isdigit()])
print(round((b1 - b0) / max(t1 - t0, 1) * ncpu * 100))
EOF2
}
BG_BEFORE=0
wait_quiet() { # sets BG_BEFORE
    local start=$SECONDS
    BG_BEFORE=$(busy_pct 0.5)
    while ((BG_BEFORE > QUIET_PCT && WAITED + SECONDS - start < WAIT_BUDGET)); do
        sleep 0.5
        BG_BEFORE=$(busy_pct 0.5)
    done
    WAITED=$((WAITED + SECONDS - start))
}
bg_after() { # -> the larger of the busy figures before and just after the run
    local after
    after=$(busy_pct 0.3)
    echo $((after > BG_BEFORE ? after : BG_BEFORE))
}
bg_note() { # BUSY% -> a warning for the run's line when the machine was not quiet
    if (($1 > QUIET_PCT)); then echo "  [background load ${1}% of a CPU]"; fi
}

client_cpu_pct() { # FILE -> % of one CPU used by the client over its whole life (warm-up included)
    awk '{ printf "%.1f", ($1 + $2) / $3 * 100 }' "$1"
}

# Every client is bounded in time: the run's own duration plus a margin, then killed.
bounded() { # SECONDS cmd...
    local limit=$1
    shift
    timeout -k 5 "$limit" "$@"
}

nginx_conf() { # DIR HTTP_BODY -> DIR/nginx.conf: one worker in the foreground, its pid, error log
    # and temp files under DIR (DIR/logs, DIR/tmp must exist), no access log, keep-alive without
    # a request limit, sendfile off (a body goes in one write with its head: see bench/http.sh on
    # h2c and Nagle); HTTP_BODY adds the server blocks and any other http-level lines
    cat >"$1/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $1/tmp/body;
    proxy_temp_path $1/tmp/proxy;
    fastcgi_temp_path $1/tmp/fastcgi;
    uwsgi_temp_path $1/tmp/uwsgi;
    scgi_temp_path $1/tmp/scgi;
    sendfile off;
$2
}
EOF
}

ok_of() { # TOOL OUTFILE -> successful requests as the tool reports them (wirebench* for any
    # wirebench binary; wrk and ab less their non-2xx replies and failures)
    case "$1" in
        wirebench*) json_get "$2" 'j["ok"]' ;;
        wrk) awk '/ requests in / { n = $1 } /Non-2xx/ { e = $NF } END { print n - e }' "$2" ;;
        h2load) sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$2" ;;
        floor*) sed -n 's/^floor: \([0-9]*\) requests.*/\1/p' "$2" ;;
        ab) awk '/^Complete requests:/ { c = $3 } /^Failed requests:/ { f = $3 } /^Non-2xx/ { e = $3 } END { print c - f - e }' "$2" ;;
        # sockperf: "[Total Run] RunTime=... SentMessages=N ReceivedMessages=M"
        sockperf) sed -n 's/.*ReceivedMessages=\([0-9]*\).*/\1/p' "$2" | tail -n 1 ;;
    esac
}

json_get() { # FILE 'python expression over j' -> value
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
