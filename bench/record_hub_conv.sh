#!/bin/sh
# Records the hub's convolution space (bench/spaces/convolution_milo.json,
# 4,362 configurations) exhaustively on a GPU, in four parts that each fit
# one device call of under ten minutes, and merges them into one T4 file.
#   bench/record_hub_conv.sh split DIR          (here: four T1 files in DIR)
#   bench/record_hub_conv.sh tune CUTUNE DIR OUT (on the GPU: four tunes)
#   bench/record_hub_conv.sh merge OUT FILE.json.gz (here: one T4 file)
# DIR must also hold the kernel, convolution_milo.cu: the hub's kernel is
# others' code and is not in this repository (bench/spaces/README.md says
# where it came from). Each part fixes read_only and use_shmem to one value
# each: 960 or 1,221 configurations, 142-227 s on an H100 with 16 cores.
# The parts run one after another on the same GPU; merged, they are every
# configuration of the space once.
set -eu
# Compile times are recorded cold: no binary cache, and a fresh CUDA
# compute cache per tune (NVRTC 13 keeps its output there; a warm one made
# a recorded hotspot compile about 9x shorter than a cold one, docs/clock.md).
jit_root=$(mktemp -d)
trap 'rm -rf "$jit_root"' EXIT INT TERM
here=$(cd "$(dirname "$0")/.." && pwd)
parts="ro0_shm0 ro1_shm0 ro0_shm1 ro1_shm1"
case ${1:-} in
split)
    python3 - "$here/bench/spaces/convolution_milo.json" "$2" <<'EOF'
import copy, json, sys
t1 = json.load(open(sys.argv[1]))
for ro in (0, 1):
    for shm in (0, 1):
        part = copy.deepcopy(t1)
        for p in part["ConfigurationSpace"]["TuningParameters"]:
            if p["Name"] == "read_only":
                p["Values"], p["Default"] = "[%d]" % ro, ro
            if p["Name"] == "use_shmem":
                p["Values"], p["Default"] = "[%d]" % shm, shm
        with open("%s/conv_ro%d_shm%d.json" % (sys.argv[2], ro, shm), "w") as f:
            json.dump(part, f, indent=1)
EOF
    ;;
tune)
    cutune=$2
    dir=$3
    out=$4
    for p in $parts; do
        (cd "$dir" && CUDA_CACHE_PATH=$(mktemp -d "$jit_root/XXXXXX") \
            "$cutune" tune "conv_$p.json" --strategy brute_force \
            --no-cache --no-binary-cache --budget-seconds 285 \
            --output "$out/conv_${p}_T4.json.gz") >"$out/$p.log" 2>&1
        tail -n 4 "$out/$p.log"
    done
    ;;
merge)
    # Every part once, 4,362 configurations in all.
    exec sh "$here/bench/record_hub_parts.sh" merge-parts 4362 "$2" conv "$3"
    ;;
*)
    echo "usage: $0 split DIR | tune CUTUNE DIR OUT | merge OUT FILE.json.gz" >&2
    exit 2
    ;;
esac
