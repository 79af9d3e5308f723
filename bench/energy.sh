#!/bin/sh
# Time against energy (issue 38, docs/energy.md): for each case, on one GPU,
# a tune for time that also measures every candidate's energy, then a tune
# for energy, with the same seed and budget; then bench/energy_winners.py
# prints, over both tunes' T4 files, the winner under each objective with
# its ms, J per launch and W, and how far the energy of a configuration
# measured in both tunes moved between them. A benchmark: it prints figures.
#
#   bench/energy.sh CUTUNE OUT CASE...
# CASE is NAME:T1[@SIZE]: T1 a file or a template, SIZE its problem size.
# BUDGET (evaluations, default 60) and SEED (default 1) may be set.
set -u
cutune=$1
out=$2
shift 2
budget=${BUDGET:-60}
seed=${SEED:-1}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for case in "$@"; do
    name=${case%%:*}
    t1=${case#*:}
    size=""
    case $t1 in *@*) size="--size ${t1#*@}"; t1=${t1%@*} ;; esac
    for objective in time energy; do
        start=$(date +%s.%N)
        timeout "${TUNE_TIMEOUT:-150}" "$cutune" tune "$t1" $size \
            --objective "$objective" --measure-energy --budget-evals "$budget" \
            --seed "$seed" --no-cache \
            --output "$out/${name}_${objective}_T4.json.gz" \
            >"$out/${name}_${objective}.log" 2>&1
        rc=$?
        printf '== %s by %s: exit %d, %s s\n' "$name" "$objective" "$rc" \
            "$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")"
        grep -v '^\[' "$out/${name}_${objective}.log" | grep -E 'best|energy:' | head -n 4
    done
    python3 "$here/energy_winners.py" "$name" \
        "$out/${name}_time_T4.json.gz" "$out/${name}_energy_T4.json.gz"
done
