#!/bin/sh
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer and runs it over its seed corpus (and the
# regression inputs, for the readers). TARGET:
#   expr  (the default) the expression parser and the tree evaluator;
#   prog  the compiled conditions of the search space against the tree
#         evaluator;
#   t1, t4, cache  the T1, T4 and cache readers (the whole library is
#         built with the sanitizers, through CMake with -DCUTUNE_FUZZ=ON);
#   plan  plan files and the messages between MPI ranks, likewise.
# Usage: tests/fuzz/run.sh [SECONDS] [BUILD_DIR] [TARGET]
#        (defaults 600, build-fuzz, expr)
# Without clang, the plain driver (fuzz_TARGET_replay, built by every
# build) runs a target over inputs and mutations: see tests/fuzz/driver.c.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-600}
out=${2:-$root/build-fuzz}
target=${3:-expr}
cc=${CC_FUZZ:-clang}
mkdir -p "$out/corpus-$target"
case $target in
    expr | prog)
        "$cc" -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined \
            -fno-sanitize-recover=undefined -I"$root/search" \
            "$here/fuzz_$target.c" "$root"/search/expr/expr_*.c -lm \
            -o "$out/fuzz_$target"
        cp "$here"/corpus/* "$out/corpus-$target/" 2>/dev/null || true
        max_len=512 ;;
    t1 | t4 | cache | plan)
        san="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined"
        cmake -S "$root" -B "$out" -DCMAKE_C_COMPILER="$cc" \
            -DCMAKE_CXX_COMPILER="${CXX_FUZZ:-clang++}" -DCUTUNE_FUZZ=ON \
            -DCUTUNE_BUILD_TESTS=OFF -DCUTUNE_BUILD_BENCH=OFF \
            -DCMAKE_C_FLAGS="$san -fsanitize=fuzzer-no-link" \
            -DCMAKE_CXX_FLAGS="$san" \
            -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
        cmake --build "$out" --target "fuzz_$target" -j"$(nproc)" >/dev/null
        cp "$here/corpus-$target"/* "$out/corpus-$target/"
        for f in "$here/regress-$target"/*; do
            case $f in *.expect) ;; *) cp "$f" "$out/corpus-$target/" ;; esac
        done
        max_len=16384 ;;
    *) echo "tests/fuzz/run.sh: TARGET is expr, prog, t1, t4, cache or plan, not '$target'" >&2
       exit 2 ;;
esac
# -rss_limit_mb stays at libFuzzer's default; a leak or an overflow ends the
# run with a reproducer (crash-*) in the current directory.
cd "$out"
exec ./fuzz_"$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len="$max_len" corpus-"$target"
