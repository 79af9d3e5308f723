#!/bin/sh
# CLI golden tests: each case runs `cutune ARGS` from tests/cli/fixtures
# and compares its exit code, stdout and stderr with tests/cli/golden/NAME.
# Usage: run_golden.sh CUTUNE_BINARY SOURCE_DIR [--update]
set -u
cutune=$1
here=$2/tests/cli
update=${3:-}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case NAME EXPECTED_RC ARGS...
case_() {
    name=$1 want_rc=$2
    shift 2
    (cd "$here/fixtures" && "$cutune" "$@") >"$tmp/out" 2>"$tmp/err"
    rc=$?
    # `space` reports how long construction took, which varies: masked.
    sed -i -e 's/^constructed in: .*/constructed in: (time)/' \
        -e 's/"construction_ms": .*/"construction_ms": "(time)"/' \
        -e 's/ in [0-9.]* s ([0-9.]* per second)/ in (time)/' \
        -e 's/"\(seconds\|per_second\)": .*/"\1": "(time)",/' "$tmp/out"
    { echo "exit $rc"; echo "--- stdout"; cat "$tmp/out";
      echo "--- stderr"; cat "$tmp/err"; } >"$tmp/got"
    if [ "$update" = --update ]; then
        cp "$tmp/got" "$here/golden/$name"
    fi
    if [ "$rc" -eq "$want_rc" ] && cmp -s "$tmp/got" "$here/golden/$name"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $name (exit $rc, wanted $want_rc)"
        diff -u "$here/golden/$name" "$tmp/got" | head -40
    fi
}

case_ help 0 --help
case_ version 0 --version
case_ tune-help 0 tune --help
case_ plan-help 0 tune --plan --help
case_ plan-bad-sizes 2 tune --plan bad-plan.json
case_ plan-missing 2 tune --plan no-such-plan.json
case_ list 0 list
case_ unknown-command 1 frobnicate
case_ unknown-option 1 tune vector_add --bogus
case_ missing-problem 1 tune
case_ bad-size 1 tune vector_add --size 0
case_ unknown-template 2 tune no_such_kernel
case_ broken-json 2 tune broken.json
case_ compile-no-arch 1 compile vector_add
case_ compile-virtual-arch 1 compile vector_add --arch compute_90 --limit 2
case_ compile-verbose 0 compile rejects.json --arch sm_90 --verbose
case_ compile-verbose-json 0 compile rejects.json --arch sm_90 --verbose --json
case_ unknown-strategy 1 tune vector_add --strategy nosuch
case_ lookup-exact 0 lookup vector_add --device-name "gtx fictional 9000" --cache-dir cache
case_ lookup-nearest 0 lookup vector_add --size 2000000 --device-name "GTX Fictional 9000" --cache-dir cache
case_ lookup-json 0 lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir cache --json
case_ lookup-missing 5 lookup vector_add --device-name "Quadro Imaginary" --cache-dir cache --no-fallback
# The fallback chain on a fleet of made-up devices (fixtures/fleet, which
# also holds a record of a future format version: refused with a warning).
case_ lookup-architecture 0 lookup vector_add --size 1048576 --device-name "GTX Next" --cc 9.0 --sm-count 140 --cache-dir fleet
case_ lookup-default 0 lookup vector_add --size 1048576 --device-name "GTX Next" --cache-dir fleet
case_ lookup-simulated 0 lookup vector_add --size 1048576 --device-name "GTX Simulated 7000" --cache-dir fleet
case_ lookup-occupancy 5 lookup vector_add --device-name "GTX Next" --cache-dir no-such-cache
case_ merge-help 0 merge --help
case_ export-help 0 export --help
case_ check-help 0 check --help
case_ check-missing 5 check vector_add --device-name "Quadro Imaginary" --cache-dir cache
case_ export-no-format 1 export vector_add -o out.h
case_ space 0 space space.json
case_ space-json 0 space space.json --json
case_ space-size 0 space vector_add --size 1000
case_ space-missing-field 2 space bad-missing.json
case_ space-unknown-type 2 space bad-badtype.json
case_ space-undefined-name 2 space bad-undefined.json
case_ space-division-by-zero 2 space bad-divzero.json
case_ space-long-range 2 space bad-longrange.json
case_ space-condition-parameter 2 space bad-condparam.json
case_ space-broken-json 2 space broken.json
case_ tune-output-no-value 1 tune vector_add --output
case_ simulate-help 0 simulate --help
case_ simulate 0 simulate sim.json --results sim_T4.json --budget-evals 8 --repeat 3 --seed 1
case_ simulate-json 0 simulate sim.json --results sim_T4.json --strategy local --budget-evals 6 --seed 2 --json
# The clock: every configuration compiles in 1 s and runs in 3.6 ms or
# so; 2 threads, 6 evaluations of random search (batches as a tune asks),
# then the default (proposals in flight), as text and JSON.
case_ simulate-clock-json 0 simulate sim.json --results sim_T4.json --strategy random --budget-evals 6 --seed 1 --threads 2 --json
case_ simulate-clock 0 simulate sim.json --results sim_T4.json --budget-evals 8 --repeat 2 --seed 1 --threads 4
# Threads per block from a LocalSize expression (no block_size_x): the
# occupancy suggestion is placed by the launch geometry, which a problem
# loaded for its space alone has too.
case_ simulate-occupancy-localsize 0 simulate sim_threads.json --results sim_threads_T4.json --strategy brute_force --budget-evals 1 --occupancy-block 128
case_ simulate-threads-too-many 1 simulate sim.json --results sim_T4.json --threads 5000
case_ simulate-all-fail 6 simulate sim.json --results sim_fail_T4.json --strategy bayes --budget-evals 5
case_ simulate-no-results 1 simulate sim.json
case_ simulate-input 0 simulate sim_input.json --budget-evals 8 --repeat 3 --seed 1
case_ simulate-unknown-strategy 1 simulate sim.json --results sim_T4.json --strategy nosuch
case_ simulate-cache 0 simulate sim.json --results sim_T4.json --budget-evals 8 --seed 1 --cache-dir "$tmp/simcache" --device-name "GTX Simulated 1"
# Energy as the objective (docs/energy.md): synthetic recordings of the
# sim space (tests/data/energy), cutune's names and Kernel Tuner's; a cache
# holding a time record and a newer energy record of one key.
case_ simulate-energy 0 simulate sim.json --results ../../data/energy/sim_energy_T4.json --objective energy --budget-evals 8 --repeat 3 --seed 1
case_ simulate-edp-nvml-json 0 simulate sim.json --results ../../data/energy/sim_nvml_T4.json --objective edp --strategy brute_force --json
case_ simulate-energy-unrecorded 1 simulate sim.json --results sim_T4.json --objective energy
case_ simulate-bad-objective 1 simulate sim.json --results sim_T4.json --objective joules
case_ tune-bad-objective 1 tune vector_add --objective joules
case_ lookup-objective-time 0 lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir energy
case_ lookup-objective-energy 0 lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir energy --objective energy
case_ lookup-objective-edp 5 lookup vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir energy --objective edp --no-fallback
case_ export-objective-energy 0 export vector_add --size 1048576 --device-name "GTX Fictional 9000" --cache-dir energy --objective energy --format json -o -
case_ export-objective-no-problem 1 export --cache-dir energy --objective energy --format json -o -
case_ report-help 0 report --help
case_ report-no-output 1 report sim.json --results sim_T4.json
case_ report-results-and-cache 1 report sim.json --results sim_T4.json --cache fleet -o "$tmp/r.html"
case_ report-missing-results 2 report sim.json --results nosuch_T4.json -o "$tmp/r.html"
if grep -q '"simulated":true' "$tmp"/simcache/*.jsonl 2>/dev/null; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "FAILED: simulate --cache-dir wrote no simulated record"
fi

# Without a GPU, tuning ends with one clear message and exit code 3; on a
# machine with a GPU this case does not apply.
if "$cutune" devices >/dev/null 2>&1; then
    echo "SKIPPED: no-gpu case (a CUDA device is present)"
else
    case_ tune-no-gpu 3 tune vector_add
    case_ explain-no-gpu 3 explain vector_add
fi
case_ explain-help 0 explain --help
case_ explain-bad-config 1 explain vector_add --config UNROLL
case_ explain-empty-config 1 explain vector_add --config ,

# Compilation works without a GPU; its timing varies, so check the counts.
out=$(cd "$here/fixtures" && "$cutune" compile vector_add --arch sm_90 --limit 4 --json)
if [ $? -eq 0 ] && echo "$out" | grep -q '"compiled": 4' &&
   echo "$out" | grep -q '"rejected": 0'; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "FAILED: compile --json: $out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
