#!/bin/sh
# Plans and reports over a large tuning cache, without a GPU: builds a
# cache of RECORDS records (default 50,000: PROBLEMS problems x DEVICES
# replayed devices x sizes) and a plan of TASKS tasks (default 200) that
# the cache already holds, then times `cutune tune --plan` (every task
# answered "already cached") and `cutune report --cache` over it. It
# prints the figures; it passes or fails on nothing.
#
# The records are real ones: one task per problem is tuned first on the
# replay backend (tests/cli/fixtures/sim.json, copied under other names
# so the cache holds several problems), and its line is repeated with
# the device and the size changed.
#
# Usage: bench/scale.sh CUTUNE [RECORDS] [TASKS]
# Environment: SCALE_KEEP=DIR keeps the generated cache and plan in DIR.
set -eu
cutune=${1:?usage: bench/scale.sh CUTUNE [RECORDS] [TASKS]}
records=${2:-50000}
tasks=${3:-200}
problems=5
devices=20
root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=$root/tests/cli/fixtures
tmp=${SCALE_KEEP:-$(mktemp -d)}
[ -n "${SCALE_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/t1" "$tmp/seed" "$tmp/cache"
sizes=$(( (records + problems * devices - 1) / (problems * devices) ))
# Plan tasks: each problem on devices 0 and 1 at the first sizes.
plan_sizes=$(( (tasks + problems * 2 - 1) / (problems * 2) ))

export CUTUNE_PLAN_BACKEND=replay
export CUTUNE_PLAN_REPLAY="$tmp/t1/{problem}_T4.json"
items=""
p=0
while [ $p -lt $problems ]; do
    sed "s/\"BenchmarkName\": \"sim\"/\"BenchmarkName\": \"scale$p\"/" \
        "$fixtures/sim.json" >"$tmp/t1/scale$p.json"
    cp "$fixtures/sim_T4.json" "$tmp/t1/scale${p}_T4.json"
    items="$items${items:+,}{\"problem\": \"t1/scale$p.json\", \"sizes\": [[1]], \"devices\": [0]}"
    p=$((p + 1))
done
echo "{\"items\": [$items]}" >"$tmp/seed.json"
"$cutune" tune --plan "$tmp/seed.json" --cache-dir "$tmp/seed" --quiet \
    --budget-evals 4 >/dev/null

# The seed lines, repeated: device "replay D" at sizes 1..SIZES (the
# sizes are 1024 * k, so none is the seed's own size 1).
cat "$tmp"/seed/*.jsonl | awk -v devices=$devices -v sizes=$sizes \
    -v limit=$records -v dir="$tmp/cache" '
{ seed[NR] = $0 }
END {
    n = 0
    for (d = 0; d < devices; d++) {
        file = dir "/bench-replay-" d ".jsonl"
        for (p = 1; p <= NR; p++)
            for (s = 1; s <= sizes && n < limit; s++) {
                line = seed[p]
                sub(/"name":"replay 0"/, "\"name\":\"replay " d "\"", line)
                sub(/"problem_size":\[1\]/, "\"problem_size\":[" s * 1024 "]",
                    line)
                print line > file
                n++
            }
        close(file)
    }
}'
items=""
p=0
while [ $p -lt $problems ]; do
    list=""
    s=1
    while [ $s -le $plan_sizes ]; do
        list="$list${list:+, }[$((s * 1024))]"
        s=$((s + 1))
    done
    items="$items${items:+,}{\"problem\": \"t1/scale$p.json\", \"sizes\": [$list], \"devices\": [0, 1]}"
    p=$((p + 1))
done
echo "{\"items\": [$items]}" >"$tmp/plan.json"

now() { date +%s.%N; }
n_records=$(cat "$tmp"/cache/*.jsonl | wc -l)
n_bytes=$(cat "$tmp"/cache/*.jsonl | wc -c)
echo "cache: $n_records records in $(ls "$tmp"/cache | wc -l) files" \
     "($((n_bytes / 1048576)) MiB); plan: $((problems * plan_sizes * 2)) tasks"

t0=$(now)
"$cutune" tune --plan "$tmp/plan.json" --cache-dir "$tmp/cache" --quiet \
    >"$tmp/plan.out" 2>"$tmp/plan.err" || true
t1=$(now)
echo "tune --plan: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s:" \
     "$(grep '^plan:' "$tmp/plan.out" || cat "$tmp/plan.err")"

t0=$(now)
"$cutune" report --cache "$tmp/cache" --output "$tmp/report.html" \
    >"$tmp/report.out" 2>&1 || true
t1=$(now)
echo "report --cache: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s:" \
     "$(wc -c <"$tmp/report.html" 2>/dev/null || echo no) bytes of HTML" \
     "$(grep -o '[0-9]* records read; [0-9]* winners' "$tmp/report.html" 2>/dev/null || cat "$tmp/report.out")"
