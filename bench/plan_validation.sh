#!/usr/bin/env bash
# bench/plan_validation.sh [BIN...]: how long `study PLAN --dry-run` takes to read, validate and
# list a plan of 1,000, 5,000 and 10,000 targets (issue 39, item 4: validation is linear), for
# each binary given (default target/release/wirebench): a run study, a comparison (5 runs per
# target) and a run study whose targets have flags of their own. Prints wall and CPU seconds
# (user + system), peak RSS and the exit code. Nothing is sent: a dry run measures nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BINS=${*:-target/release/wirebench}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
plan() { # plan N KIND -> file
    local n=$1 kind=$2 f="$T/$2-$1.toml"
    {
        printf 'title = "%s targets"\ncommand = "%s"\n[targets]\n' "$n" "${kind%-own}"
        for ((i = 0; i < n; i++)); do
            if [[ $kind == *-own ]]; then
                printf 't%d = { url = "tcp://127.0.0.%d:%d", run = { connections = "%d" } }\n' \
                    $i $((1 + i % 200)) $((1000 + i)) $((1 + i % 3))
            else
                printf 't%d = "tcp://127.0.0.%d:%d"\n' $i $((1 + i % 200)) $((1000 + i))
            fi
        done
        printf '[run]\nrequests = 10\n'
    } >"$f"
    echo "$f"
}
echo "# bench/plan_validation.sh $BINS -- $(date -u +%FT%TZ), $(nproc) vCPUs, load average $(cut -d' ' -f1 /proc/loadavg)"
printf '%-34s %-12s %7s %9s %8s %8s %5s\n' binary plan targets runs wall_s cpu_s rss_MB
for bin in $BINS; do
    for kind in run compare run-own; do
        for n in 1000 5000 10000; do
            f=$(plan $n $kind)
            /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$bin" study "$f" --dry-run >"$T/out" 2>/dev/null && code=0 || code=$?
            read -r wall user sys rss <"$T/time"
            runs=$(grep -c '  run ' "$T/out" || true)
            printf '%-34s %-12s %7s %9s %8s %8.2f %5d%s\n' "$bin" "$kind" "$n" "$runs" "$wall" \
                "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$( ((code == 0)) || echo "  exit $code")"
        done
    done
done
