#!/bin/sh
# Every numeric environment variable is read by one helper
# (cutune_env_number): a value out of type or range is one line naming
# the variable and its value, exit 1, before anything is tuned (issue 35).
# usage: run_env_cli.sh CUTUNE TEST_DATA
set -u
cutune=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
t1=$data/t1/convolution_milo.json
replay="replay:$data/t4/convolution_milo_A100_T4.json.gz"

# refused VAR=VALUE WANT COMMAND...: exit 1, one line holding WANT.
refused() {
    setting=$1
    want=$2
    shift 2
    env "$setting" CUTUNE_DEVICE_BACKEND="$replay" "$cutune" "$@" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/err"
    [ "$rc" -eq 1 ] || fail "$setting: exit $rc, wanted 1"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$setting: not one line"
    grep -qF -e "$want" "$tmp/err" || fail "$setting: no '$want'"
    [ ! -s "$tmp/out" ] || fail "$setting: printed a result"
}
tune="tune $t1 --budget-evals 5 --cache-dir $tmp/cache --quiet"
refused CUTUNE_REPLAY_TIME_SCALE=inf \
    "CUTUNE_REPLAY_TIME_SCALE: 'inf' is not a number from 0 to 1000" $tune
refused CUTUNE_REPLAY_TIME_SCALE=1e9 "'1e9' is not a number" $tune
refused CUTUNE_MAX_INPUT_MB=abc \
    "CUTUNE_MAX_INPUT_MB: 'abc' is not a whole number from 1 to" $tune
refused CUTUNE_MAX_INPUT_MB=0 "CUTUNE_MAX_INPUT_MB: '0' is not" $tune
refused CUTUNE_SPACE_LIMIT=-1 \
    "CUTUNE_SPACE_LIMIT: '-1' is not a whole number from 1 to" $tune
refused CUTUNE_SPACE_LIMIT=12x "CUTUNE_SPACE_LIMIT: '12x' is not" \
    space "$t1"
refused CUTUNE_REPLAY_FAIL=die:-1 \
    "CUTUNE_REPLAY_FAIL: 'die:-1' is not die:N or hang:N" $tune
refused CUTUNE_REPLAY_FAIL=hang:2x "'hang:2x' is not die:N" $tune
[ ! -e "$tmp/cache" ] || [ -z "$(ls "$tmp"/cache/*.jsonl 2>/dev/null)" ] ||
    fail "a refused tune wrote to the cache"

# A plan honours CUTUNE_SPACE_LIMIT, as its message says.
echo "{\"items\": [{\"problem\": \"$t1\", \"sizes\": [[1024, 1024]]}]}" \
    >"$tmp/plan.json"
CUTUNE_SPACE_LIMIT=10 CUTUNE_DEVICE_BACKEND="$replay" "$cutune" tune \
    --plan "$tmp/plan.json" --cache-dir "$tmp/cache" >"$tmp/out" 2>"$tmp/err"
grep -q "stopped after 10 partial configurations" "$tmp/err" ||
    fail "the plan ignored CUTUNE_SPACE_LIMIT"
grep -q "0 tuned, 0 already cached, 1 failed" "$tmp/out" ||
    fail "the plan tuned past CUTUNE_SPACE_LIMIT"
echo "environment: 8 bad values refused in one line each; plans honour"
echo "CUTUNE_SPACE_LIMIT"
