#!/bin/sh
# `cutune explain` on a GPU whose counters can be read (an H100 of the
# device machines): transpose without padding (PAD=0) must be named
# bank-conflicted with its conflicts per request in the table, with
# padding (PAD=1) not; vector_add is memory-bound; every configuration
# shows its counters; with CUPTI made unfindable the report still comes,
# with one line saying why and exit 8. Exits 77 without a GPU, and says
# so (exit 1) where the GPU refuses counters: run it where they are read.
# Usage: run_explain_gpu.sh BUILD_DIR
set -u
build=$1
export CUTUNE_WORKER="$build/cutune-worker"
if ! "$build/cutune" devices >/dev/null 2>&1; then
    echo "SKIPPED: no CUDA device"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUTUNE_CACHE_DIR="$tmp/cache"
fail=0
no() { echo "FAILED: $*"; fail=1; }
# The bottleneck line of column $2 in report $1.
verdict() { sed -n '/^bottleneck$/,$p' "$1" | grep "^  $2 " ; }
# The figures of row $2 in report $1.
row() { grep "^$2" "$1"; }

"$build/cutune" explain transpose --size 4096,4096 --config PAD=0 \
    >"$tmp/pad0" 2>&1 || no "transpose PAD=0 exit $?"
"$build/cutune" explain transpose --size 4096,4096 --config PAD=1 \
    >"$tmp/pad1" 2>&1 || no "transpose PAD=1 exit $?"
cat "$tmp/pad0" "$tmp/pad1"
verdict "$tmp/pad0" given | grep -q 'bank conflicts' ||
    no "PAD=0 is not named bank-conflicted"
verdict "$tmp/pad1" given | grep -q 'bank conflicts' &&
    no "PAD=1 is named bank-conflicted"
# conflicts per request: the given column's figure, >= 2 and < 2.
c0=$(row "$tmp/pad0" 'shared conflicts per request' | awk '{print $5}')
c1=$(row "$tmp/pad1" 'shared conflicts per request' | awk '{print $5}')
awk -v a="$c0" -v b="$c1" 'BEGIN { exit !(a >= 2 && b < 2) }' ||
    no "conflicts per request: PAD=0 $c0, PAD=1 $c1"

"$build/cutune" explain vector_add --size 16777216 --config UNROLL=4 \
    >"$tmp/va" 2>&1 || no "vector_add exit $?"
cat "$tmp/va"
verdict "$tmp/va" given | grep -q 'memory-bound' ||
    no "vector_add UNROLL=4 is not memory-bound"
grep -q '^headroom: the given is' "$tmp/va" || no "no headroom line"
for r in 'DRAM throughput' 'compute throughput' 'load sectors per request' \
         'L2 hit rate' 'occupancy achieved'; do
    row "$tmp/va" "$r" | grep -Eq ' -( |$)' && no "$r has a missing figure"
done

CUTUNE_CUPTI=/nonexistent "$build/cutune" explain vector_add \
    --size 1048576 >"$tmp/nocupti" 2>&1
rc=$?
cat "$tmp/nocupti"
[ "$rc" -eq 8 ] || no "CUTUNE_CUPTI=/nonexistent: exit $rc, wanted 8"
[ "$(grep -c 'counters not read' "$tmp/nocupti")" -eq 1 ] ||
    no "not exactly one line saying why counters were not read"
row "$tmp/nocupti" 'registers per thread' | grep -q '[0-9]' ||
    no "no static figures without counters"

# Energy and power measured as a tune measures them (--measure-energy):
# a row of each with figures, and the JSON keys with positive values.
"$build/cutune" explain vector_add --size 16777216 --measure-energy \
    >"$tmp/energy" 2>&1 || no "explain --measure-energy exit $?"
cat "$tmp/energy"
for r in 'power' 'energy per launch'; do
    row "$tmp/energy" "$r" | grep -q '[0-9]' || no "no $r row with figures"
done
"$build/cutune" explain vector_add --size 16777216 --measure-energy --json \
    >"$tmp/energy.json" 2>/dev/null || no "explain --measure-energy --json exit $?"
python3 - "$tmp/energy.json" <<'PY' || no "energy_j/power_w missing or not positive in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
found = []
def walk(x):
    if isinstance(x, dict):
        if "energy_j" in x:
            found.append((x["energy_j"], x.get("power_w")))
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(d)
print("energy_j, power_w:", found)
sys.exit(0 if found and all(e > 0 and 10 < w < 2000 for e, w in found) else 1)
PY
exit $fail
