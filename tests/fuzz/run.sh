#!/bin/sh
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer, seeds it with the expressions of the T1 files
# in the tree, and runs it. TARGET `expr` (the default) fuzzes the parser
# and the tree evaluator; `prog` checks the compiled conditions of the
# search space against the tree evaluator.
# Usage: tests/fuzz/run.sh [SECONDS] [BUILD_DIR] [TARGET]
#        (defaults 600, build-fuzz, expr)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-600}
out=${2:-$root/build-fuzz}
target=${3:-expr}
case $target in
    expr | prog) ;;
    *) echo "tests/fuzz/run.sh: TARGET is expr or prog, not '$target'" >&2
       exit 2 ;;
esac
mkdir -p "$out/corpus-$target"
cc=${CC_FUZZ:-clang}
"$cc" -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$root/search" \
    "$here/fuzz_$target.c" "$root"/search/expr_*.c -lm -o "$out/fuzz_$target"
cp "$here"/corpus/* "$out/corpus-$target/" 2>/dev/null || true
# -rss_limit_mb stays at libFuzzer's default; a leak or an overflow ends the
# run with a reproducer (crash-*) in the current directory.
cd "$out"
exec ./fuzz_"$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=512 corpus-"$target"
