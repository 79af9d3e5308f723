#!/bin/sh
# Benchmark of the measurement pipeline (prints figures; passes or fails
# on nothing):
#   1. `cutune compile` throughput for vector_add, one thread against the
#      pool (one thread per core), binary cache off;
#   2. a brute-force tune of vector_add at 2^28 floats (kernels of about
#      1 ms and more): the share of the tune's wall time the GPU spent in
#      kernels;
#   3. the same tune again with the binary cache warm: end-to-end times.
# Usage: bench/measurement.sh BUILD_DIR [ARCH]
set -eu
build=${1:?usage: bench/measurement.sh BUILD_DIR [ARCH]}
arch=${2:-sm_90}
export CUTUNE_WORKER="$build/cutune-worker"
export CUTUNE_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$CUTUNE_CACHE_DIR"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
echo "## compile throughput, vector_add (512 configurations), $arch"
"$build/cutune" compile vector_add --arch "$arch" --no-binary-cache --threads 1 --limit 128
"$build/cutune" compile vector_add --arch "$arch" --no-binary-cache

if ! "$build/cutune" devices >/dev/null 2>&1; then
    echo "no CUDA device: skipping the tunes"
    exit 0
fi
for run in cold warm; do
    echo "## brute-force tune of vector_add at 2^28 floats, binary cache $run"
    start=$(date +%s.%N)
    "$build/cutune" tune vector_add --size 268435456 --strategy brute_force \
        --no-cache --quiet
    end=$(date +%s.%N)
    echo "command wall time: $(awk "BEGIN { print $end - $start }") s"
done
