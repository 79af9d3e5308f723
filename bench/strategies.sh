#!/bin/sh
# The strategy benchmark, in one command (no GPU needed):
#   bench/strategies.sh [BUILD_DIR] [SEEDS]
# Builds bench-strategies optimised in BUILD_DIR (default build-bench),
# replays every strategy on every space of bench/spaces/spaces.txt (the
# corpus: bench/spaces/README.md) at 50, 100, 200 and 400 evaluations and
# a time budget (the recorded seconds of 100 average evaluations), every
# run starting where a tune starts without an occupancy answer, with SEEDS
# seeds (default 20), and writes bench/results/strategies.md: the worst
# case over the spaces, then per space the medians and quartiles over the
# seeds and the share of seeds within 10%, 5% and 2% of the optimum, and
# on the clock (a 200-evaluation tune modelled with 16 and 32 compile
# threads: seconds to 0.95 and 0.98 of the optimum, wall); then the
# default strategy asked for 32 proposals at a time, as a tune on the GPU
# machine asks, into bench/results/strategies-batch32.md; last, the
# same tables for the spaces held out of every choice of settings
# (bench/spaces/heldout.txt) into bench/results/strategies-heldout.md.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-bench}
seeds=${2:-20}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUTUNE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target bench-strategies -j"$(nproc)" >/dev/null
"$build/bench-strategies" --seeds "$seeds" --shares \
    --spaces "$here/bench/spaces/spaces.txt" \
    --out "$here/bench/results/strategies.md"
echo "wrote $here/bench/results/strategies.md"
# The tuner asks for twice as many proposals as it has compile threads
# (32 on the 16-core GPU machine); the default strategy stops a batch where
# a result changes what it would propose next, so its figures there should
# equal the one-by-one table above. The clock asks as a tune asks whatever
# --batch says: its figures would repeat strategies.md's.
"$build/bench-strategies" --seeds "$seeds" --shares --batch 32 --no-clock \
    --strategies default,random --spaces "$here/bench/spaces/spaces.txt" \
    --out "$here/bench/results/strategies-batch32.md"
echo "wrote $here/bench/results/strategies-batch32.md"
# Spaces no setting was chosen on: the check that the choices carry over.
"$build/bench-strategies" --seeds "$seeds" --shares \
    --spaces "$here/bench/spaces/heldout.txt" \
    --out "$here/bench/results/strategies-heldout.md"
echo "wrote $here/bench/results/strategies-heldout.md"
