#!/bin/sh
# Runs the GPU-labelled tests from a build folder, on a machine where CTest's
# recorded absolute paths do not hold (such as the GPU machine the build was
# carried to). Usage: tests/gpu/run.sh BUILD_DIR
set -u
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
export CUTUNE_WORKER="$build/cutune-worker" CUTUNE_SOURCE_DIR="$src"
status=0
for t in test_occupancy test_fill_gpu test_tune_gpu test_t4_gpu test_templates_gpu; do
    echo "== $t"
    "$build/tests/$t"
    rc=$?
    case $rc in
        0) echo "== $t: passed" ;;
        77) echo "== $t: skipped" ;;
        *) echo "== $t: FAILED ($rc)"; status=1 ;;
    esac
done
echo "== tune_kernel_gpu"
sh "$src/tests/gpu/run_tune_kernel.sh" "$build" "$src"
case $? in
    0) echo "== tune_kernel_gpu: passed" ;;
    77) echo "== tune_kernel_gpu: skipped" ;;
    *) echo "== tune_kernel_gpu: FAILED"; status=1 ;;
esac
exit $status
