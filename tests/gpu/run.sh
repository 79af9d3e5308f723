#!/bin/sh
# Runs the GPU-labelled tests from a build folder, on a machine where CTest's
# recorded absolute paths do not hold (such as the GPU machine the build was
# carried to). Usage: tests/gpu/run.sh BUILD_DIR
set -u
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
export CUTUNE_WORKER="$build/cutune-worker" CUTUNE_SOURCE_DIR="$src"
status=0
# run NAME COMMAND...: one test, reported by its exit status (77: skipped).
run() {
    name=$1
    shift
    echo "== $name"
    "$@"
    rc=$?
    case $rc in
        0) echo "== $name: passed" ;;
        77) echo "== $name: skipped" ;;
        *) echo "== $name: FAILED ($rc)"; status=1 ;;
    esac
}
for t in test_occupancy test_fill_gpu test_tune_gpu test_energy_gpu test_t4_gpu test_templates_gpu \
    test_devices_gpu; do
    run "$t" "$build/tests/$t"
done
run tune_kernel_gpu sh "$src/tests/gpu/run_tune_kernel.sh" "$build" "$src"
run explain_gpu sh "$src/tests/gpu/run_explain_gpu.sh" "$build"
exit $status
