#!/usr/bin/env bash
# What does a sweep add over the sum of its points' durations? (issue 9: at most 1 s in all.)
# One `wirebench serve tcp` on 127.0.0.1; `wirebench run` with two targets (the same server,
# named a and b) and --size 4,128,512..64k (10 sizes): 20 points of DUR each, in one command.
# The overhead is the command's wall time minus the sum of the points' measured durations (read
# from its --json document), i.e. connection set-up, plan building, summaries and the report.
#
# Usage: bench/sweep.sh [--quick]      (from the repository root, or from anywhere)
#   --quick   100 ms points (~3 s);  full: 500 ms points (~11 s)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then DUR=100ms; else DUR=500ms; fi
require_cmds python3 timeout cargo
bench_setup "$ROOT/bench/results/raw/sweep"

"$WB" serve tcp >"$RAW/server.out" 2>"$RAW/server.err" &
PIDS+=($!)
URL=$(wait_url "$RAW/server.out" "${PIDS[0]}")

start=$(date +%s.%N)
timeout 120 "$WB" run "a=$URL" "b=$URL" --size 4,128,512..64k -d "$DUR" --json -q >"$RAW/sweep.json"
end=$(date +%s.%N)

python3 - "$RAW/sweep.json" "$start" "$end" "$DUR" <<'PY' | tee "$ROOT/bench/results/sweep.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
points = doc["points"]
measured = sum(p["result"]["duration_s"] for p in points)
print(f"bench/sweep.sh: {len(points)} points of {sys.argv[4]} (2 targets x --size 4,128,512..64k)")
print(f"  wall {wall:.3f} s, measured {measured:.3f} s, overhead {wall - measured:.3f} s in all "
      f"({1000 * (wall - measured) / len(points):.1f} ms per point); goal: at most 1 s")
PY
