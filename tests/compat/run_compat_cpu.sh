#!/bin/sh
# The compatibility suite's cases that need no GPU: T1 files written the
# way Kernel Tuner users write them, each loaded with `cutune compile FILE
# --arch sm_90 --limit 2` (NVRTC only) and checked for its exit code and
# messages. README.md beside this script lists the cases.
# Usage: run_compat_cpu.sh CUTUNE_BINARY SOURCE_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 CUTUNE_BINARY SOURCE_DIR" >&2
    exit 1
fi
# shellcheck source=tests/compat/lib.sh
. "$2/tests/compat/lib.sh"
compat_setup "$@"

# compiles FILE: loads and compiles its first two configurations.
compiles() {
    run "$1: compiles" 0 "$cutune" compile "$1" --arch sm_90 --limit 2
    stdout_has "compiled 2 configurations"
    stdout_has "0 rejected by NVRTC"
}

# refused FILE: exit 2 with one message.
refused() {
    run "$1: refused" 2 "$cutune" compile "$1" --arch sm_90 --limit 2
    one_message
}

# 1. constant memory, with and without the kernel parameter
compiles constant_memory/const_param.json
verdict
compiles constant_memory/const_symbol.json
verdict

# 2. #include "helper.h" beside a kernel file in kernels/
compiles includes/includes.json
verdict

# 3. a scalar of every T1 type
compiles scalar_types/scalar_types.json
verdict

# 4. BinaryRaw fill: the right size loads, a wrong size is refused
compiles binary_fill/binary_fill.json
verdict
refused binary_fill/wrong_size/binary_fill_wrong_size.json
stderr_line_has "KernelSpecification.Arguments[1].DataSource"
verdict

# 5. output depending on a tunable: compiles here, tuned on the GPU
compiles output_depends/output_depends.json
verdict

# 6. a Default outside its Values: loads, with a warning naming it
compiles default_outside/default_outside.json
stderr_line_has "Default" "unroll_depth"
verdict

# 7. a HIP source
refused hip_source/hip_source.json
stderr_line_has "KernelSpecification.KernelFile" "HIP"
verdict

# 9. bad values, each named
refused bad_values/duplicate_key.json
stderr_line_has "duplicate"
verdict
refused bad_values/problem_size_negative.json
stderr_line_has "ProblemSize"
verdict
refused bad_values/arg_type_number.json
stderr_line_has "Arguments[0].Type" "expected a string"
verdict
compiles bad_values/unknown_key.json
stderr_line_has "warning" "Foo"
verdict
refused bad_values/dev_zero.json
stderr_line_has "KernelFile" "not a regular file"
verdict
refused bad_values/geometry_div_zero.json
stderr_line_has "KernelSpecification.LocalSize.X" "division by zero"
verdict
# a 10^12 space whose one condition rejects nearly all: stopped at the
# limit (lowered here so the case is quick), with the way to raise it
export CUTUNE_SPACE_LIMIT=200000
refused bad_values/endless_space.json
stderr_line_has "building the space stopped" "CUTUNE_SPACE_LIMIT"
verdict
unset CUTUNE_SPACE_LIMIT

summary cpu
