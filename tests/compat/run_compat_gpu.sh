#!/bin/sh
# The compatibility suite's cases that launch kernels: each T1 file is
# tuned on device 0 with a small budget, into a temporary cache, and
# checked for its exit code and messages. Exits 77 (skipped) where there
# is no CUDA GPU. README.md beside this script lists the cases.
# Usage: run_compat_gpu.sh CUTUNE_BINARY SOURCE_DIR
#   e.g. on the GPU machine: sh tests/compat/run_compat_gpu.sh build/cutune .
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 CUTUNE_BINARY SOURCE_DIR" >&2
    exit 1
fi
# shellcheck source=tests/compat/lib.sh
. "$2/tests/compat/lib.sh"
compat_setup "$@"

skip() {
    echo "SKIPPED: no CUDA GPU on this machine (compat GPU cases need one)"
    exit 77
}
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || skip
"$cutune" devices >"$tmp/devices" 2>&1
rc=$?
[ "$rc" = 3 ] && skip
if [ "$rc" != 0 ]; then
    echo "FAIL  cutune devices: exit $rc"
    cat "$tmp/devices"
    exit 1
fi
sed 's/^/device: /' "$tmp/devices"

# tunes FILE [OPTIONS]: tunes to the end with a winner, every evaluated
# configuration correct.
tunes() {
    f=$1
    shift
    run "$f: tunes" 0 "$cutune" tune "$f" --budget-evals 8 --no-cache \
        --quiet "$@"
    stdout_has "best:"
}

# 1. constant memory: bound to the __constant__ variable, and passed as a
#    parameter where the kernel takes one (NaN output otherwise)
tunes constant_memory/const_param.json
stdout_has "(0 failed"
verdict
tunes constant_memory/const_symbol.json
stdout_has "(0 failed"
verdict

# 2. includes: launches too
tunes includes/includes.json
stdout_has "(0 failed"
verdict

# 3. every scalar type arrives with its value (NaN output otherwise)
tunes scalar_types/scalar_types.json
stdout_has "(0 failed"
verdict

# 4. BinaryRaw input arrives as written (NaN output otherwise)
tunes binary_fill/binary_fill.json
stdout_has "(0 failed"
verdict

# 5. output depending on the tunable `steps` by design: a winner, and the
#    user told which tunable the output depends on
name="output_depends/output_depends.json: tunes, naming steps"
run "$name" 0 "$cutune" tune output_depends/output_depends.json \
    --budget-evals 16 --no-cache --quiet
stdout_has "best:"
stderr_line_has "differ from the default configuration's" "steps"
verdict

# 8. a T1 argument whose type does not fit the kernel's parameter
run "arg_mismatch/arg_mismatch.json: refused" 2 "$cutune" tune \
    arg_mismatch/arg_mismatch.json --budget-evals 8 --no-cache --quiet
one_message
stderr_line_has "KernelSpecification.Arguments[2]"
verdict

summary gpu
