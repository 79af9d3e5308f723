#!/bin/sh
# Builds the expression-parser fuzz target with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, seeds it with the
# expressions of the T1 files in the tree, and runs it.
# Usage: tests/fuzz/run.sh [SECONDS] [BUILD_DIR]   (default 600, build-fuzz)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-600}
out=${2:-$root/build-fuzz}
mkdir -p "$out/corpus"
cc=${CC_FUZZ:-clang}
"$cc" -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$root/search" \
    "$here/fuzz_expr.c" "$root/search/expr.c" -lm -o "$out/fuzz_expr"
cp "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
# -rss_limit_mb stays at libFuzzer's default; a leak or an overflow ends the
# run with a reproducer (crash-*) in the current directory.
cd "$out"
exec ./fuzz_expr -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=512 corpus
