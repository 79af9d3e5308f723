#!/bin/sh
# Cold tunes on the clock (issue 34): for each case, in one run on one
# GPU, brute force over the first 200 configurations, then `random` and
# the default strategy for 200 evaluations at each seed, every tune
# `--no-cache --no-binary-cache`. Each tune's progress lines are stamped
# with the wall clock, so that the time at which its best first came
# within 0.95 / 0.98 / 0.99 of a reference time can be read off; then
# `cutune simulate --threads` models the same tune from a recording where
# one is given, for the model's error (each seed's, and the model's
# spread over MODEL_SEEDS seeds). A benchmark: it prints figures.
#
#   bench/cold_clock.sh CUTUNE OUT CASE...
# CASE is NAME:T1[@SIZE]:REF_MS[:RECORDING]: T1 a file or a template,
# SIZE its problem size, REF_MS the optimum the fractions are of (a brute
# force's on that GPU model), RECORDING a T4 of the space for the model.
# SEEDS (default "1 2 3"), STRATEGIES (default "brute_force random
# default"), BUDGET (evaluations, default 200) and THREADS (the compile threads; default: the cores) may be
# set in the environment; THREADS is the model's, the tune compiles on
# one thread per core. T4=1 also writes each tune's T4 (its compile times
# on this host) beside its log.
#
# Cold means cold below cutune too: NVRTC (CUDA 13) keeps what it compiled
# in the CUDA compute cache (~/.nv/ComputeCache, or CUDA_CACHE_PATH), which
# --no-binary-cache does not touch. Measured on an H200 host: 32
# convolution configurations took 4.9 s to compile, then 0.35 s the second
# time. So each tune gets a fresh, empty CUDA_CACHE_PATH, or a tune would
# find the compiles of the tunes before it (a strategy's seeds share many
# configurations).
set -u
cutune=$1
out=$2
shift 2
seeds=${SEEDS:-1 2 3}
strategies=${STRATEGIES:-brute_force random default}
threads=${THREADS:-$(nproc)}
budget=${BUDGET:-200}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)

# Stamps each line of standard input with the seconds since $1.
stamp() {
    python3 -u -c '
import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time() - t0, line))
' "$1"
}

for case in "$@"; do
    name=${case%%:*}
    rest=${case#*:}
    t1=${rest%%:*}
    rest=${rest#*:}
    ref=${rest%%:*}
    recording=""
    [ "$rest" != "$ref" ] && recording=${rest#*:}
    size=""
    case $t1 in *@*) size="--size ${t1#*@}"; t1=${t1%@*} ;; esac
    for st in $strategies; do
        for seed in $seeds; do
            [ "$st" = brute_force ] && [ "$seed" != "${seeds%% *}" ] && continue
            log="$out/$name-$st-$seed.log"
            jit=$(mktemp -d)
            t0=$(python3 -c 'import time; print(time.time())')
            # shellcheck disable=SC2086
            CUDA_CACHE_PATH=$jit timeout "${TUNE_TIMEOUT:-150}" "$cutune" tune "$t1" $size \
                --strategy "$st" --budget-evals "$budget" \
                --seed "$seed" --no-cache --no-binary-cache \
                ${T4:+--output "$log.t4.json.gz"} \
                --verbose 2>&1 >"$log.out" |
                stamp "$t0" >"$log"
            t1end=$(python3 -c 'import time; print(time.time())')
            echo "  $name $st $seed: $(find "$jit" -type f | wc -l) files in" \
                "the fresh CUDA compute cache"
            rm -rf "$jit"
            python3 "$here/cold_clock_read.py" "$name" "$st" "$seed" "$ref" \
                "$t0" "$t1end" "$log" "$log.out"
            # The model starts where the tune did: at the block size the
            # occupancy API suggested (the tune logs it).
            occ=$(sed -n 's/.*the occupancy API suggests \([0-9]*\) threads per block.*/\1/p' "$log" | head -n 1)
            if [ -n "$recording" ] && [ "$st" != brute_force ]; then
                # shellcheck disable=SC2086
                "$cutune" simulate "$t1" $size --results "$recording" \
                    --strategy "$st" --budget-evals "$budget" --seed "$seed" \
                    ${occ:+--occupancy-block "$occ"} \
                    --threads "$threads" --json >"$log.model.json" 2>/dev/null
                python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
print("  model (%s threads): wall %.1f s, to 0.98 %s s" % (d["threads"],
      r["wall_s"], r["seconds_to"]["0.98"]))' "$log.model.json"
            fi
        done
        # A strategy that steers in flight takes its path from the order
        # in which compiles end, which a replay cannot reproduce seed for
        # seed: the model's spread over MODEL_SEEDS seeds (default 20) is
        # what the real seeds compare with.
        if [ -n "$recording" ] && [ "$st" != brute_force ]; then
            # shellcheck disable=SC2086
            "$cutune" simulate "$t1" $size --results "$recording" \
                --strategy "$st" --budget-evals "$budget" --seed 1 \
                --repeat "${MODEL_SEEDS:-20}" ${occ:+--occupancy-block "$occ"} \
                --threads "$threads" --json >"$out/$name-$st.model.json" 2>/dev/null
            python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
w = d["wall_s_quartiles"]
t = d["seconds_to"]["0.98"]
print("  model over %d seeds (%s threads): wall %.1f s [%.1f, %.1f],"
      " to 0.98 median %s s (%d seeds got there)" % (len(d["runs"]),
      d["threads"], w["median"], w["q1"], w["q3"],
      t["quartiles"]["median"], t["runs"]))' "$out/$name-$st.model.json"
        fi
    done
done
