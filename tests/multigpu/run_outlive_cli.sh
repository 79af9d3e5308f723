#!/bin/sh
# A finished tune outlives its side effects (issue 35), on a replayed
# device: a start configuration whose worker dies is a failed evaluation,
# and the result, its cache record (baseline time null) and --output are
# written; a cache that cannot be written is one error after the result
# is printed and the T4 written (exit 10); a plan over such a cache says
# so once and tunes nothing; a plan tunes again what `check` calls stale.
# usage: run_outlive_cli.sh CUTUNE TEST_DATA
set -u
cutune=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
# A copy beside a kernel file, so that lookup loads it and the plan sees
# a source hash.
t1=$tmp/t1.json
cp "$data/t1/convolution_milo.json" "$t1"
echo "__global__ void convolution_kernel() {}" >"$tmp/convolution_milo.cu"
export CUTUNE_DEVICE_BACKEND="replay:$data/t4/convolution_milo_A100_T4.json.gz"
tune() {
    "$cutune" tune "$t1" --strategy random --budget-evals 20 --quiet "$@" \
        >"$tmp/out" 2>"$tmp/err"
}

# The start configuration (the defaults on a replayed device) dies.
start=$("$cutune" tune "$t1" --strategy random --budget-evals 2 --no-cache \
    --json --quiet | sed -n 's/.*"config_index": \([0-9]*\),.*/\1/p' |
    head -1)
[ -n "$start" ] || fail "no start configuration"
CUTUNE_REPLAY_FAIL="die:$start" tune --cache-dir "$tmp/cache" \
    --output "$tmp/t4.json"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 0 ] || fail "failed start: exit $rc, wanted 0"
grep -q "^  best: " "$tmp/out" || fail "failed start: no result printed"
grep -q "threads per block) failed$" "$tmp/out" ||
    fail "failed start: the baseline is not said to have failed"
! grep -q "speedup:" "$tmp/out" || fail "failed start: a speedup printed"
[ -s "$tmp/t4.json" ] || fail "failed start: no --output"
grep -q '"baseline":{"config":{[^}]*},"time_ms":null}' "$tmp"/cache/*.jsonl ||
    fail "failed start: no record with a null baseline time"
"$cutune" lookup "$t1" --device-name "replay convolution_milo_A100" \
    --size 4096,4096 --cache-dir "$tmp/cache" >"$tmp/look" 2>&1 ||
    fail "failed start: lookup does not read the record: $(cat "$tmp/look")"
! grep -q "skipped" "$tmp/look" || fail "lookup skipped the record"

# A cache directory that cannot be created (under a file, so that it
# holds for root too).
: >"$tmp/file"
tune --cache-dir "$tmp/file/cache" --output "$tmp/t4b.json"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 10 ] || fail "unwritable cache: exit $rc, wanted 10"
grep -q "^  best: " "$tmp/out" || fail "unwritable cache: no result printed"
[ -s "$tmp/t4b.json" ] || fail "unwritable cache: no --output"
grep -q "writing the tuning cache: cannot create directory" "$tmp/err" ||
    fail "unwritable cache: the error does not say why"

# A plan over it tunes nothing and says so once.
cat >"$tmp/plan.json" <<PLAN
{"items": [{"problem": "$tmp/t1.json", "sizes": [[1024, 1024], [2048, 2048]]}]}
PLAN
plan() {
    "$cutune" tune --plan "$tmp/plan.json" --strategy random \
        --budget-evals 10 "$@" >"$tmp/out" 2>"$tmp/err"
}
plan --cache-dir "$tmp/file/cache"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 10 ] || fail "plan, unwritable cache: exit $rc, wanted 10"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "plan, unwritable cache: not one line"
grep -q "cannot be written, so no task is tuned" "$tmp/err" ||
    fail "plan, unwritable cache: no clear message"

# Stale records: the kernel edited, the plan tunes again.
plan --cache-dir "$tmp/plan-cache" &&
    grep -q "2 tuned, 0 already cached" "$tmp/out" || fail "plan: first run"
plan --cache-dir "$tmp/plan-cache" &&
    grep -q "0 tuned, 2 already cached" "$tmp/out" || fail "plan: rerun"
echo "// edited" >>"$tmp/convolution_milo.cu"
plan --cache-dir "$tmp/plan-cache"
cat "$tmp/out"
grep -q "2 tuned, 0 already cached" "$tmp/out" ||
    fail "plan: stale records were taken as cached"
echo "failed start: tuned, recorded with a null baseline; unwritable cache:"
echo "result and T4 kept, exit 10; plan: refused once; stale: tuned again"
