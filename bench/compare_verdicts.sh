#!/bin/bash
# compare's verdicts, before and after issue 17: N comparisons of two identical `serve tcp`
# servers (every significant verdict is a false positive) and N of `serve tcp` against
# `serve tcp --delay 200us` (every verdict that misses the increase is a miss), each
# `compare a b -d 300ms --runs 5 --json -q` (about 3 s), loopback only.
# Usage: bench/compare_verdicts.sh BEFORE_BINARY AFTER_BINARY [N]   (prints a table)
set -u
BEFORE=$1 AFTER=$2 N=${3:-10}
export XDG_DATA_HOME=$(mktemp -d)
OUT=$(mktemp -d)
for tool in before after; do
  BIN=$BEFORE; [ $tool = after ] && BIN=$AFTER
  for case in same delay; do
    for i in $(seq 1 "$N"); do
      EXTRA=""; [ $case = delay ] && EXTRA="--delay 200us"
      $BIN serve tcp --listen 127.0.0.1:0 > $OUT/a.txt 2>&1 & PA=$!
      $BIN serve tcp --listen 127.0.0.1:0 $EXTRA > $OUT/b.txt 2>&1 & PB=$!
      sleep 0.3
      A=$(grep -o '127.0.0.1:[0-9]*' $OUT/a.txt | head -1); B=$(grep -o '127.0.0.1:[0-9]*' $OUT/b.txt | head -1)
      timeout 60 $BIN compare a=tcp://$A b=tcp://$B -d 300ms --runs 5 --json -q > $OUT/$tool-$case-$i.json
      kill $PA $PB; wait $PA $PB 2>/dev/null
    done
  done
done
python3 - "$OUT" "$N" <<'PY'
import json, sys, glob
out, n = sys.argv[1], int(sys.argv[2])
metrics = ["ops_per_s", "mean_us", "p50_us", "p95_us", "p99_us"]
print(f"| binary | case | " + " | ".join(metrics) + " | ± contradicts verdict |")
print("|---|---|" + "---|" * (len(metrics) + 1))
for tool in ["before", "after"]:
    for case in ["same", "delay"]:
        sig = {m: 0 for m in metrics}; seen = {m: 0 for m in metrics}; bad = 0
        for f in glob.glob(f"{out}/{tool}-{case}-*.json"):
            try: doc = json.load(open(f))
            except Exception: continue
            for v in doc["verdicts"]:
                m = v["metric"]; seen[m] += 1
                s = v["significant"] if "significant" in v else v["welch"]["significant"]
                if "low_pct" in v: lo, hi = v["low_pct"], v["high_pct"]
                else: lo, hi = v["difference_percent"] - v["ci95_percent"], v["difference_percent"] + v["ci95_percent"]
                thr = v.get("threshold_pct", 0.0)
                if s != (lo > thr or hi < -thr): bad += 1
                up = (v["difference_percent"] > 0) == (m != "ops_per_s")
                if s and (case == "same" or up): sig[m] += 1
        cells = [f"{sig[m]}/{seen[m]}" if seen[m] else "-" for m in metrics]
        what = "significant (false positives)" if case == "same" else "detected"
        print(f"| {tool} | {case}: {what} | " + " | ".join(cells) + f" | {bad} |")
PY
rm -rf "$OUT" "$XDG_DATA_HOME"
