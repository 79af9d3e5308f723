#!/bin/sh
# cutune tune --devices on replayed devices: a list that is not one of
# ordinals, an ordinal that does not exist, and --device with --devices
# each give one line naming the value and exit 1 (usage); two models give
# one result each (a JSON array) and one cache record each.
# usage: run_devices_cli.sh CUTUNE TEST_DATA
set -u
cutune=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
a100=$data/t4/convolution_milo_A100_T4.json.gz
a4000=$data/t4/convolution_milo_A4000_T4.json.gz
t1=$data/t1/convolution_milo.json
export CUTUNE_DEVICE_BACKEND="replay:$a100,$a4000"

# An error: exit 1, one line on stderr holding $3, nothing on stdout.
refused() {
    what=$1
    want=$2
    shift 2
    "$cutune" tune "$t1" --cache-dir "$tmp/cache" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/err"
    [ "$rc" -eq 1 ] || fail "$what: exit $rc, wanted 1"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: not one line"
    grep -qF -e "$want" "$tmp/err" || fail "$what: no '$want'"
    [ ! -s "$tmp/out" ] || fail "$what: printed a result"
}
refused "a letter" "--devices: 'x' in '0,x' is not a device ordinal" \
    --devices 0,x
refused "an empty entry" "--devices: '' in '0,,1' is not a device ordinal" \
    --devices 0,,1
refused "a negative ordinal" "'-1' in '-1' is not a device ordinal" \
    --devices -1
refused "an ordinal out of range" \
    "device 5 does not exist (2 replayed devices found)" --devices 0,5
refused "--device with --devices" "--device and --devices" \
    --device 0 --devices 0
[ ! -e "$tmp/cache" ] || [ -z "$(ls "$tmp/cache")" ] ||
    fail "a refused tune wrote to the cache"

"$cutune" tune "$t1" --devices all --strategy random --budget-evals 50 \
    --cache-dir "$tmp/cache" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 0 ] || fail "two models: exit $rc"
n=$(grep -c '"problem": "convolution_milo"' "$tmp/out")
[ "$n" -eq 2 ] || fail "two models: $n results, wanted 2"
grep -q '"name": "replay convolution_milo_A100"' "$tmp/out" ||
    fail "no A100 result"
grep -q '"name": "replay convolution_milo_A4000"' "$tmp/out" ||
    fail "no A4000 result"
lines=$(cat "$tmp"/cache/*.jsonl | wc -l)
[ "$lines" -eq 2 ] || fail "$lines cache records, wanted 2"
# A plan whose item names no devices runs on the --devices set: a task
# per model and size, the two A100 recordings sharing one search.
export CUTUNE_DEVICE_BACKEND="replay:$a100,$a4000,$a100"
cat >"$tmp/plan.json" <<PLAN
{"items": [{"problem": "$t1", "sizes": [[1024, 1024], [2048, 2048]]}]}
PLAN
plan() {
    "$cutune" tune --plan "$tmp/plan.json" --devices all --strategy random \
        --budget-evals 40 --cache-dir "$tmp/plan-cache" "$@"
}
plan --verbose >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "plan: exit $rc"
grep -q "plan: 4 tasks: 4 tuned, 0 already cached, 0 failed" "$tmp/out" ||
    fail "plan: not 4 tasks tuned"
n=$(grep -c "on 2 replayed devices (replay convolution_milo_A100)" "$tmp/err")
[ "$n" -eq 2 ] || fail "plan: $n A100 tasks on 2 devices, wanted 2"
n=$(grep -c "on 1 replayed device (replay convolution_milo_A4000)" "$tmp/err")
[ "$n" -eq 2 ] || fail "plan: $n A4000 tasks on 1 device, wanted 2"
plan >"$tmp/out" 2>&1
grep -q "plan: 4 tasks: 0 tuned, 4 already cached" "$tmp/out" ||
    fail "plan: the second run tuned again"
echo "tune --devices: refused bad lists in one line; two models, two records;"
echo "a plan on the --devices set, a search per model, resumed"

