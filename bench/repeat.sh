#!/bin/sh
# Stability of repeated tunes: tunes one case N times in a row with the
# default strategy and one shared binary cache (no tuning cache), and
# prints each run's winner, its median time and wall time, and the spread
# of the winners' times ((max - min) / min). It prints figures; it passes
# or fails on nothing.
#
# Usage: bench/repeat.sh BUILD_DIR NAME SIZE EVALS [N]
#   e.g. bench/repeat.sh build vector_add 67108864 100 5
set -eu
build=${1:?usage: bench/repeat.sh BUILD_DIR NAME SIZE EVALS [N]}
name=${2:?}
size=${3:?}
evals=${4:?}
n=${5:-5}
export CUTUNE_WORKER="$build/cutune-worker"
CUTUNE_CACHE_DIR=$(mktemp -d)
export CUTUNE_CACHE_DIR
trap 'rm -rf "$CUTUNE_CACHE_DIR"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ): $name --size $size, default strategy, $evals evaluations, $n runs"
i=1
while [ "$i" -le "$n" ]; do
    start=$(date +%s.%N)
    "$build/cutune" tune "$name" --size "$size" --budget-evals "$evals" \
        --no-cache --quiet --json > "$CUTUNE_CACHE_DIR/run$i.json"
    end=$(date +%s.%N)
    echo "$(awk "BEGIN { print $end - $start }")" > "$CUTUNE_CACHE_DIR/wall$i"
    i=$((i + 1))
done
python3 - "$CUTUNE_CACHE_DIR" "$n" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
times = []
print("| run | winner | median (ms) | wall (s) |")
print("|---|---|---:|---:|")
for i in range(1, n + 1):
    r = json.load(open(os.path.join(d, f"run{i}.json")))
    cfg = " ".join(f"{k}={v}" for k, v in r["best"].items())
    wall = float(open(os.path.join(d, f"wall{i}")).read())
    times.append(r["best_ms"])
    print(f"| {i} | {cfg} | {r['best_ms']:.5f} | {wall:.2f} |")
print(f"\nspread of the winners' times: "
      f"{100 * (max(times) - min(times)) / min(times):.2f}%")
PY
