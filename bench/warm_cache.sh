#!/bin/sh
# Benchmark of the binary cache: each case is tuned twice with one fresh
# cache directory, first with nothing cached (every configuration compiled
# by NVRTC), then again with the binaries of the first run on disk. It
# prints both end-to-end wall times (the whole command, process start to
# exit), their ratio, and each tune's GPU-busy share; it passes or fails on
# nothing.
#
# The cases span the two regimes a user meets: compile-heavy kernels at
# sizes where each launch is short (small matmuls and convolutions: NVRTC
# dominates a cold tune, as in the Kernel Tuner data of tests/data),
# and cheap kernels at large sizes (measuring dominates; a cache cannot
# make much of a difference there).
#
# Before the cases, one untimed compile warms the file cache (NVRTC's
# libraries, the worker binary), so that the first case's cold run does not
# also pay for reading them from disk.
#
# Every run gets an empty CUDA driver compute cache (CUDA_CACHE_PATH, by
# default ~/.nv/ComputeCache). NVRTC compiles on the H100 machine filled
# that cache and took 3-14 times less CPU the second time a configuration
# was compiled, whatever cutune's own cache held (bench/results/
# 2026-11-23-h100.md). Without this, a "cold" run on a machine that has
# compiled the same configurations before is not cold, and the ratio below
# would not measure cutune's binary cache.
#
# A repeated tune is only the same tune when it evaluates the same
# configurations. The random strategy's choices depend on the seed alone,
# so its repeat is exact; an adaptive strategy (default) steers by measured
# times, and where two of them differ by less than the noise the repeat may
# go another way and meet configurations the first run never evaluated.
# The table counts those ("new"); the first run may still have compiled
# some of them, in batches the strategy ended early.
#
# Usage: bench/warm_cache.sh BUILD_DIR [ARCH]
# Environment: CASES overrides the list: "NAME:SIZE:EVALS:STRATEGY ..."
# (EVALS 0 = every configuration).
set -eu
build=${1:?usage: bench/warm_cache.sh BUILD_DIR [ARCH]}
arch=${2:-sm_90}
export CUTUNE_WORKER="$build/cutune-worker"
cases=${CASES:-"matmul:256,256,256:300:random matmul:1024,1024,1024:100:random conv2d:512,512:200:random conv2d:4096,4096:200:random transpose:1024,1024:100:random vector_add:67108864:0:brute_force matmul:256,256,256:300:default conv2d:512,512:200:default matmul:1024,1024,1024:100:default conv2d:4096,4096:200:default"}

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
if ! "$build/cutune" devices; then
    echo "no CUDA device: nothing to measure"
    exit 0
fi
"$build/cutune" compile vector_add --arch "$arch" --no-binary-cache \
    --limit 32 >/dev/null

now() { date +%s.%N; }
echo
echo "| case | evaluations | new | cold (s) | warm (s) | cold / warm | GPU busy cold | GPU busy warm |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for c in $cases; do
    name=${c%%:*}
    rest=${c#*:}
    size=${rest%%:*}
    rest=${rest#*:}
    evals=${rest%%:*}
    strategy=${rest#*:}
    budget="--strategy $strategy"
    [ "$evals" = 0 ] || budget="$budget --budget-evals $evals"
    dir=$(mktemp -d)
    for run in cold warm; do
        driver_cache=$(mktemp -d)
        start=$(now)
        # shellcheck disable=SC2086
        CUDA_CACHE_PATH=$driver_cache CUTUNE_CACHE_DIR=$dir \
            "$build/cutune" tune "$name" --size "$size" $budget \
            --no-cache --quiet --json > "$dir/$run.json"
        end=$(now)
        rm -rf "$driver_cache"
        eval "t_$run=\$(awk \"BEGIN { print $end - $start }\")"
    done
    python3 - "$c" "$t_cold" "$t_warm" "$dir/cold.json" "$dir/warm.json" <<'PY'
import json, sys
case, cold, warm = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
a, b = (json.load(open(p)) for p in sys.argv[4:6])
key = lambda e: e["config_index"]
again = len({key(e) for e in b["evaluated"]} - {key(e) for e in a["evaluated"]})
print(f"| {case} | {a['evaluations']} | {again} | {cold:.2f} | {warm:.2f} | "
      f"{cold / warm:.2f}x | {100 * a['gpu_busy']:.0f}% | "
      f"{100 * b['gpu_busy']:.0f}% |")
PY
    rm -rf "$dir"
done
