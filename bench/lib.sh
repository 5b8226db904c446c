# Shared by the bench scripts (source it after setting RAW and QUICK): the CPU-time wrapper,
# the quiet-machine check, and small helpers. Nothing here starts a process that outlives the
# call that started it.

# Runs a client and writes the client process's own CPU time (wait4 rusage of that child: user,
# sys), its wall time, peak RSS (KiB) and voluntary / involuntary context switches to FILE: the
# same measure for every tool, start-up and wind-down included, beside wirebench's self-reported
# generator CPU. Usage: python3 "$CPUWRAP" FILE cmd...
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
if ((QUICK)); then WAIT_BUDGET=15; else WAIT_BUDGET=60; fi # seconds of waiting in all
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

json_get() { # FILE 'python expression over j' -> value
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
