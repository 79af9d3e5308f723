#!/bin/sh
# Space construction times of the published T1 files (no GPU): builds an
# optimised cutune in BUILD_DIR (default build-rel) and runs `cutune space`
# five times per file. Prints figures; passes or fails on nothing.
# Usage: bench/space.sh [BUILD_DIR] [DATA_DIR]
set -eu
build=${1:-build-rel}
data=${2:-$(dirname "$0")/../tests/data}
cmake -S "$(dirname "$0")/.." -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUTUNE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j --target cutune-cli >/dev/null
for f in convolution dedispersion hotspot gemm; do
    printf '%-14s' "$f"
    for i in 1 2 3 4 5; do
        "$build/cutune" space "$data/t1/${f}_milo.json" |
            sed -n 's/constructed in: *//p' | tr '\n' ' '
    done
    echo
done
