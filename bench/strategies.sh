#!/bin/sh
# The strategy benchmark, in one command (no GPU needed):
#   bench/strategies.sh [BUILD_DIR] [SEEDS]
# Builds bench-strategies optimised in BUILD_DIR (default build-bench),
# replays every strategy on every T4 file of ../shared/data/t4 and writes
# bench/results/strategies.md (medians over the seeds, and the share of
# seeds within 10%, 5% and 2% of the optimum).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-bench}
seeds=${2:-100}
data=${CUTUNE_SHARED_DATA:-$here/../shared/data}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUTUNE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target bench-strategies -j"$(nproc)" >/dev/null
set --
for t4 in "$data"/t4/*_T4.json.gz; do
    name=$(basename "$t4" _T4.json.gz)
    problem=${name%_*}
    set -- "$@" "$data/t1/$problem.json:$t4"
done
"$build/bench-strategies" --seeds "$seeds" --shares \
    --out "$here/bench/results/strategies.md" "$@"
echo "wrote $here/bench/results/strategies.md"
