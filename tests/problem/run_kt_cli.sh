#!/bin/sh
# Kernel Tuner's files through the command line: a T1 file whose
# ProblemSize names a tunable compiles; a cache file Kernel Tuner wrote
# (tests/data/kt/kt_cache_cpu.json) is read by simulate and report with
# Kernel Tuner's best, also when a cut-short run left it open; import puts
# that best (or a T4 file's) into the cache and lookup returns it.
# Usage: run_kt_cli.sh CUTUNE_BINARY SOURCE_DIR
set -u
cutune=$1
data=$2/tests/data/kt
fixtures=$2/tests/cli/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
# expect WANT_RC NEEDLE CMD...: exit code WANT_RC and NEEDLE in the output.
expect() {
    want=$1 needle=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/out"; then
        fail "$* (exit $rc, wanted $want and '$needle'):"
        sed 's/^/    /' "$tmp/out" | head -20
    fi
}

# Kernel Tuner's best of the cache: block_size_x=32, vector=8 at
# 0.010136199835687875 ms (the smallest `time`; test_t4 computes it from
# the file itself).
best='"optimum_ms": 0.010136199835687875'

expect 0 '"compiled": 6' "$cutune" compile "$data/reduction.json" \
    --arch sm_80 --limit 6 --json
expect 0 '(num_blocks)' "$cutune" space "$data/reduction.json"
# KernelFile in the folder above the T1 file's, as Kernel Tuner finds it.
mkdir -p "$tmp/above/t1"
cp "$data/reduction.cu" "$tmp/above/"
cp "$data/reduction.json" "$tmp/above/t1/"
expect 0 '"compiled": 2' "$cutune" compile "$tmp/above/t1/reduction.json" \
    --arch sm_80 --limit 2 --json
expect 0 "$best" "$cutune" simulate "$data/sum_cpu.json" \
    --results "$data/kt_cache_cpu.json" --strategy brute_force --json
expect 0 '"correct": 19' "$cutune" simulate "$data/sum_cpu.json" \
    --results "$data/kt_cache_cpu.json" --strategy brute_force --json

# Left open as Kernel Tuner leaves a run it did not finish.
head -c -3 "$data/kt_cache_cpu.json" >"$tmp/open.json"
printf ',' >>"$tmp/open.json"
expect 0 "$best" "$cutune" simulate "$data/sum_cpu.json" \
    --results "$tmp/open.json" --strategy brute_force --json

expect 0 "wrote" "$cutune" report "$data/sum_cpu.json" \
    --results "$data/kt_cache_cpu.json" -o "$tmp/r.html"
grep -q 'block_size_x=32, vector=8' "$tmp/r.html" ||
    fail "report: no winner block_size_x=32, vector=8"

# import + lookup. The cache names no device (Kernel Tuner on a CPU).
expect 1 "names no device" "$cutune" import "$data/kt_cache_cpu.json" \
    --problem "$data/sum_cpu.json" --cache-dir "$tmp/cache"
expect 0 "block_size_x=32, vector=8" "$cutune" import \
    "$data/kt_cache_cpu.json" --problem "$data/sum_cpu.json" \
    --device-name "CPU Fictional 1" --cache-dir "$tmp/cache"
expect 0 "block_size_x=32 vector=8" "$cutune" lookup "$data/sum_cpu.json" \
    --device-name "cpu fictional 1" --cache-dir "$tmp/cache" --no-fallback
expect 0 '"time_ms": 0.010136199835687875' "$cutune" lookup \
    "$data/sum_cpu.json" --device-name "CPU Fictional 1" \
    --cache-dir "$tmp/cache" --json
expect 1 "measured at problem size 65536, not 1000" "$cutune" import \
    "$data/kt_cache_cpu.json" --problem "$data/sum_cpu.json" --size 1000 \
    --device-name X --cache-dir "$tmp/cache"
expect 2 "tune_params_keys: the problem's parameter 'num_blocks' is missing" \
    "$cutune" import "$data/kt_cache_cpu.json" \
    --problem "$data/reduction.json" --device-name X --cache-dir "$tmp/cache"

# A Kernel Tuner cache that names its device, and a T4 file.
sed 's/"device_name": ""/"device_name": "GTX Fictional KT"/' \
    "$data/kt_cache_cpu.json" >"$tmp/named.json"
expect 1 "measured on 'GTX Fictional KT', not on 'Other'" "$cutune" import \
    "$tmp/named.json" --problem "$data/sum_cpu.json" --device-name Other \
    --cache-dir "$tmp/cache"
expect 0 "for GTX Fictional KT" "$cutune" import "$tmp/named.json" \
    --problem "$data/sum_cpu.json" --cache-dir "$tmp/cache"
expect 0 "exact match" "$cutune" lookup "$data/sum_cpu.json" \
    --device-name "GTX Fictional KT" --cache-dir "$tmp/cache" --no-fallback
cat >"$tmp/t4.json" <<'T4'
{"schema_version": "1.0.0",
 "metadata": {"timeunit": "seconds", "device_name": "GTX Fictional T4"},
 "results": [
  {"configuration": {"block_size_x": 64, "vector": 2}, "invalidity": "correct",
   "times": {"runtimes": [0.002, 0.004, 0.003]}},
  {"configuration": {"block_size_x": 128, "vector": 4}, "invalidity": "correct",
   "times": {"runtimes": [0.001, 0.0012, 0.0011]}},
  {"configuration": {"block_size_x": 256, "vector": 1}, "invalidity": "compile",
   "times": {"compilation": 1.5}}]}
T4
expect 0 "(3 in the T4 file) for GTX Fictional T4" "$cutune" import \
    "$tmp/t4.json" --problem "$data/sum_cpu.json" --cache-dir "$tmp/cache"
expect 0 "block_size_x=128 vector=4" "$cutune" lookup "$data/sum_cpu.json" \
    --device-name "GTX Fictional T4" --cache-dir "$tmp/cache" --no-fallback
expect 0 "1.1000 ms" "$cutune" lookup "$data/sum_cpu.json" \
    --device-name "GTX Fictional T4" --cache-dir "$tmp/cache" --no-fallback

[ "$failed" -eq 0 ] && echo "all passed"
[ "$failed" -eq 0 ]
