#!/bin/sh
# Benchmark of the foundation: tunes the built-in vector_add on one GPU with
# the local strategy (hill climbing from the occupancy-seeded start, 100
# evaluations; it was the default when this was written) and exhaustively,
# and prints the figures bench/results/ records: the device,
# its device-to-device cudaMemcpy bandwidth, the occupancy suggestion and
# its time, the best configuration with its time and GB/s, evaluations and
# wall time. It prints figures; it does not pass or fail on them.
#
# Usage: bench/vector_add.sh BUILD_DIR [OUT_DIR]
set -eu
build=${1:?usage: bench/vector_add.sh BUILD_DIR [OUT_DIR]}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
export CUTUNE_WORKER="$build/cutune-worker"
export CUTUNE_CACHE_DIR="$out/cache"

echo "# $(date -u +%Y-%m-%dT%H:%MZ)"
"$build/cutune" devices
for strategy in local brute_force; do
    echo
    echo "## vector_add, 2^26 floats, strategy $strategy"
    start=$(date +%s.%N)
    "$build/cutune" tune vector_add --strategy "$strategy" --quiet \
        --json > "$out/vector_add-$strategy.json"
    end=$(date +%s.%N)
    "$build/cutune" lookup vector_add --device 0
    echo "command wall time: $(awk "BEGIN { print $end - $start }") s"
    # The report without the per-evaluation list.
    sed '/"evaluated"/,$d' "$out/vector_add-$strategy.json"
done
