#!/usr/bin/env bash
# bench/fuzz.sh [SECONDS] [TARGET...]: builds the fuzz targets in fuzz/ (cargo +nightly fuzz,
# or the same flags by hand on stable without it; no sanitizer, debug assertions and overflow
# checks on) and runs each for SECONDS (default
# 60), one at a time, with -rss_limit_mb=512 and -timeout=10. Each starts from its committed
# seeds (fuzz/corpus/T, read only) and what earlier runs found (fuzz/work/T, not committed).
# Prints a table: target, executions, executions/s, crashes, timeouts, out-of-memory, peak
# RSS; a crash, timeout or oom leaves its input in fuzz/artifacts/T/ (reproduce with
# `fuzz/target/x86_64-unknown-linux-gnu/release/T fuzz/artifacts/T/FILE`) and exits 1.
# RUNS=N stops each target after N executions instead (SECONDS stays the cap): the issue's goal
# is `RUNS=10000000 bench/fuzz.sh 7200`. Run it beside other work at the lowest priority with
# `chrt -i 0 bench/fuzz.sh ...` (SCHED_IDLE: it takes only CPU time nothing else wants).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_EACH=${1:-60}
shift || true
if ! [[ $SECONDS_EACH =~ ^[0-9]+$ ]] || ((SECONDS_EACH < 1)); then
    echo "bench/fuzz.sh: '$SECONDS_EACH' is not a number of seconds; e.g. bench/fuzz.sh 60" >&2
    exit 2
fi
RUNS=${RUNS:-}
if [[ -n $RUNS ]] && ! [[ $RUNS =~ ^[0-9]+$ ]]; then
    echo "bench/fuzz.sh: RUNS='$RUNS' is not a count of executions; e.g. RUNS=10000000" >&2
    exit 2
fi
ALL=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^wirebench-fuzz$')
TARGETS=${*:-$ALL}
if cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly fuzz build -s none -a >&2
else
    # Without cargo-fuzz: the same build by hand (its instrumentation flags, no sanitizer,
    # debug assertions and overflow checks on), on stable; --target keeps the flags off the
    # build scripts, as cargo-fuzz does.
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
        cargo build --release --manifest-path fuzz/Cargo.toml --target x86_64-unknown-linux-gnu \
        --target-dir fuzz/target --bins >&2
fi
BIN=fuzz/target/x86_64-unknown-linux-gnu/release
LOG=fuzz/work/logs
mkdir -p "$LOG"
failed=0
printf '%-15s %13s %8s %9s %7s %8s %4s %8s\n' target executions seconds exec/s crashes timeouts oom 'peak RSS'
for t in $TARGETS; do
    mkdir -p "fuzz/work/$t" "fuzz/artifacts/$t"
    before=$(ls "fuzz/artifacts/$t" | wc -l)
    started=$SECONDS
    "$BIN/$t" "fuzz/work/$t" "fuzz/corpus/$t" -max_total_time="$SECONDS_EACH" \
        ${RUNS:+-runs="$RUNS"} -rss_limit_mb=512 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" >"$LOG/$t.log" 2>&1 || true
    count() { ls "fuzz/artifacts/$t" | grep -c "^$1-" || true; }
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG/$t.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG/$t.log")
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$LOG/$t.log")
    crash=$(count crash) timeout=$(count timeout) oom=$(count oom)
    if (($(ls "fuzz/artifacts/$t" | wc -l) > before)) || [[ -z $runs ]]; then
        failed=1
    fi
    printf '%-15s %13s %8s %9s %7s %8s %4s %6s MB\n' "$t" "${runs:-?}" $((SECONDS - started)) \
        "${rate:-?}" "$crash" \
        "$timeout" "$oom" "${rss:-?}"
done
if ((failed)); then
    echo "findings (or a target that did not run): see fuzz/artifacts/ and $LOG/" >&2
    exit 1
fi
