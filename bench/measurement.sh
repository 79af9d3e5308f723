#!/bin/sh
# Benchmark of the measurement pipeline (prints figures; passes or fails
# on nothing):
#   1. `cutune compile` throughput for vector_add, one thread against the
#      pool (one thread per core), binary cache off;
#   2. a brute-force tune of vector_add at 2^28 floats (kernels of about
#      1 ms and more): the share of the tune's wall time the GPU spent in
#      kernels;
#   3. the same tune again with the binary cache warm, then once more with
#      --resume (measurements taken from the log the first two wrote):
#      end-to-end times;
#   4. the coefficient of variation of single launches, per configuration
#      whose median is 100 us or more and which was timed 10 times or more
#      (from the first tune's T4 output; needs python3).
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
out=$(mktemp -d)
for run in cold warm resume; do
    echo "## brute-force tune of vector_add at 2^28 floats, binary cache $run"
    flags=
    [ "$run" = resume ] && flags=--resume
    start=$(date +%s.%N)
    "$build/cutune" tune vector_add --size 268435456 --strategy brute_force \
        --no-cache --quiet --output "$out/$run.json" $flags | tail -2
    end=$(date +%s.%N)
    echo "command wall time: $(awk "BEGIN { print $end - $start }") s"
done

echo "## coefficient of variation of single launches (kernels >= 100 us)"
python3 - "$out/cold.json" <<'PY'
import json, statistics, sys
cvs = []
for r in json.load(open(sys.argv[1]))["results"]:
    t = r["times"]["runtimes"]
    if len(t) >= 10 and statistics.median(t) >= 0.1:
        cvs.append(statistics.pstdev(t) / statistics.mean(t))
cvs.sort()
if cvs:
    q = lambda f: 100 * cvs[min(len(cvs) - 1, int(f * len(cvs)))]
    print(f"{len(cvs)} configurations: CV median {q(0.5):.3f}%, "
          f"90th percentile {q(0.9):.3f}%, max {100 * cvs[-1]:.3f}%; "
          f"{sum(c < 0.01 for c in cvs)} under 1%")
PY
rm -rf "$out"
