#!/bin/sh
# A plan over a real `mpirun -np 3` with the replay backend: rank 0 hands
# 10 tasks (sim.json at 5 sizes on 2 simulated devices) and one failing
# item out to ranks 0, 1 and 2 (rank 0 tunes too); every record must reach rank 0's cache
# exactly once, the failure must be reported, and a second run must tune
# nothing. Then ranks given different plans (rank 2 one more size) must
# stop before tuning, with one message naming rank 2.
# usage: run_mpi.sh MPIEXEC CUTUNE SOURCE_DIR
set -u
mpiexec=$1
cutune=$2
fixtures=$3/tests/cli/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

cat >"$tmp/plan.json" <<PLAN
{"items": [
  {"problem": "$fixtures/sim.json",
   "sizes": [[1024], [2048], [4096], [8192], [16384]], "devices": [0, 1]},
  {"problem": "no_such_problem.json"}
]}
PLAN
export CUTUNE_PLAN_BACKEND=replay
export CUTUNE_PLAN_REPLAY="$fixtures/{problem}_T4.json"
# Root in CI containers; more ranks than cores on a small runner.
mpi() {
    "$mpiexec" --oversubscribe --allow-run-as-root -np 3 \
        "$cutune" tune --plan "$tmp/plan.json" --cache-dir "$tmp/cache" \
        --budget-evals 8 "$@"
}

mpi >"$tmp/out1" 2>"$tmp/err1"
rc=$?
cat "$tmp/out1" "$tmp/err1"
[ "$rc" -eq 2 ] || fail "first run: exit $rc, wanted 2 (one item failed)"
grep -q "plan: 11 tasks: 10 tuned, 0 already cached, 1 failed" "$tmp/out1" ||
    fail "first run: not 10 tuned and 1 failed"
grep -q "3 MPI ranks" "$tmp/out1" || fail "not run over 3 MPI ranks"
grep -q "item 1 (.*no_such_problem.json.*failed: rank [012]:" "$tmp/err1" ||
    fail "the failing item was not reported with its rank"

# Exactly once: 10 lines, one per (device, size).
lines=$(cat "$tmp"/cache/*.jsonl | wc -l)
[ "$lines" -eq 10 ] || fail "$lines records in rank 0's cache, wanted 10"
keys=$(cat "$tmp"/cache/*.jsonl |
       sed 's/.*"name":"\(replay [0-9]*\)".*"problem_size":\[\([0-9]*\)\].*/\1 \2/' |
       sort -u | wc -l)
[ "$keys" -eq 10 ] || fail "$keys distinct (device, size) records, wanted 10"

# Resumable: a second run finds all 10 in the cache.
mpi --quiet >"$tmp/out2" 2>"$tmp/err2"
cat "$tmp/out2"
grep -q "plan: 11 tasks: 0 tuned, 10 already cached, 1 failed" "$tmp/out2" ||
    fail "second run tuned again"
lines=$(cat "$tmp"/cache/*.jsonl | wc -l)
[ "$lines" -eq 10 ] || fail "second run: $lines records, wanted 10"
echo "plan over MPI: 10 records reached rank 0 once each; resumed"

# Different plans: mpirun's MPMD form gives rank 2 another plan file.
sed 's/\[16384\]\]/[16384], [32768]]/' "$tmp/plan.json" >"$tmp/plan2.json"
"$mpiexec" --oversubscribe --allow-run-as-root \
    -np 2 "$cutune" tune --plan "$tmp/plan.json" --cache-dir "$tmp/cache3" \
    --budget-evals 8 : \
    -np 1 "$cutune" tune --plan "$tmp/plan2.json" --cache-dir "$tmp/cache3" \
    --budget-evals 8 >"$tmp/out3" 2>"$tmp/err3"
rc=$?
cat "$tmp/out3" "$tmp/err3"
[ "$rc" -ne 0 ] || fail "different plans: exit 0"
[ "$(grep -c '^cutune: ' "$tmp/err3")" -eq 1 ] ||
    fail "different plans: not one message"
grep -q "^cutune: .*MPI: rank 2 read another plan than rank 0" "$tmp/err3" ||
    fail "different plans: rank 2 not named"
[ ! -d "$tmp/cache3" ] || [ -z "$(ls "$tmp/cache3")" ] ||
    fail "different plans: something was tuned"
echo "plan over MPI: different plans refused, rank 2 named"
