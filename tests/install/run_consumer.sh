#!/bin/sh
# Installs a built cutune into a temporary prefix and builds programs
# against it as its users would, without a GPU (docs/tests.md):
#   - a shared build exports only the public API (cutune_*), every
#     function its headers declare, and finds the worker it was installed
#     with from its own location;
#   - (a) full/ through find_package(cutune): the header's version, the
#     worker (shared), a cache record appended and read back;
#   - (b) lookup/ through find_package(cutune COMPONENTS lookup), with
#     GSL, CUDA, MPI, zlib and threads (and, for a shared library, jansson)
#     made unfindable, reads that record; nothing of them on its link line;
#   - (c) both again with `pkg-config --cflags --libs` and plain cc, which
#     links as given (a shared library's dependencies only with --static);
#   - examples/consumer: cutune_tune_kernel() from a fixture cache.
# Usage: run_consumer.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
here=$src/tests/install
cc=${CC:-cc}
die() { echo "FAILED: $*"; exit 1; }
# run LOG COMMAND...: runs it, showing its output only when it fails.
run() {
    log=$1
    shift
    "$@" >"$tmp/$log.log" 2>&1 || { cat "$tmp/$log.log"; die "$*"; }
}

run install cmake --install "$build" --prefix "$prefix"
if [ -e "$prefix/lib/libcutune.so" ]; then kind=shared; else kind=static; fi
ext=a
[ $kind = shared ] && ext=so
for f in lib/cmake/cutune/cutuneConfig.cmake \
         lib/cmake/cutune/cutuneConfigVersion.cmake \
         lib/cmake/cutune/cutuneLookupTargets.cmake \
         lib/cmake/cutune/cutuneTuning.cmake lib/pkgconfig/cutune.pc \
         lib/pkgconfig/cutune-lookup.pc include/cutune/cutune.h bin/cutune \
         lib/libcutune.$ext lib/libcutune_lookup.$ext \
         libexec/cutune/cutune-worker; do
    [ -e "$prefix/$f" ] || die "not installed: $f ($kind build)"
done
echo "installed a $kind build"
unset CUTUNE_WORKER
cuda=""
[ -d /usr/local/cuda ] && cuda=-DCUDAToolkit_ROOT=/usr/local/cuda
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

# --- The shared library's symbols; the worker found from the install. ---
static_deps=$(sed -n 's/^CUTUNE_STATIC_DEPS:BOOL=//p' "$build/CMakeCache.txt")
[ $kind = shared ] &&
    sh "$here/check_exports.sh" "$prefix" "$src/include/cutune" "$static_deps"
# A stand-in for the installed worker notes that it was the one run.
w=$prefix/libexec/cutune/cutune-worker
mv "$w" "$w.real"
printf '#!/bin/sh\n: >"%s"\nexec "%s" "$@"\n' "$tmp/worker-ran" "$w.real" >"$w"
chmod +x "$w"
# The command, static or not, finds it from its own place: 0 with a GPU,
# 3 (no CUDA device) without; 4 would be a worker not found.
rc=0
"$prefix/bin/cutune" devices >"$tmp/devices.log" 2>&1 || rc=$?
[ $rc = 0 ] || [ $rc = 3 ] || { cat "$tmp/devices.log"; die "cutune devices"; }
[ -e "$tmp/worker-ran" ] || die "cutune did not run the installed worker"
rm "$tmp/worker-ran"
# A program linked to a shared library finds it through the library; a
# static library is part of the program, which is not installed.
worker_arg=""
[ $kind = shared ] && worker_arg=worker

# --- (a) and (b): find_package. ---
cache=$tmp/cache
run config-full cmake -S "$here/full" -B "$tmp/full" \
    -DCMAKE_PREFIX_PATH="$prefix" $cuda
run build-full cmake --build "$tmp/full"
"$tmp/full/full_consumer" "$cache" 192 $worker_arg ||
    die "full_consumer ($kind)"
if [ -n "$worker_arg" ]; then
    [ -e "$tmp/worker-ran" ] ||
        die "the library did not run the worker installed beside it"
fi

no_deps="-DCMAKE_DISABLE_FIND_PACKAGE_GSL=ON
 -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
 -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON -DCMAKE_DISABLE_FIND_PACKAGE_Threads=ON"
[ $kind = shared ] &&
    no_deps="$no_deps -DCMAKE_DISABLE_FIND_PACKAGE_Jansson=ON"
# The same switches do keep the whole library from configuring.
if cmake -S "$here/full" -B "$tmp/full-nodeps" -DCMAKE_PREFIX_PATH="$prefix" \
    $no_deps >"$tmp/config-nodeps.log" 2>&1; then
    die "the whole library configured without its dependencies"
fi
grep -q GSL "$tmp/config-nodeps.log" ||
    { cat "$tmp/config-nodeps.log"; die "the whole library failed, not on GSL"; }
run config-lookup cmake -S "$here/lookup" -B "$tmp/lookup" \
    -DCMAKE_PREFIX_PATH="$prefix" $no_deps
run build-lookup cmake --build "$tmp/lookup"
for word in $(cat "$tmp/lookup/CMakeFiles/lookup_consumer.dir/link.txt"); do
    case ${word##*/} in
    libgsl* | libnvrtc* | libmpi* | libz.* | libcuda* | -lgsl* | -lnvrtc | \
    -lmpi | -lz | -lpthread | -pthread | -lcuda*)
        die "the lookup consumer links $word" ;;
    esac
done
"$tmp/lookup/lookup_consumer" "$cache" 192 || die "lookup_consumer ($kind)"

# --- (c) pkg-config and plain cc. ---
for pc in cutune cutune-lookup; do
    pkg-config --cflags --libs $pc >"$tmp/$pc.flags" || die "pkg-config $pc"
    pkg-config --static --libs $pc >"$tmp/$pc.static" ||
        die "pkg-config --static $pc"
done
flags=$(cat "$tmp/cutune.flags")
static=$(cat "$tmp/cutune.static")
for want in -lgsl -ljansson -lz -lnvrtc; do
    case " $static " in *" $want "*) ;; *)
        die "pkg-config --static --libs cutune lacks $want: $static" ;;
    esac
done
if [ $kind = shared ]; then
    case " $flags " in *" -lgsl "* | *" -lnvrtc "*)
        die "a shared library's dependencies in pkg-config --libs: $flags" ;;
    esac
fi
case " $(cat "$tmp/cutune-lookup.static") " in
*gsl* | *nvrtc* | *" -lz "*)
    die "pkg-config cutune-lookup: $(cat "$tmp/cutune-lookup.static")" ;;
esac
rpath=-Wl,-rpath,$prefix/lib
run cc-full $cc -o "$tmp/full_pc" "$here/full/full_consumer.c" -I"$here" \
    $flags $rpath
run cc-lookup $cc -o "$tmp/lookup_pc" "$here/lookup/lookup_consumer.c" \
    -I"$here" $(cat "$tmp/cutune-lookup.flags") $rpath
"$tmp/full_pc" "$tmp/cache-pc" 384 $worker_arg || die "full_pc ($kind)"
"$tmp/lookup_pc" "$tmp/cache-pc" 384 || die "lookup_pc ($kind)"

# --- examples/consumer: cutune_tune_kernel(). ---
export CUTUNE_CACHE_DIR="$src/tests/cli/fixtures/fleet"
# 1. A named device that is not in the cache, of a cached architecture.
run config1 cmake -S "$src/examples/consumer" -B "$tmp/b1" \
    -DCMAKE_PREFIX_PATH="$prefix" $cuda -DCUTUNE_DEVICE_NAME="GTX Next" \
    -DCUTUNE_CC=9.0 -DCUTUNE_SM_COUNT=140
run build1 cmake --build "$tmp/b1"
grep -q '#define CUTUNE_VECTOR_ADD_BLOCK_SIZE_X 512' \
    "$tmp/b1/generated/vector_add_tuned.h" ||
    { cat "$tmp/b1/generated/vector_add_tuned.h"; die "header"; }
out=$("$tmp/b1/consumer" "GTX Next" 9.0 140)
echo "$out"
expected="build time: architecture block_size_x=512 UNROLL=2
run time: architecture on GTX Fictional 9100: block_size_x=512 UNROLL=2 USE_LDG=0 USE_RESTRICT=1"
[ "$out" = "$expected" ] || { echo "wanted:"; echo "$expected"; die "b1"; }

# 2. No device named, TUNE asked, no GPU: tuning is skipped and the lookup
#    falls back to the cross-device default.
if [ $rc = 0 ]; then
    echo "SKIPPED: the no-GPU build (a CUDA device is present)"
else
    run config2 cmake -S "$src/examples/consumer" -B "$tmp/b2" \
        -DCMAKE_PREFIX_PATH="$prefix" $cuda -DCUTUNE_TUNE=ON
    run build2 cmake --build "$tmp/b2"
    out=$("$tmp/b2/consumer")
    echo "$out"
    [ "$out" = "build time: default block_size_x=128 UNROLL=4" ] ||
        { cat "$tmp/build2.log"; die "no-GPU build"; }
fi
echo "consumer build passed ($kind)"
