#!/usr/bin/env bash
# Shards merged exactly (issue 19): what the per-second histograms cost in a result, and how
# fast `wirebench merge` adds 200 shard files of a 60 s run (goal: under 1 s and 100 MB).
#
# 1. One real run of DUR against `wirebench serve tcp` on 127.0.0.1 (-c 4, closed loop: the
#    widest per-second latency spread this machine gives). Its series' histograms (compressed
#    V2, base64) are measured per second, beside the same histograms uncompressed (inflated
#    here with zlib) and the rest of a series point.
# 2. A 60 s result is made of it: its measured seconds repeated up to 60 (real histograms of
#    this machine, not synthetic ones); its size must stay under 1 MB.
# 3. 200 shard files of that 60 s result (ranks 0..199 of one plan, starts 0..199 ms apart)
#    are merged by `wirebench merge`; wall time and peak RSS by /usr/bin/time, median of 3.
#
# Usage: bench/shards.sh [--quick]    (from the repository root, or from anywhere)
#   --quick   a 2 s run;  full: a 3 s run (every load here stays short)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_args "$@"

if ((QUICK)); then DUR=2s; else DUR=3s; fi
require_cmds python3 timeout cargo /usr/bin/time
bench_setup "$ROOT/bench/results/raw/shards"

"$WB" serve tcp >"$RAW/server.out" 2>"$RAW/server.err" &
PIDS+=($!)
URL=$(wait_url "$RAW/server.out" "${PIDS[0]}")
timeout 60 "$WB" run "$URL" -c 4 -d "$DUR" --json -q --no-save >"$RAW/one.json"
stop_all

python3 - "$RAW" <<'PY'
import base64, json, os, sys, zlib
raw = sys.argv[1]
doc = json.load(open(f"{raw}/one.json"))
pts = [p for p in doc["series"] if p.get("histogram")]
comp = [len(p["histogram"]) for p in pts]
unc = []
for p in pts:
    b = base64.b64decode(p["histogram"])
    unc.append(len(base64.b64encode(zlib.decompress(b[8:]))))
point = [len(json.dumps(p, separators=(",", ":"))) for p in pts]
n = len(pts)
print(f"== per-second histograms, {n} seconds of -c 4 (ok/s {doc['throughput']['ops_per_s']:.0f})")
print(f"compressed V2 + base64:   {sum(comp)/n:8.0f} B per second (min {min(comp)}, max {max(comp)})")
print(f"uncompressed V2 + base64: {sum(unc)/n:8.0f} B per second (what compression saves: {100*(1-sum(comp)/sum(unc)):.0f}%)")
print(f"whole series point:       {sum(point)/n:8.0f} B per second (JSON, histogram included)")
# A 60 s result from the measured seconds, repeated.
s60 = dict(doc)
s60["series"] = []
for i in range(60):
    p = dict(pts[i % n]); p["second"] = i; p["duration_s"] = 1.0
    s60["series"].append(p)
s60["duration_s"] = 60.0
text = json.dumps(s60, indent=2)
open(f"{raw}/sixty.json", "w").write(text)
print(f"60 s result: {len(text)/1e6:.3f} MB ({'under' if len(text) < 1e6 else 'OVER'} 1 MB)")
os.makedirs(f"{raw}/shards", exist_ok=True)
t0 = s60["started_unix_ms"]
for r in range(200):
    d = dict(s60)
    d["started_unix_ms"] = t0 + r
    d["shard"] = {"rank": r, "world": 200, "source": "--shard", "host": f"node{r:03}",
                  "share": {"connections": 1, "rate": None, "requests": None, "warmup_requests": None},
                  "plan_hash": "00000000bench200", "plan": {"url": "bench"},
                  "start_at_unix_ms": t0, "skew_ms": 0.5, "max_skew_ms": 10.0, "late": False}
    json.dump(d, open(f"{raw}/shards/shard-{r:03}.json", "w"))
PY

echo "== wirebench merge of 200 shard files of a 60 s run ($(du -sh "$RAW/shards" | cut -f1) on disk)"
for i in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$RAW/time.$i" "$WB" merge "$RAW"/shards/shard-*.json >"$RAW/merged.json"
done
python3 - "$RAW" <<'PY'
import json, sys
raw = sys.argv[1]
runs = sorted(tuple(map(float, open(f"{raw}/time.{i}").read().split())) for i in (1, 2, 3))
secs, kib = runs[1]
m = json.load(open(f"{raw}/merged.json"))
print(f"merge: {secs:.2f} s wall, peak RSS {kib/1024:.1f} MB (median of 3: {', '.join(f'{s:.2f} s' for s, _ in runs)})")
print(f"merged: {len(m['shards']['ranks'])} ranks, ok {m['ok']}, {len(m['series'])} seconds, p99 of second 0 {m['series'][0]['p99_us']} µs")
print("goal (< 1 s and < 100 MB):", "met" if secs < 1 and kib < 100 * 1024 else "NOT met")
PY
