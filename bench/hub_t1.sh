#!/bin/sh
# Tunes T1 files as their authors published them (the FAIR benchmark hub's
# convolution, hotspot and dedispersion, with their kernel files beside
# them; the kernel sources are the hub's, not in this repository) and
# prints, per file, the exit status, the wall time and the tune's last
# lines. A benchmark: it reports what happened, it passes nothing.
# Usage: bench/hub_t1.sh CUTUNE DIR FILE.json... (files relative to DIR)
set -u
cutune=$1
dir=$2
shift 2
for f in "$@"; do
    log=${OUT:-/tmp}/hub-$(basename "$f" .json).log
    start=$(date +%s%N)
    (cd "$dir" && timeout ${HUB_TIMEOUT:-540} "$cutune" tune "$f" --no-cache \
        --output "${OUT:-/tmp}/hub-$(basename "$f" .json)_T4.json.gz") \
        >"$log" 2>&1
    rc=$?
    end=$(date +%s%N)
    printf '== %s: exit %d, %d.%d s\n' "$f" "$rc" \
        $(((end - start) / 1000000000)) $(((end - start) / 100000000 % 10))
    grep -v '^\[' "$log" | tail -n 14
done
