#!/bin/sh
# Runs .ci/check-size on small trees made here: it must pass one that sits
# exactly at the limits and fail (status 1, naming the offender) one with a
# 1,001-line file, one with a 121-line function in C and one in a CUDA
# file, so the check cannot quietly pass everything.
# usage: test_check_size.sh CHECK_SIZE_SCRIPT
set -u
check=$1
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
    echo "SKIP: Universal Ctags is not installed (.ci/install-deps)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# A C function of exactly $1 lines.
function_of() {
    printf 'int %s(void)\n{\n    int x = 0;\n' "$2"
    i=0
    while [ "$i" -lt $(($1 - 5)) ]; do
        printf '    x++;\n'
        i=$((i + 1))
    done
    printf '    return x;\n}\n'
}

# A file of exactly $1 lines with nothing but a short function.
file_of() {
    function_of 6 short
    i=6
    while [ "$i" -lt "$1" ]; do
        printf '/* padding */\n'
        i=$((i + 1))
    done
}

# expect STATUS NAME TREE [ALLOWLIST] [TEXT]: runs the check on TREE.
expect() {
    want=$1 name=$2 tree=$3 allow=${4:-/dev/null} text=${5:-}
    out=$("$check" --allowlist "$allow" "$tree" 2>&1)
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $name: status $got, expected $want"
        echo "$out"
        failures=$((failures + 1))
    elif [ -n "$text" ] && ! printf '%s\n' "$out" | grep -qF "$text"; then
        echo "FAIL $name: output does not mention '$text'"
        echo "$out"
        failures=$((failures + 1))
    else
        echo "ok $name"
    fi
}

tree() {
    rm -rf "${work:?}/$1"
    mkdir -p "$work/$1/search" "$work/$1/templates" "$work/$1/tests"
    echo "$work/$1"
}

t=$(tree at_limits)
file_of 1000 >"$t/search/full.c"
function_of 120 longest >"$t/search/long.c"
function_of 120 kernel >"$t/templates/k.cu"
file_of 5000 >"$t/tests/test_huge.c" # tests/ is not checked
expect 0 "at the limits" "$t"

t=$(tree long_file)
file_of 1001 >"$t/search/full.c"
expect 1 "1,001-line file" "$t" /dev/null "search/full.c: 1001 lines"

t=$(tree long_function)
function_of 121 too_long >"$t/search/long.c"
expect 1 "121-line function" "$t" /dev/null "too_long() 121 lines"

t=$(tree long_kernel)
{
    printf 'extern "C" __global__ void __launch_bounds__(256)\n'
    function_of 121 kernel | sed 1d | sed '1s/^/kernel(float *p)\n/'
} >"$t/templates/k.cu"
expect 1 "121-line CUDA kernel" "$t" /dev/null "kernel() 121 lines"

t=$(tree allowed)
file_of 1001 >"$t/search/full.c"
function_of 121 too_long >"$t/search/long.c"
printf '# known\nsearch/full.c\nsearch/long.c:too_long # reshaping\n' \
    >"$work/allowlist"
expect 0 "allowlisted offenders" "$t" "$work/allowlist"

if [ "$failures" -ne 0 ]; then
    echo "$failures check-size case(s) failed"
    exit 1
fi
