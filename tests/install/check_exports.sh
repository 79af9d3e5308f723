#!/bin/sh
# The symbols of an installed shared libcutune (tests/install/
# run_consumer.sh): libcutune.so exports exactly the functions the public
# headers declare, libcutune_lookup.so only such functions and the
# cache's; both carry the SONAME of the version's MAJOR.MINOR, load with
# every symbol resolved (as ctypes loads them) and hide cutune__ internals.
# With STATIC_DEPS on, GSL is inside libcutune.so, not a dependency.
# Usage: check_exports.sh PREFIX HEADER_DIR STATIC_DEPS (ON or OFF)
set -eu
prefix=$1
inc=$2
static_deps=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAILED: $*"; exit 1; }
cc=${CC:-cc}

# Declarations are written `name(`; a function pointer type is `(*name)`.
grep -ohE '\bcutune_[a-z0-9_]+\(' "$inc"/*.h | tr -d '(' | sort -u \
    >"$tmp/declared"
[ "$(wc -l <"$tmp/declared")" -gt 50 ] || die "declarations not found in $inc"
version=$(sed -n 's/^#define CUTUNE_VERSION_STRING *"\(.*\)"/\1/p' "$inc/cutune.h")
soversion=${version%.*}
exports() {
    nm -D --defined-only "$prefix/lib/$1" | awk '{print $3}' | sort -u
}

exports libcutune.so >"$tmp/full"
comm -23 "$tmp/declared" "$tmp/full" >"$tmp/missing"
comm -13 "$tmp/declared" "$tmp/full" >"$tmp/extra"
[ ! -s "$tmp/missing" ] ||
    die "declared, not exported: $(tr '\n' ' ' <"$tmp/missing")"
[ ! -s "$tmp/extra" ] ||
    die "exported, not declared: $(tr '\n' ' ' <"$tmp/extra" | cut -c1-600)"

exports libcutune_lookup.so >"$tmp/lookup"
comm -13 "$tmp/declared" "$tmp/lookup" >"$tmp/extra"
[ ! -s "$tmp/extra" ] ||
    die "lookup exports, not declared: $(tr '\n' ' ' <"$tmp/extra" | cut -c1-600)"
for f in cutune_cache_open cutune_cache_lookup cutune_cache_close \
         cutune_status_str cutune_version; do
    grep -qx "$f" "$tmp/lookup" || die "libcutune_lookup.so lacks $f"
done
for f in cutune_session_create cutune_problem_load; do
    ! grep -qx "$f" "$tmp/lookup" || die "libcutune_lookup.so has $f"
done

for lib in libcutune libcutune_lookup; do
    readelf -d "$prefix/lib/$lib.so" >"$tmp/dynamic"
    grep -q "SONAME.*\[$lib\.so\.$soversion\]" "$tmp/dynamic" ||
        die "$lib.so: SONAME is not $lib.so.$soversion"
    if [ "$static_deps" = ON ] && grep -q 'NEEDED.*libgsl\.' "$tmp/dynamic"; then
        die "$lib.so needs a shared GSL"
    fi
done
if grep -q 'NEEDED.*\(libnvrtc\|libz\.\|libmpi\)' "$tmp/dynamic"; then
    die "libcutune_lookup.so needs more than jansson: $(grep NEEDED "$tmp/dynamic")"
fi

$cc -o "$tmp/dlopen_check" "$(dirname "$0")/dlopen_check.c" -ldl ||
    die "building dlopen_check"
"$tmp/dlopen_check" "$prefix/lib/libcutune.so" "$version" \
    cutune__worker_locate || die "loading libcutune.so"
"$tmp/dlopen_check" "$prefix/lib/libcutune_lookup.so" "$version" \
    cutune__cache_scan || die "loading libcutune_lookup.so"
echo "exports: $(wc -l <"$tmp/full") functions from libcutune.so, $(wc -l <"$tmp/lookup") from libcutune_lookup.so"
