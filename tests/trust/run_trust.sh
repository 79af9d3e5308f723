#!/bin/sh
# Wrong inputs refused or warned about, end to end (no GPU): T4 results
# with a negative time, cut short or inflating past the limit; cache
# records that do not fit the problem; unreadable cache entries; a
# compile where nothing compiles; the source hash of simulated records.
# Each case names the message it expects (docs/trust.md lists them).
# Usage: run_trust.sh CUTUNE_BINARY SOURCE_DIR
set -u
cutune=$1
fx=$2/tests/trust/fixtures
sim=$2/tests/cli/fixtures
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME RC PATTERN CMD...: exit code RC and PATTERN (grep -E) in
# stdout+stderr
expect() {
    name=$1 want=$2 pattern=$3
    shift 3
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/out"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $name (exit $rc, wanted $want, pattern '$pattern')"
        cat "$tmp/out"
    fi
}
# refute NAME PATTERN: PATTERN is not in the last command's output
refute() {
    if grep -Eq -- "$2" "$tmp/out"; then
        failed=$((failed + 1))
        echo "FAILED: $1 (found '$2')"
        cat "$tmp/out"
    else
        passed=$((passed + 1))
    fi
}

# --- T4 results -----------------------------------------------------------
S="$cutune simulate $sim/sim.json --budget-evals 4 --seed 1 --results"
expect t4-negative 2 'negative_T4.json: results\[1\]\.times\.runtimes\[0\]: -1 is not a time' \
    $S "$fx/negative_T4.json"
refute t4-negative-no-optimum 'optimum'
expect t4-truncated 2 'truncated_T4.json.gz: truncated: the gzip stream ends early' \
    $S "$fx/truncated_T4.json.gz"
refute t4-truncated-not-syntax 'line [0-9]+, column'
# 3 MB of spaces compress to a few kB; with a 1 MiB limit they are refused
# with the limit and the variable that raises it named.
head -c 3000000 /dev/zero | tr '\0' ' ' | gzip >"$tmp/bomb_T4.json.gz"
expect t4-limit 2 'bomb_T4.json.gz: larger than 1 MiB decompressed; refused \(set CUTUNE_MAX_INPUT_MB' \
    env CUTUNE_MAX_INPUT_MB=1 $S "$tmp/bomb_T4.json.gz"
expect t4-limit-raised 2 'bomb_T4.json.gz: line 1, column' \
    env CUTUNE_MAX_INPUT_MB=8 $S "$tmp/bomb_T4.json.gz"

# --- cache records that do not fit the problem ------------------------------
# Four records newer and faster than the one good record: an unknown
# parameter, time_ms -1, a configuration outside the conditions, a value
# the parameter does not have. Only the good one may be served.
expect cache-bad-records 0 'block_size_x=64 UNROLL=2' \
    $cutune lookup "$fx/trust.json" --device-name "GTX Fictional 9000" \
    --cache-dir "$fx/badcache"
expect cache-bad-records-warn 0 '4 lines in .*badcache skipped: .* \(first: .*gtx-fictional-9000-12345678.jsonl:2: config.nosuch: the problem has no such parameter\)' \
    $cutune lookup "$fx/trust.json" --device-name "GTX Fictional 9000" \
    --cache-dir "$fx/badcache"
refute cache-bad-records-not-served '0\.[345]000 ms'
mkdir "$tmp/one" && sed -n 4p "$fx/badcache/gtx-fictional-9000-12345678.jsonl" \
    >"$tmp/one/a.jsonl" && sed -n 1p "$fx/badcache/gtx-fictional-9000-12345678.jsonl" >>"$tmp/one/a.jsonl"
expect cache-outside-space 0 'a.jsonl:1: config: outside the search space' \
    $cutune lookup "$fx/trust.json" --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/one"
sed -n 3p "$fx/badcache/gtx-fictional-9000-12345678.jsonl" >"$tmp/one/a.jsonl"
expect cache-negative-time 5 'a.jsonl:1: not a valid record' \
    $cutune lookup "$fx/trust.json" --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/one"
sed -n 5p "$fx/badcache/gtx-fictional-9000-12345678.jsonl" >"$tmp/one/a.jsonl"
expect cache-unknown-value 5 "a.jsonl:1: config.block_size_x: '48' is not one of its values" \
    $cutune lookup "$fx/trust.json" --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/one"

# --- unreadable entries of a cache folder -----------------------------------
mkdir "$tmp/loop"
cp "$sim/fleet/gtx-fictional-9000-11111111.jsonl" "$tmp/loop/"
ln -s "$tmp/loop/b.jsonl" "$tmp/loop/a.jsonl"
ln -s "$tmp/loop/a.jsonl" "$tmp/loop/b.jsonl"
ln -s "$tmp/nowhere.jsonl" "$tmp/loop/dangling.jsonl"
expect loop-lookup 0 '3 files in .*loop not read \(first: .*a.jsonl: a loop of symbolic links\); the rest was read' \
    $cutune lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/loop"
expect loop-lookup-served 0 'exact match' \
    $cutune lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/loop"
rm "$tmp/loop/a.jsonl" "$tmp/loop/b.jsonl"
expect dangling-lookup 0 '1 file in .*loop not read \(first: .*dangling.jsonl: a symbolic link to nothing\)' \
    $cutune lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" \
    --cache-dir "$tmp/loop"
ln -s "$tmp/loop/b.jsonl" "$tmp/loop/a.jsonl"
ln -s "$tmp/loop/a.jsonl" "$tmp/loop/b.jsonl"
expect loop-export 0 'not read' \
    $cutune export --format json --cache-dir "$tmp/loop" --output "$tmp/x.json"
expect loop-merge 0 'not read' \
    $cutune merge "$tmp/loop" -o "$tmp/merged.jsonl"
expect loop-check 5 'not read' \
    $cutune check vector_add --device-name "GTX Fictional 9000" --cache-dir "$tmp/loop"

# --- compile: nothing compiled is not a success ------------------------------
expect compile-nothing 6 'nothing compiled: NVRTC rejected all 2 configurations of vector_add for sm_1' \
    $cutune compile vector_add --arch sm_1 --limit 2 --no-binary-cache

# --- the source hash of simulated records -------------------------------------
expect sim-hash 0 'appended the winner' \
    $cutune simulate "$fx/trust.json" --results "$sim/sim_T4.json" \
    --budget-evals 8 --seed 1 --cache-dir "$tmp/simcache" --device-name "GTX Sim 1"
expect sim-hash-check 0 'trust \(kernel trust\): fresh on GTX Sim 1 \[simulated\]' \
    $cutune check "$fx/trust.json" --device-name "GTX Sim 1" --cache-dir "$tmp/simcache"
expect sim-hash-lookup 0 'GTX Sim 1 \[simulated\]' \
    $cutune lookup "$fx/trust.json" --device-name "GTX Sim 1" --cache-dir "$tmp/simcache"
refute sim-hash-lookup-no-warning 'source changed'
# A problem given without its kernel: the record cannot be compared.
expect sim-nosource 0 'appended the winner' \
    $cutune simulate "$sim/sim.json" --results "$sim/sim_T4.json" \
    --budget-evals 8 --seed 1 --cache-dir "$tmp/simcache" --device-name "GTX Sim 2"
expect sim-nosource-check 5 'sim \(kernel trust\): not comparable on GTX Sim 2: the cached record was simulated from recorded times without the kernel source' \
    $cutune check "$fx/trust-sim.json" --device-name "GTX Sim 2" --cache-dir "$tmp/simcache"
refute sim-nosource-check-no-empty "record's ;"
expect sim-nosource-lookup 0 'cannot tell whether the source changed' \
    $cutune lookup "$fx/trust-sim.json" --device-name "GTX Sim 2" --cache-dir "$tmp/simcache"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
