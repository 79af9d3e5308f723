#!/bin/sh
# Records the exhaustive T4 spaces of bench/spaces/ on a GPU:
#   bench/record_spaces.sh BUILD OUT [SECONDS] [HUB_DIR]
# Tunes each built-in template (matmul left out: 56,754 configurations)
# with brute_force at two problem sizes, one after another, each file
# written to OUT/TEMPLATE_SIZE_T4.json.gz. Every tune gets at most 40 s
# (--budget-seconds) and the whole run at most SECONDS (default 440): a
# tune that ran out of time holds a prefix of the space in index order,
# which bench/spaces/README.md marks as not exhaustive. With HUB_DIR (a
# folder holding the hub's convolution_milo.json and its kernel source,
# which this repository does not carry), the convolution space is
# recorded last with what time is left (at most 150 s). PASSES (default
# "1 2") picks the sizes: 1 the smaller, 2 the larger, 3 a size between
# them (2^24 elements, transpose 4096², conv2d 2048²: spaces held out of
# every choice of settings). Everything ends up in OUT/spaces.tar too (the
# device tool returns few files).
set -u
# Compile times are recorded cold: no binary cache, and a fresh CUDA
# compute cache per tune (NVRTC 13 keeps its output there; a warm one made
# a recorded hotspot compile about 9x shorter than a cold one, docs/clock.md).
jit_root=$(mktemp -d)
trap 'rm -rf "$jit_root"' EXIT INT TERM
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
total=${3:-440}
hub=${4:-}
start=$(date +%s)
log=$out/record.log
mkdir -p "$out"
{
    date -u +"date %Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    "$build/cutune" list
} >"$log"
run() {
    name=$1 size=$2 tag=$3 cap=${4:-40}
    now=$(date +%s)
    left=$((start + total - now))
    if [ "$left" -lt 15 ]; then
        echo "skip $name $size: ${left}s left" >>"$log"
        return
    fi
    b=$((left - 10))
    [ "$b" -gt "$cap" ] && b=$cap
    t0=$(date +%s)
    problem=$name
    [ -n "$hub" ] && [ -f "$hub/$name.json" ] && problem=$hub/$name.json
    set -- --size "$size"
    [ "$size" = t1 ] && set --
    (cd "$(dirname "$problem")" &&
        CUDA_CACHE_PATH=$(mktemp -d "$jit_root/XXXXXX") timeout -k 5 $((b + 25)) \
        "$build/cutune" tune "$(basename "$problem")" --strategy brute_force \
        "$@" --no-cache --no-binary-cache --quiet --budget-seconds "$b" \
        --output "$out/${name}_${tag}_T4.json.gz") >"$out/${name}_${tag}.txt" 2>&1
    rc=$?
    echo "$name size $size budget ${b}s rc $rc wall $(( $(date +%s) - t0 ))s" >>"$log"
}
for pass in ${PASSES:-1 2}; do
    case $pass in
    1) one=4194304 oned=4M two=2048,2048 twod=2048 conv=1024,1024 convd=1024 ;;
    2) one=67108864 oned=64M two=8192,8192 twod=8192 conv=4096,4096 convd=4096 ;;
    *) one=16777216 oned=16M two=4096,4096 twod=4096 conv=2048,2048 convd=2048 ;;
    esac
    run transpose "$two" "$twod"
    run vector_add "$one" "$oned"
    run write_offset "$one" "$oned"
    run conv2d "$conv" "$convd"
    run reduce "$one" "$oned"
    run copy "$one" "$oned"
    run aos_soa "$one" "$oned"
done
[ -n "$hub" ] && run convolution_milo t1 H100 150
date -u +"end %Y-%m-%dT%H:%M:%SZ" >>"$log"
(cd "$out" && tar cf spaces.tar ./*.gz ./*.txt record.log)
