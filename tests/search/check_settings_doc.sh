#!/bin/sh
# The settings tables of docs/strategies.md are what the strategies' own
# tables say (bench-strategies --settings), whole and in order: a setting
# added, renamed or given a new default fails here until the doc follows.
# usage: check_settings_doc.sh BENCH_STRATEGIES DOC
set -eu
bench=$1
doc=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bench" --settings >"$out"
[ -s "$out" ] || { echo "bench-strategies --settings printed nothing"; exit 1; }
grep -q '^| `default` setting |' "$out" ||
    { echo "no table of the default strategy's settings"; exit 1; }
# The output as one block of the doc (awk: the doc's text contains it).
if awk 'FNR == NR { want = want $0 "\n"; next } { have = have $0 "\n" }
        END { exit index(have, want) ? 0 : 1 }' "$out" "$doc"; then
    echo "docs/strategies.md holds the settings tables"
else
    echo "docs/strategies.md does not hold bench-strategies --settings as it prints now:"
    cat "$out"
    exit 1
fi
