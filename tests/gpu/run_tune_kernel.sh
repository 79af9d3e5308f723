#!/bin/sh
# The build step of cutune_tune_kernel(TUNE) (cmake/cutuneTuneKernel.cmake,
# run with cmake -P as the generated build rule runs it) on a machine with
# a GPU: it tunes vector_add on device 0 into an empty cache and writes the
# header from that exact record; run again, it takes the measurements from
# the log (--resume) and writes the same header. Exits 77 without a GPU.
# (The CMake wiring around it is tested without a GPU by cmake_consumer,
# which needs the -dev packages the GPU machine lacks.)
# Usage: run_tune_kernel.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
export CUTUNE_WORKER="$build/cutune-worker"
if ! "$build/cutune" devices >/dev/null 2>&1; then
    echo "SKIPPED: no CUDA device"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step() {
    cmake -DCUTUNE="$build/cutune" -DPROBLEM=vector_add \
        -DHEADER="$tmp/$1/vector_add_tuned.h" -DTUNE=1 -DSIZE=1048576 \
        -DCACHE_DIR="$tmp/cache" -P "$src/cmake/cutuneTuneKernel.cmake"
}
t0=$(date +%s.%N)
step first >"$tmp/first.log" 2>&1 || { cat "$tmp/first.log"; exit 1; }
t1=$(date +%s.%N)
step again >"$tmp/again.log" 2>&1 || { cat "$tmp/again.log"; exit 1; }
t2=$(date +%s.%N)
first=$tmp/first/vector_add_tuned.h
again=$tmp/again/vector_add_tuned.h
grep -q '#define CUTUNE_LEVEL_VECTOR_ADD "exact"' "$first" ||
    { echo "FAILED: header"; cat "$tmp/first.log" "$first"; exit 1; }
grep -q '#define CUTUNE_TUNED_VECTOR_ADD 1' "$first" ||
    { echo "FAILED: not tuned"; cat "$first"; exit 1; }
ls "$tmp/cache"/measurements/*.jsonl >/dev/null 2>&1 ||
    { echo "FAILED: no measurement log"; exit 1; }
cmp -s "$first" "$again" ||
    { echo "FAILED: the resumed build wrote another header"; \
      diff "$first" "$again"; exit 1; }
grep "BLOCK_SIZE_X\|UNROLL" "$first"
awk "BEGIN { printf \"tuning build step %.2f s, again (resumed) %.2f s\n\", \
    $t1 - $t0, $t2 - $t1 }"
echo "passed"
