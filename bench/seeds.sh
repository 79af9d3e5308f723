#!/bin/sh
# How much the strategy benchmark's 20-seed medians rest on the seeds (no
# GPU needed):
#   bench/seeds.sh [BUILD_DIR] [DEFAULT_SEEDS] [BAYES_SEEDS]
# bench/strategies.sh reports medians of seeds 1-20, the seeds the
# default's and bayes's settings were chosen on, which `cutune simulate
# --repeat 20` uses too. This replays the default strategy (beside it the
# default without the niches' bonus, niche_ucb=0, as it was until
# session 14, and with niche climbs, niche_climbs=1 and restart_after=0.5,
# tried and not kept, and random search) on the five spaces of the hub's
# kernels (convolution on A100, A4000, A6000 and H100, dedispersion on
# A100) with DEFAULT_SEEDS seeds from 1000 on (default 400; the niches'
# bonus was chosen on them), the same with seeds from 2000 on (never used
# to choose a setting), and bayes against random
# search on the corpus and the held-out spaces with BAYES_SEEDS seeds from
# 0 on (default 100), and the default on the four held-out spaces of
# session 15 from seed 1000, each table with the share of seeds within
# 10%, 5% and 2% of the optimum. Writes bench/results/strategies-seeds.md,
# -seeds-2000.md, -seeds-heldout.md, -seeds-bayes.md and
# -seeds-bayes-heldout.md. About 14
# minutes on two cores, nearly all of it bayes.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build-bench}
dseeds=${2:-400}
bseeds=${3:-100}
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUTUNE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target bench-strategies -j"$(nproc)" >/dev/null
spaces=$here/bench/spaces
# PROBLEM:T4 pairs of bench/spaces as bench-strategies' arguments.
pairs() {
    for s in "$@"; do
        printf ' %s:%s' "$spaces/${s%%:*}" "$spaces/${s#*:}"
    done
}
hub=$(pairs convolution_milo.json:convolution_milo_A100_T4.json.gz \
    convolution_milo.json:convolution_milo_A4000_T4.json.gz \
    convolution_milo.json:convolution_milo_A6000_T4.json.gz \
    convolution_milo.json:convolution_milo_H100_T4.json.gz \
    dedispersion_milo.json:dedispersion_milo_A100_T4.json.gz)
# shellcheck disable=SC2086 # $hub is a list of PROBLEM:T4 arguments
"$build/bench-strategies" --seeds "$dseeds" --first-seed 1000 --shares \
    --strategies default,random --variant niche_ucb=0 \
    --variant niche_climbs=1,restart_after=0.5 \
    --out "$here/bench/results/strategies-seeds.md" $hub
echo "wrote $here/bench/results/strategies-seeds.md"
# shellcheck disable=SC2086 # as above
"$build/bench-strategies" --seeds "$dseeds" --first-seed 2000 --shares \
    --strategies default,random --variant niche_ucb=0 \
    --out "$here/bench/results/strategies-seeds-2000.md" $hub
echo "wrote $here/bench/results/strategies-seeds-2000.md"
# The four held-out spaces of session 15 (the hub's hotspot and
# dedispersion on the H100, the matmul subset at two sizes), never used to
# choose a setting: the default with and without the niches' bonus.
held=$(pairs hotspot_milo_reduced.json:hotspot_milo_reduced_H100_T4.json.gz \
    dedispersion_milo_192ch.json:dedispersion_milo_192ch_H100_T4.json.gz \
    matmul_subset.json:matmul_subset_512_T4.json.gz \
    matmul_subset.json:matmul_subset_1024_T4.json.gz)
# shellcheck disable=SC2086 # $held is a list of PROBLEM:T4 arguments
"$build/bench-strategies" --seeds "$dseeds" --first-seed 1000 --shares \
    --strategies default,random --variant niche_ucb=0 \
    --out "$here/bench/results/strategies-seeds-heldout.md" $held
echo "wrote $here/bench/results/strategies-seeds-heldout.md"
"$build/bench-strategies" --seeds "$bseeds" --first-seed 0 --shares \
    --strategies bayes,random --spaces "$spaces/spaces.txt" \
    --out "$here/bench/results/strategies-seeds-bayes.md"
echo "wrote $here/bench/results/strategies-seeds-bayes.md"
"$build/bench-strategies" --seeds "$bseeds" --first-seed 0 --shares \
    --strategies bayes,random --spaces "$spaces/heldout.txt" \
    --out "$here/bench/results/strategies-seeds-bayes-heldout.md"
echo "wrote $here/bench/results/strategies-seeds-bayes-heldout.md"
