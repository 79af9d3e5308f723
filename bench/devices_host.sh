#!/bin/sh
# Every GPU of a host (--devices all) against one (--device 0), on a
# machine with several GPUs of one model: brute force over conv2d 4096²
# (639 configurations), random search over matmul 1024³ (300) and over
# matmul 4096³ (200, kernels of milliseconds: a tune bound by measuring;
# CASES picks among conv2d, matmul and matmul4096), each
# pair first cold (no binary cache: compiling is part of it), then twice
# with the binary cache warm (so measuring alone is compared), alternating
# which goes first so that a machine warming up weighs on both. Prints per
# tune the wall time, the winner, its time and how many evaluations each
# worker made; the JSON results go to $OUT.
# A benchmark: it reports what happened, it passes nothing.
# Usage: bench/devices_host.sh CUTUNE
set -u
cutune=$1
out=${OUT:-/tmp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # NAME CACHE DEVICE-OPTION EXTRA-OPTIONS... ($problem: the problem)
    name=$1 cache=$2 dev=$3
    shift 3
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    "$cutune" tune $problem $dev --cache-dir "$tmp/$cache" "$@" --json \
        >"$out/$name.json" 2>"$out/$name.err"
    rc=$?
    end=$(date +%s%N)
    flat=$(tr -d '\n ' <"$out/$name.json")
    best=$(echo "$flat" |
        sed -n 's/.*"best":{\([^}]*\)},"best_ms":\([0-9.]*\).*/\2 ms {\1}/p')
    split=$(echo "$flat" | grep -o '"worker":[0-9]*' | sort | uniq -c |
        awk '{ printf "%s%s", (NR > 1 ? "/" : ""), $1 }')
    printf '%-24s exit %d  %6.2f s  evaluations per worker %s  best %s\n' \
        "$name" "$rc" "$(awk "BEGIN { print ($end - $start) / 1e9 }")" \
        "$split" "$best"
}
"$cutune" devices
for case in ${CASES:-conv2d matmul matmul4096}; do
    case $case in
    conv2d) problem="conv2d --size 4096,4096 --strategy brute_force" ;;
    matmul) problem="matmul --size 1024,1024,1024 --strategy random --budget-evals 300 --seed 1" ;;
    *) problem="matmul --size 4096,4096,4096 --strategy random --budget-evals 200 --seed 1" ;;
    esac
    one "$case-cold-1" "$case-c1" "--device 0" --no-binary-cache
    one "$case-cold-all" "$case-call" "--devices all" --no-binary-cache
    # Fills the binary cache (beside the tuning cache) the later tunes read.
    one "$case-fill" "$case-warm" "--device 0" >/dev/null
    one "$case-warm-all-a" "$case-warm" "--devices all"
    one "$case-warm-1-a" "$case-warm" "--device 0"
    one "$case-warm-1-b" "$case-warm" "--device 0"
    one "$case-warm-all-b" "$case-warm" "--devices all"
done
