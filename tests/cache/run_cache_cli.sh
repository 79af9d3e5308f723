#!/bin/sh
# The cache commands end to end, without a GPU: lookup levels and
# warnings, export compiled as C and C++ with -Wall -Wextra -Werror,
# check on stale, fresh and missing records, merge.
# Usage: run_cache_cli.sh CUTUNE_BINARY SOURCE_DIR
set -u
cutune=$1
fixtures=$2/tests/cli/fixtures
fleet=$fixtures/fleet
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAILED: $*"; }

# expect NAME RC PATTERN CMD...: exit code RC and PATTERN (grep -E) in
# stdout+stderr
expect() {
    name=$1 want=$2 pattern=$3
    shift 3
    "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$want" ] &&
       { [ -z "$pattern" ] || grep -Eq -- "$pattern" "$tmp/out"; }; then
        ok
    else
        bad "$name (exit $rc, wanted $want, pattern '$pattern')"
        cat "$tmp/out"
    fi
}

# --- lookup: each level, simulated, refused version ----------------------
L="$cutune lookup vector_add --size 1048576 --cache-dir $fleet"
expect exact 0 '\(exact match' $L --device-name "gtx fictional 9000"
expect nearest 0 'nearest-size match' $L --device-name "GTX Fictional 9000" --size 4000000
expect architecture 0 'GTX Fictional 9100 \(architecture match' \
    $L --device-name "GTX Next" --cc 9.0 --sm-count 140
# A (128, UNROLL 4) won on two devices and was 1.1x the best on a third;
# it carries the record of the newest (the later line) of its winners.
expect default 0 'RTX Imaginary 5000 \(default match' $L --device-name "GTX Next"
expect simulated 0 'GTX Simulated 7000 \[simulated\] \(exact' \
    $L --device-name "GTX Simulated 7000"
expect simulated-json 0 '"simulated": true' $L --device-name "GTX Simulated 7000" --json
expect version-warning 0 'warning: 1 record of cache format version 3 in .* refused' \
    $L --device-name "GTX Fictional 9000"
expect occupancy 5 'no record; use the occupancy suggestion' \
    $cutune lookup vector_add --cache-dir "$tmp/empty" --device-name X
expect no-fallback 5 'no cache record' $L --device-name "GTX Next" --no-fallback
expect bad-cc 1 "--cc: 'nine' is not" $L --device-name X --cc nine
expect cc-needs-name 1 '--cc and --sm-count go with --device-name' $L --cc 9.0

# --- export: compiled as C and C++ ---------------------------------------
cat >"$tmp/use_table.c" <<'EOT'
#include <stdio.h>
#include <string.h>
#include "table.h"
int main(void)
{
    int level = 0;
    const cutune_vector_add_config *c =
        cutune_vector_add_lookup("GTX FICTIONAL 9000", 9, 0, 100, &level);
    printf("%s %d %lld\n", c->device, level, c->block_size_x);
    c = cutune_vector_add_lookup("GTX Next", 9, 0, 140, &level);
    printf("%s %d %lld\n", c->device, level, c->block_size_x);
    c = cutune_vector_add_lookup("Other", 5, 0, 10, &level);
    printf("%s %d %lld\n", c->device, level, c->block_size_x);
    c = cutune_vector_add_lookup(0, 0, 0, 0, 0);
    printf("%s\n", c->device);
    return 0;
}
EOT
cat >"$tmp/use_one.c" <<'EOT'
#include <stdio.h>
#include "one.h"
#if CUTUNE_TUNED_VECTOR_ADD
static const int block = CUTUNE_VECTOR_ADD_BLOCK_SIZE_X;
#else
static const int block = 0;
#endif
int main(void)
{
    printf("%s %d %d\n", CUTUNE_LEVEL_VECTOR_ADD, block,
           CUTUNE_VECTOR_ADD_UNROLL);
    return 0;
}
EOT
cp "$tmp/use_table.c" "$tmp/use_table.cpp"
cp "$tmp/use_one.c" "$tmp/use_one.cpp"
expect export-table 0 '' $cutune export vector_add --size 1048576 --format header \
    -o "$tmp/table.h" --cache-dir "$fleet"
expect export-one 0 '' $cutune export vector_add --size 1048576 --format header \
    -o "$tmp/one.h" --cache-dir "$fleet" --device-name "GTX Next" --cc 9.0 --sm-count 140
expect export-json 0 '' $cutune export --format json -o "$tmp/all.json" --cache-dir "$fleet"
expect export-json-valid 0 '"cutune_export": 1' cat "$tmp/all.json"
expect export-occupancy 0 'no record of vector_add for X: use the occupancy' \
    $cutune export vector_add --format header -o "$tmp/none.h" \
    --cache-dir "$tmp/empty" --device-name X
expect export-occupancy-define 0 '#define CUTUNE_TUNED_VECTOR_ADD 0' cat "$tmp/none.h"
expect export-bad-format 1 'give header or json' \
    $cutune export --format yaml -o "$tmp/x" --cache-dir "$fleet"
flags="-Wall -Wextra -Werror -I$tmp"
for lang in c cpp; do
    if [ $lang = c ]; then
        cc="$CC -std=c11 -pedantic $flags"
    else
        cc="$CXX -std=c++11 -pedantic $flags"
    fi
    expect "compile-table-$lang" 0 '' $cc -o "$tmp/table-$lang" "$tmp/use_table.$lang"
    expect "run-table-$lang" 0 \
        "^GTX Fictional 9000 1 128
GTX Fictional 9100 3 512
RTX Imaginary 5000 4 128
RTX Imaginary 5000\$" "$tmp/table-$lang"
    # grep matches lines one by one: check the whole output too
    "$tmp/table-$lang" >"$tmp/got" 2>&1
    printf 'GTX Fictional 9000 1 128\nGTX Fictional 9100 3 512\nRTX Imaginary 5000 4 128\nRTX Imaginary 5000\n' >"$tmp/want"
    if cmp -s "$tmp/got" "$tmp/want"; then ok; else bad "table-$lang output"; cat "$tmp/got"; fi
    expect "compile-one-$lang" 0 '' $cc -o "$tmp/one-$lang" "$tmp/use_one.$lang"
    expect "run-one-$lang" 0 '^architecture 512 2$' "$tmp/one-$lang"
done

# --- check: stale, fresh, missing ----------------------------------------
expect check-stale 5 'vector_add \(kernel vector_add\): stale on GTX Fictional 9000' \
    $cutune check vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir "$fleet"
hash=$(sed -n 's/.*the source hash on disk is \([0-9a-f]*\),.*/\1/p' "$tmp/out")
mkdir -p "$tmp/fresh"
sed "s/0123456789abcdef/$hash/" "$fleet/gtx-fictional-9000-11111111.jsonl" \
    >"$tmp/fresh/gtx.jsonl"
expect check-fresh 0 'vector_add \(kernel vector_add\): fresh on GTX Fictional 9000 \(exact match\)' \
    $cutune check vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir "$tmp/fresh"
expect check-missing 5 'vector_add \(kernel vector_add\): no cached record on GTX Other' \
    $cutune check vector_add --device-name "GTX Other" --cache-dir "$tmp/fresh"
expect check-no-problem 1 'missing PROBLEM' $cutune check --device-name X

# --- merge ---------------------------------------------------------------
cp "$fleet/gtx-fictional-9100-22222222.jsonl" "$tmp/copy.jsonl"
mkdir "$tmp/merged"
expect merge 0 '5 records written \(6 read from 2 inputs, 1 duplicate dropped\)' \
    $cutune merge "$fleet" "$tmp/copy.jsonl" -o "$tmp/merged/all.jsonl"
expect merge-warns 0 'warning: 1 record of cache format version 3' \
    $cutune merge "$fleet" -o "$tmp/merged/all.jsonl"
expect merged-reads 0 'GTX Fictional 9100 \(exact match' \
    $cutune lookup vector_add --size 1048576 --cache-dir "$tmp/merged" --device-name "GTX Fictional 9100"
expect merge-missing-out 1 'missing -o OUT' $cutune merge "$fleet"
expect merge-missing-in 2 'cannot read' $cutune merge "$tmp/nope.jsonl" -o "$tmp/x.jsonl"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
