#!/bin/sh
# A static build's tests check a shared one too: builds the library, the
# worker and the command again with BUILD_SHARED_LIBS=ON (no tests,
# benchmarks or MPI), then runs run_consumer.sh on that build. Options of
# the build being tested that change the library (CUTUNE_STATIC_DEPS, the
# build type) are passed on.
# Usage: run_shared_consumer.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
option() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cuda=""
[ -d /usr/local/cuda ] && cuda=-DCUDAToolkit_ROOT=/usr/local/cuda
cmake -S "$src" -B "$tmp/build" -DBUILD_SHARED_LIBS=ON \
    -DCUTUNE_BUILD_TESTS=OFF -DCUTUNE_BUILD_BENCH=OFF -DCUTUNE_MPI=OFF \
    -DCUTUNE_WERROR="$(option CUTUNE_WERROR)" \
    -DCUTUNE_STATIC_DEPS="$(option CUTUNE_STATIC_DEPS)" \
    -DCMAKE_BUILD_TYPE="$(option CMAKE_BUILD_TYPE)" \
    -DCMAKE_C_COMPILER="$(option CMAKE_C_COMPILER)" \
    -DCMAKE_CXX_COMPILER="$(option CMAKE_CXX_COMPILER)" $cuda \
    >"$tmp/config.log" 2>&1 || { cat "$tmp/config.log"; exit 1; }
cmake --build "$tmp/build" -j2 >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; exit 1; }
sh "$src/tests/install/run_consumer.sh" "$tmp/build" "$src"
