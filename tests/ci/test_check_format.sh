#!/bin/sh
# Runs .ci/check-format on a small git tree made here with the project's
# .clang-format: it must pass a formatted file and fail (status 1, naming
# the file) one that is not, so the check cannot quietly pass everything.
# usage: test_check_format.sh CHECK_FORMAT_SCRIPT CLANG_FORMAT_FILE
set -u
check=$1
style=$2
command -v clang-format >/dev/null 2>&1 || { echo "no clang-format"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cd "$work" && git init -q . && cp "$style" .clang-format
printf 'int f(int x)\n{\n    return x + 1;\n}\n' >good.c
git add good.c .clang-format
out=$("$check" "$work" 2>&1)
if [ $? -eq 0 ]; then echo "ok formatted"; else
    echo "FAIL formatted: $out"; failures=$((failures + 1)); fi
printf 'int  g( int x ){return x;}\n' >bad.c
git add bad.c
out=$("$check" "$work" 2>&1)
st=$?
if [ "$st" -eq 1 ] && printf '%s\n' "$out" | grep -q '^bad.c: not as'; then
    echo "ok unformatted named"
else
    echo "FAIL unformatted: status $st: $out"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
