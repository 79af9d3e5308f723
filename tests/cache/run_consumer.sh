#!/bin/sh
# Installs cutune into a temporary prefix and configures, builds and runs
# the example consumer project (examples/consumer) against it, from the
# fixture cache, without a GPU. Also checks the pkg-config file.
# Usage: run_consumer.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; exit 1; }
for f in lib/cmake/cutune/cutuneConfig.cmake \
         lib/cmake/cutune/cutuneConfigVersion.cmake \
         lib/cmake/cutune/cutuneTuning.cmake lib/pkgconfig/cutune.pc \
         include/cutune/cutune.h bin/cutune; do
    [ -e "$prefix/$f" ] || { echo "FAILED: not installed: $f"; exit 1; }
done
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cutune)
inc=$(echo "$flags" | sed -n 's/.*-I\([^ ]*\).*/\1/p')
lib=$(echo "$flags" | sed -n 's/.*-L\([^ ]*\).*/\1/p')
case $flags in *-lcutune*) ;; *) inc="" ;; esac
if [ ! -f "$inc/cutune/cutune.h" ] || [ ! -f "$lib/libcutune.a" ]; then
    echo "FAILED: pkg-config gives '$flags'"
    exit 1
fi

cuda=""
[ -d /usr/local/cuda ] && cuda=-DCUDAToolkit_ROOT=/usr/local/cuda
export CUTUNE_CACHE_DIR="$src/tests/cli/fixtures/fleet"

# 1. A named device that is not in the cache, of a cached architecture.
cmake -S "$src/examples/consumer" -B "$tmp/b1" -DCMAKE_PREFIX_PATH="$prefix" \
    $cuda -DCUTUNE_DEVICE_NAME="GTX Next" -DCUTUNE_CC=9.0 \
    -DCUTUNE_SM_COUNT=140 >"$tmp/config1.log" 2>&1 ||
    { cat "$tmp/config1.log"; exit 1; }
cmake --build "$tmp/b1" >"$tmp/build1.log" 2>&1 ||
    { cat "$tmp/build1.log"; exit 1; }
grep -q '#define CUTUNE_VECTOR_ADD_BLOCK_SIZE_X 512' \
    "$tmp/b1/generated/vector_add_tuned.h" ||
    { echo "FAILED: header"; cat "$tmp/b1/generated/vector_add_tuned.h"; exit 1; }
out=$("$tmp/b1/consumer" "GTX Next" 9.0 140)
echo "$out"
expected="build time: architecture block_size_x=512 UNROLL=2
run time: architecture on GTX Fictional 9100: block_size_x=512 UNROLL=2 USE_LDG=0 USE_RESTRICT=1"
[ "$out" = "$expected" ] || { echo "FAILED: wanted:"; echo "$expected"; exit 1; }

# 2. No device named, TUNE asked, no GPU: tuning is skipped and the lookup
#    falls back to the cross-device default.
if "$prefix/bin/cutune" devices >/dev/null 2>&1; then
    echo "SKIPPED: the no-GPU build (a CUDA device is present)"
else
    export CUTUNE_WORKER="$prefix/libexec/cutune/cutune-worker"
    cmake -S "$src/examples/consumer" -B "$tmp/b2" \
        -DCMAKE_PREFIX_PATH="$prefix" $cuda -DCUTUNE_TUNE=ON \
        >"$tmp/config2.log" 2>&1 || { cat "$tmp/config2.log"; exit 1; }
    cmake --build "$tmp/b2" >"$tmp/build2.log" 2>&1 ||
        { cat "$tmp/build2.log"; exit 1; }
    out=$("$tmp/b2/consumer")
    echo "$out"
    [ "$out" = "build time: default block_size_x=128 UNROLL=4" ] ||
        { echo "FAILED: no-GPU build"; cat "$tmp/build2.log"; exit 1; }
fi
echo "consumer build passed"
