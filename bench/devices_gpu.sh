#!/bin/sh
# Two GPU workers on one GPU (--devices 0,0) against one (--device 0), on
# the device: conv2d 4096² with random (200) cold and then warm (binary
# cache filled), and with default (200) cold; each pair in fresh cache
# directories of its own, so both start equally cold. Prints per tune the
# wall time, the winner and its time; the JSON results go to $OUT.
# A benchmark: it reports what happened, it passes nothing.
# Usage: bench/devices_gpu.sh CUTUNE
set -u
cutune=$1
out=${OUT:-/tmp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # NAME CACHE DEVICE-OPTION STRATEGY
    start=$(date +%s%N)
    "$cutune" tune conv2d --size 4096,4096 --strategy "$4" --budget-evals 200 \
        $3 --cache-dir "$tmp/$2" --json >"$out/$1.json" 2>"$out/$1.err"
    rc=$?
    end=$(date +%s%N)
    best=$(tr -d '\n ' <"$out/$1.json" |
        sed -n 's/.*"best":{\([^}]*\)},"best_ms":\([0-9.]*\).*/\2 ms {\1}/p')
    workers=$(tr -d '\n ' <"$out/$1.json" | sed -n 's/.*"workers":\([0-9]*\).*/\1/p')
    printf '%-22s exit %d  %6.2f s  workers %s  best %s\n' "$1" "$rc" \
        "$(awk "BEGIN { print ($end - $start) / 1e9 }")" "$workers" "$best"
}
for strategy in random default; do
    one "$strategy-cold-1" "$strategy-1" "--device 0" "$strategy"
    one "$strategy-cold-2" "$strategy-2" "--devices 0,0" "$strategy"
    if [ "$strategy" = random ]; then
        one "$strategy-warm-1" "$strategy-1" "--device 0" "$strategy"
        one "$strategy-warm-2" "$strategy-2" "--devices 0,0" "$strategy"
    fi
done
