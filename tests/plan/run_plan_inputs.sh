#!/bin/sh
# Plan files are checked whole before any task runs (issue 35): a key
# given twice, an unknown field, a device repeated in an item and more
# than 100000 tasks are one message naming the file and the place, exit 2;
# a size with more dimensions than the problem's fails its task, named.
# usage: run_plan_inputs.sh CUTUNE
set -u
cutune=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

refused() {
    what=$1
    want=$2
    "$cutune" tune --plan "$tmp/plan.json" --cache-dir "$tmp/cache" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/err"
    [ "$rc" -eq 2 ] || fail "$what: exit $rc, wanted 2"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: not one line"
    grep -qF -e "$tmp/plan.json: $want" "$tmp/err" || fail "$what: no '$want'"
    [ ! -e "$tmp/cache" ] || fail "$what: the cache was touched"
}
plan() { printf '%s\n' "$1" >"$tmp/plan.json"; }

plan '{"items": [{"problem": "vector_add"}], "items": []}'
refused "items twice" "line 1: duplicate object key"
plan '{"items": [{"problem": "vector_add", "problem": "copy"}]}'
refused "problem twice" "line 1: duplicate object key"
plan '{"items": [{"problem": "vector_add"}], "budget": 5}'
refused "an unknown field" 'unknown field "budget" (a plan has "items")'
plan '{"items": [{"problem": "vector_add", "devices": [0, 1, 0]}]}'
refused "a repeated device" 'item 0: "devices"[2] repeats device 0'
# 6.4 M tasks from a few hundred KB.
awk 'BEGIN { printf "{\"items\": [{\"problem\": \"vector_add\", \"sizes\": [";
             for (i = 1; i <= 100000; i++) printf "%s[%d]", (i > 1 ? "," : ""), i;
             printf "], \"devices\": [";
             for (d = 0; d < 64; d++) printf "%s%d", (d ? "," : ""), d;
             print "]}]}" }' >"$tmp/plan.json"
refused "6.4 M tasks" "item 0: the plan has more than 100000 tasks"

plan '{"items": [{"problem": "vector_add", "sizes": [[1024, 5]]}]}'
"$cutune" tune --plan "$tmp/plan.json" --cache-dir "$tmp/cache" \
    >"$tmp/out" 2>"$tmp/err"
cat "$tmp/err"
grep -q "a problem size of 2 dimensions where KernelSpecification.ProblemSize has 1" \
    "$tmp/err" || fail "a size with an extra dimension was taken"
echo "plans: duplicate keys, unknown fields, repeated devices and 6.4 M"
echo "tasks refused in one line; an extra size dimension fails its task"
