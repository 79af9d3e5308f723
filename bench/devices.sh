#!/bin/sh
# Tuning on several devices, replayed (docs/devices.md): each simulated
# GPU is the recorded convolution space of an A100 (Kernel Tuner's
# exhaustive T4 file), answering each configuration after sleeping its
# recorded compile and run time times a scale. Prints wall times and
# speed-ups of
#   1. brute force over the space (4,362 configurations) on 1, 2, 4 and 8
#      simulated GPUs sharing one search (cutune tune --devices);
#   2. a plan of 8 such tasks (the space at 8 problem sizes, brute force,
#      one simulated GPU each) on this host, then under
#      mpirun --oversubscribe -np 2..4: rank 0 dispatches and tunes
#      beside the other ranks (docs/plans.md), so -np N is N tuning ranks.
# A benchmark: it reports what happened, it passes nothing.
# Usage: bench/devices.sh CUTUNE [SOURCE_DIR]
#   DEVICES_SCALE (default 0.005) and PLAN_SCALE (default 0.0006) scale
#   the 12,182 s of recorded time of the space; PARTS (default
#   "devices plan") picks the parts to run.
set -u
cutune=$1
src=$(cd "${2:-$(dirname "$0")/..}" && pwd)
t1=$src/bench/spaces/convolution_milo.json
t4=$src/bench/spaces/convolution_milo_A100_T4.json.gz
scale=${DEVICES_SCALE:-0.005}
plan_scale=${PLAN_SCALE:-0.0006}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s%N; }
seconds() { awk "BEGIN { printf \"%.2f\", ($2 - $1) / 1e9 }"; }

parts=${PARTS:-devices plan}
case " $parts " in *" devices "*) ;; *) skip_devices=1 ;; esac
if [ -z "${skip_devices:-}" ]; then
echo "brute force over convolution_milo (A100 recording), scale $scale"
files=$t4
base=
for n in 1 2 4 8; do
    list=$files
    k=1
    while [ $k -lt $n ]; do list="$list,$t4"; k=$((k + 1)); done
    devs=$(seq -s, 0 $((n - 1)))
    start=$(now)
    CUTUNE_DEVICE_BACKEND="replay:$list" CUTUNE_REPLAY_TIME_SCALE=$scale \
        "$cutune" tune "$t1" --strategy brute_force --devices "$devs" \
        --no-cache --quiet >"$tmp/tune-$n" 2>&1
    rc=$?
    end=$(now)
    s=$(seconds "$start" "$end")
    base=${base:-$s}
    printf '  %d GPU%s: exit %d, %6.2f s, speed-up %.2fx; %s\n' "$n" \
        "$([ "$n" -gt 1 ] && echo s || echo ' ')" "$rc" "$s" \
        "$(awk "BEGIN { print $base / $s }")" \
        "$(grep -o '[0-9.]* ms (median' "$tmp/tune-$n" | head -n 1)"
done

fi
case " $parts " in *" plan "*) ;; *) exit 0 ;; esac
echo "a plan of 8 brute-force tasks, one simulated GPU each, scale $plan_scale"
printf '{"items": [{"problem": "%s", "sizes": [' "$t1" >"$tmp/plan.json"
printf '[1024, 1024], [1536, 1536], [2048, 2048], [2560, 2560], ' \
    >>"$tmp/plan.json"
printf '[3072, 3072], [3584, 3584], [4096, 4096], [4608, 4608]]}]}\n' \
    >>"$tmp/plan.json"
root=
[ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
base=
for np in 1 2 3 4; do
    rm -rf "$tmp/cache"
    start=$(now)
    if [ "$np" -eq 1 ]; then
        CUTUNE_DEVICE_BACKEND="replay:$t4" \
            CUTUNE_REPLAY_TIME_SCALE=$plan_scale "$cutune" tune \
            --plan "$tmp/plan.json" --strategy brute_force \
            --cache-dir "$tmp/cache" --quiet >"$tmp/plan-$np" 2>&1
    else
        mpirun --oversubscribe $root -np "$np" \
            -x CUTUNE_DEVICE_BACKEND="replay:$t4" \
            -x CUTUNE_REPLAY_TIME_SCALE=$plan_scale "$cutune" tune \
            --plan "$tmp/plan.json" --strategy brute_force \
            --cache-dir "$tmp/cache" --quiet >"$tmp/plan-$np" 2>&1
    fi
    rc=$?
    end=$(now)
    s=$(seconds "$start" "$end")
    tuners=$np
    base=${base:-$s}
    printf '  -np %d (%d tuning rank%s): exit %d, %6.2f s, speed-up %.2fx; %s\n' \
        "$np" "$tuners" "$([ "$tuners" -gt 1 ] && echo s || echo '')" "$rc" \
        "$s" "$(awk "BEGIN { print $base / $s }")" \
        "$(grep -o '[0-9]* tuned, [0-9]* already cached, [0-9]* failed' \
            "$tmp/plan-$np")"
done
