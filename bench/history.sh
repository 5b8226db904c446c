#!/usr/bin/env bash
# The results history at scale (issue 10): 1,000 stored runs with their histograms stay under
# 50 MB, and `wirebench history` lists them in under 100 ms.
#
# REAL real runs against `wirebench serve tcp` on 127.0.0.1 are stored first, of several shapes
# (closed loop with 1 to 16 connections, and open loop, whose documents carry two more
# histograms: service time and send lag), each measured for DUR; their rows are then copied
# (Python's sqlite3: the same documents, fresh ids and times) up to 1,000 rows. The size is the
# file's after a WAL checkpoint; the listing time is the median wall time of 11 runs of
# `wirebench history --limit 1000` (every row printed) and of the default `history` (50 rows).
#
# Usage: bench/history.sh [--quick]    (from the repository root, or from anywhere)
#   --quick   10 real runs of 300 ms (~10 s);  full: 40 real runs of 1 s (~60 s)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then REAL=10; DUR=300ms; else REAL=40; DUR=1s; fi
require_cmds python3 timeout cargo
bench_setup "$ROOT/bench/results/raw/history"
DB=$RAW/history.db

"$WB" serve tcp >"$RAW/server.out" 2>"$RAW/server.err" &
PIDS+=($!)
URL=$(wait_url "$RAW/server.out" "${PIDS[0]}")

shapes=("-c 1" "-c 4" "-c 16" "--rate 2000 -c 4" "-c 2 --size 1024")
for ((i = 0; i < REAL; i++)); do
    # shellcheck disable=SC2086 # the shape is several flags
    timeout 60 "$WB" run "$URL" ${shapes[i % ${#shapes[@]}]} -d "$DUR" -q --db "$DB" \
        --tag bench=history --tag "shape=$((i % ${#shapes[@]}))" >/dev/null 2>>"$RAW/runs.err"
done

python3 - "$DB" <<'PY'
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(runs)") if r[1] not in ("n",)]
real = db.execute("SELECT count(*) FROM runs").fetchone()[0]
need = 1000 - real
with db:
    for i in range(need):
        src = db.execute("SELECT n FROM runs ORDER BY n LIMIT 1 OFFSET ?", (i % real,)).fetchone()[0]
        sel = ", ".join("lower(hex(randomblob(8)))" if c == "id" else c for c in cols)
        cur = db.execute(f"INSERT INTO runs ({', '.join(cols)}) SELECT {sel} FROM runs WHERE n = ?", (src,))
        db.execute("INSERT INTO tags (run, key, value) SELECT ?, key, value FROM tags WHERE run = ?",
                   (cur.lastrowid, src))
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
PY

time_ms() { # ARGS... -> the median wall time of 11 runs, ms
    for _ in $(seq 11); do
        s=$(date +%s%N)
        "$WB" "$@" >/dev/null
        e=$(date +%s%N)
        echo $(((e - s) / 1000))
    done | sort -n | sed -n 6p | awk '{ printf "%.1f", $1 / 1000 }'
}
all=$(time_ms history --limit 1000 --db "$DB")
fifty=$(time_ms history --db "$DB")
json=$(time_ms history --limit 1000 --json --db "$DB")
rows=$("$WB" history --limit 2000 --json --db "$DB" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
bytes=$(stat -c %s "$DB")
doc=$("$WB" export last --db "$DB" | wc -c)

{
    echo "bench/history.sh$( ((QUICK)) && echo ' --quick'): $rows stored runs ($REAL real runs of $DUR, copied up to 1,000)"
    echo "  file: $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB (%.1f kB per run; one document %d bytes)", b / 1e6, b / 1e3 / 1000, 0 }' | sed "s/ 0 bytes/ $doc bytes/"); goal: under 50 MB"
    echo "  wirebench history --limit 1000: $all ms (median of 11); --json: $json ms; default (50 rows): $fifty ms; goal: under 100 ms"
    echo "  on: $(nproc) CPUs, $(uname -sr)"
} | tee "$ROOT/bench/results/history.txt"
