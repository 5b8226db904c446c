#!/bin/bash
# compare's verdicts on a noisy machine (issue 17's "Must show"), before and after: a CPU hog
# (`sh -c 'while :; do :; done'`) pinned with `taskset -c 1` beside two `wirebench serve tcp
# --delay` servers on CPU 1, the client on CPU 0, every process at nice -5 (so that other work
# at nice 10 on the machine stays out of the way; the hog shares the servers' priority).
# - same: `--delay 1ms` twice; every significant verdict is a false positive (N_SAME compares)
# - slow: `--delay 1ms` against `--delay 1200us` (+20% service time); a verdict significant in
#   the right direction (latency up, ops/s down) is a detection (N_SLOW compares)
# Each: `compare a b -d $DUR --runs $RUNS --json -q --no-save` (RUNS=20: ~45 s), fresh servers
# each time; the documents are kept in target/bench-noise-verdicts/.
# The hog is started and stopped here by its PID; loopback only.
# Usage: bench/noise_verdicts.sh BINARY... (e.g. a build of main before issue 17, then after)
#   Environment: N_SAME (default 40), N_SLOW (default 10), RUNS (default 20: what
#   `--runs auto` spends beside the hog), DUR (each run's duration, default 1s). Prints one
#   table row per binary and case, then each +20% comparison's mean and p50 verdicts.
#   PLACE=issue38: issue 38's placement instead: the hog alone pinned (`taskset -c 0`), the
#   servers and the client unpinned at the default priority, so the hog and whatever else the
#   machine runs reach them all. The table then also counts, per metric, the verdicts called in
#   the wrong direction (+20% case: latency down or ops/s up) and the inconclusive ones.
# The same measurement runs in CI, fewer times, as tests/compare_noise.rs
# (WIREBENCH_NOISE=full runs the counts above through the test suite).
set -u
N_SAME=${N_SAME:-40} N_SLOW=${N_SLOW:-10} RUNS=${RUNS:-20} DUR=${DUR:-1s} PLACE=${PLACE:-}
SRV=(nice -n -5 taskset -c 1) CLI=(nice -n -5 taskset -c 0) HOGPIN=(nice -n -5 taskset -c 1)
if [ "$PLACE" = issue38 ]; then
    SRV=() CLI=() HOGPIN=(taskset -c 0)
fi
export XDG_DATA_HOME=$(mktemp -d)
# OUT=DIR keeps the documents elsewhere (two of these at once); NOHOG=1: the hog is the
# caller's (one hog for several benches at once, started and stopped by the caller by its PID).
OUT=${OUT:-$(cd "$(dirname "$0")/.." && pwd)/target/bench-noise-verdicts}
rm -rf "$OUT"
mkdir -p "$OUT"
HOG=
if [ "${NOHOG:-0}" != 1 ]; then
    "${HOGPIN[@]}" sh -c 'while :; do :; done' &
    HOG=$!
fi
trap '[ -n "$HOG" ] && kill $HOG 2>/dev/null; rm -rf "$XDG_DATA_HOME"' EXIT
one() { # BIN CASE I -> $OUT/TAG-CASE-I.json
    local bin=$1 case=$2 i=$3 tag=$4 b=1ms pa pb a bb
    [ "$case" = slow ] && b=1200us
    "${SRV[@]}" "$bin" serve tcp --listen 127.0.0.1:0 --delay 1ms >"$OUT/a.txt" 2>&1 &
    pa=$!
    "${SRV[@]}" "$bin" serve tcp --listen 127.0.0.1:0 --delay "$b" >"$OUT/b.txt" 2>&1 &
    pb=$!
    sleep 0.3
    a=$(grep -o '127.0.0.1:[0-9]*' "$OUT/a.txt" | head -1)
    bb=$(grep -o '127.0.0.1:[0-9]*' "$OUT/b.txt" | head -1)
    "${CLI[@]}" timeout 900 "$bin" compare "a=tcp://$a" "b=tcp://$bb" -d "$DUR" --runs "$RUNS" \
        --json -q --no-save >"$OUT/$tag-$case-$i.json"
    kill "$pa" "$pb"
    wait "$pa" "$pb" 2>/dev/null
}
tags=()
for bin in "$@"; do
    tag=$(basename "$bin")
    tags+=("$tag")
    for i in $(seq 1 "$N_SAME"); do one "$bin" same "$i" "$tag"; done
    for i in $(seq 1 "$N_SLOW"); do one "$bin" slow "$i" "$tag"; done
done
python3 - "$OUT" "${tags[@]}" <<'PY'
import json, sys, glob
out, tags = sys.argv[1], sys.argv[2:]
metrics = ["ops_per_s", "mean_us", "p50_us", "p95_us", "p99_us"]
print("| binary | case | compares | " + " | ".join(metrics) + " | compares with any | ± contradicts verdict | wrong direction | inconclusive |")
print("|---|---|---|" + "---|" * (len(metrics) + 4))
for tag in tags:
    for case in ["same", "slow"]:
        sig = {m: 0 for m in metrics}; seen = {m: 0 for m in metrics}; bad = 0; anyc = 0; n = 0
        wrong = {m: 0 for m in metrics}; unsure = {m: 0 for m in metrics}
        for f in sorted(glob.glob(f"{out}/{tag}-{case}-*.json")):
            try: doc = json.load(open(f))
            except Exception: continue
            n += 1; hit = False
            for v in doc["verdicts"]:
                m = v["metric"]; seen[m] += 1
                s = v["significant"] if "significant" in v else v["welch"]["significant"]
                if "low_pct" in v: lo, hi = v["low_pct"], v["high_pct"]
                else: lo, hi = v["difference_percent"] - v["ci95_percent"], v["difference_percent"] + v["ci95_percent"]
                thr = v.get("threshold_pct", 0.0)
                if s != (lo > thr or hi < -thr): bad += 1
                up = (v["difference_percent"] > 0) == (m != "ops_per_s")
                if s and (case == "same" or up): sig[m] += 1; hit = True
                if s and case == "slow" and not up: wrong[m] += 1
                if v.get("inconclusive"): unsure[m] += 1
            anyc += hit
        cells = [f"{sig[m]}/{seen[m]}" if seen[m] else "-" for m in metrics]
        what = "same: significant (false positives)" if case == "same" else "+20% service: detected"
        ww = " ".join(f"{wrong[m]}" for m in metrics) if case == "slow" else "-"
        uu = " ".join(f"{unsure[m]}" for m in metrics)
        print(f"| {tag} | {what} | {n} | " + " | ".join(cells) + f" | {anyc}/{n} | {bad} | {ww} | {uu} |")
for tag in tags:
    for f in sorted(glob.glob(f"{out}/{tag}-slow-*.json"), key=lambda f: int(f.rsplit("-", 1)[1][:-5])):
        try: doc = json.load(open(f))
        except Exception: continue
        cells = []
        for v in doc["verdicts"]:
            if v["metric"] not in ("mean_us", "p50_us"): continue
            s = v["significant"] if "significant" in v else v["welch"]["significant"]
            if "low_pct" in v: ci = f"[{v['low_pct']:+.1f}, {v['high_pct']:+.1f}]"
            else: ci = f"±{v['ci95_percent']:.1f}"
            cells.append(f"{v['metric']} {v['difference_percent']:+.1f}% {ci} {'S' if s else '-'}")
        print(f"{tag} {f.rsplit('/', 1)[1][:-5]}: " + "; ".join(cells))
PY
